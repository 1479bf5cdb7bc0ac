// The isochromat engine (kernels/bloch/, the step table of
// io/pulseq/pulseq_steps.hpp) on one backend against the double-precision
// host Bloch reference (tests/reference/pulseq_bloch.hpp, written from the
// physics and sharing no code with the engine) at the same isochromats: a
// voxel shared by several teams, every file of the shared Pulseq corpus that
// has a readout, raw k-space at voxel positions, and the isochromat plan.
// The closed forms are in tstIsochromatPhysics.hpp.
#pragma once

#include "bloch/isochromat_test_support.hpp"

namespace larmor::test {
namespace {

// A voxel of many isochromats is shared by several teams, each holding runs
// of isochromats along the grid's longest axis, the last run of every line
// part empty (999 is no multiple of a run). The sum over the teams must be
// the grid's sum: the crushers' 40 turns cancel the FID exactly, and the
// echo is the reference's at the same isochromats.
TEST(TEST_CATEGORY, isochromat_voxel_shared_by_several_teams_sums_its_whole_grid) {
  const double amplitude = 40.0 / (90e-6 * 1e-3);
  const auto file = parse(crushed_echo(amplitude));
  const auto table = io::pulseq::to_step_table(file);
  IsochromatVoxel voxel;
  voxel.counts = {3, 5, 999};
  voxel.centre_m = {2e-3, -1e-3, 0.5e-3};
  const reference::Tissue t = reference::pulseq_test_text::tissue(1e9, 0.05, 30.0);
  const auto ours = play_isochromats(table, voxel, t);
  EXPECT_LT(std::abs(ours[0]), 1e-4);
  EXPECT_NEAR(std::abs(ours[1]), std::exp(-240e-6 / t.t2_s), 1e-3);
  EXPECT_LT(relative_difference(ours, reference_at(file, voxel, t)), 2e-5);
}

// The corpus: every file with a readout, played whole at a grid over a 1 mm
// voxel at the slice of its first selective pulse, against the reference at
// the same isochromats. What separates the two is float rounding: the first
// 24 samples after the first pulse agree to 2e-5 of the largest; over the
// whole file, where each step's roundings add at random (a balanced SSFP
// keeps them for about T1), to 1e-7 sqrt(steps).
TEST(TEST_CATEGORY, isochromat_engine_agrees_with_the_reference_on_the_corpus) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(LARMOR_SOURCE_DIR) / ".." / "shared" / "data" / "pulseq-corpus";
  if (!fs::exists(dir)) GTEST_SKIP() << "no corpus at " << dir;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".seq") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  const reference::Tissue t = reference::pulseq_test_text::tissue(0.8, 0.08, 5.0);
  int compared = 0;
  for (const fs::path& path : files) {
    io::pulseq::PulseqFile file;
    try {
      file = io::pulseq::PulseqFile::read(path.string());
    } catch (const std::exception&) {
      continue;  // refused by the reader (no [VERSION]): the deck says why
    }
    // A file with ppm offsets and no field (an EPI's fat saturation) at 3 T,
    // read by both simulations from the definitions.
    file.definitions.values.emplace("B0", "3");
    // The first samples after the first pulse: a table of the whole file
    // finds them.
    io::pulseq::StepOptions options;
    auto table = io::pulseq::to_step_table(file, options);
    if (table.samples() == 0) continue;
    double now = 0.0, first_pulse = -1.0;
    for (std::size_t i = 0; i < table.steps() && first_pulse < 0.0; ++i) {
      const float* r = &table.records[i * bloch::step_floats];
      if (int(r[bloch::step_field::kind]) == bloch::rf_step) first_pulse = now;
      now += r[bloch::step_field::dt];
    }
    std::size_t first = 0;
    while (first < table.samples() && table.sample_time_s[first] < first_pulse) ++first;
    if (first == table.samples()) continue;  // no sample follows a pulse
    const std::size_t wanted = table.samples(), early = std::min(wanted, first + 24);
    options.end_time_s = table.sample_time_s[wanted - 1] + 1e-9;
    IsochromatVoxel voxel;
    voxel.counts = {4, 4, 4};
    voxel.centre_m = table.slice_position_m;
    auto ours = play_isochromats(table, voxel, t);
    auto ref = reference_at(file, voxel, t, options.end_time_s);
    ASSERT_GE(ref.size(), wanted) << path;
    for (std::size_t i = 0; i < wanted; ++i) {
      ASSERT_NEAR(ref[i].time_s, table.sample_time_s[i], 1e-9) << path << " sample " << i;
    }
    ours.erase(ours.begin(), ours.begin() + std::ptrdiff_t(first));
    ref.erase(ref.begin(), ref.begin() + std::ptrdiff_t(first));
    ref.resize(ours.size());
    const double difference = relative_difference(ours, ref);
    EXPECT_LT(difference, 1e-7 * std::sqrt(double(table.steps()))) << path;
    const std::vector<Complex> ours_early(ours.begin(),
                                          ours.begin() + std::ptrdiff_t(early - first));
    const double early_difference = relative_difference(
        ours_early, std::vector<reference::BlochSample>(
                        ref.begin(), ref.begin() + std::ptrdiff_t(early - first)));
    EXPECT_LT(early_difference, 2e-5) << path;
    if (std::getenv("LARMOR_CORPUS_VERBOSE") != nullptr) {
      std::printf("%-48s %8zu steps %6zu samples  difference %.2e (first 24: %.2e)\n",
                  path.filename().string().c_str(), table.steps(), table.samples(), difference,
                  early_difference);
      for (std::size_t i = 0; i < early - first; ++i) {
        std::printf("  %3zu %10.4f ms  engine (%9.6f, %9.6f)  reference (%9.6f, %9.6f)\n", i,
                    ref[i].time_s * 1e3, ours[i].real(), ours[i].imag(), ref[i].value.real(),
                    ref[i].value.imag());
      }
    }
    ++compared;
  }
  EXPECT_EQ(compared, 21);  // every file of the corpus with an ADC and a [VERSION]
}

