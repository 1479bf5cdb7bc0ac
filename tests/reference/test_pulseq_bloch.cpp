// The Pulseq Bloch reference against closed forms: each test builds a small
// .seq file and compares the samples with a value derived by hand (damped
// nutation, inversion recovery, gradient and spin echoes, the area theorem of
// a real on-resonance pulse, Rabi nutation about a tilted axis, pre-1.4 block
// timing). Rotations in the tests use quaternions, not the reference's
// Rodrigues form.
#include <gtest/gtest.h>

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

// Version and definitions; block raster 1 us, so block durations are in us.
std::string header(int minor, const std::string& definitions = "") {
  return "[VERSION]\nmajor 1\nminor " + std::to_string(minor) +
         "\nrevision 0\n\n[DEFINITIONS]\nAdcRasterTime 1e-07\nBlockDurationRaster 1e-06\n"
         "GradientRasterTime 1e-05\nRadiofrequencyRasterTime 1e-06\n" +
         definitions + "\n";
}

std::vector<double> ones(int n) { return std::vector<double>(static_cast<std::size_t>(n), 1.0); }

std::vector<BlochSample> run(const pq::PulseqFile& file, const Tissue& t,
                             BlochOptions options = {}) {
  return simulate_pulseq_bloch(file, t, options);
}

