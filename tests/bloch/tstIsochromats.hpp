// The isochromat engine (kernels/bloch/, the step table of
// io/pulseq/pulseq_steps.hpp) on one backend, against what is derived
// without it: closed forms (inversion recovery, a crushed spin echo, a
// spoiled FID) and the double-precision host Bloch reference
// (tests/reference/pulseq_bloch.hpp, written from the physics and sharing no
// code with the engine) at the same isochromats, on small files and on every
// file of the shared Pulseq corpus that has a readout.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "bloch/isochromats.hpp"
#include "io/pulseq/pulseq_steps.hpp"
#include "reference/pulseq_bloch.hpp"
#include "reference/pulseq_test_text.hpp"
#include "simulate/isochromat_simulator.hpp"
#include "test_paths.hpp"

namespace larmor::test {
namespace {

using IsoMem = TEST_EXECSPACE::memory_space;
using reference::Complex;
using Vec = std::array<double, 3>;

struct IsochromatVoxel {
  std::array<int, 3> counts{1, 1, 1};
  Vec edges_m{1e-3, 1e-3, 1e-3};
  Vec centre_m{0.0, 0.0, 0.0};
};

// The engine's samples (and mean Mz) of one voxel of `t`.
std::vector<Complex> play_isochromats(const sequence::StepTable& table,
                                      const IsochromatVoxel& voxel, const reference::Tissue& t,
                                      std::vector<double>* mz = nullptr) {
  const std::size_t steps = table.steps(), samples = table.samples();
  bloch::Steps<IsoMem> device_steps;
  {
    Kokkos::View<float * [bloch::step_floats], Kokkos::LayoutRight, IsoMem> copy("steps", steps);
    Kokkos::deep_copy(
        copy,
        Kokkos::View<const float * [bloch::step_floats], Kokkos::LayoutRight, Kokkos::HostSpace>(
            table.records.data(), steps));
    device_steps = copy;
  }
  const auto one = [](const char* name, double value) {
    Kokkos::View<float*, IsoMem> v(std::string(name), 1);
    Kokkos::deep_copy(v, float(value));
    return v;
  };
  bloch::VoxelTissue<IsoMem> tissue;
  tissue.m0 = one("m0", t.m0);
  tissue.t1 = one("t1", t.t1_s);
  tissue.t2 = one("t2", t.t2_s);
  tissue.b1 = one("b1", t.b1);
  tissue.df = one("df", t.df_hz);
  Kokkos::View<float* [3], Kokkos::LayoutRight, IsoMem> centre("centre", 1);
  auto centre_host = Kokkos::create_mirror_view(centre);
  for (int a = 0; a < 3; ++a) centre_host(0, a) = float(voxel.centre_m[std::size_t(a)]);
  Kokkos::deep_copy(centre, centre_host);
  tissue.centre_m = centre;
  bloch::IsochromatGrid grid;
  for (int a = 0; a < 3; ++a) {
    grid.counts[a] = voxel.counts[std::size_t(a)];
    grid.edges_m[a] = float(voxel.edges_m[std::size_t(a)]);
  }
  bloch::SampleViews<IsoMem> out;
  out.transverse = decltype(out.transverse)("signals", 1, samples);
  out.longitudinal = decltype(out.longitudinal)("mz", 1, samples);
  bloch::simulate_isochromats(TEST_EXECSPACE(), device_steps, grid, tissue, out);
  const auto signals = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out.transverse);
  const auto longitudinal =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out.longitudinal);
  std::vector<Complex> values;
  for (std::size_t s = 0; s < samples; ++s) {
    values.emplace_back(signals(0, s, 0), signals(0, s, 1));
    if (mz != nullptr) mz->push_back(longitudinal(0, s));
  }
  return values;
}

// The reference at the engine's isochromats.
std::vector<reference::BlochSample> reference_at(const io::pulseq::PulseqFile& file,
                                                 const IsochromatVoxel& voxel,
                                                 const reference::Tissue& t,
                                                 double end_time_s = 1e30) {
  reference::BlochOptions options;
  options.positions_m = reference::box_positions(voxel.edges_m, voxel.centre_m, voxel.counts);
  options.end_time_s = end_time_s;
  return reference::simulate_pulseq_bloch(file, t, options);
}

// The largest difference between the engine and the reference over the
// samples both have, relative to the reference's largest sample.
double relative_difference(const std::vector<Complex>& ours,
                           const std::vector<reference::BlochSample>& ref) {
  EXPECT_GE(ref.size(), ours.size());
  double largest = 0.0, worst = 0.0;
  for (std::size_t i = 0; i < std::min(ours.size(), ref.size()); ++i) {
    largest = std::max(largest, std::abs(ref[i].value));
    worst = std::max(worst, std::abs(ours[i] - ref[i].value));
  }
  EXPECT_GT(largest, 1e-3) << "the reference's signal vanishes: nothing is compared";
  return worst / largest;
}

using namespace reference::pulseq_test_text;

std::string seq_header() {
  return "[VERSION]\nmajor 1\nminor 4\nrevision 0\n\n[DEFINITIONS]\nAdcRasterTime 1e-07\n"
         "BlockDurationRaster 1e-06\nGradientRasterTime 1e-05\nRadiofrequencyRasterTime 1e-06\n\n";
}

