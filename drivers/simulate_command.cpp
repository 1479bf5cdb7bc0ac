// larmor simulate DECK.toml: simulate the deck's sequence over its tissue and
// write the signals. Under mpirun the voxels are split evenly over the ranks
// and the file is written collectively; its content does not depend on the
// rank count.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "app/capacity.hpp"
#include "app/deck.hpp"
#include "app/signal_file.hpp"
#include "app/tissue_source.hpp"
#include "commands.hpp"
#include "common/kokkos_compat.hpp"
#include "io/temporary_files.hpp"
#include "phase_timer.hpp"
#include "progress_bar.hpp"
#include "sequence/longitudinal_samples.hpp"
#include "simulate/simulator.hpp"

namespace larmor::drivers {

// Before anything is allocated: this rank's tissue and signals against the
// memory left, and the result file against its file system's free space.
void check_capacity(const app::Deck& deck, int samples, const parallel::Communicator& comm) {
  const std::int64_t total = app::grid_voxel_count(deck.tissue, deck.path);
  if (total < 0) return;  // maps: the file bounds the count
  const double local = std::ceil(double(total) / comm.size());
  const double per_voxel = 8.0 * samples + 4.0 * double(deck.tissue.values.size()) + 8.0;
  const std::string voxels =
      std::to_string(total) + " voxels x " + std::to_string(samples) + " samples";
  std::string error;
  try {
    app::require_capacity(local * per_voxel, app::available_memory_bytes(),
                          deck.path + ": the tissue and signals of rank " +
                              std::to_string(comm.rank()) + "'s share of " + voxels,
                          "of memory available",
                          "use more ranks, fewer voxels or [output] last_samples");
    if (comm.is_root()) {
      app::require_capacity(
          double(total) * 8.0 * samples, app::available_space_bytes(deck.output_path),
          deck.path + ": the result's " + voxels, "free where " + deck.output_path + " goes",
          "free space, write elsewhere (-o), or use [output] last_samples");
    }
  } catch (const std::exception& e) {
    error = e.what();
  }
  comm.throw_if_any_failed(error.empty(), error);
}

void warn_beyond_bandwidth(const sequence::Description& d, const tissue::Tissue& local,
                           const parallel::Communicator& comm, const char* command) {
  const auto it = d.parameters.find("rf_half_bandwidth_hz");
  if (it == d.parameters.end()) return;  // ideal pulses: no bandwidth to leave
  double largest = 0.0;
  for (std::int64_t v = 0; v < local.voxels; ++v) {
    largest = std::max(largest, double(std::fabs(local.df_hz.at(v))));
  }
  largest = comm.all_reduce_max(largest);
  if (comm.is_root() && largest > it->second) {
    std::fprintf(stderr,
                 "%s: warning: off-resonance up to %.1f Hz exceeds half the bandwidth of the "
                 "narrowest RF pulse (%.1f Hz): those voxels are rotated as at resonance, which "
                 "the real pulse does not do\n",
                 command, largest, it->second);
  }
}

void warn_implausible(const tissue::Tissue& local, const parallel::Communicator& comm,
                      const char* command) {
  const tissue::Tissue::Implausible mine = local.count_implausible();
  const std::int64_t t2 = comm.all_reduce_sum(mine.t2_above_t1);
  const std::int64_t b1 = comm.all_reduce_sum(mine.b1_outside);
  if (!comm.is_root()) return;
  if (t2 > 0) {
    std::fprintf(stderr, "%s: warning: %lld voxel(s) have T2 above T1, which tissue does not\n",
                 command, static_cast<long long>(t2));
  }
  if (b1 > 0) {
    std::fprintf(stderr,
                 "%s: warning: %lld voxel(s) have B1 outside 0.3-2 (a scale of the nominal flip)\n",
                 command, static_cast<long long>(b1));
  }
}

void warn_order_cap(const app::Deck& deck, const parallel::Communicator& comm,
                    const char* command) {
  if (!comm.is_root()) return;
  const std::string warning =
      sequence::automatic_cap_warning(deck.sequence, deck.simulation.max_order);
  if (!warning.empty()) std::fprintf(stderr, "%s: %s\n", command, warning.c_str());
}

void report_sequence(const app::Deck& deck, const parallel::Communicator& comm, bool quiet,
                     const char* command) {
  if (!comm.is_root() || deck.sequence_report.empty()) return;
  if (!quiet) {
    std::printf("%s: %s\n", command, deck.builder.c_str());
    std::istringstream lines(deck.sequence_report);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("warning: ", 0) != 0) std::printf("  %s\n", line.c_str());
    }
  }
  // Warnings reach the user even in quiet runs.
  std::istringstream lines(deck.sequence_report);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("warning: ", 0) == 0) std::fprintf(stderr, "%s: %s\n", command, line.c_str());
  }
}

