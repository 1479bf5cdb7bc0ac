// larmor fit DECK.toml: whole-volume parameter estimation with PERK
// (docs/estimators.md). Reads the measured signals and known maps (HDF5),
// trains the estimator on rank 0 (or loads one) and broadcasts it, estimates
// each rank's share of the voxels with the fused kernel (deterministic: the
// maps are the same for any rank count), and writes the maps collectively and
// atomically, with progress and a timing summary. When the data file holds
// truth maps of the estimated properties (a larmor phantom does), the error
// against them is reported, and --truth-tolerance makes it a pass/fail check.
// The fit itself (reading the data, the estimators, the maps file's layout)
// is app/fit.hpp; this file parses the command line and reports.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>

#include "app/fit.hpp"
#include "app/fit_deck.hpp"
#include "cli/checks.hpp"
#include "commands.hpp"
#include "common/kokkos_compat.hpp"
#include "io/temporary_files.hpp"
#include "phase_timer.hpp"
#include "progress_bar.hpp"

namespace larmor::drivers {

void add_fit(CLI::App& app, FitArgs& args) {
  CLI::App* cmd = app.add_subcommand("fit", "Estimate tissue maps from measured signals (PERK)");
  cmd->add_option("deck", args.deck, "Fit deck (TOML)")->required();
  cmd->add_option("-o,--output", args.output, "Maps file (overrides [output] path)");
  cmd->add_option("--truth-tolerance", args.truth_tolerance,
                  "Fail when the median relative error against truth maps in the data exceeds this")
      ->check(cli::finite_number(0.0, false, 1e6, "a relative error"));
  cmd->add_option("--score", args.score,
                  "Compare only these maps with the truth (repeatable; default: every map)");
  cmd->add_flag("--no-truth", args.no_truth,
                "Do not compare the maps with truth maps in the data (timing runs)");
  cmd->add_flag("-q,--quiet", args.quiet, "Print only errors and the summary");
  cmd->add_option("--timings", args.timings,
                  "Write per-phase times of every rank (JSON; phases end at barriers)");
}

namespace {

using clock = std::chrono::steady_clock;
double since(clock::time_point t) {
  return std::chrono::duration<double>(clock::now() - t).count();
}

// Against truth maps in the data, when present: scored where the truth lies
// inside the estimator's range (it is not trained beyond it). False (and
// `error` says why) where a median error exceeds --truth-tolerance.
bool score_maps(const FitArgs& args, const std::vector<app::FitMap>& outputs,
                const std::vector<std::vector<float>>& maps, const app::Measured& data,
                const parallel::Communicator& comm, std::string& error) {
  bool ok = true;
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    const app::FitMap& o = outputs[k];
    const bool wanted = args.score.empty() ||
                        std::find(args.score.begin(), args.score.end(), o.name) != args.score.end();
    if (!comm.is_root() || args.no_truth || !wanted) continue;
    const std::optional<app::TruthScore> score = app::score_against_truth(o, maps[k], data);
    if (!score) continue;
    std::printf(
        "larmor fit: %s against the truth in the data, %zu voxels inside the prior: "
        "median |relative error| %.3g %%, 90th percentile %.3g %% (%lld outside, not "
        "scored)\n",
        o.name.c_str(), score->scored, 100 * score->median, 100 * score->p90,
        static_cast<long long>(score->outside));
    if (args.truth_tolerance > 0 && !(score->median <= args.truth_tolerance)) {
      ok = false;
      error = o.name + ": median relative error " + std::to_string(score->median) +
              " exceeds --truth-tolerance " + std::to_string(args.truth_tolerance);
    }
  }
  return ok;
}

// The root's closing lines: what ran, each method's own phases (the total
// counts from the process's start), and what was written.
void print_fit_summary(const app::FitDeck& fd, const app::FitResult& fit, std::int64_t voxels,
                       int ranks, double read_s, double write_s, const std::string& output) {
  const estimators::perk::TrainingReport& report = fit.report;
  std::printf("larmor fit: %lld voxels on %d rank(s), %s backend; %s\n",
              static_cast<long long>(voxels), ranks, kx::backend_name(), fit.summary.c_str());
  char text[256];
  if (fd.method == "perk") {
    std::snprintf(text, sizeof text,
                  "train %.3f s (simulate %.3f, features %.3f, solve %.3f), estimate %.3f s",
                  fit.train_s, report.simulate_s, report.features_s, report.solve_s,
                  fit.estimate_s);
  } else if (fd.method == "dictionary") {
    std::snprintf(text, sizeof text,
                  "dictionary %.3f s (simulate %.3f, compress %.3f), match %.3f s", fit.train_s,
                  fit.train_s - fit.compress_s, fit.compress_s, fit.estimate_s);
  } else {
    std::snprintf(text, sizeof text, "fit %.3f s", fit.estimate_s);
  }
  std::printf("larmor fit: read %.3f s, %s, write %.3f s, total %.3f s\n", read_s, text, write_s,
              seconds_since_process_start());
  std::printf("larmor fit: wrote %s\n", output.c_str());
}

}  // namespace