// 10 us hard 180, TI, 10 us hard 90, one sample 1 us after it. Blocks in us.
std::string inversion_recovery(double ti_us) {
  const double wait = ti_us - 10;
  return seq_header() + "[BLOCKS]\n1 10 1 0 0 0 0 0\n2 " + num(wait) +
         " 0 0 0 0 0 0\n3 10 2 0 0 0 0 0\n"
         "4 20 0 0 0 0 1 0\n\n"
         "[RF]\n1 50000 1 0 0 0 0 0\n2 25000 1 0 0 0 0 0\n\n"
         "[ADC]\n1 1 10000 0 0 0\n\n[SHAPES]\n" +
         shape(1, std::vector<double>(10, 1.0));
}

TEST(TEST_CATEGORY, isochromat_inversion_recovery_matches_the_closed_form) {
  const reference::Tissue t = reference::pulseq_test_text::tissue(0.3, 1e9, 0.0);
  for (double ti_us : {20.0, 100000.0, 400000.0}) {
    const auto file = parse(inversion_recovery(ti_us));
    const auto table = io::pulseq::to_step_table(file);
    ASSERT_EQ(table.samples(), 1u);
    std::vector<double> mz;
    const auto ours = play_isochromats(table, {}, t, &mz);
    // -i (1 - 2 exp(-TI / T1)), TI centre to centre; the sample 10 us after
    // the 90's centre, where T1 has restored 3e-5 of Mz.
    const double expected = 1 - 2 * std::exp(-ti_us * 1e-6 / t.t1_s);
    EXPECT_NEAR(ours[0].real(), 0.0, 2e-4) << "TI " << ti_us << " us";
    EXPECT_NEAR(ours[0].imag(), -expected, 2e-4) << "TI " << ti_us << " us";
    EXPECT_NEAR(mz[0], 0.0, 2e-4);
  }
}

// 90 (phase 0) at 5 us, a crusher of `amplitude` x 90 us along z with a
// sample 4.5 us after it, 180 (phase pi/2) at 125 us, the same crusher, and a
// sample at the echo, 245 us. Blocks in us.
std::string crushed_echo(double amplitude_hz_per_m) {
  return seq_header() +
         "[BLOCKS]\n1 10 1 0 0 0 0 0\n2 110 0 0 0 1 1 0\n3 10 2 0 0 0 0 0\n"
         "4 110 0 0 0 1 0 0\n5 20 0 0 0 0 2 0\n\n"
         "[RF]\n1 25000 1 0 0 0 0 0\n2 50000 1 0 0 0 0 1.5707963267948966\n\n"
         "[TRAP]\n1 " +
         num(amplitude_hz_per_m) +
         " 10 80 10 0\n\n"
         "[ADC]\n1 1 1000 104 0 0\n2 1 10000 0 0 0\n\n[SHAPES]\n" +
         shape(1, std::vector<double>(10, 1.0));
}

TEST(TEST_CATEGORY, isochromat_crushed_spin_echo_refocuses_and_spoils_the_fid) {
  // Crushers winding 4 turns across a 1 mm voxel along z, 32 isochromats.
  const double amplitude = 4.0 / (90e-6 * 1e-3);
  const auto file = parse(crushed_echo(amplitude));
  const auto table = io::pulseq::to_step_table(file);
  ASSERT_EQ(table.samples(), 2u);
  IsochromatVoxel voxel;
  voxel.counts = {1, 1, 32};
  const reference::Tissue t = reference::pulseq_test_text::tissue(1e9, 0.05, 0.0);
  const auto ours = play_isochromats(table, voxel, t);
  // The FID after a whole number of turns sums to zero over the grid.
  EXPECT_LT(std::abs(ours[0]), 1e-4);
  // The echo: every isochromat refocused, T2 decay over TE (relaxation during
  // the 10 us pulses is part of the decay).
  const double te = 240e-6;
  EXPECT_NEAR(std::abs(ours[1]), std::exp(-te / t.t2_s), 1e-3);
  EXPECT_LT(relative_difference(ours, reference_at(file, voxel, t)), 2e-5);
}

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

// The corpus: every file with a readout, played at a grid over a 1 mm voxel
// at the slice of its first selective pulse, against the reference at the
// same isochromats over the first 24 samples after its first pulse. What
// separates the two is float rounding, a part in 10^7 per step over up to
// 10^5 steps.
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
    const std::size_t wanted = std::min<std::size_t>(table.samples(), first + 24);
    options.end_time_s = table.sample_time_s[wanted - 1] + 1e-9;
    table = io::pulseq::to_step_table(file, options);
    ASSERT_EQ(table.samples(), wanted) << path;
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
    EXPECT_LT(difference, 2e-4) << path;
    if (std::getenv("LARMOR_CORPUS_VERBOSE") != nullptr) {
      std::printf("%-48s %8zu steps %6zu samples  difference %.2e\n",
                  path.filename().string().c_str(), table.steps(), table.samples(), difference);
      for (std::size_t i = 0; i < ours.size(); ++i) {
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
