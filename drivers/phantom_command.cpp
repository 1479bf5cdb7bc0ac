// larmor phantom -o FILE.h5 --voxels N --sequence DECK.toml: a synthetic
// brain-like volume (src/phantom/) with its truth maps and the noisy signals
// of the deck's sequence, for running and checking `larmor fit` without
// external data. Under mpirun the voxels are simulated in parallel; the file
// is the same for any rank count, written collectively and atomically.
//
//   /mask, /class              uint8   [nz][ny][nx]
//   /m0, /t1_ms, /t2_ms, /b1   float32 [nz][ny][nx]  truth (0 outside the mask)
//   /signals                   float32 [voxels][samples][2]
//   /voxel_index               int64   [voxels]  linear index of each masked voxel
//   /volume_shape              int64   [3]
//
// With --nifti, NIfTI copies beside it (what `larmor fit` reads as NIfTI data).
#include <array>
#include <chrono>
#include <cstdio>
#include <optional>
#include <stdexcept>

#include "app/deck.hpp"
#include "cli/checks.hpp"
#include "commands.hpp"
#include "io/hdf5_file.hpp"
#include "io/nifti_file.hpp"
#include "io/temporary_files.hpp"
#include "parallel/partition.hpp"
#include "phantom/brain_phantom.hpp"
#include "simulate/isochromat_simulator.hpp"
#include "simulate/noise.hpp"
#include "simulate/simulator.hpp"

namespace larmor::drivers {

void add_phantom(CLI::App& app, PhantomArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "phantom", "Write a synthetic brain-like volume with truth maps and noisy signals");
  cmd->add_option("-o,--output", args.output, "HDF5 file to write")->required();
  cmd->add_option("-n,--voxels", args.voxels, "About this many brain (masked) voxels")
      ->check(CLI::Range(1ll, 2147483647ll));
  cmd->add_option("--sequence", args.sequence_deck, "Deck whose [sequence] is simulated")
      ->required();
  cmd->add_option("--noise", args.noise, "Complex noise per channel, relative to M0 = 1")
      ->check(cli::finite_number(0.0, true, 10.0, "noise relative to M0"));
  cmd->add_option("--seed", args.seed, "Noise seed");
  cmd->add_flag("--nifti", args.nifti,
                "Also write NIfTI copies beside the HDF5: <stem>_signals.nii (4-D complex64), "
                "<stem>_mask.nii and the truth maps <stem>_<map>.nii");
}

