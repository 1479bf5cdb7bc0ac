// The isochromat engine on one backend against closed forms and exact
// references written differently: inversion recovery, a crushed spin echo,
// the bSSFP off-resonance profile against the fixed point of exact
// intervals, slice profiles against the small-tip Fourier transform and the
// exact composition of the pulse's cells, inversion through a finite pulse
// and 3 s of saturation each as one exact Bloch interval, one RF cell of any
// angle as the exact rotation, recovery through a finely sampled readout,
// and a voxel's Lorentzian frequency spread (T2') against its closed forms.
#pragma once

#include "bloch/isochromat_test_support.hpp"

namespace larmor::test {
namespace {

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
// Balanced SSFP of hard pulses with alternating phase, one sample at TE =
// TR / 2. Blocks in us: the pulse (20 us), then TR - 20 us holding the
// sample 1990 us after the block's start (ADC delay 1985 us, dwell 10 us).
std::string alternating_bssfp(int repetitions, double flip_deg) {
  const double amplitude = flip_deg / 360.0 / 20e-6;
  std::string blocks = "[BLOCKS]\n", rf = "[RF]\n", adc = "[ADC]\n";
  for (int r = 0; r < repetitions; ++r) {
    const int id = r % 2 + 1;
    blocks += std::to_string(2 * r + 1) + " 20 " + std::to_string(id) + " 0 0 0 0 0\n";
    blocks += std::to_string(2 * r + 2) + " 3980 0 0 0 0 " + std::to_string(id) + " 0\n";
  }
  for (int id : {1, 2}) {
    const std::string phase = id == 1 ? "0" : num(kPi);
    rf += std::to_string(id) + " " + num(amplitude) + " 1 0 0 0 0 " + phase + "\n";
    adc += std::to_string(id) + " 1 10000 1985 0 " + phase + "\n";
  }
  return seq_header() + blocks + "\n" + rf + "\n" + adc + "\n[SHAPES]\n" +
         shape(1, std::vector<double>(20, 1.0));
}

// The bSSFP off-resonance profile: the engine's steady state against the
// fixed point of the two-repetition map built from exact intervals, for
// off-resonances across the pass band and into the stop band (1 / (2 TR) =
// 125 Hz). The engine time-steps 400 repetitions; the reference solves
// (I - B) M = c.
TEST(TEST_CATEGORY, isochromat_bssfp_profile_matches_the_steady_state_of_exact_intervals) {
  const double flip = 40.0, t1 = 0.15, t2 = 0.06, tau = 20e-6, tr = 4e-3, before = 1990e-6;
  const auto table = io::pulseq::to_step_table(parse(alternating_bssfp(400, flip)));
  ASSERT_EQ(table.samples(), 400u);
  const double w1 = 2.0 * kPi * flip / 360.0 / tau;
  for (double df : {0.0, 30.0, 60.0, 100.0, 125.0, 150.0, 200.0}) {
    const double wz = 2.0 * kPi * df;
    const Affine free_after = bloch_interval({0, 0, wz}, 1 / t1, 1 / t2, 1.0, tr - tau - before);
    const Affine to_sample = bloch_interval({0, 0, wz}, 1 / t1, 1 / t2, 1.0, before);
    const Affine pulse_x = bloch_interval({w1, 0, wz}, 1 / t1, 1 / t2, 1.0, tau);
    const Affine pulse_minus_x = bloch_interval({-w1, 0, wz}, 1 / t1, 1 / t2, 1.0, tau);
    // From the start of an even repetition (phase 0) to the next even one.
    const Affine period = multiply(multiply(free_after, multiply(to_sample, pulse_minus_x)),
                                   multiply(free_after, multiply(to_sample, pulse_x)));
    double a[3][4];
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) a[i][j] = (i == j ? 1.0 : 0.0) - period[i][j];
      a[i][3] = period[i][3];
    }
    for (int c = 0; c < 3; ++c) {  // Gauss-Jordan, the system is well conditioned
      for (int r = 0; r < 3; ++r) {
        if (r == c) continue;
        const double f = a[r][c] / a[c][c];
        for (int k = c; k < 4; ++k) a[r][k] -= f * a[c][k];
      }
    }
    std::array<double, 4> start{a[0][3] / a[0][0], a[1][3] / a[1][1], a[2][3] / a[2][2], 1.0};
    const Affine sample_map = multiply(to_sample, pulse_x);
    Complex expected{0.0, 0.0};
    for (int k = 0; k < 4; ++k) {
      expected += Complex(sample_map[0][k], sample_map[1][k]) * start[std::size_t(k)];
    }
    const auto ours = play_isochromats(table, {}, reference::pulseq_test_text::tissue(t1, t2, df));
    // The last even repetition (its ADC phase 0 leaves the sample as it is)
    // and, demodulated by its own phase, the last odd one.
    EXPECT_LT(std::abs(ours[398] - expected), 1e-5)
        << df << " Hz: " << ours[398] << " vs " << expected;
    EXPECT_LT(std::abs(ours[399] - expected), 1e-5) << df << " Hz";
  }
}