// Raw k-space keeps the encodes: a voxel moved by d along a crusher of
// moment m gains exp(i 2 pi m d) after it (the grid moves rigidly), and the
// 180 undoes it at the echo. Two voxels at +d and -d then sum to
// 2 cos(2 pi m d) times the centred voxel's FID and twice its echo. Without
// relaxation: during a finite pulse the part of M along B1 relaxes with T2
// and the rest partly with T1, so a voxel's echo depends on its phases
// before the 180 (a real effect of a few parts in 10^5 here).
TEST(TEST_CATEGORY, isochromat_kspace_keeps_the_encodes_of_each_voxel_position) {
  const double moment = 250.0;  // 1/m: a quarter turn across the 1 mm voxel
  const auto table = io::pulseq::to_step_table(parse(crushed_echo(moment / 90e-6)));
  simulate::IsochromatSettings settings;
  settings.isochromats = 64;
  settings.keep_encodes = true;
  const simulate::IsochromatSimulator engine(table, settings);
  tissue::Tissue one;
  one.voxels = 1;
  std::vector<float> centred(table.samples() * 2);
  engine.run(one, centred.data(), nullptr);
  tissue::Tissue two = one;
  two.voxels = 2;
  const double d = 0.5e-3;
  const std::vector<double> centres = {0.0, 0.0, d, 0.0, 0.0, -d};
  const std::vector<double> kspace = engine.kspace(two, centres.data(), 1);
  ASSERT_EQ(kspace.size(), centred.size());
  const double factor = 2.0 * std::cos(2.0 * M_PI * moment * d);
  ASSERT_GT(std::abs(Complex(centred[0], centred[1])), 0.1);
  EXPECT_NEAR(kspace[0], factor * centred[0], 2e-6);
  EXPECT_NEAR(kspace[1], factor * centred[1], 2e-6);
  EXPECT_NEAR(kspace[2], 2.0 * centred[2], 2e-6);
  EXPECT_NEAR(kspace[3], 2.0 * centred[3], 2e-6);
}

