// The steady-state iteration on one backend: the fixed point of one period
// against closed-form steady states, and its settling report against the
// geometric approach of the spoiled gradient echo. Included after
// tstForward.hpp by tests/backends/forward_<backend>.cpp.
#pragma once

#include <gtest/gtest.h>

#include <cmath>

namespace larmor::test {

namespace steady {

inline simulate::SteadyStateReport run(const sequence::Description& d, const tissue::Tissue& t,
                                       const simulate::SteadyStateOptions& o,
                                       std::vector<float>& signals) {
  simulate::Simulator sim(d, simulate::Options{});
  signals.assign(std::size_t(t.voxels) * sim.samples() * 2, NAN);
  return sim.run_steady_state_into<TEST_EXECSPACE>(t, signals.data(), o);
}

inline simulate::SteadyStateReport run(const sequence::Description& d, const tissue::Tissue& t,
                                       double tolerance, std::vector<float>& signals) {
  simulate::SteadyStateOptions o;
  o.tolerance = tolerance;
  return run(d, t, o, signals);
}

// One repetition: a pulse, the echo at TE with `readout_action` (spoiling or
// none), then the rest of TR.
inline sequence::Description period(double flip_deg, double tr, double te,
                                    std::uint32_t readout_action) {
  sequence::Description d;
  d.name = "one-tr";
  sequence::Event pulse, adc;
  pulse.kind = abi::EventKind::pulse;
  pulse.flip_rad = flip_deg * M_PI / 180.0;
  pulse.duration_s = te;
  adc.kind = abi::EventKind::adc;
  adc.action = readout_action;
  adc.duration_s = tr - te;
  d.events = {pulse, adc};
  return d;
}

inline sequence::Description spoiled_period(double flip_deg, double tr, double te) {
  return period(flip_deg, tr, te, abi::action::spoil_after);
}

}  // namespace steady

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
    const Complex want = closed_form::bssfp_signal(flip * M_PI / 180, tr, te, 0.3, 0.06,
                                                   t.df_hz.map[std::size_t(v)], 0.0);
    EXPECT_LT(std::abs(sample(signals, 1, v, 0) - want), 2e-5)
        << "voxel " << v << ": got " << sample(signals, 1, v, 0) << ", want " << want;
  }
}

TEST(TEST_CATEGORY, steady_state_refuses_what_it_cannot_do) {
  const auto d = steady::spoiled_period(20, 0.01, 0.003);
  tissue::Tissue t;
  t.voxels = 1;
  t.t1_s.uniform = 1.0f;
  std::vector<float> signals;
  EXPECT_THROW(steady::run(d, t, 0.0, signals), std::invalid_argument);
  t.bound_fraction.uniform = 0.1f;
  EXPECT_THROW(steady::run(d, t, 1e-6, signals), std::invalid_argument);
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
