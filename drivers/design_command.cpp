// larmor design DECK.toml: optimise a fingerprinting train's flip angles (and
// optionally its repetition times) within bounds to minimise the Cramer-Rao
// lower bounds of chosen tissue parameters over a prior (src/design/). Under
// mpirun the prior's points are split over the ranks and the objective and
// its gradient summed; every rank takes the same steps and rank 0 writes the
// optimised schedule and the bound history (CSV, atomically).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include "app/design_deck.hpp"
#include "app/tissue_source.hpp"
#include "commands.hpp"
#include "design/crlb.hpp"
#include "design/spg.hpp"
#include "io/temporary_files.hpp"
#include "io/text_file.hpp"
#include "progress_bar.hpp"

namespace larmor::drivers {

namespace {

struct Summary {
  double objective = 0.0, scan_time_s = 0.0;
  std::vector<double> rms_relative_sd;  // per estimated parameter, over all points
};

}  // namespace

void add_design(CLI::App& app, DesignArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "design", "Optimise a fingerprinting train to minimise Cramer-Rao bounds over a prior");
  cmd->add_option("deck", args.deck, "Design deck (TOML)")->required();
  cmd->add_option("-o,--output", args.output, "Optimised schedule CSV (overrides [output] path)");
  cmd->add_option("--iterations", args.iterations, "Overrides [design] iterations")
      ->check(CLI::Range(0, 100000));
  cmd->add_flag("-q,--quiet", args.quiet, "Print only errors and the summary");
}

int run_design(const DesignArgs& args, const parallel::Communicator& comm) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  app::DesignDeck dd = app::read_design_deck(args.deck);
  // Judged on the starting train.
  warn_order_cap(dd.deck, comm, "larmor design");
  if (!args.output.empty()) dd.deck.output_path = args.output;
  io::refuse_output_over_inputs(dd.deck.output_path, dd.deck.input_files,
                                output_source(args.output, args.deck));
  if (args.iterations >= 0) dd.optimiser.max_iterations = args.iterations;
  const app::LocalVoxels local = app::load_local_tissue(dd.deck.tissue, comm, args.deck);
  dd.crlb.total_points = local.total;
  const auto& space = dd.space;
  const std::size_t params = dd.crlb.estimated.size();
  const bool talk = comm.is_root() && !args.quiet;

  // Every evaluation also sums up its bounds: the optimiser reports each
  // accepted point right after evaluating it, so its summary is the last one.
  Summary last;
  std::vector<double> last_x;
  const auto evaluate = [&](const std::vector<double>& x, std::vector<double>* gradient) {
    const sequence::Description train = sequence::build_mrf(space.decode(x));
    const auto ev = design::evaluate_crlb(train, local.tissue, dd.crlb, gradient != nullptr);
    last = Summary{};
    last.objective =
        comm.all_reduce_sum(ev.finite ? ev.objective : std::numeric_limits<double>::infinity());
    last.scan_time_s = ev.scan_time_s;
    std::vector<double> squares(params, 0.0);
    for (std::size_t i = 0; i < ev.relative_sd.size(); ++i) {
      squares[i % params] += ev.relative_sd[i] * ev.relative_sd[i];
    }
    comm.all_reduce_sum(squares);
    for (double q : squares) last.rms_relative_sd.push_back(std::sqrt(q / double(local.total)));
    last_x = x;
    if (gradient) {
      std::vector<double> g = ev.event_gradients;
      comm.all_reduce_sum(g);
      *gradient = space.chain(train, g);
    }
    return last.objective;
  };
  const auto summarise = [&](const std::vector<double>& x) {
    if (x != last_x) evaluate(x, nullptr);
    return last;
  };

  const auto& names = design::tissue_direction_names();
  std::string history = "iteration,evaluations,objective,scan_time_s,projected_gradient";
  for (int d : dd.crlb.estimated) history += ",rms_relative_sd_" + names[std::size_t(d)];
  history += "\n";
  std::vector<Summary> summaries;
  ProgressBar progress("larmor design", "optimisation", "iterations", talk);
  const auto on_step = [&](const design::SpgStep& step, const std::vector<double>& x) {
    summaries.push_back(summarise(x));
    const Summary& s = summaries.back();
    char line[96];
    std::snprintf(line, sizeof line, "%d,%d,%.9g,%.9g,%.6g", step.iteration, step.evaluations,
                  s.objective, s.scan_time_s, step.projected_gradient);
    history += line;
    for (double r : s.rms_relative_sd) {
      std::snprintf(line, sizeof line, ",%.9g", r);
      history += line;
    }
    history += "\n";
    progress.update(step.iteration, dd.optimiser.max_iterations);
    if (talk && !progress.draws_bar() && (step.iteration % 10 == 0 || step.iteration < 3)) {
      std::fprintf(stderr, "larmor design: iteration %4d  objective %.6g  scan %.3f s",
                   step.iteration, s.objective, s.scan_time_s);
      for (std::size_t p = 0; p < params; ++p) {
        std::fprintf(stderr, "  %s %.3f%%", names[std::size_t(dd.crlb.estimated[p])].c_str(),
                     100.0 * s.rms_relative_sd[p]);
      }
      std::fprintf(stderr, "\n");
    }
  };
  if (talk) {
    std::fprintf(stderr,
                 "larmor design: %s: %zu rows, %zu variables, %lld prior points on %d rank(s), "
                 "noise sigma %g\n",
                 args.deck.c_str(), space.rows(), space.size(), static_cast<long long>(local.total),
                 comm.size(), dd.crlb.noise_sigma);
  }
  const auto result =
      design::minimise_in_unit_box(evaluate, space.encode(space.start), dd.optimiser, on_step);
  progress.finish();
  if (comm.is_root()) {
    io::write_text_atomically(dd.deck.output_path,
                              sequence::format_mrf_schedule_csv(space.decode(result.x).schedule));
    io::write_text_atomically(dd.history_path, history);
  }
  comm.barrier();
  if (comm.is_root()) {
    const Summary& first = summaries.front();
    const Summary& last = summaries.back();
    std::printf("larmor design: %zu iterations (%s) in %.1f s\n", result.history.size() - 1,
                result.stopped_because.c_str(),
                std::chrono::duration<double>(clock::now() - start).count());
    std::printf("  %-28s %14s %14s\n", "", "start", "optimised");
    std::printf("  %-28s %14.6g %14.6g\n", "objective", first.objective, last.objective);
    std::printf("  %-28s %14.4f %14.4f\n", "scan time [s]", first.scan_time_s, last.scan_time_s);
    for (std::size_t p = 0; p < params; ++p) {
      const std::string label =
          "rms sd(" + names[std::size_t(dd.crlb.estimated[p])] + ") / value [%]";
      std::printf("  %-28s %14.4f %14.4f\n", label.c_str(), 100.0 * first.rms_relative_sd[p],
                  100.0 * last.rms_relative_sd[p]);
    }
    std::printf("  schedule: %s\n  history:  %s\n", dd.deck.output_path.c_str(),
                dd.history_path.c_str());
  }
  return 0;
}

}  // namespace larmor::drivers
