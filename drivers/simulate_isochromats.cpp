// larmor simulate on the isochromat engine: a Pulseq file's step table
// played over every voxel's isochromats, written as the EPG engine writes
// its result (/signals, /mz, sample times), with the engine, its reason and
// its isochromat grid as attributes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>

#include "app/signal_file.hpp"
#include "app/tissue_source.hpp"
#include "commands.hpp"
#include "phase_timer.hpp"
#include "simulate/default_backend.hpp"
#include "simulate/isochromat_simulator.hpp"

namespace larmor::drivers {
namespace {

// Keeps the last `kept` of every voxel's `samples` values (of `width` floats).
void keep_last(std::vector<float>& values, int samples, int width, std::size_t first,
               std::size_t kept) {
  const std::size_t row = std::size_t(samples) * std::size_t(width);
  const std::size_t voxels = values.size() / row;
  for (std::size_t v = 0; v < voxels; ++v) {
    std::copy(values.begin() + std::ptrdiff_t(v * row + first * std::size_t(width)),
              values.begin() + std::ptrdiff_t((v + 1) * row),
              values.begin() + std::ptrdiff_t(v * kept * std::size_t(width)));
  }
  values.resize(voxels * kept * std::size_t(width));
}

}  // namespace

int run_simulate_isochromats(const SimulateArgs& args, app::Deck& deck,
                             const parallel::Communicator& comm, PhaseTimer& timer) {
  using clock = std::chrono::steady_clock;
  const bool talk = comm.is_root() && !args.quiet;
  report_sequence(deck, comm, args.quiet, "larmor simulate");
  std::string error;
  std::optional<simulate::IsochromatSimulator> engine;
  try {
    engine.emplace(std::move(*deck.steps), deck.isochromat);
  } catch (const std::exception& e) {
    error = deck.path + ": " + e.what();
  }
  comm.throw_if_any_failed(error.empty(), error);
  const sequence::StepTable& table = engine->table();
  const int samples = int(table.samples());
  check_capacity(deck, samples, comm);
  app::LocalVoxels voxels = app::load_local_tissue(deck.tissue, comm, deck.path);
  warn_implausible(voxels.tissue, comm, "larmor simulate");
  const std::string refusal = simulate::isochromat_tissue_refusal(voxels.tissue);
  comm.throw_if_any_failed(refusal.empty(),
                           deck.path + ": [tissue]: the isochromat engine runs this file (" +
                               deck.engine_reason + "), but " + refusal);
  if (comm.is_root() && !engine->plan().warning.empty()) {
    std::fprintf(stderr, "larmor simulate: warning: %s\n", engine->plan().warning.c_str());
  }
  if (talk) {
    std::printf("larmor simulate: isochromat engine (%s)\n", deck.engine_reason.c_str());
    std::printf("  %s\n", engine->plan().report.c_str());
    std::printf("  voxel %.3g x %.3g x %.3g mm (%s) at (%.3g, %.3g, %.3g) mm\n",
                deck.isochromat.voxel_size_m[0] * 1e3, deck.isochromat.voxel_size_m[1] * 1e3,
                deck.isochromat.voxel_size_m[2] * 1e3, table.voxel_source.c_str(),
                deck.isochromat.centre_m[0] * 1e3, deck.isochromat.centre_m[1] * 1e3,
                deck.isochromat.centre_m[2] * 1e3);
    std::printf(
        "larmor simulate: %s, %lld voxels on %d rank(s), %zu steps (%zu RF, %zu free), %d "
        "samples, %s backend\n",
        deck.builder.c_str(), static_cast<long long>(voxels.total), comm.size(), table.steps(),
        table.rf_steps, table.free_steps, samples, simulate::default_backend::name());
    std::fflush(stdout);
  }
  timer.end_phase("setup", "setup");

  std::vector<float> signals(std::size_t(voxels.tissue.voxels) * std::size_t(samples) * 2);
  std::vector<float> mz;
  if (deck.longitudinal) mz.resize(std::size_t(voxels.tissue.voxels) * std::size_t(samples));
  const auto start = clock::now();
  try {
    engine->run(voxels.tissue, signals.data(), deck.longitudinal ? mz.data() : nullptr);
  } catch (const std::exception& e) {
    error = e.what();
  }
  timer.end_phase("simulate", "compute");
  comm.throw_if_any_failed(error.empty(), error);
  const double seconds =
      comm.all_reduce_max(std::chrono::duration<double>(clock::now() - start).count());
  timer.end_phase("agree", "comm");

  // [output] last_samples: each voxel's last N samples.
  std::size_t first_kept = 0, kept = std::size_t(samples);
  if (deck.last_samples > 0 && deck.last_samples < samples) {
    kept = std::size_t(deck.last_samples);
    first_kept = std::size_t(samples) - kept;
    keep_last(signals, samples, 2, first_kept, kept);
    if (deck.longitudinal) keep_last(mz, samples, 1, first_kept, kept);
  }
  app::RunInfo info{deck.builder, deck.path, simulate::default_backend::name()};
  if (deck.longitudinal) info.local_mz = &mz;
  warn_if_all_zero(signals, deck.longitudinal, comm);
  app::SignalLayout layout;
  layout.sample_times_s.assign(table.sample_time_s.begin() + std::ptrdiff_t(first_kept),
                               table.sample_time_s.end());
  layout.echo_centre.assign(table.sample_is_adc_centre.begin() + std::ptrdiff_t(first_kept),
                            table.sample_is_adc_centre.end());
  const auto& plan = engine->plan();
  layout.counts = {{"steps", std::int64_t(table.steps())},
                   {"isochromats", plan.size()},
                   {"isochromats_x", plan.counts[0]},
                   {"isochromats_y", plan.counts[1]},
                   {"isochromats_z", plan.counts[2]}};
  layout.texts = {{"engine", "isochromat"}, {"engine_reason", deck.engine_reason}};
  app::write_signal_file(deck.output_path, comm, layout, voxels, signals, info);
  timer.end_phase("write", "io");
  timer.write_json(args.timings, "simulate",
                   ", \"voxels\": " + std::to_string(voxels.total) + ", \"backend\": \"" +
                       simulate::default_backend::name() + "\"");
  if (talk) {
    const double steps = double(table.steps()) * double(plan.size()) * double(voxels.total);
    std::printf("larmor simulate: simulated in %.3f s (%.3g isochromat steps per second)\n",
                seconds, seconds > 0 ? steps / seconds : 0.0);
    std::printf("larmor simulate: wrote %s\n", deck.output_path.c_str());
  }
  return 0;
}

}  // namespace larmor::drivers