void add_simulate(CLI::App& app, SimulateArgs& args) {
  CLI::App* cmd = app.add_subcommand("simulate", "Simulate a deck's sequence over its tissue");
  cmd->add_option("deck", args.deck, "Input deck (TOML)")->required();
  cmd->add_option("-o,--output", args.output, "Result file (overrides [output] path)");
  cmd->add_option("--max-order", args.max_order,
                  "Highest EPG order kept (overrides [simulation] max_order)")
      ->check(CLI::Range(0, abi::max_orders - 1));
  cmd->add_flag("-q,--quiet", args.quiet, "Print only errors");
  cmd->add_option("--timings", args.timings,
                  "Write per-phase times of every rank (JSON; phases end at barriers)");
}

namespace {

// The transverse samples of every voxel apart from the turned samples beside
// them, whose negated imaginary parts are each sample's mean Mz (into `mz`).
std::vector<float> split_longitudinal(const std::vector<float>& signals,
                                      const sequence::LongitudinalSamples& longitudinal,
                                      std::int64_t voxels, int samples, std::vector<float>& mz) {
  const std::size_t all = std::size_t(samples), kept = longitudinal.transverse.size();
  std::vector<float> transverse(std::size_t(voxels) * kept * 2);
  mz.resize(std::size_t(voxels) * kept);
  for (std::size_t v = 0; v < std::size_t(voxels); ++v) {
    for (std::size_t n = 0; n < kept; ++n) {
      const float* from = &signals[(v * all + std::size_t(longitudinal.transverse[n])) * 2];
      transverse[(v * kept + n) * 2] = from[0];
      transverse[(v * kept + n) * 2 + 1] = from[1];
      mz[v * kept + n] = -signals[(v * all + std::size_t(longitudinal.longitudinal[n])) * 2 + 1];
    }
  }
  return transverse;
}

// The settling report of a steady-state run: how many periods the voxels
// needed (the periods simulated become every rank's largest).
void report_settling(simulate::SteadyStateReport& steady, const app::Deck& deck,
                     const parallel::Communicator& comm, bool talk) {
  std::int64_t worst = 0, unsettled = steady.unconverged;
  for (auto n : steady.repetitions) worst = std::max(worst, std::int64_t(n));
  worst = comm.all_reduce_max(worst);
  unsettled = comm.all_reduce_sum(unsettled);
  steady.periods = int(comm.all_reduce_max(std::int64_t(steady.periods)));
  if (talk) {
    std::printf(
        "larmor simulate: steady state within %g after at most %lld periods; %lld voxel(s) "
        "not settled within %d\n",
        deck.steady.tolerance, static_cast<long long>(worst), static_cast<long long>(unsettled),
        deck.steady.max_repetitions);
  }
}

}  // namespace

// A result that is zero at every sample of every voxel says nothing: say so
// (a file that measures Mz has it in /mz).
void warn_if_all_zero(const std::vector<float>& signals, bool longitudinal,
                      const parallel::Communicator& comm) {
  double largest = 0.0;
  for (float x : signals) largest = std::max(largest, double(std::fabs(x)));
  if (comm.all_reduce_max(largest) == 0.0 && comm.is_root()) {
    std::fprintf(stderr,
                 "larmor simulate: warning: every sample of every voxel is zero: no transverse "
                 "magnetisation reaches a sample (%s)\n",
                 longitudinal ? "the longitudinal magnetisation is in /mz"
                              : "[output] longitudinal = true writes the longitudinal "
                                "magnetisation as /mz");
  }
}