// A 2 ms three-lobe sinc (time-bandwidth 4) of `flip_deg` on a 10 us ramp
// of a 4e5 Hz/m slice gradient along z (a 5 mm slice), its rephaser from the
// pulse's centre, and a sample 5 us later. Blocks in us.
constexpr double slice_gradient_hz_per_m = 4e5;
std::vector<double> sinc_envelope() {
  std::vector<double> shape(2000);
  for (std::size_t j = 0; j < shape.size(); ++j) shape[j] = sinc_lobes((j + 0.5) / 2000.0);
  return shape;
}
double sinc_amplitude_hz(double flip_deg) {
  double area = 0.0;  // the envelope's integral, in seconds
  for (double v : sinc_envelope()) area += v * 1e-6;
  return flip_deg / 360.0 / area;
}
std::string slice_selective_sinc(double flip_deg) {
  const double g = slice_gradient_hz_per_m;
  return seq_header() +
         "[BLOCKS]\n1 2020 1 0 0 1 0 0\n2 1020 0 0 0 2 0 0\n3 10 0 0 0 0 1 0\n\n[RF]\n1 " +
         num(sinc_amplitude_hz(flip_deg)) + " 1 0 0 10 0 0\n\n[TRAP]\n1 " + num(g) +
         " 10 2000 10 0\n2 " + num(-g * 1005.0 / 1010.0) +
         " 10 1000 10 0\n\n[ADC]\n1 1 10000 0 0 0\n\n[SHAPES]\n" + shape(1, sinc_envelope());
}

// One isochromat per position z across and beyond the slice.
std::vector<Complex> profile(const sequence::StepTable& table, const std::vector<double>& zs) {
  std::vector<Complex> values;
  for (double z : zs) {
    IsochromatVoxel at;
    at.edges_m = {0.0, 0.0, 0.0};
    at.centre_m = {0.0, 0.0, z};
    values.push_back(
        play_isochromats(table, at, reference::pulseq_test_text::tissue(1e9, 1e9, 0))[0]);
  }
  return values;
}

