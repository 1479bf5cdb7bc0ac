// Progress of a long phase (a simulation, a dictionary, PERK training, design
// iterations), printed by rank 0 on stderr. On a terminal: a bar redrawn in
// place with the rate and the time left, once the phase has run long enough
// to be worth watching. Elsewhere (a log file, a batch job's output): no
// redraws, and one line when a phase that long ends. LARMOR_PROGRESS=bar
// draws the bar from the start even off a terminal, =line forces the lines,
// =off silences both.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace larmor::drivers {

class ProgressBar {
 public:
  // "larmor simulate", "simulation", "voxels"; `talk`: this rank prints.
  ProgressBar(std::string command, std::string phase, std::string unit, bool talk);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // `done` of `total` units so far; cheap enough to call per chunk. A first
  // call with nothing done starts the phase's clock.
  void update(std::int64_t done, std::int64_t total);
  // Ends the phase (update does at done == total): completes the bar, or
  // prints the line.
  void finish();
  // Whether a bar is drawn (other lines on stderr would break it).
  bool draws_bar() const { return mode_ == Mode::bar; }

 private:
  enum class Mode { bar, line, off };
  using Clock = std::chrono::steady_clock;
  void draw(bool final_draw);

  std::string command_, phase_, unit_;
  Mode mode_ = Mode::off;
  double show_after_s_ = 2.0;
  Clock::time_point start_, last_draw_;
  std::int64_t done_ = 0, total_ = 0;
  bool drawn_ = false, finished_ = false;
};

// A phase with nothing to count as it goes (a collective write): a line as
// it starts when its size makes it worth one, and a line with its rate as it
// ends when it took a second or more. LARMOR_PROGRESS=off silences both.
class PhaseLine {
 public:
  // "larmor fit", "writing maps.h5", its bytes; `talk`: this rank prints.
  PhaseLine(std::string command, std::string what, double bytes, bool talk);
  // Seconds since the start; prints the closing line once.
  double finish();

 private:
  using Clock = std::chrono::steady_clock;
  std::string command_, what_;
  double bytes_ = 0.0;
  bool talk_ = false, finished_ = false;
  Clock::time_point start_;
};

}  // namespace larmor::drivers
