// A sequence as the isochromat engine plays it: steps in time order (free
// intervals as gradient moments, RF cells, samples), packed as the kernel
// reads them (kernels/bloch/step_abi.hpp), with what the samples are and
// what the isochromat grid must resolve.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "bloch/step_abi.hpp"

namespace larmor::sequence {

struct StepTable {
  // steps() x bloch::step_floats, float.
  std::vector<float> records;
  std::size_t steps() const { return records.size() / bloch::step_floats; }
  std::size_t free_steps = 0, rf_steps = 0;
  // The first step of each run of RF cells and its pulse's Pulseq use
  // (e r i s p o, 'u' where the file does not say), in step order.
  std::vector<std::pair<std::size_t, char>> pulse_use;

  // One entry per sample, in slot order.
  std::vector<double> sample_time_s;               // from the start of the first block
  std::vector<int> sample_block;                   // the block's id in the file
  std::vector<int> sample_index;                   // within its ADC
  std::vector<std::uint8_t> sample_is_adc_centre;  // sample N/2 of its ADC
  std::size_t samples() const { return sample_time_s.size(); }
  // The time the steps span (the writer's sum of intervals; a file's
  // builder sets the file's length, trailing empty blocks included).
  double duration_s = 0.0;

  // What the isochromats must resolve. A span runs from one pulse to the
  // next; its moment (1/m, physical axes) is what a coherence gains over
  // it, and within a span the moment swings by up to `largest_swing`
  // from the span's start (a readout, a phase encode).
  std::array<double, 3> largest_span_moment_per_m{0.0, 0.0, 0.0};
  std::array<double, 3> largest_swing_per_m{0.0, 0.0, 0.0};
  int spans = 0;
  double shortest_span_s = 0.0;  // of spans with a moment; 0 when none

  // The slice of the first slice-selective pulse (where its frequency meets
  // its gradient), the unit normal and the full width at half maximum of its
  // small-tip profile [m]; a zero normal without one.
  std::array<double, 3> slice_position_m{0.0, 0.0, 0.0};
  std::array<double, 3> slice_normal{0.0, 0.0, 0.0};
  double slice_thickness_m = 0.0;

  // The simulated voxel: a box of these edges [m] around the slice's
  // position, and why. Where its edge along the slice axis is the slice's own
  // profile it spans two slice thicknesses (the slice and its tails), and a
  // sample, the mean over the box, times sample_scale (2) is the signal per
  // slice thickness, as a slab's would be.
  std::array<double, 3> voxel_size_m{1e-3, 1e-3, 1e-3};
  std::string voxel_source;
  double sample_scale = 1.0;
  bool every_sample = false;  // every ADC sample, not only each ADC's echo centre
};

// Writes into every sample record the encodes rewound before the next pulse
// (bloch::step_field::rewound), so that a sample is the voxel's own signal,
// as EPG reports it: along each axis whose moment, counted from a pulse's
// centre, returns to zero by the next pulse's centre (a phase encode and its
// rewinder, a balanced readout), the moment the sample has gained since the
// pulse's centre. Samples before the first pulse, and axes that keep a moment
// (a spoiler, an unbalanced readout), take out none. A pulse is a run of
// consecutive RF cells, its centre the run's middle.
void mark_rewound_encodes(StepTable& table);
// Clears them: every sample keeps its encodes (raw k-space).
void keep_encodes(StepTable& table);

// Every sample's k-space position (1/m, physical x y z, in slot order): the
// gradient moment since the last excitation's centre, turned to its negative
// at each refocusing pulse's centre, as a reconstruction reads a trajectory.
// A pulse (a run of RF cells) excites or refocuses as its Pulseq use says
// (inversion, saturation and preparation pulses leave the moment alone);
// where the file does not say, a pulse of more than refocusing_flip_rad (its
// nominal flip angle, the cells' |w1| dt summed) refocuses and any other
// excites.
inline constexpr double refocusing_flip_rad = 1.7453292519943295;  // 100 degrees
std::vector<std::array<double, 3>> sample_kspace_per_m(const StepTable& table);

// Appends records; the table keeps free intervals merged until a pulse or
// a sample needs the state. Throws std::range_error for a value that float
// cannot hold.
class StepTableWriter {
 public:
  explicit StepTableWriter(StepTable& table) : table_(table) {}
  void free(double dt, const std::array<double, 3>& moment_per_m);
  // `use`: the pulse's Pulseq use, recorded where a run of RF cells starts.
  void rf(double dt, double w1_re, double w1_im, const std::array<double, 3>& gradient_hz_per_m,
          double offset_hz, char use = 'u');
  void sample(double demod_re, double demod_im, double time_s, int block, int index,
              bool adc_centre);
  // A pulse starts or the sequence ends: the span so far is complete.
  void end_span(double now_s);
  // Writes the pending free interval (at the end of the sequence).
  void flush();

 private:
  void push(int kind, double dt, const std::array<double, 6>& fields);
  void grow_span(const std::array<double, 3>& moment);
  StepTable& table_;
  double pending_dt_ = 0.0;
  std::array<double, 3> pending_moment_{0.0, 0.0, 0.0};
  std::array<double, 3> span_moment_{0.0, 0.0, 0.0};
  double span_start_s_ = 0.0;
  bool in_span_ = false;
};

}  // namespace larmor::sequence