// Three repetitions of a gradient echo: a 10 us 30-degree pulse, a readout
// prephaser along x with a phase encode along y (0.5 turn per mm x
// `encodes[r]`), a readout of 8 samples, the encode's rewinder with a spoiler
// along x, and a wait. Blocks in us.
std::string phase_encoded_echoes(const std::array<double, 3>& encodes) {
  std::string blocks = "[BLOCKS]\n", traps =
                                         "[TRAP]\n1 -100000 10 80 10 0\n2 50000 10 180 10 0\n"
                                         "3 300000 10 80 10 0\n";
  int id = 1;
  for (int r = 0; r < 3; ++r) {
    const int encode = encodes[std::size_t(r)] != 0.0 ? 4 + 2 * r : 0;
    const int rewind = encode != 0 ? encode + 1 : 0;
    const double amplitude = encodes[std::size_t(r)] * 500.0 / 90e-6;
    if (encode != 0) {
      traps += std::to_string(encode) + " " + num(amplitude) + " 10 80 10 0\n";
      traps += std::to_string(rewind) + " " + num(-amplitude) + " 10 80 10 0\n";
    }
    const auto block = [&](const std::string& rest) {
      blocks += std::to_string(id++) + " " + rest + "\n";
    };
    block("10 1 0 0 0 0 0");
    block("100 0 1 " + std::to_string(encode) + " 0 0 0");
    block("200 0 2 0 0 1 0");
    block("100 0 3 " + std::to_string(rewind) + " 0 0 0");
    block("2000 0 0 0 0 0 0");
  }
  return seq_header() + blocks + "\n[RF]\n1 " + num(30.0 / 360.0 / 10e-6) + " 1 0 0 0 0 0\n\n" +
         traps + "\n[ADC]\n1 8 20000 20 0 0\n\n[SHAPES]\n" + shape(1, std::vector<double>(10, 1.0));
}

// The voxel's own signal: with the phase encodes taken out (they are rewound
// before the next pulse) every sample is the one the same file gives without
// them, to float precision; kept, they dephase the voxel.
TEST(TEST_CATEGORY, isochromat_own_signal_takes_out_rewound_phase_encodes) {
  const auto encoded = io::pulseq::to_step_table(parse(phase_encoded_echoes({-2.0, 1.0, 3.0})));
  const auto plain = io::pulseq::to_step_table(parse(phase_encoded_echoes({0.0, 0.0, 0.0})));
  ASSERT_EQ(encoded.samples(), 24u);
  IsochromatVoxel voxel;
  voxel.counts = {16, 8, 1};
  const reference::Tissue t = reference::pulseq_test_text::tissue(0.5, 0.05, 20.0);
  const auto own = play_isochromats(encoded, voxel, t, nullptr, true);
  const auto raw = play_isochromats(encoded, voxel, t);
  const auto expected = play_isochromats(plain, voxel, t, nullptr, true);
  double largest = 0.0, raw_difference = 0.0;
  for (std::size_t i = 0; i < own.size(); ++i) {
    EXPECT_LT(std::abs(own[i] - expected[i]), 2e-6) << "sample " << i;
    largest = std::max(largest, std::abs(expected[i]));
    raw_difference = std::max(raw_difference, std::abs(raw[i] - expected[i]));
  }
  EXPECT_GT(largest, 0.1);
  EXPECT_GT(raw_difference, 0.3 * largest);  // the encodes do dephase the raw samples
}

TEST(TEST_CATEGORY, isochromat_plan_resolves_the_windings_and_refuses_beyond_its_limit) {
  const double amplitude = 4.0 / (90e-6 * 1e-3);  // 4 turns per crusher across 1 mm
  const auto table = io::pulseq::to_step_table(parse(crushed_echo(amplitude)));
  simulate::IsochromatSettings settings;
  const auto plan = simulate::plan_isochromats(table, settings);
  // Two spans (90 to 180, 180 to the end) of 4 turns along z, and a swing of
  // 4 turns within each: the grid along z resolves more than the windings.
  EXPECT_EQ(plan.lives_spans, table.spans);
  EXPECT_GT(plan.counts[2], plan.windings_turns[2]);
  EXPECT_EQ(plan.counts[0], 1);
  EXPECT_EQ(plan.counts[1], 1);
  settings.max_isochromats = 8;
  EXPECT_THROW(simulate::plan_isochromats(table, settings), std::invalid_argument);
  settings.isochromats = 8;
  EXPECT_EQ(simulate::plan_isochromats(table, settings).size(), 8);
}

}  // namespace
}  // namespace larmor::test
