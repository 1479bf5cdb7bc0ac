// larmor simulate on the isochromat engine: a Pulseq file's step table
// played over every voxel's isochromats, written as the EPG engine writes
// its result (/signals, /mz, sample times), with the engine, its reason and
// its isochromat grid as attributes.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <optional>

#include "app/signal_file.hpp"
#include "app/tissue_source.hpp"
#include "commands.hpp"
#if LARMOR_HAVE_ISMRMRD
#include "io/mrd/mrd.hpp"
#endif
#include "io/temporary_files.hpp"
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

// Each local voxel's centre [m]: the maps' volume laid on the sequence's
// voxel grid around the isochromat voxel's centre (the slice's, for a
// selective file), the volume's middle at that centre.
std::vector<double> voxel_centres(const app::LocalVoxels& voxels,
                                  const simulate::IsochromatSettings& settings) {
  const auto& shape = voxels.volume_shape;  // nz, ny, nx
  std::vector<double> centres;
  centres.reserve(voxels.voxel_index.size() * 3);
  for (std::int64_t index : voxels.voxel_index) {
    const std::uint64_t i = std::uint64_t(index);
    const std::uint64_t at[3] = {i % shape[2], (i / shape[2]) % shape[1],
                                 i / (shape[2] * shape[1])};
    const std::uint64_t n[3] = {shape[2], shape[1], shape[0]};
    for (int a = 0; a < 3; ++a) {
      centres.push_back(settings.centre_m[std::size_t(a)] +
                        (double(at[a]) - 0.5 * double(n[a] - 1)) *
                            settings.voxel_size_m[std::size_t(a)]);
    }
  }
  return centres;
}

#if LARMOR_HAVE_ISMRMRD
// The summed samples as one acquisition per ADC (consecutive samples of a
// block), lines numbered in acquisition order, each sample's k-space
// position as its trajectory in cycles per voxel (k times the voxel's edge,
// physical x y z: the sequence's Nyquist limit at +-0.5).
std::vector<io::mrd::Acquisition> readouts_of(const sequence::StepTable& table,
                                              const std::vector<double>& kspace,
                                              const std::array<double, 3>& voxel_size_m) {
  const std::vector<std::array<double, 3>> k = sequence::sample_kspace_per_m(table);
  std::vector<io::mrd::Acquisition> out;
  for (std::size_t i = 0; i < table.samples();) {
    std::size_t end = i + 1;
    while (end < table.samples() && table.sample_block[end] == table.sample_block[i]) ++end;
    io::mrd::Acquisition a;
    a.scan_counter = std::uint32_t(out.size());
    a.encode_step_1 = std::uint16_t(out.size());
    a.samples = int(end - i);
    a.channels = 1;
    a.trajectory_dimensions = 3;
    a.sample_time_us =
        end - i > 1 ? float(1e6 * (table.sample_time_s[i + 1] - table.sample_time_s[i])) : 0.0f;
    for (std::size_t j = i; j < end; ++j) {
      if (table.sample_is_adc_centre[j]) a.center_sample = int(j - i);
      a.data.emplace_back(float(kspace[2 * j]), float(kspace[2 * j + 1]));
      for (int axis = 0; axis < 3; ++axis) {
        a.trajectory.push_back(float(k[j][std::size_t(axis)] * voxel_size_m[std::size_t(axis)]));
      }
    }
    out.push_back(std::move(a));
    i = end;
  }
  return out;
}

#endif

