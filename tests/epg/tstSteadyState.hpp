// The steady-state iteration on one backend: the fixed point of one period
// against closed-form steady states, and its settling report against the
// geometric approach of the spoiled gradient echo.
#pragma once

#include <gtest/gtest.h>

#include "epg/forward_support.hpp"
#include "epg/pools_support.hpp"
#include "epg/steady_state_support.hpp"

namespace larmor::test {

// The period's fixed point is the Ernst signal, -i M0 sin a (1 - E1) E2(TE) /
// (1 - E1 cos a). Only Z_0 survives a period, and it approaches its fixed
// point geometrically: after period n it moved by q^(n-1) (q - 1) (1 - Mz*)
// with q = E1 cos a, so the report's count is the first n where that is
// below the tolerance.
TEST(TEST_CATEGORY, steady_state_is_the_ernst_signal_and_settles_geometrically) {
  const double tr = 0.012, te = 0.004, t2 = 0.05, tol = 1e-4;
  tissue::Tissue t;
  t.voxels = 3;
  t.t1_s.map = {0.3f, 1.0f, 2.5f};
  t.t2_s.uniform = float(t2);
  t.m0.map = {1.0f, 0.7f, 1.4f};
  for (double flip : {8.0, 40.0}) {
    SCOPED_TRACE("flip " + std::to_string(flip));
    std::vector<float> signals;
    const auto report = steady::run(steady::spoiled_period(flip, tr, te), t, tol, signals);
    EXPECT_EQ(report.unconverged, 0);
    for (int v = 0; v < 3; ++v) {
      const double a = flip * M_PI / 180, e1 = std::exp(-tr / t.t1_s.map[std::size_t(v)]);
      const double mz = (1 - e1) / (1 - e1 * std::cos(a)), m0 = t.m0.map[std::size_t(v)];
      const Complex want(0.0, -m0 * std::sin(a) * mz * std::exp(-te / t2));
      // At the tolerance the state is within tol / (1 - q) of the fixed point.
      const double q = e1 * std::cos(a);
      EXPECT_LT(std::abs(sample(signals, 1, v, 0) - want), m0 * (tol / (1 - q) + 2e-6)) << v;
      int n = 1;
      while (std::abs(std::pow(q, n - 1) * (q - 1) * (1 - mz)) >= tol) ++n;
      EXPECT_NEAR(report.repetitions[std::size_t(v)], n, 1) << "voxel " << v;
      EXPECT_GT(report.repetitions[std::size_t(v)], 1);
    }
  }
}

// Balanced SSFP (one repetition, no phase cycling) against its closed form,
// on and off resonance: no dummy repetitions to choose.
TEST(TEST_CATEGORY, steady_state_of_balanced_ssfp_matches_its_closed_form) {
  const double tr = 0.005, te = 0.0025, flip = 35.0;
  const auto d = steady::period(flip, tr, te, 0);  // balanced: no shift, no spoiling
  tissue::Tissue t;
  t.voxels = 3;
  t.t1_s.uniform = 0.3f;
  t.t2_s.uniform = 0.06f;
  t.df_hz.map = {0.0f, 17.0f, -43.0f};
  std::vector<float> signals;
  const auto report = steady::run(d, t, 1e-7, signals);
  EXPECT_EQ(report.unconverged, 0);
  for (int v = 0; v < 3; ++v) {
    const Complex want = simulate::bssfp_signal(flip * M_PI / 180, tr, te, 0.3, 0.06,
                                                t.df_hz.map[std::size_t(v)], 0.0);
    EXPECT_LT(std::abs(sample(signals, 1, v, 0) - want), 2e-5)
        << "voxel " << v << ": got " << sample(signals, 1, v, 0) << ", want " << want;
  }
}

// Three pools (two exchanging free pools, the second exchanging with a bound
// pool that an off-resonant power integral saturates) through a spoiled
// repetition: only each pool's Z_0 survives a period, so the fixed point
// solves z = E D z + (I - E) eq, with D = diag(cos a, cos a, kept) the pulse,
// E = exp(A TR) the exchange-relaxation step (Sylvester's formula) and kept
// the lineshape's saturation; the echo is the free pools' -i sin a z carried
// through TE by the transverse exchange exp(M TE).
TEST(TEST_CATEGORY, steady_state_of_three_pools_matches_its_closed_form) {
  const double tr = 0.02, te = 0.005, flip = 25.0, power = 3.0e4, offset = 2000.0, t2b = 11e-6;
  auto d = steady::spoiled_period(flip, tr, te);
  d.events[0].saturation = float(power);
  d.events[0].rf_frequency_hz = offset;
  tissue::Tissue t;
  t.voxels = 2;
  t.m0.map = {1.0f, 0.8f};
  t.t1_s.uniform = 0.9f;
  t.t2_s.uniform = 0.07f;
  t.pool_fraction.map = {0.15f, 0.25f};
  t.pool_t1_s.uniform = 0.45f;
  t.pool_t2_s.uniform = 0.015f;
  t.pool_exchange_hz.uniform = 8.0f;
  t.bound_fraction.uniform = 0.1f;
  t.bound_t1_s.uniform = 1.0f;
  t.bound_exchange_hz.uniform = 4.3f;
  t.bound_lineshape = tissue::Lineshape::gaussian;
  t.bound_t2_s = t2b;
  std::vector<float> signals;
  const auto report = steady::run(d, t, 1e-8, signals);
  EXPECT_EQ(report.unconverged, 0);
  const double a = flip * M_PI / 180, w = 2 * M_PI * offset;
  const double g = t2b / std::sqrt(2 * M_PI) * std::exp(-0.5 * std::pow(w * t2b, 2));
  const double kept = std::exp(-M_PI * g * power);
  ASSERT_LT(kept, 0.9);
  for (int v = 0; v < 2; ++v) {
    const double f = t.pool_fraction.map[std::size_t(v)], fb = 0.1;
    const std::vector<double> eq = {1 - f - fb, f, fb};
    const double kab = 8.0, kfb = 4.3;
    const pools::Matrix k = {{0, kab, 0}, {kab * eq[0] / eq[1], 0, kfb}, {0, kfb * eq[1] / fb, 0}};
    const auto e = pools::sylvester_expm(pools::rate_matrix({1 / 0.9, 1 / 0.45, 1.0}, k), tr);
    // (I - E D) z = (I - E) eq, by Gaussian elimination.
    const double dd[3] = {std::cos(a), std::cos(a), kept};
    pools::Matrix m(3, std::vector<double>(4, 0.0));
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) {
        m[i][j] = (i == j ? 1.0 : 0.0) - e[i][j] * dd[j];
        m[i][3] += ((i == j ? 1.0 : 0.0) - e[i][j]) * eq[std::size_t(j)];
      }
    }
    for (int c = 0; c < 3; ++c) {
      for (int r = c + 1; r < 3; ++r) {
        const double factor = m[r][c] / m[c][c];
        for (int j = c; j < 4; ++j) m[r][j] -= factor * m[c][j];
      }
    }
    double z[3];
    for (int r = 2; r >= 0; --r) {
      z[r] = m[r][3];
      for (int j = r + 1; j < 3; ++j) z[r] -= m[r][j] * z[j];
      z[r] /= m[r][r];
    }
    const pools::Matrix free_k = {{0, kab}, {kab * eq[0] / eq[1], 0}};
    const auto tt = pools::sylvester_expm(pools::rate_matrix({1 / 0.07, 1 / 0.015}, free_k), te);
    const double m0 = t.m0.map[std::size_t(v)];
    const double echo = (tt[0][0] + tt[1][0]) * z[0] + (tt[0][1] + tt[1][1]) * z[1];
    const Complex want(0.0, -m0 * std::sin(a) * echo);
    EXPECT_LT(std::abs(sample(signals, 1, v, 0) - want), 1e-5)
        << "voxel " << v << ": got " << sample(signals, 1, v, 0) << ", want " << want;
    EXPECT_GT(report.repetitions[std::size_t(v)], 10);
  }
}