// A small tip's profile is the Fourier transform of the RF envelope:
// dM+/dt = -i w1 Mz + i wz M+ with Mz = M0 gives, after the rephaser,
// M+(z) = -i M0 sum over cells of w1 times the integral over the cell of
// exp(i 2 pi G z (t_centre - t)). What separates the engine from it is the
// small-tip approximation itself.
TEST(TEST_CATEGORY, isochromat_small_tip_slice_profile_is_the_fourier_transform_of_the_pulse) {
  const double flip = 5.0;
  const auto table = io::pulseq::to_step_table(parse(slice_selective_sinc(flip)));
  ASSERT_EQ(table.samples(), 1u);
  std::vector<double> zs;
  for (int i = -20; i <= 20; ++i) zs.push_back(0.5e-3 * i);
  const auto ours = profile(table, zs);
  const std::vector<double> envelope = sinc_envelope();
  const double w1 = 2.0 * kPi * sinc_amplitude_hz(flip), peak = flip * kPi / 180.0;
  double absolute_flip = 0.0;
  for (double e : envelope) absolute_flip += w1 * std::abs(e) * 1e-6;
  for (std::size_t i = 0; i < zs.size(); ++i) {
    const double wz = 2.0 * kPi * slice_gradient_hz_per_m * zs[i];
    Complex sum{0.0, 0.0};
    for (std::size_t j = 0; j < envelope.size(); ++j) {
      const double a = 1e-3 - double(j) * 1e-6, b = a - 1e-6;  // t_centre - t at the cell's ends
      const Complex cell = wz == 0.0
                               ? Complex(1e-6, 0.0)
                               : (std::exp(kI * (wz * a)) - std::exp(kI * (wz * b))) / (kI * wz);
      sum += w1 * envelope[j] * cell;
    }
    const Complex expected = -kI * sum;
    // The expansion's next (third-order) term is bounded by theta^3 / 6, theta
    // the envelope's absolute integral (the Dyson series' bound); float adds
    // a part in 10^6 of the peak.
    EXPECT_LT(std::abs(ours[i] - expected), std::pow(absolute_flip, 3) / 6.0 + 1e-6 * peak)
        << "z " << zs[i] * 1e3 << " mm: " << ours[i] << " vs " << expected;
  }
  // The slice: the signal at its centre, under 2 % of it 1.5 slices out.
  EXPECT_GT(std::abs(ours[20]), 0.9 * std::sin(peak));
  EXPECT_LT(std::abs(ours[35]), 0.02 * peak);
}

// At 90 degrees the profile is no Fourier transform; the exact composition
// of the pulse's cells (what the Shinnar-Le Roux forward transform
// computes), each an exact Bloch interval in double, is the reference.
TEST(TEST_CATEGORY, isochromat_ninety_degree_slice_profile_is_the_composition_of_its_cells) {
  const double flip = 90.0;
  const auto table = io::pulseq::to_step_table(parse(slice_selective_sinc(flip)));
  std::vector<double> zs;
  for (int i = -12; i <= 12; ++i) zs.push_back(0.5e-3 * i);
  const auto ours = profile(table, zs);
  const std::vector<double> envelope = sinc_envelope();
  const double w1 = 2.0 * kPi * sinc_amplitude_hz(flip);
  for (std::size_t i = 0; i < zs.size(); ++i) {
    const double wz = 2.0 * kPi * slice_gradient_hz_per_m * zs[i];
    std::array<double, 4> m{0.0, 0.0, 1.0, 1.0};
    const auto apply = [&](const Affine& a) {
      std::array<double, 4> next{};
      for (int r = 0; r < 4; ++r)
        for (int k = 0; k < 4; ++k) next[std::size_t(r)] += a[r][k] * m[std::size_t(k)];
      m = next;
    };
    for (double e : envelope) apply(bloch_interval({w1 * e, 0.0, wz}, 0.0, 0.0, 1.0, 1e-6));
    // The rephaser turns by 2 pi G z (t_centre - t_end) = -wz x 1 ms.
    const Complex expected = Complex(m[0], m[1]) * std::exp(-kI * (wz * 1e-3));
    EXPECT_LT(std::abs(ours[i] - expected), 2e-5)
        << "z " << zs[i] * 1e3 << " mm: " << ours[i] << " vs " << expected;
  }
  EXPECT_NEAR(std::abs(ours[12]), 1.0, 1e-3);  // the slice's centre: a full 90
}