int run_fit(const FitArgs& args, const parallel::Communicator& comm) {
  const auto start = clock::now();
  PhaseTimer timer(comm, !args.timings.empty());
  timer.add_phase("startup", "setup", seconds_since_process_start());
  const bool talk = comm.is_root() && !args.quiet;
  app::FitDeck fd = app::read_fit_deck(args.deck);
  warn_order_cap(fd.deck, comm, "larmor fit");
  const std::string output = args.output.empty() ? fd.deck.output_path : args.output;
  if (output.empty()) throw std::invalid_argument(args.deck + ": no [output] path and no -o");
  {
    std::vector<std::string> inputs = fd.deck.input_files;
    inputs.insert(inputs.end(), {fd.data_path, fd.mask_path, fd.model_path});
    io::refuse_output_over_inputs(output, inputs, output_source(args.output, args.deck));
    if (!fd.save_model_path.empty()) {
      io::refuse_output_over_inputs(fd.save_model_path, inputs,
                                    args.deck + ": [estimator] save_model: the model to save");
    }
  }

  // Measured data: this rank's rows, and the known maps at its voxels.
  auto t0 = clock::now();
  const app::Measured data = app::read_measured(fd, args.deck, comm);
  const std::int64_t n = data.voxels;
  const double read_s = since(t0);
  timer.end_phase("read", "io");

  // The simulations inside the fit: PERK's training samples, or the
  // dictionary's atoms.
  const bool perk = fd.method == "perk";
  ProgressBar progress("larmor fit", perk ? "training" : fd.method, perk ? "samples" : "atoms",
                       talk);
  const auto report_progress = [&progress](std::int64_t done, std::int64_t total) {
    progress.update(done, total);
  };
  fd.deck.simulation.progress = report_progress;
  fd.perk.progress = report_progress;
  ProgressBar tuning("larmor fit", "tuning", "grid points", talk && perk);
  fd.perk.tuning_progress = [&tuning](std::int64_t done, std::int64_t total) {
    tuning.update(done, total);
  };
  ProgressBar compression("larmor fit", "compression (two passes)", "atoms",
                          talk && fd.method == "dictionary");
  fd.compress_progress = [&compression](std::int64_t done, std::int64_t total) {
    compression.update(done, total);
  };
  ProgressBar matching("larmor fit", "matching", "voxels", talk && fd.method == "dictionary");
  fd.match_progress = [&matching](std::int64_t done, std::int64_t total) {
    matching.update(done, total);
  };
  const app::FitResult fit = app::estimate_maps(
      fd, args.deck, comm, data, talk,
      [&timer](const std::string& name, const std::string& kind) { timer.end_phase(name, kind); });
  progress.finish();
  tuning.finish();
  compression.finish();
  matching.finish();
  const std::vector<app::FitMap>& outputs = fit.maps;
  // Output: the volume maps gathered on rank 0 (communication), then written
  // with each rank's rows (collective I/O), then scored against any truth.
  t0 = clock::now();
  const std::vector<std::vector<float>> maps = app::gather_maps(outputs, data, comm);
  timer.end_phase("gather", "comm");
  PhaseLine writing("larmor fit", "writing " + output,
                    double(outputs.size()) * double(data.volume()) * sizeof(float), talk);
  app::write_maps(output, fd, data, outputs, maps, fit.summary, comm);
  writing.finish();
  const double write_s = since(t0);
  timer.end_phase("write", "io");
  std::string error;
  const bool ok = score_maps(args, outputs, maps, data, comm, error);
  timer.end_phase("score", "io");
  timer.write_json(args.timings, "fit",
                   ", \"voxels\": " + std::to_string(n) + ", \"method\": \"" + fd.method +
                       "\", \"backend\": \"" + kx::backend_name() + "\"");
  comm.throw_if_any_failed(ok, error);
  if (comm.is_root()) print_fit_summary(fd, fit, n, comm.size(), read_s, write_s, output);
  return 0;
}

}  // namespace larmor::drivers