// Without spoiling every order carries over between periods: each voxel's
// settled samples are those of one straight forward run of as many periods
// (the pooled kernel from equilibrium, no carried state), at that period.
TEST(TEST_CATEGORY, pooled_steady_state_is_the_forward_run_at_its_settling_period) {
  auto d = steady::period(30.0, 0.01, 0.004, abi::action::shift_after);
  d.events[0].saturation = 2.0e4f;
  d.events[0].rf_frequency_hz = 1000.0;
  const tissue::Tissue t = pools::pooled_tissue(3, 461, true, true, true);
  std::vector<float> settled;
  const auto report = steady::run(d, t, 1e-6, settled, 16);
  ASSERT_EQ(report.unconverged, 0);
  const auto straight = run_on_backend(steady::repeated(d, report.periods), t, 16);
  for (int v = 0; v < t.voxels; ++v) {
    const int p = report.repetitions[std::size_t(v)];
    ASSERT_GT(p, 10);
    const Complex want = sample(straight, report.periods, v, p - 1);
    EXPECT_LT(std::abs(sample(settled, 1, v, 0) - want), 1e-5)
        << "voxel " << v << ", period " << p << ": got " << sample(settled, 1, v, 0) << ", want "
        << want;
  }
}

TEST(TEST_CATEGORY, steady_state_refuses_what_it_cannot_do) {
  const auto d = steady::spoiled_period(20, 0.01, 0.003);
  tissue::Tissue t;
  t.voxels = 1;
  t.t1_s.uniform = 1.0f;
  std::vector<float> signals;
  EXPECT_THROW(steady::run(d, t, 0.0, signals), std::invalid_argument);
  simulate::SteadyStateOptions none;
  none.max_repetitions = 0;
  EXPECT_THROW(steady::run(d, t, none, signals), std::invalid_argument);
  // A voxel that cannot settle within the limit is reported, not hidden.
  tissue::Tissue slow;
  slow.voxels = 1;  // no relaxation: Mz reaches 0 only as cos(a)^n, not within 50 periods
  simulate::SteadyStateOptions o;
  o.tolerance = 1e-9;
  o.max_repetitions = 50;
  const auto report = steady::run(d, slow, o, signals);
  EXPECT_EQ(report.unconverged, 1);
  EXPECT_EQ(report.repetitions[0], -1);
  EXPECT_EQ(report.periods, 50);
}

}  // namespace larmor::test