// Inversion through a finite pulse: a 2 ms hard 180 (250 Hz) relaxes while
// it turns, so Mz ends well short of -M0 for a short T2, and off resonance
// tilts its axis. The reference is the pulse as one exact Bloch interval
// (relaxation and turn together, double), then free recovery to the sample
// 1 ms after it; mean Mz is the engine's longitudinal output.
TEST(TEST_CATEGORY, isochromat_inversion_through_a_finite_pulse_is_one_exact_bloch_interval) {
  const std::string text = seq_header() +
                           "[BLOCKS]\n1 2000 1 0 0 0 0 0\n2 2000 0 0 0 0 1 0\n\n"
                           "[RF]\n1 250 1 0 0 0 0 0\n\n[ADC]\n1 1 10000 995 0 0\n\n[SHAPES]\n" +
                           shape(1, std::vector<double>(2000, 1.0));
  const auto table = io::pulseq::to_step_table(parse(text));
  ASSERT_EQ(table.samples(), 1u);
  for (const auto& [t2, df] : {std::pair{0.02, 0.0}, std::pair{0.02, 80.0}, std::pair{2.0, 0.0}}) {
    const double t1 = 1.0;
    const Affine pulse =
        bloch_interval({2 * kPi * 250.0, 0, 2 * kPi * df}, 1 / t1, 1 / t2, 1.0, 2e-3);
    const Affine wait = bloch_interval({0, 0, 2 * kPi * df}, 1 / t1, 1 / t2, 1.0, 1e-3);
    const Affine both = multiply(wait, pulse);
    const double expected = both[2][2] + both[2][3];  // from (0, 0, 1)
    std::vector<double> mz;
    play_isochromats(table, {}, reference::pulseq_test_text::tissue(t1, t2, df), &mz);
    EXPECT_NEAR(mz[0], expected, 1e-5) << "T2 " << t2 << " s, df " << df << " Hz";
    if (t2 < 1.0 && df == 0.0) EXPECT_GT(expected, -0.96);  // the effect is there
  }
}

// One RF cell of any angle is the exact turn about its field (no
// relaxation): up to a half angle of a quarter turn over the whole voxel the
// engine takes the sine's polynomials directly, beyond it reduces the angle.
// The reference is the exact rotation in double, off resonance and under a
// gradient, for flips on both sides of that bound and past a full turn.
TEST(TEST_CATEGORY, isochromat_rf_cell_of_any_angle_is_the_exact_rotation) {
  const double dt = 200e-6, df = 300.0, gradient = 2e5, z = 0.4e-3, phase = 0.3;
  const reference::Tissue t = reference::pulseq_test_text::tissue(1e9, 1e9, df);
  IsochromatVoxel voxel;
  voxel.centre_m = {0.0, 0.0, z};
  for (double flip_deg : {20.0, 60.0, 85.0, 120.0, 179.0, 270.0, 350.0, 750.0}) {
    const double w1 = flip_deg * kPi / 180.0 / dt;
    const Vec w{w1 * std::cos(phase), w1 * std::sin(phase), 2.0 * kPi * (df + gradient * z)};
    sequence::StepTable table;
    {
      sequence::StepTableWriter writer(table);
      writer.rf(dt, w[0], w[1], {0.0, 0.0, gradient}, 0.0);
      writer.sample(1.0, 0.0, dt, 1, 0, false);
      writer.flush();
    }
    std::vector<double> mz;
    const auto ours = play_isochromats(table, voxel, t, &mz);
    const Affine turn = bloch_interval(w, 0.0, 0.0, 1.0, dt);
    const Complex expected(turn[0][2], turn[1][2]);  // from (0, 0, 1)
    EXPECT_LT(std::abs(ours[0] - expected), 2e-6)
        << flip_deg << " degrees: " << ours[0] << " vs " << expected;
    EXPECT_NEAR(mz[0], turn[2][2], 2e-6) << flip_deg << " degrees";
  }
}

