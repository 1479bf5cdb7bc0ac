// Derivatives of the event loop on one backend: forward mode along the tissue
// directions and the checkpointed adjoint, against central differences of the
// double-precision reference and against each other.
#pragma once

#include <gtest/gtest.h>

#include "epg/derivatives_support.hpp"
#include "epg/forward_support.hpp"

namespace larmor::test {

TEST(TEST_CATEGORY, tissue_jvp_matches_central_differences) {
  sequence::MeseParams mese;
  mese.echoes = 16;
  mese.refocusing_deg = 150.0;
  expect_tissue_jvp_matches_differences(sequence::build_mese(mese), random_tissue(3, 61), 0);
  sequence::SpgrParams spgr;
  spgr.repetitions = 60;
  spgr.flip_deg = 25.0;
  expect_tissue_jvp_matches_differences(sequence::build_spgr(spgr), random_tissue(3, 62), 0);
  sequence::MrfParams mrf;
  std::mt19937 rng(63);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int n = 0; n < 50; ++n) {
    mrf.schedule.push_back({0.1 + 0.9 * u(rng), 0.0, 2e-3 * u(rng), 1e-3 * u(rng)});
  }
  // On resonance: the df derivative must still see the precession.
  expect_tissue_jvp_matches_differences(sequence::build_mrf(mrf), random_tissue(2, 64, false), 24);
}

// Also a tissue fit's reverse run, without the sequence derivatives.
TEST(TEST_CATEGORY, vjp_and_jvp_satisfy_the_dot_product_identity) {
  sequence::MeseParams mese;
  mese.echoes = 12;
  mese.refocusing_deg = 150.0;
  for (const auto& d : {sequence::build_mese(mese), vjp_test_train()}) {
    for (bool sequence : {true, false}) {
      SCOPED_TRACE(d.name + (sequence ? "" : ", tissue alone"));
      expect_dot_product_identity(d, random_tissue(6, 81), sequence);
    }
  }
}

TEST(TEST_CATEGORY, vjp_sequence_gradients_match_central_differences) {
  EXPECT_GT(expect_sequence_gradients_match_differences(vjp_test_train(), random_tissue(3, 91), 24),
            60);
}

TEST(TEST_CATEGORY, vjp_does_not_depend_on_the_checkpoint_interval) {
  expect_vjp_independent_of_the_interval(vjp_test_train(), random_tissue(4, 95));
}

// Ideally spoiled gradient echo at steady state: y = -i S exp(i 2 pi df TE)
// with S = M0 sin a (1 - E1) E2 / (1 - E1 cos a), a = B1 a_nominal, so
//   dS/dM0 = S / M0,  dS/dT2 = S TE / T2^2,  dy/ddf = 2 pi TE S (real),
//   dS/dT1 = M0 sin a E2 (cos a - 1) / (1 - E1 cos a)^2 * E1 TR / T1^2,
//   dS/dB1 = a_nominal M0 E2 (1 - E1) (cos a - E1) / (1 - E1 cos a)^2.
// The transient of a derivative decays as n (E1 cos a)^n, below 1e-9 after
// 1000 repetitions for the values here.
TEST(TEST_CATEGORY, spoiled_gradient_echo_derivatives_match_the_ernst_derivatives) {
  for (double flip_deg : {10.0, 35.0, 70.0}) {
    sequence::SpgrParams p;
    p.flip_deg = flip_deg;
    p.repetitions = 1000;
    p.spoiler = sequence::Spoiler::ideal;
    const double m0 = 0.8, t1 = 0.5, t2 = 0.06, b1 = 0.9;
    tissue::Tissue t;
    t.voxels = 1;
    t.m0.uniform = float(m0);
    t.t1_s.uniform = float(t1);
    t.t2_s.uniform = float(t2);
    t.b1.uniform = float(b1);
    const auto tangents = jvp_tangents(sequence::build_spgr(p), t);
    const double a_nominal = flip_deg * kx::pi / 180, a = b1 * a_nominal;
    const double e1 = std::exp(-p.tr_s / t1), e2 = std::exp(-p.te_s / t2);
    const double denom = 1.0 - e1 * std::cos(a);
    const double s = m0 * std::sin(a) * (1.0 - e1) * e2 / denom;
    const double want[5] = {
        s / m0,
        m0 * std::sin(a) * e2 * (std::cos(a) - 1.0) / (denom * denom) * e1 * p.tr_s / (t1 * t1),
        s * p.te_s / (t2 * t2),
        a_nominal * m0 * e2 * (1.0 - e1) * (std::cos(a) - e1) / (denom * denom),
        2.0 * kx::pi * p.te_s * s};
    const int last = p.repetitions - 1;
    for (int k = 0; k < 4; ++k) {
      // y = -i S: dS = -Im dy.
      const Complex got = tangent_at(tangents, p.repetitions, k, last);
      EXPECT_NEAR(-got.imag(), want[k], 2e-5 * std::abs(want[k]) + 1e-6)
          << "flip " << flip_deg << ", direction " << k;
      EXPECT_NEAR(got.real(), 0.0, 1e-6) << "flip " << flip_deg << ", direction " << k;
    }
    const Complex got_df = tangent_at(tangents, p.repetitions, 4, last);
    EXPECT_NEAR(got_df.real(), want[4], 2e-5 * want[4] + 1e-6) << "flip " << flip_deg;
    EXPECT_NEAR(got_df.imag(), 0.0, 1e-6) << "flip " << flip_deg;
  }
}