int run_phantom(const PhantomArgs& args, const parallel::Communicator& comm) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const app::Deck deck = app::read_deck(args.sequence_deck, {}, false);
  io::refuse_output_over_inputs(args.output, deck.input_files, "-o: the output");
  const phantom::Volume volume = phantom::make_volume(args.voxels);
  const std::int64_t n = std::int64_t(volume.brain.size());
  const parallel::Range mine = parallel::partition_evenly(n, comm.size(), comm.rank());
  const tissue::Tissue local = phantom::tissue_of(volume, mine.begin, mine.end);
  // The deck's engine: EPG, or the isochromat engine for a Pulseq file that
  // runs there (each voxel its own signal, at the deck's one voxel centre).
  std::vector<float> signals;
  int samples = 0;
  if (deck.isochromats) {
    std::optional<simulate::IsochromatSimulator> engine;
    try {
      engine.emplace(*deck.steps, deck.isochromat);
    } catch (const std::exception& e) {
      throw std::invalid_argument(deck.path + ": " + e.what());
    }
    samples = int(engine->samples());
    signals.resize(std::size_t(local.voxels) * std::size_t(samples) * 2);
    engine->run(local, signals.data(), nullptr);
  } else {
    const simulate::Simulator sim(deck.sequence, deck.simulation);
    samples = sim.samples();
    signals = sim.run(local);
  }
  simulate::add_complex_noise(signals, samples, mine.begin, args.noise, args.seed);

  // The truth maps of the whole volume (every rank holds them; rank 0 writes).
  const std::size_t total = volume.mask.size();
  const tissue::Tissue all = phantom::tissue_of(volume, 0, n);
  std::vector<float> m0(total, 0.0f), t1(total, 0.0f), t2(total, 0.0f), b1(total, 0.0f);
  for (std::int64_t k = 0; k < n; ++k) {
    const std::size_t i = std::size_t(volume.brain[std::size_t(k)]);
    m0[i] = all.m0.map[std::size_t(k)];
    t1[i] = all.t1_s.map[std::size_t(k)] * 1e3f;
    t2[i] = all.t2_s.map[std::size_t(k)] * 1e3f;
    b1[i] = all.b1.map[std::size_t(k)];
  }
  io::H5Writer out(args.output, comm);
  const std::vector<std::uint64_t> shape(volume.shape.begin(), volume.shape.end());
  out.write_whole("/mask", shape, volume.mask);
  out.write_whole("/class", shape, volume.classes);
  out.write_whole("/m0", shape, m0);
  out.write_whole("/t1_ms", shape, t1);
  out.write_whole("/t2_ms", shape, t2);
  out.write_whole("/b1", shape, b1);
  out.write_whole("/volume_shape", {3},
                  std::vector<std::int64_t>(volume.shape.begin(), volume.shape.end()));
  const auto d = std::uint64_t(samples);
  out.write_rows("/signals", {std::uint64_t(n), d, 2}, mine.begin, signals.data(), mine.size());
  out.write_rows("/voxel_index", {std::uint64_t(n)}, mine.begin, volume.brain.data() + mine.begin,
                 mine.size());
  out.set_attribute("/", "noise_sigma", args.noise);
  out.set_attribute("/", "seed", std::int64_t(args.seed));
  out.set_attribute("/", "builder", deck.builder);
  out.set_attribute("/", "sequence_deck", args.sequence_deck);
  out.commit();
  // NIfTI copies (rank 0 gathers the signals; each file atomic).
  const auto gathered = args.nifti ? comm.gather_rows(signals.data(), mine.size(), d * 2 * 4)
                                   : parallel::GatheredRows{};
  if (args.nifti && comm.is_root()) {
    const std::string stem =
        args.output.size() > 3 && args.output.compare(args.output.size() - 3, 3, ".h5") == 0
            ? args.output.substr(0, args.output.size() - 3)
            : args.output;
    const std::array<std::int64_t, 3> dims{std::int64_t(volume.shape[0]),
                                           std::int64_t(volume.shape[1]),
                                           std::int64_t(volume.shape[2])};
    io::NiftiSeries series;
    series.shape = dims;
    series.samples = std::int64_t(d);
    series.values.assign(2 * d * total, 0.0f);
    const float* all = reinterpret_cast<const float*>(gathered.bytes.data());
    for (std::int64_t k = 0; k < n; ++k) {
      const std::size_t voxel = std::size_t(volume.brain[std::size_t(k)]);
      for (std::size_t s = 0; s < d; ++s) {
        series.values[2 * (s * total + voxel)] = all[(k * d + s) * 2];
        series.values[2 * (s * total + voxel) + 1] = all[(k * d + s) * 2 + 1];
      }
    }
    io::write_nifti_series(stem + "_signals.nii", series);
    io::write_nifti_volume(stem + "_mask.nii", dims,
                           std::vector<float>(volume.mask.begin(), volume.mask.end()));
    io::write_nifti_volume(stem + "_m0.nii", dims, m0);
    io::write_nifti_volume(stem + "_t1_ms.nii", dims, t1);
    io::write_nifti_volume(stem + "_t2_ms.nii", dims, t2);
    io::write_nifti_volume(stem + "_b1.nii", dims, b1);
  }
  if (comm.is_root()) {
    std::printf(
        "larmor phantom: %lld brain voxels in a %llux%llux%llu volume, %d samples of %s, "
        "noise %g, %.2f s -> wrote %s\n",
        static_cast<long long>(n), static_cast<unsigned long long>(shape[0]),
        static_cast<unsigned long long>(shape[1]), static_cast<unsigned long long>(shape[2]),
        samples, (deck.isochromats ? deck.builder + " (isochromat engine)" : deck.builder).c_str(),
        args.noise, std::chrono::duration<double>(clock::now() - start).count(),
        args.output.c_str());
  }
  return 0;
}

}  // namespace larmor::drivers