// A CEST-style saturation: 3 s of continuous RF (three million 1 us cells)
// drives Mz to its saturated value, off resonance and on. Each cell changes
// the magnetisation by less than float resolves near 1; rounded alike every
// cell, the approach to steady state would stop a percent short. The
// reference is the whole pulse as one exact Bloch interval in double.
TEST(TEST_CATEGORY, isochromat_three_second_saturation_is_one_exact_bloch_interval) {
  const double dt = 1e-6, duration = 3.0, w1 = 2.0 * kPi * 50.0, t1 = 1.0, t2 = 0.08;
  const int cells = int(std::lround(duration / dt));
  sequence::StepTable table;
  {
    sequence::StepTableWriter writer(table);
    for (int i = 0; i < cells; ++i) writer.rf(dt, w1, 0.0, {0.0, 0.0, 0.0}, 0.0);
    writer.sample(1.0, 0.0, duration, 1, 0, false);
    writer.flush();
  }
  // The offsets as voxels of one launch.
  const std::vector<double> offsets{0.0, 30.0, 100.0, 400.0, 2000.0};
  std::vector<reference::Tissue> tissues;
  for (double df : offsets) tissues.push_back(reference::pulseq_test_text::tissue(t1, t2, df));
  std::vector<std::vector<double>> mz;
  const auto ours = play_isochromat_voxels(table, {}, tissues, &mz);
  for (std::size_t v = 0; v < offsets.size(); ++v) {
    const double df = offsets[v];
    const Affine pulse =
        bloch_interval({w1, 0.0, 2.0 * kPi * df}, 1.0 / t1, 1.0 / t2, 1.0, duration);
    const Complex expected(pulse[0][2] + pulse[0][3], pulse[1][2] + pulse[1][3]);
    EXPECT_NEAR(mz[v][0], pulse[2][2] + pulse[2][3], 2e-6) << df << " Hz";  // from (0, 0, 1)
    EXPECT_LT(std::abs(ours[v][0] - expected), 2e-6)
        << df << " Hz: " << ours[v][0] << " vs " << expected;
  }
}

// Recovery through a readout sampled every microsecond, after a 10 degree
// pulse: each step restores Mz by about 1.5e-8, below float's rounding of
// Mz near 1, so Mz itself would stay where the pulse left it (3e-4 short of
// the closed form after 20 ms). The closed forms: Mz = 1 - (1 - cos a)
// exp(-t / T1), |Mxy| = sin a exp(-t / T2), t from the pulse's centre.
TEST(TEST_CATEGORY, isochromat_recovery_through_a_sampled_readout_is_exponential) {
  const double t1 = 1.0, t2 = 0.05, flip = 10.0 * kPi / 180.0, dwell = 1e-6;
  const int samples = 20000;
  sequence::StepTable table;
  {
    sequence::StepTableWriter writer(table);
    writer.rf(1e-6, flip / 1e-6, 0.0, {0.0, 0.0, 0.0}, 0.0);
    for (int i = 0; i < samples; ++i) {
      writer.free(dwell, {0.0, 0.0, 0.0});
      writer.sample(1.0, 0.0, (i + 1) * dwell, 1, i, false);
    }
    writer.flush();
  }
  std::vector<double> mz;
  const auto ours =
      play_isochromats(table, {}, reference::pulseq_test_text::tissue(t1, t2, 0.0), &mz);
  for (std::size_t i : {std::size_t(0), std::size_t(999), std::size_t(4999), std::size_t(19999)}) {
    const double t = double(i + 1) * dwell + 0.5e-6;
    EXPECT_NEAR(mz[i], 1.0 - (1.0 - std::cos(flip)) * std::exp(-t / t1), 5e-6) << "sample " << i;
    EXPECT_NEAR(std::abs(ours[i]), std::sin(flip) * std::exp(-t / t2), 1e-6) << "sample " << i;
  }
}

// T2': a voxel's Lorentzian spread of frequencies of half-width 1 / T2'.
// Its transverse signal is the spread-free one times exp(-|s| / T2'), s the
// time the magnetisation has dephased: after a 90, the time since the
// pulse's centre; after a 180 at TE / 2, the distance to the echo at TE. The
// engine with t2_prime_ms against the same engine without it, times that
// factor, within the accuracy (1e-3, the spread's own bound; the 10 us
// pulses shift the dephasing origin of far offsets by about a microsecond,
// 1e-4 of T2' here).
struct SpreadCase {
  sequence::StepTable table;
  std::vector<double> dephasing_s;  // per sample
};