int run_kspace(const SimulateArgs& args, app::Deck& deck, const parallel::Communicator& comm,
               PhaseTimer& timer, const simulate::IsochromatSimulator& engine,
               const app::LocalVoxels& voxels) {
  using clock = std::chrono::steady_clock;
  const sequence::StepTable& table = engine.table();
  const std::vector<double> centres = voxel_centres(voxels, deck.isochromat);
  // Batches of voxels whose samples stay near 256 MiB of floats.
  const std::int64_t batch = std::max<std::int64_t>(
      1, std::int64_t((std::size_t(64) << 20) / std::max<std::size_t>(1, 2 * table.samples())));
  std::vector<double> kspace;
  std::string error, layout;
  const auto start = clock::now();
  try {
    kspace = engine.kspace(voxels.tissue, centres.data(), batch);
  } catch (const std::exception& e) {
    error = e.what();
  }
  timer.end_phase("simulate", "compute");
  comm.throw_if_any_failed(error.empty(), error);
  comm.all_reduce_sum(kspace);
  const double seconds =
      comm.all_reduce_max(std::chrono::duration<double>(clock::now() - start).count());
  timer.end_phase("agree", "comm");
  if (comm.is_root()) {
    try {
#if LARMOR_HAVE_ISMRMRD
      std::vector<io::mrd::Acquisition> readouts =
          readouts_of(table, kspace, deck.isochromat.voxel_size_m);
      io::mrd::RawEncoding encoding;
      int longest = 0;
      for (const auto& r : readouts) longest = std::max(longest, r.samples);
      encoding.matrix[0] = longest;
      encoding.matrix[1] = int(readouts.size());
      const auto& shape = voxels.volume_shape;
      const std::uint64_t n[3] = {shape[2], shape[1], shape[0]};
      for (int a = 0; a < 3; ++a) {
        encoding.fov_mm[a] = 1e3 * double(n[a]) * deck.isochromat.voxel_size_m[std::size_t(a)];
      }
      encoding.trajectory = "other";
      layout = io::mrd::label_cartesian(readouts, encoding, deck.isochromat.voxel_size_m)
                   ? "Cartesian, " + std::to_string(encoding.matrix[1]) + " lines" +
                         (encoding.matrix[2] > 1
                              ? " x " + std::to_string(encoding.matrix[2]) + " partitions"
                              : std::string())
                   : std::string("not Cartesian: trajectory only");
      const std::string folder_error = io::make_output_folder(deck.output_path);
      if (!folder_error.empty()) throw std::runtime_error(folder_error);
      io::mrd::write_raw_dataset(deck.output_path, io::mrd::raw_header_xml(encoding), readouts);
#else
      throw std::runtime_error(deck.path +
                               ": [output] kspace: this build has no libismrmrd "
                               "(Debian: libismrmrd-dev) to write raw data with");
#endif
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  comm.throw_if_any_failed(error.empty(), error);
  timer.end_phase("write", "io");
  timer.write_json(args.timings, "simulate",
                   ", \"voxels\": " + std::to_string(voxels.total) + ", \"backend\": \"" +
                       simulate::default_backend::name() + "\"");
  if (comm.is_root() && !args.quiet) {
    std::printf("larmor simulate: k-space of %lld voxels in %.3f s\n",
                static_cast<long long>(voxels.total), seconds);
    std::printf("larmor simulate: wrote %s (ISMRMRD raw data, %zu samples; %s)\n",
                deck.output_path.c_str(), table.samples(), layout.c_str());
  }
  return 0;
}

}  // namespace

int run_simulate_isochromats(const SimulateArgs& args, app::Deck& deck,
                             const parallel::Communicator& comm, PhaseTimer& timer) {
  using clock = std::chrono::steady_clock;
  const bool talk = comm.is_root() && !args.quiet;
  report_sequence(deck, comm, args.quiet, "larmor simulate");
  std::string error;
  std::optional<simulate::IsochromatSimulator> engine;
  deck.isochromat.keep_encodes = deck.kspace;
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
  // A frequency spread (T2') repeats each voxel's isochromats at up to this
  // many offsets; refused, before any work, where a voxel would need too many.
  std::int64_t offsets = 1, played_voxels = voxels.tissue.voxels;
  try {
    offsets = engine->most_frequency_offsets(voxels.tissue, &played_voxels);
  } catch (const std::exception& e) {
    error = deck.path + ": [tissue] " + e.what();
  }
  comm.throw_if_any_failed(error.empty(), error);
  offsets = comm.all_reduce_max(offsets);
  played_voxels = comm.all_reduce_sum(played_voxels);
  if (comm.is_root() && !engine->plan().warning.empty()) {
    std::fprintf(stderr, "larmor simulate: warning: %s\n", engine->plan().warning.c_str());
  }
  if (talk) {
    std::printf("larmor simulate: isochromat engine (%s)\n", deck.engine_reason.c_str());
    std::printf("  %s\n", engine->plan().report.c_str());
    if (offsets > 1) {
      std::printf(
          "  t2_prime_ms: each isochromat repeated at up to %lld frequency offsets of the voxel's "
          "Lorentzian spread (%.3g isochromats per voxel; accuracy %g)\n",
          static_cast<long long>(offsets), double(offsets) * double(engine->plan().size()),
          deck.isochromat.accuracy);
    }
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
  if (deck.kspace) return run_kspace(args, deck, comm, timer, *engine, voxels);

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
  layout.counts = {{"steps", std::int64_t(table.steps())}, {"isochromats", plan.size()},
                   {"isochromats_x", plan.counts[0]},      {"isochromats_y", plan.counts[1]},
                   {"isochromats_z", plan.counts[2]},      {"frequency_offsets", offsets}};
  layout.texts = {{"engine", "isochromat"}, {"engine_reason", deck.engine_reason}};
  app::write_signal_file(deck.output_path, comm, layout, voxels, signals, info);
  timer.end_phase("write", "io");
  timer.write_json(args.timings, "simulate",
                   ", \"voxels\": " + std::to_string(voxels.total) + ", \"backend\": \"" +
                       simulate::default_backend::name() + "\"");
  if (talk) {
    const double steps = double(table.steps()) * double(plan.size()) * double(played_voxels);
    std::printf("larmor simulate: simulated in %.3f s (%.3g isochromat steps per second)\n",
                seconds, seconds > 0 ? steps / seconds : 0.0);
    std::printf("larmor simulate: wrote %s\n", deck.output_path.c_str());
  }
  return 0;
}

}  // namespace larmor::drivers
