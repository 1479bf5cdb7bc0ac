// The Pulseq Bloch reference's rf_uniform_across_spins option: every spin is
// turned by a pulse as the voxel centre is, and the gradient's phase across the
// spins during the pulse is applied before and after the pulse's centre. Then
// a slice-selective pulse has no profile across the spins, a crushed spin echo
// around a slice-selective 180 refocuses exactly, and pulses without a
// gradient are unchanged.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "io/pulseq/pulseq_file.hpp"
#include "reference/pulseq_bloch.hpp"
#include "reference/pulseq_test_text.hpp"

namespace larmor::reference {
namespace {

namespace pq = larmor::io::pulseq;
using Vec = std::array<double, 3>;
using namespace pulseq_test_text;

// Version 1.4; block raster 1 us, so block durations are in us.
std::string header() {
  return "[VERSION]\nmajor 1\nminor 4\nrevision 0\n\n[DEFINITIONS]\nAdcRasterTime 1e-07\n"
         "BlockDurationRaster 1e-06\nGradientRasterTime 1e-05\nRadiofrequencyRasterTime 1e-06\n\n";
}

// Magnitude and phase shapes (ids first, first + 1) of a signed waveform.
std::string signed_shapes(int first, const std::vector<double>& wave) {
  std::vector<double> mag, phase;
  for (double s : wave) {
    mag.push_back(std::abs(s));
    phase.push_back(s < 0 ? 0.5 : 0.0);
  }
  return shape(first, mag) + shape(first + 1, phase);
}

Complex sample(const pq::PulseqFile& file, const Tissue& t, const std::vector<Vec>& positions,
               bool uniform, const Vec& centre = {0, 0, 0}) {
  BlochOptions options;
  options.positions_m = positions;
  options.rf_uniform_across_spins = uniform;
  options.centre_m = centre;
  const auto samples = simulate_pulseq_bloch(file, t, options);
  EXPECT_EQ(samples.size(), 1u);
  return samples.at(0).value;
}

// ---- 1. a slice-selective pulse without its profile ----------------------------

// A 30 degree sinc (2 ms, default raster) on the flat top of a z trapezoid of
// 2e5 Hz/m (a 10 mm slice), offset by 200 Hz to the slice at z = 1 mm; the
// rephaser (-210 /m) cancels the moment from the pulse's centre (1100 us) to
// the gradient's end, then one sample.
std::string off_centre_slice() {
  std::vector<double> wave;
  double area = 0;
  for (int k = 0; k < 2000; ++k) {
    wave.push_back(sinc_lobes((k + 0.5) / 2000));
    area += wave.back() * 1e-6;
  }
  const double amp = (kPi / 6) / (2 * kPi * area);
  return header() +
         "[BLOCKS]\n1 2200 1 0 0 1 0 0\n2 1150 0 0 0 2 0 0\n3 10 0 0 0 0 1 0\n\n[RF]\n1 " +
         num(amp) +
         " 1 2 0 100 200 0\n\n[TRAP]\n1 200000 100 2000 100 0\n2 -200000 100 950 100 0\n\n"
         "[ADC]\n1 1 10000 0 0 0\n\n[SHAPES]\n\n" +
         signed_shapes(1, wave);
}

TEST(PulseqBlochUniformRf, SliceSelectivePulseTurnsEverySpinAsTheCentre) {
  const pq::PulseqFile file = parse(off_centre_slice());
  const Tissue t = tissue(1.0, 0.1, 5.0);
  const Vec centre = {0, 0, 1e-3};
  const Complex single = sample(file, t, {centre}, false);
  EXPECT_GT(std::abs(single), 0.4);
  // Spins over 8 mm of the 10 mm slice, one at a time.
  std::vector<Vec> spread;
  double profile = 0;  // the largest relative difference without the option
  for (int j = 0; j < 9; ++j) {
    const Vec r = {0, 0, centre[2] + (j - 4) * 1e-3};
    spread.push_back(r);
    EXPECT_LT(std::abs(sample(file, t, {r}, true, centre) - single), 1e-9) << j;
    profile = std::max(profile, std::abs(sample(file, t, {r}, false) - single) / std::abs(single));
  }
  EXPECT_GT(profile, 1e-3);
  // All at once: their mean is the centre's value.
  EXPECT_LT(std::abs(sample(file, t, spread, true, centre) - single), 1e-9);
  EXPECT_GT(std::abs(sample(file, t, spread, false) - single), 1e-3);
}

// ---- 2. a crushed spin echo around a slice-selective 180 -----------------------------

// A hard 90 about +x, a crusher of 100 /m on z (700 us), a 180 about +y on a
// time shape spanning the whole z trapezoid of its slice (1e5 Hz/m, ramps
// included, symmetric about the pulse's peak at 1100 us), the crusher again (or
// none) and one sample. `slice` false: the 180 without its gradient; `offset`
// is the 180's frequency offset.
std::string crushed_echo(bool second_crusher, bool slice = true, double offset = 0.0) {
  std::vector<double> wave, points;
  double area = 0;
  for (int k = 0; k <= 110; ++k) {
    wave.push_back(sinc_lobes(k / 110.0));
    points.push_back(20.0 * k);
    if (k > 0) area += 0.5 * (wave[k - 1] + wave[k]) * 20e-6;
  }
  const double amp = 0.5 / area;  // 2 pi amp area = pi
  return header() + "[BLOCKS]\n1 10 1 0 0 0 0 0\n2 700 0 0 0 2 0 0\n3 2200 2 0 0 " +
         (slice ? "1" : "0") + " 0 0\n4 700 0 0 0 " + (second_crusher ? "2" : "0") +
         " 0 0\n5 10 0 0 0 0 1 0\n\n[RF]\n1 25000 1 0 0 0 0 0\n2 " + num(amp) + " 2 3 4 0 " +
         num(offset) +
         " 1.5707963267948966\n\n[TRAP]\n1 100000 100 2000 100 0\n2 200000 100 400 100 0\n\n"
         "[ADC]\n1 1 10000 0 0 0\n\n[SHAPES]\n\n" +
         shape(1, std::vector<double>(10, 1.0)) + signed_shapes(2, wave) + shape(4, points);
}

// n spins over one turn of 100 /m on z, centred on z = 0 (10 mm of an 18 mm slice).
std::vector<Vec> over_the_crusher(int n) {
  std::vector<Vec> r;
  for (int j = 0; j < n; ++j) r.push_back({0, 0, ((j + 0.5) / n - 0.5) / 100});
  return r;
}

TEST(PulseqBlochUniformRf, CrushedSpinEchoRefocusesAroundASliceSelective180) {
  const Tissue t = tissue(kNoRelaxation, kNoRelaxation, 0.0);
  const std::vector<Vec> spins = over_the_crusher(16);
  const pq::PulseqFile balanced = parse(crushed_echo(true));
  // The centre sees no gradient: the 90 about +x gives -i, the exact 180 about
  // +y maps it to -conj(-i) = -i.
  const Complex single = sample(balanced, t, {{0, 0, 0}}, false);
  EXPECT_LT(std::abs(single - (-kI)), 1e-9);
  // Each spin's phase from the slice gradient before the centre (ramp
  // included) is undone by the one after it, the crushers' by each other.
  EXPECT_LT(std::abs(sample(balanced, t, spins, true) - single), 1e-9);
  for (int j : {0, 5, 15}) {
    EXPECT_LT(std::abs(sample(balanced, t, {spins[j]}, true) - single), 1e-9) << j;
  }
  // Without the option the 180's profile across the spins shows.
  EXPECT_GT(std::abs(sample(balanced, t, spins, false) - single), 1e-3);
  // Without the second crusher the spins stay spread over a whole turn.
  const pq::PulseqFile unbalanced = parse(crushed_echo(false));
  EXPECT_LT(std::abs(sample(unbalanced, t, spins, true)), 1e-9);
}

// ---- 3. no gradient during the pulses: no change ---------------------------------------

TEST(PulseqBlochUniformRf, ChangesNothingWithoutAGradientDuringThePulses) {
  // Relaxation, off-resonance, an RF frequency offset, sub-steps, spins in 3D
  // and a centre off the origin: only the crushers, outside the pulses, see
  // the positions.
  const pq::PulseqFile file = parse(crushed_echo(true, false, 300.0));
  BlochOptions options;
  options.positions_m = over_the_crusher(12);
  for (std::size_t j = 0; j < options.positions_m.size(); ++j) {
    options.positions_m[j][0] = 1e-3 * double(j % 3);
    options.positions_m[j][1] = -2e-3 * double(j % 4);
  }
  options.rf_substeps = 2;
  const Tissue t = tissue(1.0, 0.1, 20.0);
  const auto off = simulate_pulseq_bloch(file, t, options);
  options.rf_uniform_across_spins = true;
  options.centre_m = {1e-3, -2e-3, 3e-3};
  const auto on = simulate_pulseq_bloch(file, t, options);
  ASSERT_EQ(off.size(), 1u);
  ASSERT_EQ(on.size(), 1u);
  EXPECT_GT(std::abs(off[0].value), 0.1);
  EXPECT_LT(std::abs(on[0].value - off[0].value), 1e-12);
}

}  // namespace
}  // namespace larmor::reference