// Ideal CPMG: echo n = -i M0 exp(-n ESP / T2), so d/dM0 = echo / M0,
// d/dT2 = echo n ESP / T2^2, and nothing depends on T1 or off-resonance.
TEST(TEST_CATEGORY, cpmg_derivatives_match_the_ideal_echo_derivatives) {
  sequence::MeseParams p;
  p.echoes = 24;
  p.echo_spacing_s = 0.01;
  const double m0 = 1.3, t2 = 0.07;
  tissue::Tissue t;
  t.voxels = 1;
  t.m0.uniform = float(m0);
  t.t1_s.uniform = 0.8f;
  t.t2_s.uniform = float(t2);
  t.df_hz.uniform = 17.0f;
  const auto tangents = jvp_tangents(sequence::build_mese(p), t);
  for (int n = 1; n <= p.echoes; ++n) {
    const double echo = m0 * std::exp(-n * p.echo_spacing_s / t2);
    const double want_m0 = echo / m0, want_t2 = echo * n * p.echo_spacing_s / (t2 * t2);
    const Complex d_m0 = tangent_at(tangents, p.echoes, epg::tissue_direction::m0, n - 1);
    const Complex d_t1 = tangent_at(tangents, p.echoes, epg::tissue_direction::t1, n - 1);
    const Complex d_t2 = tangent_at(tangents, p.echoes, epg::tissue_direction::t2, n - 1);
    const Complex d_df = tangent_at(tangents, p.echoes, epg::tissue_direction::df, n - 1);
    EXPECT_NEAR(std::abs(d_m0), want_m0, 2e-6) << "echo " << n;
    EXPECT_NEAR(std::abs(d_t2), want_t2, 2e-5 * want_t2 + 2e-6) << "echo " << n;
    EXPECT_NEAR(std::abs(d_t1), 0.0, 2e-6) << "echo " << n;
    // 2 pi t M0 bounds the df derivative of any sample at time t.
    EXPECT_NEAR(std::abs(d_df), 0.0, 2e-6 * 2 * kx::pi * n * p.echo_spacing_s) << "echo " << n;
  }
}

// The orders no later sample reads (epg::LiveOrders::read, the host's
// tables): at the truncation that reaches the samples, stepping them too
// (LARMOR_TRIM_ORDERS=off, the same order count) gives the same samples and
// tangents to the bit and the same gradients to float round-off, through the
// complex and the on-axis kernels. A device's tables step them either way.
TEST(TEST_CATEGORY, orders_no_later_sample_reads_change_nothing) {
  if (kx::is_host_space_v<TEST_EXECSPACE>) {
    ASSERT_EQ(epg::live_orders_rule<TEST_EXECSPACE>(true), epg::LiveOrders::read);
  }
  sequence::MeseParams in_phase;
  in_phase.excitation_phase_deg = in_phase.refocusing_phase_deg;
  const tissue::Tissue t = random_tissue(11, 771, false);
  for (const auto& d :
       {sequence::build_mese({}), sequence::build_mese(in_phase), vjp_test_train()}) {
    const int orders = sequence::sample_reach_order_count(d);
    const auto w = random_cotangents(std::size_t(t.voxels) * d.sample_count() * 2, 772);
    for (const char* path : {"off", "on"}) {
      SCOPED_TRACE(d.name + ", LARMOR_REAL_PATH=" + path);
      const ScopedSetting real_path("LARMOR_REAL_PATH", path);
      struct Run {
        std::vector<float> signals, tangents;
        VjpResult vjp;
      };
      const auto run = [&] {
        simulate::Options o;
        o.max_order = orders - 1;  // `orders` counts states (0..orders-1)
        simulate::Simulator sim(d, o);
        Run r;
        r.signals.assign(std::size_t(t.voxels) * sim.samples() * 2, NAN);
        r.tangents.assign(r.signals.size() * epg::tissue_tangent_count, NAN);
        std::vector<float> jvp_signals(r.signals.size());
        sim.run_into<TEST_EXECSPACE>(t, r.signals.data());
        sim.run_tissue_jvp_into<TEST_EXECSPACE>(t, jvp_signals.data(), r.tangents.data());
        r.vjp = run_vjp(d, t, orders, w);
        return r;
      };
      const Run trimmed = run();
      Run every;
      {
        const ScopedSetting off("LARMOR_TRIM_ORDERS", "off");
        every = run();
      }
      EXPECT_EQ(trimmed.signals, every.signals);
      EXPECT_EQ(trimmed.tangents, every.tangents);
      const double tol = float_tolerance(std::int64_t(d.events.size()));
      for (const bool tissue : {true, false}) {
        const auto& want = tissue ? every.vjp.tissue : every.vjp.sequence;
        const auto& have = tissue ? trimmed.vjp.tissue : trimmed.vjp.sequence;
        double scale = 1e-3;
        for (float g : want) scale = std::max(scale, double(std::abs(g)));
        for (std::size_t i = 0; i < want.size(); ++i) {
          ASSERT_NEAR(have[i], want[i], tol * scale) << (tissue ? "tissue " : "sequence ") << i;
        }
      }
    }
  }
}

}  // namespace larmor::test
