// The larmor subcommands. Each registers its options on the CLI11 app and
// runs after parsing; main.cpp owns MPI and Kokkos.
#pragma once

#include <CLI/CLI.hpp>

#include "app/deck.hpp"
#include "larmor_config.hpp"
#include "parallel/communicator.hpp"
#include "tissue/tissue.hpp"

namespace larmor::drivers {

// Rank 0 prints what a Pulseq deck's file translated to (quiet: only its warnings).
void report_sequence(const app::Deck& deck, const parallel::Communicator& comm, bool quiet,
                     const char* command);

// Rank 0 warns once when off-resonance exceeds half the bandwidth of the
// narrowest pulse of a Pulseq file (EPG's pulses are instantaneous).
void warn_beyond_bandwidth(const sequence::Description& d, const tissue::Tissue& local,
                           const parallel::Communicator& comm, const char* command);

// Rank 0 warns once when the deck leaves the order cap automatic and the cap
// drops orders a sample can reach (sequence::automatic_cap_warning).
void warn_order_cap(const app::Deck& deck, const parallel::Communicator& comm, const char* command);

// Refuses, before anything is allocated, a grid run whose share of voxels
// does not fit this rank's memory or whose result does not fit its disk.
void check_capacity(const app::Deck& deck, int samples, const parallel::Communicator& comm);

// Rank 0 warns, once per run, of valid but unlikely tissue values (T2 above
// T1, B1 outside 0.3-2), counted over every rank's voxels.
void warn_implausible(const tissue::Tissue& local, const parallel::Communicator& comm,
                      const char* command);

struct SimulateArgs {
  std::string deck;
  std::string output;  // overrides the deck's [output] path
  int max_order = -1;  // overrides the deck's [simulation] max_order (< 0: none given)
  bool quiet = false;
  std::string timings;  // per-phase times (JSON) for scaling studies
};
void add_simulate(CLI::App& app, SimulateArgs& args);
int run_simulate(const SimulateArgs& args, const parallel::Communicator& comm);

class PhaseTimer;
// larmor simulate where the deck runs on the isochromat engine (deck.isochromats).
int run_simulate_isochromats(const SimulateArgs& args, app::Deck& deck,
                             const parallel::Communicator& comm, PhaseTimer& timer);

// Rank 0 warns when every sample of every voxel is zero (and where Mz is).
void warn_if_all_zero(const std::vector<float>& signals, bool longitudinal,
                      const parallel::Communicator& comm);

struct DesignArgs {
  std::string deck;
  std::string output;   // overrides the deck's [output] path (the schedule CSV)
  int iterations = -1;  // overrides [design] iterations
  bool quiet = false;
};
void add_design(CLI::App& app, DesignArgs& args);
int run_design(const DesignArgs& args, const parallel::Communicator& comm);

struct ExportArgs {
  std::string deck;
  std::string output;
  double crusher_moment_per_m = 0.0;  // 0: the deck's, else 1000
};
void add_export(CLI::App& app, ExportArgs& args);
int run_export(const ExportArgs& args, const parallel::Communicator& comm);

// Where a command's output was named, for its refusals: "-o: the output" or
// "DECK: [output] path: the output".
inline std::string output_source(const std::string& option, const std::string& deck) {
  return option.empty() ? deck + ": [output] path: the output" : "-o: the output";
}

struct InspectArgs {
  std::string file;
  std::vector<double> voxel_size_mm;         // empty: the file's or the default
  std::vector<double> crusher_moment_per_m;  // empty: declared in the file or detected
  double b0_t = 0.0;
  bool every_sample = false;
  std::string split_pulses = "long";  // "long", "all" or "off-resonant"
  bool ideal_slab = false;            // slice-selective pulses as one rotation
  double longest_t2_ms = 0.0;         // 0: no wait spoils for its T2 decay
  int rows = 20;
};
void add_inspect(CLI::App& app, InspectArgs& args);
// Runs before MPI and Kokkos start (it needs neither); `root` is the launcher's rank 0.
int run_inspect(const InspectArgs& args, bool root);

struct PhantomArgs {
  std::string output;
  long long voxels = 20000;
  std::string sequence_deck;
  double noise = 0.005;
  std::uint64_t seed = 1;
  bool nifti = false;  // also NIfTI copies (signals, mask, truth maps)
};
void add_phantom(CLI::App& app, PhantomArgs& args);
int run_phantom(const PhantomArgs& args, const parallel::Communicator& comm);

struct FitArgs {
  std::string deck;
  std::string output;
  double truth_tolerance = 0.0;    // > 0: fail above this median relative error
  std::vector<std::string> score;  // maps compared with the truth (empty: all)
  bool no_truth = false;           // no comparison with truth maps
  bool quiet = false;
  std::string timings;  // per-phase times (JSON) for scaling studies
};
void add_fit(CLI::App& app, FitArgs& args);
int run_fit(const FitArgs& args, const parallel::Communicator& comm);

}  // namespace larmor::drivers