SpreadCase fid_or_spin_echo(bool refocus) {
  SpreadCase c;
  sequence::StepTableWriter writer(c.table);
  const double cell = 1e-6, quarter_turn = kPi / 2.0;
  const auto pulse = [&](double flip, double phase) {
    for (int i = 0; i < 10; ++i) {
      writer.rf(cell, flip / (10 * cell) * std::cos(phase), flip / (10 * cell) * std::sin(phase),
                {0.0, 0.0, 0.0}, 0.0);
    }
  };
  pulse(quarter_turn, 0.0);  // centre at 5 us
  double now = 10e-6, echo = 5e-6;
  if (refocus) {
    writer.free(20e-3 - now, {0.0, 0.0, 0.0});
    pulse(2.0 * quarter_turn, quarter_turn);  // centre at 20.005 ms: echo at 40.005 ms
    now = 20.010e-3;
    echo = 40.005e-3;
  }
  const double first = refocus ? 30.005e-3 : 0.5e-3, dwell = refocus ? 0.5e-3 : 1.5e-3;
  for (int n = 0; n < 41; ++n) {
    const double t = first + n * dwell;
    writer.free(t - now, {0.0, 0.0, 0.0});
    now = t;
    writer.sample(1.0, 0.0, t, 1, n, false);
    c.dephasing_s.push_back(std::abs(t - echo));
  }
  writer.flush();
  return c;
}

void expect_lorentzian_decay(bool refocus) {
  const SpreadCase c = fid_or_spin_echo(refocus);
  simulate::IsochromatSettings settings;
  settings.accuracy = 1e-3;
  const simulate::IsochromatSimulator engine(c.table, settings);
  const std::size_t samples = c.table.samples();
  tissue::Tissue plain;
  plain.voxels = 1;
  plain.t1_s.uniform = 1.0f;
  plain.t2_s.uniform = 0.1f;
  tissue::Tissue spread = plain;
  const double t2_prime = 0.02;
  spread.t2_prime_s.uniform = float(t2_prime);
  std::vector<float> without(samples * 2), with(samples * 2);
  engine.run_into<TEST_EXECSPACE>(plain, without.data(), nullptr);
  engine.run_into<TEST_EXECSPACE>(spread, with.data(), nullptr);
  ASSERT_GT(engine.most_frequency_offsets(spread), 1000);
  // Beyond max_isochromats a voxel is refused, with the counts.
  settings.max_isochromats = 1000;
  try {
    simulate::IsochromatSimulator(c.table, settings).most_frequency_offsets(spread);
    ADD_FAILURE() << "a spread beyond max_isochromats ran";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("frequency offsets"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("isochromat_accuracy"), std::string::npos) << e.what();
  }
  for (std::size_t n = 0; n < samples; ++n) {
    const double factor = std::exp(-c.dephasing_s[n] / t2_prime);
    EXPECT_NEAR(with[2 * n], factor * without[2 * n], 1e-3) << "sample " << n;
    EXPECT_NEAR(with[2 * n + 1], factor * without[2 * n + 1], 1e-3) << "sample " << n;
  }
}

TEST(TEST_CATEGORY, isochromat_t2_prime_fid_decays_as_the_lorentzian_line) {
  expect_lorentzian_decay(false);
}

TEST(TEST_CATEGORY, isochromat_t2_prime_spin_echo_refocuses_the_spread) {
  expect_lorentzian_decay(true);
}

// A voxel's spread depends on the voxel alone: two voxels of different T2'
// in one run give what each gives alone, bit for bit.
TEST(TEST_CATEGORY, isochromat_t2_prime_voxels_do_not_depend_on_each_other) {
  const SpreadCase c = fid_or_spin_echo(true);
  const simulate::IsochromatSimulator engine(c.table, simulate::IsochromatSettings{});
  const std::size_t samples = c.table.samples();
  tissue::Tissue both;
  both.voxels = 2;
  both.t2_s.uniform = 0.08f;
  both.t2_prime_s.map = {0.015f, 0.04f};
  std::vector<float> together(2 * samples * 2), alone(samples * 2);
  engine.run_into<TEST_EXECSPACE>(both, together.data(), nullptr);
  for (std::int64_t v = 0; v < 2; ++v) {
    engine.run_into<TEST_EXECSPACE>(both.slice(v, v + 1), alone.data(), nullptr);
    for (std::size_t i = 0; i < samples * 2; ++i) {
      EXPECT_EQ(alone[i], together[std::size_t(v) * samples * 2 + i]) << "voxel " << v;
    }
  }
}

}  // namespace
}  // namespace larmor::test
