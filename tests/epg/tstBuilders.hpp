// The builders of turbo spin echo trains, T2 preparation and prepared gradient
// echo trains through the kernel on one backend, against closed forms written
// out here and against the double-precision reference.
#pragma once

#include <gtest/gtest.h>

#include "epg/builders_support.hpp"
#include "epg/forward_support.hpp"

namespace larmor::test {

// A variable refocusing train, on resonance, against the first two echoes
// traced by hand through the EPG (excitation 90, CPMG refocusing flips b1, b2;
// Q = sin^2(b/2), E1 = exp(-ESP/T1), E2 = exp(-ESP/T2)):
//   echo 1 = Q1 E2
//   echo 2 = Q1 Q2 E2^2 + (1/2) sin b1 sin b2 E2 E1
// (the spin echo of a spin echo, and the stimulated echo stored in Z between
// the two pulses), and the whole train against the reference.
TEST(TEST_CATEGORY, tse_variable_refocusing_matches_its_first_echoes_and_the_reference) {
  sequence::TseParams p;
  p.echoes = 12;
  p.echo_spacing_s = 0.009;
  p.refocusing_deg = {160.0, 110.0, 70.0, 60.0, 60.0, 65.0, 75.0, 90.0, 110.0, 130.0, 150.0, 170.0};
  const auto d = sequence::build_tse(p);
  tissue::Tissue t;
  t.voxels = 1;
  t.t1_s.uniform = 0.9f;
  t.t2_s.uniform = 0.07f;
  const auto got = run_on_backend(d, t, 0);
  const double deg = kx::pi / 180;
  const double b1 = p.refocusing_deg[0] * deg, b2 = p.refocusing_deg[1] * deg;
  const double e1 = std::exp(-p.echo_spacing_s / 0.9), e2 = std::exp(-p.echo_spacing_s / 0.07);
  const double q1 = std::pow(std::sin(b1 / 2), 2), q2 = std::pow(std::sin(b2 / 2), 2);
  EXPECT_NEAR(std::abs(sample(got, p.echoes, 0, 0)), q1 * e2, 2e-6);
  EXPECT_NEAR(std::abs(sample(got, p.echoes, 0, 1)),
              q1 * q2 * e2 * e2 + 0.5 * std::sin(b1) * std::sin(b2) * e2 * e1, 2e-6);
  expect_matches_reference(d, random_tissue(9, 171), 0);
}

// One refocusing flip repeated is the mese builder, event for event.
TEST(TEST_CATEGORY, tse_with_one_flip_is_the_mese_train) {
  sequence::TseParams tse;
  tse.echoes = 6;
  tse.refocusing_deg = {140.0};
  sequence::MeseParams mese;
  mese.echoes = 6;
  mese.echo_spacing_s = tse.echo_spacing_s;
  mese.refocusing_deg = 140.0;
  const auto a = sequence::build_tse(tse), b = sequence::build_mese(mese);
  ASSERT_EQ(a.events.size(), b.events.size());
  for (std::size_t i = 0; i < a.events.size(); ++i) {
    EXPECT_EQ(a.events[i].kind, b.events[i].kind) << i;
    EXPECT_EQ(a.events[i].action, b.events[i].action) << i;
    EXPECT_DOUBLE_EQ(a.events[i].flip_rad, b.events[i].flip_rad) << i;
    EXPECT_DOUBLE_EQ(a.events[i].phase_rad, b.events[i].phase_rad) << i;
    EXPECT_DOUBLE_EQ(a.events[i].duration_s, b.events[i].duration_s) << i;
  }
}

// With ideal pulses a T2 preparation of any number of refocusings stores
// exp(-TE / T2) in Z whatever T1 and off-resonance; a 90 degree readout shows it.
TEST(TEST_CATEGORY, t2_preparation_stores_its_t2_decay) {
  for (int refocusings : {1, 4}) {
    for (double te : {0.03, 0.09}) {
      sequence::Description d;
      d.name = "t2prep";
      d << sequence::T2Preparation{te, refocusings};
      expect_stored_t2_decay(d, te, std::to_string(refocusings) + " refocusings");
    }
  }
}

// A prepared gradient echo train with ideal spoiling: only Z survives from
// one repetition to the next, so the longitudinal magnetisation before each
// pulse follows the recurrence written out here in double, shot after shot:
// preparation (inversion: Z -> -Z; T2 preparation: Z -> Z exp(-TE/T2)), TI,
// then per readout the sample is M0 sin a Z exp(-TE/T2) and
// Z -> Z cos a E1 + 1 - E1, then the recovery Z -> 1 - (1 - Z) exp(-TD/T1).
TEST(TEST_CATEGORY, prepared_gradient_echo_follows_its_longitudinal_recurrence) {
  for (auto prep : {sequence::Preparation::inversion, sequence::Preparation::t2}) {
    sequence::MprageParams p;
    p.preparation = prep;
    p.readouts = 40;
    p.shots = 3;
    p.ti_s = 0.4;
    p.recovery_s = 0.3;
    p.flip_deg = 12.0;
    p.spoiler = sequence::Spoiler::ideal;
    const double m0 = 0.9, t1 = 0.8, t2 = 0.06;
    tissue::Tissue t;
    t.voxels = 1;
    t.m0.uniform = float(m0);
    t.t1_s.uniform = float(t1);
    t.t2_s.uniform = float(t2);
    const auto d = sequence::build_mprage(p);
    const auto got = run_on_backend(d, t, 0);
    const double a = p.flip_deg * kx::pi / 180, e1 = std::exp(-p.tr_s / t1);
    double z = 1.0;
    int n = 0;
    for (int shot = 0; shot < p.shots; ++shot) {
      if (prep == sequence::Preparation::inversion) {
        z = -z;
      } else {
        z *= std::exp(-p.t2prep_te_s / t2);
      }
      z = 1.0 - (1.0 - z) * std::exp(-p.ti_s / t1);
      for (int r = 0; r < p.readouts; ++r, ++n) {
        const double want = m0 * std::sin(a) * z * std::exp(-p.te_s / t2);
        EXPECT_NEAR(std::abs(sample(got, p.readouts * p.shots, 0, n)), std::abs(want), 2e-6)
            << "shot " << shot << ", readout " << r;
        z = z * std::cos(a) * e1 + 1.0 - e1;
      }
      z = 1.0 - (1.0 - z) * std::exp(-p.recovery_s / t1);
    }
  }
}

// With RF spoiling and gradient shifts instead: the kernel against the
// reference (both preparations).
TEST(TEST_CATEGORY, prepared_gradient_echo_matches_reference) {
  for (auto prep : {sequence::Preparation::inversion, sequence::Preparation::t2}) {
    sequence::MprageParams p;
    p.preparation = prep;
    p.readouts = 30;
    p.shots = 2;
    expect_matches_reference(sequence::build_mprage(p), random_tissue(7, 181), 24);
  }
}

// A rectangular shaped pulse. On resonance its hard pulses add up to one
// pulse of the whole flip exactly (rotations about one axis). Off resonance
// the Bloch equations rotate M about the effective field Omega = (w1 cos p,
// w1 sin p, 2 pi df) by |Omega| tau (Rodrigues' formula below); the
// symmetric hard-pulse splitting converges to it at second order, so halving
// the sample spacing divides the error by four.
TEST(TEST_CATEGORY, shaped_pulse_converges_to_the_bloch_rotation) {
  const double flip = 90.0, tau = 2e-3, phase = 30.0, df = 300.0;
  const auto pulse_signal = [&](int samples, double off_resonance) {
    sequence::Description d;
    d.name = "shaped";
    d << sequence::ShapedPulse{std::vector<std::complex<double>>(std::size_t(samples), 1.0), flip,
                               tau, phase, 0.0}
      << sequence::Readout{0.0, 0.0, true};
    tissue::Tissue t;
    t.voxels = 1;
    t.df_hz.uniform = float(off_resonance);
    const auto got = run_on_backend(d, t, 0);
    return sample(got, 1, 0, 0);
  };
  const double p = phase * kx::pi / 180, a = flip * kx::pi / 180;
  // On resonance: -i e^{ip} sin a, for any sample count.
  const Complex hard = Complex(0.0, -1.0) * std::exp(Complex(0.0, p)) * std::sin(a);
  for (int n : {1, 7, 64}) EXPECT_LT(std::abs(pulse_signal(n, 0.0) - hard), 2e-6) << n;
  // Off resonance: M = R(n, theta) z with Rodrigues' formula.
  const double w1 = a / tau, dw = 2 * kx::pi * df;
  const double omega = std::sqrt(w1 * w1 + dw * dw), theta = omega * tau;
  const double nx = w1 * std::cos(p) / omega, ny = w1 * std::sin(p) / omega, nz = dw / omega;
  // R z = z cos + (n x z) sin + n nz (1 - cos), with n x z = (ny, -nx, 0).
  const double mx = ny * std::sin(theta) + nx * nz * (1 - std::cos(theta));
  const double my = -nx * std::sin(theta) + ny * nz * (1 - std::cos(theta));
  const Complex bloch(mx, my);
  const double err50 = std::abs(pulse_signal(50, df) - bloch);
  const double err100 = std::abs(pulse_signal(100, df) - bloch);
  EXPECT_LT(err100, 2e-3);
  EXPECT_GT(err50 / err100, 3.5) << err50 << " " << err100;
  EXPECT_LT(err50 / err100, 4.5) << err50 << " " << err100;
}

// A rectangular pulse at a frequency offset: Mz = nz^2 + (1 - nz^2) cos(W tau)
// with nz = 2 pi df / W, W = |(w1, 2 pi df)|; the phase-ramped splitting
// converges at second order. Each sample carries the offset and its power,
// which add up to w1^2 tau.
TEST(TEST_CATEGORY, off_resonant_shaped_pulse_saturates_as_the_bloch_equations) {
  const double flip = 360.0, tau = 4e-3, df = 500.0;
  const double w1 = flip * kx::pi / 180 / tau, dw = 2 * kx::pi * df;
  const double omega = std::sqrt(w1 * w1 + dw * dw), nz = dw / omega;
  const double exact = nz * nz + (1 - nz * nz) * std::cos(omega * tau);
  auto error = [&](int samples) {
    sequence::Description d;
    sequence::ShapedPulse pulse;
    pulse.shape.assign(std::size_t(samples), 1.0);
    pulse.flip_deg = flip;
    pulse.duration_s = tau;
    pulse.frequency_offset_hz = df;
    d << pulse;
    double power = 0.0;
    for (const auto& e : d.events) {
      if (e.kind != sequence::EventKind::pulse) continue;
      EXPECT_EQ(e.rf_frequency_hz, df);
      power += e.saturation;
    }
    EXPECT_NEAR(power, w1 * w1 * tau, 1e-5 * w1 * w1 * tau);
    return std::abs(kernel_mz_after(d) - exact);
  };
  const double e100 = error(100), e200 = error(200);
  EXPECT_LT(e200, 2e-3);
  EXPECT_GT(e100 / e200, 3.0) << e100 << " " << e200;
  EXPECT_LT(e100 / e200, 5.0) << e100 << " " << e200;
}

// The MT module's Gaussian pulse against the double-precision Bloch
// integration of the same envelope, and the MT-weighted gradient echo against
// the reference. At the usual 1.2 kHz the free pool keeps all but 1e-5 of its
// Mz (the saturation MT measures is the bound pool's; and a smooth pulse
// returns the free pool to z almost adiabatically), so the comparison is made
// 60 Hz off resonance, where the pulse nutates the free pool.
TEST(TEST_CATEGORY, mt_saturation_matches_bloch_integration_and_reference) {
  sequence::MtSaturation mt;
  mt.flip_deg = 500.0;
  mt.duration_s = 0.01;
  mt.offset_hz = 60.0;
  mt.samples = 2000;
  sequence::Description d;
  d << mt;
  double area = 0.0;  // of the truncated Gaussian, in units of sigma
  for (int i = 0; i < mt.samples; ++i) {
    const double x = ((i + 0.5) / mt.samples - 0.5) * 5.0;
    area += std::exp(-0.5 * x * x);
  }
  const double peak = mt.flip_deg * kx::pi / 180 / (area * mt.duration_s / mt.samples);
  const auto w1 = [&](double t) {
    const double x = (t / mt.duration_s - 0.5) * 5.0;
    return peak * std::exp(-0.5 * x * x);
  };
  const double bloch = mz_after_off_resonant_pulse(w1, mt.duration_s, mt.offset_hz);
  EXPECT_NEAR(kernel_mz_after(d), bloch, 2e-4) << bloch;
  EXPECT_LT(bloch, 0.9);  // the pulse does saturate the free pool directly

  sequence::MtSpgrParams p;
  p.repetitions = 6;
  p.mt.samples = 64;
  expect_matches_reference(sequence::build_mt_spgr(p), random_tissue(5, 191), 12);
}

TEST(TEST_CATEGORY, shaped_pulse_refuses_an_empty_or_zero_area_waveform) {
  sequence::Description d;
  EXPECT_THROW((d << sequence::ShapedPulse{{}, 90.0, 1e-3, 0.0, 0.0}), std::invalid_argument);
  EXPECT_THROW((d << sequence::ShapedPulse{{1.0, -1.0}, 90.0, 1e-3, 0.0, 0.0}),
               std::invalid_argument);
}

// DESS: with T2 far below TR no transverse coherence survives a repetition, so
// S+ is the Ernst signal times exp(-TE/T2) and S- vanishes (both to within
// the surviving fraction exp(-TR/T2) = 4.5e-5 here); with long T2 both echoes
// against the reference.
TEST(TEST_CATEGORY, dess_echoes_reach_their_short_t2_limit_and_match_reference) {
  sequence::DessParams p;
  p.flip_deg = 25.0;
  p.tr_s = 0.010;
  p.te_s = 0.002;
  p.repetitions = 2;
  tissue::Tissue t;
  t.voxels = 1;
  t.t1_s.uniform = 0.5f;
  t.t2_s.uniform = 0.001f;
  const auto got = run_on_backend(sequence::build_dess(p), t, 0);
  const double ernst =
      simulate::ernst_signal(p.flip_deg * kx::pi / 180, p.tr_s, 0.5, 0.001, p.te_s);
  const double surviving = std::exp(-p.tr_s / 0.001);
  EXPECT_NEAR(std::abs(sample(got, 4, 0, 2)), ernst, 2 * surviving + 2e-6);
  EXPECT_LT(std::abs(sample(got, 4, 0, 3)), 2 * surviving + 2e-6);
  p.dummy_repetitions = 60;
  p.repetitions = 4;
  expect_matches_reference(sequence::build_dess(p), random_tissue(7, 191), 0);
}

}  // namespace larmor::test