int run_simulate(const SimulateArgs& args, const parallel::Communicator& comm) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  PhaseTimer timer(comm, !args.timings.empty());
  timer.add_phase("startup", "setup", seconds_since_process_start());
  app::Deck deck = app::read_deck(args.deck);
  if (!args.output.empty()) deck.output_path = args.output;
  io::refuse_output_over_inputs(deck.output_path, deck.input_files,
                                output_source(args.output, deck.path));
  if (deck.isochromats) return run_simulate_isochromats(args, deck, comm, timer);
  if (args.max_order >= 0) deck.simulation.max_order = args.max_order;
  if (deck.last_samples > 0) {
    sequence::keep_last_samples(deck.sequence, deck.last_samples);
    deck.sequence.parameters["last_samples"] = deck.last_samples;
  }
  // Each sample's mean Mz, through a turned sample beside it.
  sequence::LongitudinalSamples longitudinal;
  if (deck.longitudinal) longitudinal = sequence::add_longitudinal_samples(deck.sequence);

  const bool talk = comm.is_root() && !args.quiet;
  report_sequence(deck, comm, args.quiet, "larmor simulate");
  warn_order_cap(deck, comm, "larmor simulate");
  // Rank 0's share stands for everyone's: the split is even.
  ProgressBar progress("larmor simulate", "simulation", "voxels", talk);
  deck.simulation.progress = [&](std::int64_t done, std::int64_t total) {
    progress.update(done, total);
  };

  simulate::Simulator simulator(deck.sequence, deck.simulation);
  check_capacity(deck, simulator.samples(), comm);
  app::LocalVoxels voxels = app::load_local_tissue(deck.tissue, comm, deck.path);
  warn_implausible(voxels.tissue, comm, "larmor simulate");
  warn_beyond_bandwidth(deck.sequence, voxels.tissue, comm, "larmor simulate");
  if (talk) {
    std::printf(
        "larmor simulate: %s, %lld voxels on %d rank(s), %lld events, %d samples, orders 0..%d "
        "(%d reach a sample), %s backend\n",
        deck.builder.c_str(), static_cast<long long>(voxels.total), comm.size(),
        static_cast<long long>(simulator.events()), simulator.samples(), simulator.max_order(),
        simulator.kernel_states(), kx::backend_name());
    std::fflush(stdout);
  }

  timer.end_phase("setup", "setup");
  std::vector<float> signals(std::size_t(voxels.tissue.voxels) * std::size_t(simulator.samples()) *
                             2);
  std::string error;
  // The bar's clock starts with the run, as the summary's does.
  progress.update(0, voxels.tissue.voxels);
  const auto sim_start = clock::now();
  simulate::SteadyStateReport steady;
  try {
    if (deck.steady_state) {
      steady = simulator.run_steady_state_into<Kokkos::DefaultExecutionSpace>(
          voxels.tissue, signals.data(), deck.steady);
    } else {
      simulator.run_into<Kokkos::DefaultExecutionSpace>(voxels.tissue, signals.data());
    }
  } catch (const std::exception& e) {
    error = e.what();
  }
  progress.finish();
  timer.end_phase("simulate", "compute");
  comm.throw_if_any_failed(error.empty(), error);
  const double sim_seconds =
      comm.all_reduce_max(std::chrono::duration<double>(clock::now() - sim_start).count());
  timer.end_phase("agree", "comm");

  app::RunInfo info{deck.builder, deck.path, kx::backend_name()};
  const std::vector<std::int64_t> settled(steady.repetitions.begin(), steady.repetitions.end());
  if (deck.steady_state) {
    info.steady_repetitions = &settled;
    info.steady_tolerance = deck.steady.tolerance;
    report_settling(steady, deck, comm, talk);
  }
  std::vector<float> mz;
  if (deck.longitudinal) {
    // The transverse samples to /signals, minus the turned samples'
    // imaginary parts to /mz.
    std::vector<float> transverse =
        split_longitudinal(signals, longitudinal, voxels.tissue.voxels, simulator.samples(), mz);
    signals.swap(transverse);
    info.samples = &longitudinal.transverse;
    info.local_mz = &mz;
  }
  warn_if_all_zero(signals, deck.longitudinal, comm);
  PhaseLine writing("larmor simulate", "writing " + deck.output_path,
                    double(voxels.total) * simulator.samples() * 2 * sizeof(float), talk);
  app::write_signal_file(deck.output_path, comm, simulator, voxels, signals, info);
  writing.finish();
  timer.end_phase("write", "io");
  timer.write_json(args.timings, "simulate",
                   ", \"voxels\": " + std::to_string(voxels.total) + ", \"backend\": \"" +
                       kx::backend_name() + "\"");
  const double total_seconds = seconds_since_process_start();
  if (talk) {
    // A steady-state run simulated the period up to its slowest voxel's count.
    const double periods = deck.steady_state ? double(std::max(steady.periods, 1)) : 1.0;
    const double ev = double(simulator.events()) * double(voxels.total) * periods;
    std::printf(
        "larmor simulate: simulated in %.3f s (%.3g ns per event per voxel), %.3f s in all\n",
        sim_seconds, ev > 0 ? sim_seconds * 1e9 / ev : 0.0, total_seconds);
    std::printf("larmor simulate: wrote %s\n", deck.output_path.c_str());
  }
  return 0;
}

}  // namespace larmor::drivers
