// Per-phase wall times of a driver run, for scaling studies (lab/scaling,
// docs/scaling.md). Each rank times its own phases; with `synchronise`, every
// phase ends at a barrier and the wait there is recorded apart, so that a
// phase's time is its work and the waits show load imbalance. `write_json`
// gathers every rank's times and rank 0 writes them (atomically) with the
// maximum, minimum and mean over ranks. Phases are named by kind so the study
// can separate compute, communication and I/O:
//   startup (process start to the command: MPI and Kokkos initialisation),
//   setup, read/write (I/O), compute, comm (collectives).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "parallel/communicator.hpp"

namespace larmor::drivers {

// Seconds since main() began (set there).
double seconds_since_process_start();
void mark_process_start();

class PhaseTimer {
 public:
  PhaseTimer(const parallel::Communicator& comm, bool synchronise);

  // Ends the current phase (started at construction or the last end_phase)
  // under `name` of `kind` ("setup", "io", "compute", "comm").
  void end_phase(const std::string& name, const std::string& kind);
  // Adds a phase measured elsewhere (e.g. startup) without ending the current one.
  void add_phase(const std::string& name, const std::string& kind, double seconds);

  // Collective. Rank 0 writes `path` (nothing when empty).
  void write_json(const std::string& path, const std::string& command,
                  const std::string& extra_json_fields) const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Phase {
    std::string name, kind;
    double seconds = 0.0, wait = 0.0;
  };
  parallel::Communicator comm_;
  bool synchronise_;
  Clock::time_point last_;
  std::vector<Phase> phases_;
};

}  // namespace larmor::drivers