// v turned right-handed by `angle` about `axis`: the unit quaternion
// q = (cos a/2, u sin a/2) applied as q v q*, expanded as
// v + 2 w (u x v) + 2 u x (u x v).
Vec quaternion_turn(const Vec& axis, double angle, const Vec& v) {
  const double len = std::sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
  const double w = std::cos(angle / 2), s = std::sin(angle / 2) / len;
  const Vec u = {axis[0] * s, axis[1] * s, axis[2] * s};
  const auto cross = [](const Vec& a, const Vec& b) {
    return Vec{a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
  };
  const Vec uv = cross(u, v), uuv = cross(u, uv);
  return {v[0] + 2 * w * uv[0] + 2 * uuv[0], v[1] + 2 * w * uv[1] + 2 * uuv[1],
          v[2] + 2 * w * uv[2] + 2 * uuv[2]};
}

// ---- 1. hard 90 then free decay --------------------------------------------

// 100 us of 2500 Hz (a quarter turn), then 10 samples 50 us apart.
const double kHardT = 100e-6, kHardAmp = 2500.0;
std::string hard_fid() {
  return header(4) +
         "[BLOCKS]\n1 100 1 0 0 0 0 0\n2 1000 0 0 0 0 1 0\n\n[RF]\n1 2500 1 0 0 0 0 0\n\n"
         "[ADC]\n1 10 50000 100 0 0\n\n[SHAPES]\n\n" +
         shape(1, ones(100));
}

TEST(PulseqBloch, HardPulseFidMatchesDampedNutation) {
  // On resonance with T2 only: My' = -w Mz - R2 My, Mz' = w My, a damped
  // oscillator: My(T) = -exp(-R2 T / 2) (w / wd) sin(wd T), wd^2 = w^2 - R2^2 / 4.
  const double t2 = 0.05, m0 = 2.0, r2 = 1 / t2;
  const auto samples = run(parse(hard_fid()), tissue(kNoRelaxation, t2, 0.0, m0));
  ASSERT_EQ(samples.size(), 10u);
  const double w = 2 * kPi * kHardAmp, wd = std::sqrt(w * w - r2 * r2 / 4);
  const double my_end = -std::exp(-r2 * kHardT / 2) * (w / wd) * std::sin(wd * kHardT);
  for (int k = 0; k < 10; ++k) {
    const double t = 200e-6 + (k + 0.5) * 50e-6;
    EXPECT_NEAR(samples[k].time_s, t, 1e-15);
    EXPECT_EQ(samples[k].block_id, 2);
    EXPECT_EQ(samples[k].adc_sample, k);
    const Complex expected = m0 * kI * my_end * std::exp(-(t - kHardT) / t2);
    EXPECT_LT(std::abs(samples[k].value - expected), 1e-9 * std::abs(expected)) << k;
  }
}

TEST(PulseqBloch, FreeDecayPhaseAndDecayAreExact) {
  // Whatever the pulse left, free precession multiplies M+ by
  // exp(-dt / T2 + i 2 pi df dt) between samples.
  const double t2 = 0.05, df = 37.0;
  const auto samples = run(parse(hard_fid()), tissue(0.7, t2, df));
  ASSERT_EQ(samples.size(), 10u);
  for (int k = 1; k < 10; ++k) {
    const double dt = samples[k].time_s - samples[0].time_s;
    const Complex ratio = std::exp(Complex(-dt / t2, 2 * kPi * df * dt));
    EXPECT_LT(std::abs(samples[k].value / samples[0].value - ratio), 1e-12) << k;
  }
}

TEST(PulseqBloch, OffResonantHardPulseTurnsAboutTheTiltedAxis) {
  // df during the pulse tilts the field to (w1, 0, 2 pi df).
  const double df = 370.0;
  const auto samples = run(parse(hard_fid()), tissue(kNoRelaxation, kNoRelaxation, df));
  const double w1 = 2 * kPi * kHardAmp, wz = 2 * kPi * df;
  const Vec m = quaternion_turn({w1, 0, wz}, std::hypot(w1, wz) * kHardT, {0, 0, 1});
  const double t = samples[0].time_s;
  const Complex expected = Complex(m[0], m[1]) * std::exp(Complex(0, wz * (t - kHardT)));
  EXPECT_LT(std::abs(samples[0].value - expected), 1e-12);
  // Without off-resonance a quarter turn about +x sends +z to -y.
  const auto on = run(parse(hard_fid()), tissue(kNoRelaxation, kNoRelaxation, 0.0));
  EXPECT_LT(std::abs(on[0].value - (-kI)), 1e-13);
  // B1 scales every amplitude: half the field, half the flip.
  Tissue weak = tissue(kNoRelaxation, kNoRelaxation, 0.0);
  weak.b1 = 0.5;
  const auto half = run(parse(hard_fid()), weak);
  EXPECT_LT(std::abs(half[0].value - (-kI) * std::sin(kPi / 4)), 1e-13);
}

// ---- 2. inversion recovery -------------------------------------------------

// 10 us hard 180, a wait, 10 us hard 90 (TI centre to centre), one sample
// 0.5 us after the 90.
std::string inversion(int ti_us) {
  return header(4) + "[BLOCKS]\n1 10 1 0 0 0 0 0\n2 " + std::to_string(ti_us - 10) +
         " 0 0 0 0 0 0\n3 10 2 0 0 0 0 0\n4 2 0 0 0 0 1 0\n\n"
         "[RF]\n1 50000 1 0 0 0 0 0\n2 25000 1 0 0 0 0 0\n\n[ADC]\n1 1 1000 0 0 0\n\n"
         "[SHAPES]\n\n" +
         shape(1, ones(10));
}

TEST(PulseqBloch, InversionRecovery) {
  const double t1 = 0.8;
  const Tissue t = tissue(t1, kNoRelaxation, 0.0);
  std::vector<Complex> s;
  std::vector<double> e;
  for (int ti_us : {100000, 300000, 900000}) {
    const auto samples = run(parse(inversion(ti_us)), t);
    ASSERT_EQ(samples.size(), 1u);
    const double ti = ti_us * 1e-6;
    // Mz = 1 - 2 exp(-TI/T1) before the 90, then -i Mz. T1 acting during the
    // 20 us of RF moves this by at most (RF time) / T1.
    const Complex expected = -kI * (1 - 2 * std::exp(-ti / t1));
    EXPECT_LT(std::abs(samples[0].value - expected), 20e-6 / t1) << ti_us;
    s.push_back(samples[0].value);
    e.push_back(std::exp(-ti / t1));
  }
  // Only the wait depends on TI, and Mz after it is affine in exp(-TI/T1):
  // exactly, the pulses' own relaxation included.
  EXPECT_LT(std::abs((s[2] - s[0]) * (e[1] - e[0]) - (s[1] - s[0]) * (e[2] - e[0])), 1e-14);
}

// ---- 3. gradient echo --------------------------------------------------------

// 90, a z trapezoid of area `lobe_amp` x 90 us, a sample, the rewinder (area
// -9 /m) with 10 samples during it, and a final sample with ADC phase 0.5 rad.
std::string gradient_echo(double lobe_amp, bool rewind) {
  return header(4) +
         "[BLOCKS]\n1 10 1 0 0 0 0 0\n2 100 0 0 0 1 0 0\n3 10 0 0 0 0 1 0\n4 100 0 0 0 " +
         std::string(rewind ? "2 2" : "0 0") +
         " 0\n5 10 0 0 0 0 3 0\n\n[RF]\n1 25000 1 0 0 0 0 0\n\n[TRAP]\n1 " + num(lobe_amp) +
         " 10 80 10 0\n2 -100000 10 80 10 0\n\n"
         "[ADC]\n1 1 10000 0 0 0\n2 10 10000 0 0 0\n3 1 10000 0 0 0.5\n\n[SHAPES]\n\n" +
         shape(1, ones(10));
}

// Moment (1/m) of a trapezoid (amp, rise = fall = 10 us, flat 80 us) after t.
double trapezoid_moment(double amp, double t) {
  const double r = 10e-6, f = 80e-6, total = r + f + r;
  if (t < r) return amp * t * t / (2 * r);
  if (t < r + f) return amp * (r / 2 + (t - r));
  return amp * (r + f) - amp * (total - t) * (total - t) / (2 * r);
}

TEST(PulseqBloch, GradientEchoDephasesAndRefocuses) {
  const int n = 16;
  const double area = 9.0;  // 1e5 Hz/m x 90 us
  BlochOptions options;
  options.positions_m = spins_over_one_turn({0, 0, area}, n);
  const Tissue t = tissue(kNoRelaxation, kNoRelaxation, 0.0);
  const auto samples = run(parse(gradient_echo(1e5, true)), t, options);
  ASSERT_EQ(samples.size(), 12u);
  EXPECT_LT(std::abs(samples[0].value), 1e-12);  // one whole turn across the spins
  // During the rewinder the remaining moment is area - m(t), ramps included.
  for (int k = 0; k < 10; ++k) {
    const double local = samples[k + 1].time_s - 120e-6;
    const double moment = area - trapezoid_moment(1e5, local);
    Complex mean = 0;
    for (int j = 0; j < n; ++j)
      mean += std::exp(Complex(0, 2 * kPi * moment * (j + 0.5) / n / area));
    EXPECT_LT(std::abs(samples[k + 1].value - (-kI) * mean / double(n)), 1e-12) << k;
  }
  // Refocused, then demodulated by the ADC phase.
  EXPECT_LT(std::abs(samples[11].value - (-kI) * std::exp(Complex(0, -0.5))), 1e-12);

  // Half the area: the spins span half a turn.
  const auto half = run(parse(gradient_echo(5e4, false)), t, options);
  Complex mean = 0;
  for (int j = 0; j < n; ++j) mean += std::exp(Complex(0, kPi * (j + 0.5) / n));
  EXPECT_LT(std::abs(half[0].value - (-kI) * mean / double(n)), 1e-12);
  EXPECT_GT(std::abs(half[0].value), 0.5);

  // Weights (3, 1) on two spins at a quarter and three quarters of the turn:
  // the weighted mean of +i and -i is i/2.
  options.positions_m = spins_over_one_turn({0, 0, area}, 2);
  options.weights = {3.0, 1.0};
  const auto weighted = run(parse(gradient_echo(1e5, true)), t, options);
  EXPECT_LT(std::abs(weighted[0].value - (-kI) * (0.5 * kI)), 1e-12);
}

TEST(PulseqBloch, RotationsExtensionTurnsTheGradient) {
  // A z crusher rotated onto x (quaternion) or onto y (row-major matrix).
  const std::string text =
      header(5) +
      "[BLOCKS]\n1 10 1 0 0 0 0 0\n2 100 0 0 0 1 0 1\n3 10 0 0 0 0 1 0\n4 100 0 0 0 1 0 2\n"
      "5 10 0 0 0 0 1 0\n\n[RF]\n1 25000 1 0 0 0 0 0\n\n[TRAP]\n1 100000 10 80 10 0\n\n"
      "[ADC]\n1 1 10000 0 0 0 0 0 0\n\n[EXTENSIONS]\n1 1 1 0\n2 1 2 0\n\n"
      "extension ROTATIONS 1\n1 0.70710678118654757 0 0.70710678118654757 0\n"
      "2 1 0 0 0 0 1 0 -1 0\n\n[SHAPES]\n\n" +
      shape(1, ones(10));
  const pq::PulseqFile file = parse(text);
  const Tissue t = tissue(kNoRelaxation, kNoRelaxation, 0.0);
  BlochOptions along_x, along_y, along_z;
  along_x.positions_m = spins_over_one_turn({9, 0, 0}, 8);
  along_y.positions_m = spins_over_one_turn({0, 9, 0}, 8);
  along_z.positions_m = spins_over_one_turn({0, 0, 9}, 8);
  const auto x = run(file, t, along_x), y = run(file, t, along_y), z = run(file, t, along_z);
  ASSERT_EQ(x.size(), 2u);
  EXPECT_LT(std::abs(x[0].value), 1e-12);
  EXPECT_LT(std::abs(z[0].value - (-kI)), 1e-12);
  EXPECT_LT(std::abs(y[0].value - (-kI)), 1e-12);
  EXPECT_LT(std::abs(y[1].value), 1e-12);  // the second lobe lies along y
  EXPECT_LT(std::abs(z[1].value - (-kI)), 1e-12);
}

// ---- 4. spin echo --------------------------------------------------------------

// 90 (phase 0), a crusher of 9 /m in a block of d us, 180 (phase pi/2), the
// same crusher (or none), and one sample at the echo, 2 (d + 10) us after the
// 90's centre.
std::string spin_echo(int d_us, bool second_crusher) {
  const std::string d = std::to_string(d_us);
  return header(4) + "[BLOCKS]\n1 10 1 0 0 0 0 0\n2 " + d + " 0 0 0 1 0 0\n3 10 2 0 0 0 0 0\n4 " +
         d + " 0 0 0 " + (second_crusher ? "1" : "0") +
         " 0 0\n5 10 0 0 0 0 1 0\n\n[RF]\n1 25000 1 0 0 0 0 0\n"
         "2 50000 1 0 0 0 0 1.5707963267948966\n\n[TRAP]\n1 100000 10 80 10 0\n\n"
         "[ADC]\n1 1 10000 0 0 0\n\n[SHAPES]\n\n" +
         shape(1, ones(10));
}

TEST(PulseqBloch, CrushedSpinEcho) {
  BlochOptions options;
  options.positions_m = spins_over_one_turn({0, 0, 9}, 16);
  // A 180 about +y maps M+ to -conj(M+): -i exp(i phi) -> -i exp(-i phi), and
  // the second crusher brings every spin back to -i.
  const Tissue ideal = tissue(kNoRelaxation, kNoRelaxation, 0.0);
  const auto echo = run(parse(spin_echo(1000, true)), ideal, options);
  ASSERT_EQ(echo.size(), 1u);
  EXPECT_NEAR(echo[0].time_s, 2025e-6, 1e-15);
  EXPECT_LT(std::abs(echo[0].value - (-kI)), 1e-12);
  // One crusher only: the spins stay spread over a whole turn.
  const auto unbalanced = run(parse(spin_echo(1000, false)), ideal, options);
  EXPECT_LT(std::abs(unbalanced[0].value), 1e-12);

  // With relaxation the echo keeps only the pathway transverse in both waits,
  // so between two spacings it changes by exactly exp(-2 (d2 - d1) / T2)
  // (off-resonance cancels at the echo); its size is exp(-TE / T2) up to
  // relaxation during the 20 us of RF.
  const double t2 = 0.08;
  const Tissue relaxing = tissue(1.0, t2, 30.0);
  const auto e1 = run(parse(spin_echo(1000, true)), relaxing, options);
  const auto e2 = run(parse(spin_echo(3000, true)), relaxing, options);
  EXPECT_LT(std::abs(e2[0].value / e1[0].value - std::exp(-2 * 2000e-6 / t2)), 1e-12);
  EXPECT_NEAR(std::abs(e1[0].value), std::exp(-2020e-6 / t2), 20e-6 / t2);
}

// ---- 5. shaped small-flip pulses ------------------------------------------------

// A three-lobe sinc over 2 ms (u from -2 to 2) as magnitude and a phase of
// half a turn where it is negative.
std::string shaped_pulse(const std::vector<double>& signed_wave, double amp,
                         const std::vector<double>& time_points) {
  std::vector<double> mag, phase;
  for (double s : signed_wave) {
    mag.push_back(std::abs(s));
    phase.push_back(s < 0 ? 0.5 : 0.0);
  }
  const bool timed = !time_points.empty();
  return header(4) + "[BLOCKS]\n1 2000 1 0 0 0 0 0\n2 10 0 0 0 0 1 0\n\n[RF]\n1 " + num(amp) +
         " 1 2 " + (timed ? "3" : "0") + " 0 0 0\n\n[ADC]\n1 1 10000 0 0 0\n\n[SHAPES]\n\n" +
         shape(1, mag) + shape(2, phase) + (timed ? shape(3, time_points) : "");
}

TEST(PulseqBloch, RealOnResonancePulseFlipsByItsArea) {
  // Every sample turns about +x or -x, rotations that commute: the flip is
  // 2 pi amp x the signed area, exactly.
  const double flip = 5 * kPi / 180;
  const Tissue t = tissue(kNoRelaxation, kNoRelaxation, 0.0);
  std::vector<double> wave;
  double area = 0;
  for (int n = 0; n < 2000; ++n) {
    wave.push_back(sinc_lobes((n + 0.5) / 2000));
    area += wave.back() * 1e-6;
  }
  const auto raster = run(parse(shaped_pulse(wave, flip / (2 * kPi * area), {})), t);
  ASSERT_EQ(raster.size(), 1u);
  EXPECT_LT(std::abs(raster[0].value - (-kI) * std::sin(flip)), 1e-12 * std::sin(flip));

  // On a time shape (101 points, 20 us apart) the envelope is linear between
  // points, crossing zero where the sign changes: the area is the trapezoid rule.
  std::vector<double> points, coarse;
  double trapezoid = 0;
  for (int k = 0; k <= 100; ++k) {
    points.push_back(20.0 * k);
    coarse.push_back(sinc_lobes(k / 100.0));
    if (k > 0) trapezoid += 0.5 * (coarse[k - 1] + coarse[k]) * 20e-6;
  }
  const auto timed = run(parse(shaped_pulse(coarse, flip / (2 * kPi * trapezoid), points)), t);
  ASSERT_EQ(timed.size(), 1u);
  EXPECT_LT(std::abs(timed[0].value - (-kI) * std::sin(flip)), 1e-12 * std::sin(flip));
}

// ---- 6. convergence in RF sub-steps ------------------------------------------------

// A slice-selective 30 degree sinc (2 ms) under a z trapezoid (rise 100 us), its
// rephaser, and a sample; on the default raster from the flat top, or on a time
// shape starting at the ramp's start.
std::string slice_select(bool on_ramp) {
  std::vector<double> mag, phase, points;
  double area = 0;
  const int n = on_ramp ? 101 : 2000;
  for (int k = 0; k < n; ++k) {
    const double s = on_ramp ? sinc_lobes(k / 100.0) : sinc_lobes((k + 0.5) / 2000);
    mag.push_back(std::abs(s));
    phase.push_back(s < 0 ? 0.5 : 0.0);
    if (on_ramp) points.push_back(20.0 * k);
    area += on_ramp ? s * 20e-6 : s * 1e-6;
  }
  const double amp = (kPi / 6) / (2 * kPi * area);
  return header(4) + "[BLOCKS]\n1 2200 1 0 0 1 0 0\n2 1200 0 0 0 2 1 0\n\n[RF]\n1 " + num(amp) +
         " 1 2 " + (on_ramp ? "3" : "0") + (on_ramp ? " 0" : " 100") +
         " 0 0\n\n[TRAP]\n1 200000 100 2000 100 0\n2 -200000 100 1000 100 0\n\n"
         "[ADC]\n1 1 10000 1190 0 0\n\n[SHAPES]\n\n" +
         shape(1, mag) + shape(2, phase) + (on_ramp ? shape(3, points) : "");
}

TEST(PulseqBloch, RfSubstepsConverge) {
  BlochOptions options;
  for (int j = 0; j < 41; ++j) options.positions_m.push_back({0, 0, (j - 20) * 0.2e-3});
  Tissue t = tissue(kNoRelaxation, kNoRelaxation, 5.0);
  const auto with = [&](const pq::PulseqFile& file, int substeps) {
    options.rf_substeps = substeps;
    return run(file, t, options).at(0).value;
  };
  // Default raster on the flat top: every cell has a constant field, which
  // one step turns exactly.
  const pq::PulseqFile flat = parse(slice_select(false));
  const Complex f1 = with(flat, 1), f4 = with(flat, 4);
  EXPECT_GT(std::abs(f1), 0.3);
  EXPECT_LT(std::abs(f1 - f4), 1e-12);
  // With relaxation only its symmetric splitting around each rotation depends
  // on the step, at second order.
  t = tissue(1.0, 0.1, 5.0);
  const Complex g1 = with(flat, 1), g4 = with(flat, 4), g16 = with(flat, 16);
  EXPECT_LT(std::abs(g1 - g16), 1e-8);
  EXPECT_GT(std::abs(g1 - g16), 8 * std::abs(g4 - g16));
  // A time shape on the ramp: the envelope and the gradient vary within a
  // step, and the error falls as the square of the step.
  const pq::PulseqFile ramp = parse(slice_select(true));
  const Complex r1 = with(ramp, 1), r4 = with(ramp, 4), r16 = with(ramp, 16);
  EXPECT_LT(std::abs(r1 - r16), 1e-6);
  EXPECT_GT(std::abs(r1 - r16), 8 * std::abs(r4 - r16));
}

// ---- 7. pre-1.4 timing ---------------------------------------------------------------

TEST(PulseqBloch, Version12BlockDurationsFromDelaysAndEvents) {
  // Implied rasters: block durations round up to 10 us. Block 1: the 300 us
  // delay outlasts the 10 us pulse; block 2: the ADC (100 + 4 x 10 us) outlasts
  // its 5 us delay; block 3: a 33 us trapezoid rounds up to 40 us. The last
  // sample is then at 300 + 140 + 40 + 5 us.
  const std::string text =
      "[VERSION]\nmajor 1\nminor 2\nrevision 0\n\n"
      "[BLOCKS]\n1 1 1 0 0 0 0\n2 2 0 0 0 0 1\n3 0 0 0 0 1 0\n4 0 0 0 0 0 2\n\n"
      "[RF]\n1 25000 1 0 0 0 0\n\n[TRAP]\n1 100000 10 13 10 0\n\n"
      "[ADC]\n1 4 10000 100 0 0\n2 1 10000 0 0 0\n\n[DELAYS]\n1 300\n2 5\n\n"
      "[SHAPES]\n\nshape_id 1\nnum_samples 10\n1 0 0 7\n";
  const double df = 50.0;
  const auto samples = run(parse(text), tissue(kNoRelaxation, kNoRelaxation, df));
  ASSERT_EQ(samples.size(), 5u);
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(samples[k].time_s, 405e-6 + k * 10e-6, 1e-15);
  EXPECT_NEAR(samples[4].time_s, 485e-6, 1e-15);
  EXPECT_EQ(samples[4].block_id, 4);
  EXPECT_EQ(samples[4].adc_sample, 0);
  // The simulation ran on that clock: free precession at df between samples.
  for (int k = 1; k < 5; ++k) {
    const double dt = samples[k].time_s - samples[0].time_s;
    EXPECT_LT(
        std::abs(samples[k].value - samples[0].value * std::exp(Complex(0, 2 * kPi * df * dt))),
        1e-12);
  }
}

// ---- 8. RF frequency offsets -------------------------------------------------------------

// A 100 us, 2500 Hz hard pulse with an offset and a sample at 105 us; `rf_row`
// is the [RF] row, in the file's layout.
std::string offset_pulse(int minor, const std::string& rf_row, const std::string& definitions) {
  const std::string adc = minor >= 5 ? "1 1 10000 0 0 0 0 0 0" : "1 1 10000 0 0 0";
  return header(minor, definitions) + "[BLOCKS]\n1 100 1 0 0 0 0 0\n2 20 0 0 0 0 1 0\n\n[RF]\n" +
         rf_row + "\n\n[ADC]\n" + adc + "\n\n[SHAPES]\n\n" + shape(1, ones(100));
}

// M+ after a pulse of constant amplitude and phase p whose frequency is offset
// by f, for a spin at off-resonance df: in the frame that turns with the RF
// phase the field is static, (w1 cos p, w1 sin p, 2 pi (df - f)); back in the
// rotating frame M+ gains the RF phase ramp 2 pi f (T - origin).
Complex rabi(double f, double df, double p, double origin) {
  const double w1 = 2 * kPi * kHardAmp, wz = 2 * kPi * (df - f);
  const double rate = std::sqrt(w1 * w1 + wz * wz);
  const Vec m = quaternion_turn({w1 * std::cos(p), w1 * std::sin(p), wz}, rate * kHardT, {0, 0, 1});
  // Cross-check Mz against the Rabi formula 1 - 2 (w1 / W)^2 sin^2(W T / 2).
  const double s = std::sin(rate * kHardT / 2);
  EXPECT_NEAR(m[2], 1 - 2 * (w1 / rate) * (w1 / rate) * s * s, 1e-13);
  return Complex(m[0], m[1]) * std::exp(Complex(0, 2 * kPi * f * (kHardT - origin)));
}

TEST(PulseqBloch, FrequencyOffsetRampsTheRfPhase) {
  const double f = 2000.0, t_sample = 105e-6;
  const pq::PulseqFile v14 = parse(offset_pulse(4, "1 2500 1 0 0 0 2000 0", ""));
  // On resonance with the pulse: a quarter turn in the pulse's frame, then
  // precession at f; before 1.5 the ramp starts at the pulse's start.
  const auto matched = run(v14, tissue(kNoRelaxation, kNoRelaxation, f));
  EXPECT_LT(std::abs(matched[0].value - (-kI) * std::exp(Complex(0, 2 * kPi * f * t_sample))),
            1e-12);
  // A spin at df = 0 is off resonance by -f: Rabi nutation about a tilted axis.
  const auto tilted = run(v14, tissue(kNoRelaxation, kNoRelaxation, 0.0));
  EXPECT_LT(std::abs(tilted[0].value - rabi(f, 0.0, 0.0, 0.0)), 1e-12);
  EXPECT_GT(1 - std::abs(tilted[0].value), 1e-3);  // not a whole quarter turn

  // 1.5: the ramp is zero at the centre, given (20 us) or the middle of the
  // plateau (50 us); ppm offsets with B0 = 3 T.
  const double f0_mhz = kProtonGammaMHzPerT * 3;
  const double fppm = 10 * f0_mhz, p = 0.25 + 0.001 * f0_mhz;
  const pq::PulseqFile centred =
      parse(offset_pulse(5, "1 2500 1 0 0 20 0 10 0.001 0 0.25 e", "B0 3\n"));
  const auto c = run(centred, tissue(kNoRelaxation, kNoRelaxation, 0.0));
  EXPECT_LT(std::abs(c[0].value - rabi(fppm, 0.0, p, 20e-6)), 1e-12);
  const pq::PulseqFile plateau = parse(offset_pulse(5, "1 2500 1 0 0 0 2000 0", ""));
  const auto m = run(plateau, tissue(kNoRelaxation, kNoRelaxation, 0.0));
  EXPECT_LT(std::abs(m[0].value - rabi(f, 0.0, 0.0, 50e-6)), 1e-12);
  // ppm without B0 is refused.
  const pq::PulseqFile no_b0 = parse(offset_pulse(5, "1 2500 1 0 0 20 0 10 0 0 0 e", ""));
  EXPECT_THROW(run(no_b0, tissue(1, 1, 0)), std::invalid_argument);
}

TEST(PulseqBloch, SliceOffsetMatchesGradientPrecession) {
  // A spin at z0 under G = f / z0 precesses at f, as the pulse's frequency:
  // it is on resonance with the pulse and keeps that phase rate afterwards.
  // The pulse starts on the flat top at 10 us; the sample at 155 us.
  const double f = 2000.0, z0 = 1e-3;
  const std::string text = header(4) +
                           "[BLOCKS]\n1 220 1 0 0 1 1 0\n\n[RF]\n1 2500 1 0 0 10 2000 0\n\n"
                           "[TRAP]\n1 " +
                           num(f / z0) +
                           " 10 200 10 0\n\n"
                           "[ADC]\n1 1 10000 150 0 0\n\n[SHAPES]\n\n" +
                           shape(1, ones(100));
  BlochOptions options;
  options.positions_m = {{0, 0, z0}};
  const auto s = run(parse(text), tissue(kNoRelaxation, kNoRelaxation, 0.0), options);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_LT(std::abs(s[0].value - (-kI) * std::exp(Complex(0, 2 * kPi * f * (155e-6 - 10e-6)))),
            1e-12);
}

// ---- options, helpers, refusals -------------------------------------------------------------

TEST(PulseqBloch, StopsAtEndTimeAndMaxSamples) {
  const pq::PulseqFile file = parse(hard_fid());
  const Tissue t = tissue(1, 0.1, 0);
  const auto all = run(file, t);
  BlochOptions options;
  options.max_samples = 3;
  const auto three = run(file, t, options);
  ASSERT_EQ(three.size(), 3u);
  EXPECT_EQ(three[2].value, all[2].value);
  options.max_samples = -1;
  options.end_time_s = 0.5 * (all[4].time_s + all[5].time_s);
  const auto five = run(file, t, options);
  ASSERT_EQ(five.size(), 5u);
  EXPECT_EQ(five[4].value, all[4].value);
}

TEST(PulseqBloch, SpinsOverOneTurn) {
  const Vec m = {3, -4, 12};
  const auto r = spins_over_one_turn(m, 5);
  ASSERT_EQ(r.size(), 5u);
  for (int j = 0; j < 5; ++j) {
    EXPECT_NEAR(m[0] * r[j][0] + m[1] * r[j][1] + m[2] * r[j][2], (j + 0.5) / 5, 1e-15);
    EXPECT_NEAR(r[j][0] * m[1] - r[j][1] * m[0], 0.0, 1e-15);  // along m
  }
  EXPECT_THROW(spins_over_one_turn({0, 0, 0}, 4), std::invalid_argument);
  EXPECT_THROW(spins_over_one_turn(m, 0), std::invalid_argument);
}

TEST(PulseqBloch, RefusesWhatItCannotSimulate) {
  const Tissue t = tissue(1, 0.1, 0);
  pq::PulseqFile file = parse(hard_fid());
  BlochOptions options;
  options.rf_substeps = 0;
  EXPECT_THROW(run(file, t, options), std::invalid_argument);
  options = {};
  options.weights = {1.0, 2.0};  // one spin
  EXPECT_THROW(run(file, t, options), std::invalid_argument);
  file.blocks[0].duration_s = 50e-6;  // shorter than its pulse
  EXPECT_THROW(run(file, t), std::invalid_argument);
  file = parse(hard_fid());
  file.shapes.erase(1);
  EXPECT_THROW(run(file, t), std::invalid_argument);
}

}  // namespace
}  // namespace larmor::reference
