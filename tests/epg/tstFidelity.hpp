// Physics the kernels must not leave out, on one backend, against closed forms
// written out here: crusher lobes that take time (relaxation, precession and
// diffusion through them), and pulses the transmit field does not scale (their
// flip, and dS/dB1, in every mode).
#pragma once

#include <gtest/gtest.h>

#include "epg/derivatives_support.hpp"
#include "epg/fidelity_support.hpp"
#include "epg/forward_support.hpp"

namespace larmor::test {

// Echo n of an ideal CPMG is -i exp(-n ESP / T2) exp(-b_n D): relaxation runs
// through the lobes, and the echo pathway sees each lobe ramp its dephasing
// between 0 and one order (q = 2 pi moment), q^2 tau / 3 per lobe, two lobes
// per echo: b_n = 2 n q^2 tau / 3. Off-resonance refocuses at every echo.
TEST(TEST_CATEGORY, cpmg_with_finite_lobes_decays_with_te_and_its_b_value) {
  const int echoes = 8;
  const double esp = 0.012, lobe = 0.002, moment = 15000.0, q = 2 * M_PI * moment;
  const double t1 = 1.0, t2 = 0.06, adc = 2.0e-9;
  const auto d = fidelity::cpmg_with_lobes(echoes, esp, lobe, moment);
  // The instants keep the echo spacing the lobes are part of.
  const auto times = d.timestamps_s();
  for (int n = 1; n <= echoes; ++n) EXPECT_NEAR(times[std::size_t(2 * n)], n * esp, 1e-12);
  tissue::Tissue t;
  t.voxels = 2;
  t.t1_s.uniform = float(t1);
  t.t2_s.uniform = float(t2);
  t.adc_m2_s.uniform = float(adc);
  t.df_hz.map = {0.0f, 23.0f};
  const auto got = run_on_backend(d, t, 0);
  for (int v = 0; v < 2; ++v) {
    for (int n = 1; n <= echoes; ++n) {
      const double b = 2.0 * n * q * q * lobe / 3.0;
      const Complex want = Complex(0.0, -1.0) * std::exp(-n * esp / t2) * std::exp(-adc * b);
      EXPECT_LT(std::abs(sample(got, echoes, v, n - 1) - want), 2e-6)
          << "voxel " << v << ", echo " << n << ": " << sample(got, echoes, v, n - 1) << " against "
          << want;
    }
  }
  // Without diffusion the same train is the plain T2 decay at the echo times.
  t.adc_m2_s.uniform = 0.0f;
  const auto plain = run_on_backend(d, t, 0);
  for (int n = 1; n <= echoes; ++n) {
    const Complex want = Complex(0.0, -1.0) * std::exp(-n * esp / t2);
    EXPECT_LT(std::abs(sample(plain, echoes, 1, n - 1) - want), 2e-6) << "echo " << n;
  }
}

// The train against its recurrence at B1 != 1, its dS/dB1 (forward mode)
// against central differences of the recurrence, and the adjoint's dL/dB1
// against the same differences paired with the cotangents.
TEST(TEST_CATEGORY, unscaled_inversion_follows_the_longitudinal_recurrence) {
  const auto p = fidelity::unscaled_inversion_train();
  const auto d = sequence::build_mprage(p);
  const double t1 = 0.9, t2 = 0.07;
  const std::vector<float> b1s = {0.7f, 1.0f, 1.25f};
  tissue::Tissue t;
  t.voxels = 3;
  t.t1_s.uniform = float(t1);
  t.t2_s.uniform = float(t2);
  t.b1.map = b1s;
  const int samples = p.readouts;
  const auto got = run_on_backend(d, t, 0);
  const auto tangents = [&] {
    simulate::Simulator sim(d, simulate::Options{});
    std::vector<float> signals(std::size_t(t.voxels) * samples * 2);
    std::vector<float> out(std::size_t(t.voxels) * epg::tissue_tangent_count * samples * 2);
    sim.run_tissue_jvp_into<TEST_EXECSPACE>(t, signals.data(), out.data());
    return out;
  }();
  const auto w = random_cotangents(std::size_t(t.voxels) * samples * 2, 97);
  const auto vjp = run_vjp(d, t, 0, w);
  for (int v = 0; v < t.voxels; ++v) {
    const double b1 = b1s[std::size_t(v)];
    const auto want = fidelity::longitudinal_recurrence(p, t1, t2, b1, false);
    const auto scaled = fidelity::longitudinal_recurrence(p, t1, t2, b1, true);
    const double h = 1e-6;
    const auto hi = fidelity::longitudinal_recurrence(p, t1, t2, b1 + h, false);
    const auto lo = fidelity::longitudinal_recurrence(p, t1, t2, b1 - h, false);
    double dl_db1 = 0.0;
    for (int n = 0; n < samples; ++n) {
      SCOPED_TRACE("B1 " + std::to_string(b1) + ", readout " + std::to_string(n));
      // y = -i S: S = -Im y.
      const Complex y = sample(got, samples, v, n);
      EXPECT_NEAR(-y.imag(), want[std::size_t(n)], 2e-6);
      EXPECT_NEAR(y.real(), 0.0, 2e-6);
      if (b1 != 1.0) {  // a visibly different signal had B1 scaled the inversion
        EXPECT_GT(std::abs(scaled[0] - want[0]), 0.05);
      }
      const double ds = (hi[std::size_t(n)] - lo[std::size_t(n)]) / (2 * h);
      const std::size_t i =
          ((std::size_t(v) * epg::tissue_tangent_count + epg::tissue_direction::b1) * samples +
           std::size_t(n)) *
          2;
      EXPECT_NEAR(-tangents[i + 1], ds, 2e-5 * std::abs(ds) + 2e-6);
      EXPECT_NEAR(tangents[i], 0.0, 2e-6);
      // L = sum Re conj(w) y, y = -i S: dL/dB1 = sum w_im (-dS/dB1).
      const std::size_t j = (std::size_t(v) * samples + std::size_t(n)) * 2;
      dl_db1 += double(w[j + 1]) * -ds;
    }
    const float got_dl =
        vjp.tissue[std::size_t(v) * epg::tissue_tangent_count + epg::tissue_direction::b1];
    EXPECT_NEAR(got_dl, dl_db1, 2e-5 * std::abs(dl_db1) + 2e-5) << "B1 " << b1;
  }
}

// The real path (forced on) keeps an unscaled pulse unscaled: the same train
// with its phases on one axis through both paths, bit-for-bit physics apart
// from float round-off.
TEST(TEST_CATEGORY, unscaled_pulses_agree_between_the_real_and_complex_paths) {
  auto p = fidelity::unscaled_inversion_train();
  p.phase_increment_deg = 0.0;
  const auto d = sequence::build_mprage(p);
  tissue::Tissue t = random_tissue(37, 311, false);
  ::setenv("LARMOR_REAL_PATH", "on", 1);
  EXPECT_EQ(simulate::Simulator(d).real_path_refusal(t), "");  // the real path does run
  const auto real = run_on_backend(d, t, 0);
  ::setenv("LARMOR_REAL_PATH", "off", 1);
  const auto complex = run_on_backend(d, t, 0);
  ::unsetenv("LARMOR_REAL_PATH");
  ASSERT_EQ(real.size(), complex.size());
  for (std::size_t i = 0; i < real.size(); ++i) ASSERT_NEAR(real[i], complex[i], 2e-6) << i;
  // And both against the reference, which scales nothing it is told not to.
  expect_matches_reference(d, t, 0);
}

}  // namespace larmor::test
