// Hard pulses with a duration carry their power integral (sequence/operators.hpp)
// and saturate a bound pool by exp(-pi g(offset) omega1^2 t); exchange carries
// that to the free pool's signal, written here in closed form in double.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <complex>
#include <limits>
#include <string>
#include <vector>

#include "reference/constants.hpp"
#include "sequence/builders/builders.hpp"
#include "sequence/operators.hpp"
#include "simulate/simulator.hpp"

namespace larmor {
namespace {

using larmor::test::kPi;

TEST(HardPulsePower, a_duration_carries_flip_squared_over_duration) {
  sequence::Description d;
  d << sequence::Excitation{90.0, 0.0, 0.01} << sequence::Excitation{30.0, 0.0, 0.0, 0u, 2e-3}
    << sequence::Refocusing{180.0, 90.0, 0.01, true, 4e-3};
  ASSERT_EQ(d.events.size(), 3u);
  EXPECT_EQ(d.events[0].saturation, 0.0f);  // instantaneous: no power
  // A rectangle of flip a over tau: omega1 = a / tau, omega1^2 tau = a^2 / tau.
  const double a30 = 30.0 * kPi / 180.0, a180 = kPi;
  EXPECT_FLOAT_EQ(d.events[1].saturation, float(a30 * a30 / 2e-3));
  EXPECT_FLOAT_EQ(d.events[2].saturation, float(a180 * a180 / 4e-3));
  // The timing stays that of the instant.
  EXPECT_DOUBLE_EQ(d.events[1].duration_s, 0.0);
  EXPECT_DOUBLE_EQ(d.events[2].duration_s, 0.01);
  for (double bad : {-1e-3, std::numeric_limits<double>::quiet_NaN()}) {
    try {
      d << sequence::Excitation{90.0, 0.0, 0.0, 0u, bad};
      FAIL() << "duration " << bad << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("duration_s"), std::string::npos) << e.what();
    }
  }
}

// exp(A t) of a 2x2 matrix with real distinct eigenvalues (Sylvester).
using M2 = std::array<std::array<double, 2>, 2>;
M2 exp2x2(const M2& a, double t) {
  const double tr = a[0][0] + a[1][1], det = a[0][0] * a[1][1] - a[0][1] * a[1][0];
  const double root = std::sqrt(tr * tr - 4.0 * det);
  const double l1 = 0.5 * (tr + root), l2 = 0.5 * (tr - root);
  M2 e{};
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) {
      const double id = i == j ? 1.0 : 0.0;
      e[i][j] = (std::exp(l1 * t) * (a[i][j] - l2 * id) - std::exp(l2 * t) * (a[i][j] - l1 * id)) /
                (l1 - l2);
    }
  }
  return e;
}

// A 360 degree rectangular pulse (at B1 = 0.9 a 324 degree turn of free water,
// its transverse part spoiled) saturates the bound pool on resonance by
// exp(-pi g(0) (a b1)^2 / tau); after `delay` of relaxation and exchange a 90
// reads the free pool: s = -i z_free(delay) sin(90 b1), with
// z(t) = eq + exp(A t) (z(0) - eq), A = [[-R1f - kf, kb], [kf, -R1b - kb]],
// kb = kf (1 - fb) / fb.
TEST(HardPulsePower, saturates_the_bound_pool_at_the_lineshape_rate_on_resonance) {
  const double tau = 1e-3, flip = 2.0 * kPi, b1 = 0.9, delay = 0.05, t2b = 12e-6;
  const double fb = 0.12, kf = 4.3, t1 = 0.8, t1b = 1.0;
  sequence::Description d;
  d << sequence::Excitation{360.0, 0.0, delay, abi::action::spoil_after, tau}
    << sequence::Excitation{90.0, 0.0, 0.0} << sequence::Readout{0.0, 0.0};
  for (auto shape : {tissue::Lineshape::gaussian, tissue::Lineshape::lorentzian}) {
    SCOPED_TRACE(tissue::lineshape_name(shape));
    const double g0 = shape == tissue::Lineshape::gaussian ? t2b / std::sqrt(2.0 * kPi)
                                                           : t2b / kPi;  // g(0), s/rad
    const double kept = std::exp(-kPi * g0 * (flip * b1) * (flip * b1) / tau);
    ASSERT_LT(kept, 0.7);  // a real saturation
    const double kb = kf * (1.0 - fb) / fb;
    const M2 a = {{{-1.0 / t1 - kf, kb}, {kf, -1.0 / t1b - kb}}};
    const M2 e = exp2x2(a, delay);
    const double eq[2] = {1.0 - fb, fb};
    const double z0[2] = {(1.0 - fb) * std::cos(flip * b1), fb * kept};
    const auto free_at = [&](const double* start) {
      return eq[0] + e[0][0] * (start[0] - eq[0]) + e[0][1] * (start[1] - eq[1]);
    };
    const double want = -free_at(z0) * std::sin(0.5 * kPi * b1);
    const double unsaturated[2] = {z0[0], fb};
    // The saturation reaches the signal well above round-off.
    ASSERT_GT(std::abs(want + free_at(unsaturated) * std::sin(0.5 * kPi * b1)), 1e-3);

    tissue::Tissue t;
    t.voxels = 1;
    t.t1_s.uniform = float(t1);
    t.t2_s.uniform = 0.07f;
    t.b1.uniform = float(b1);
    t.bound_fraction.uniform = float(fb);
    t.bound_t1_s.uniform = float(t1b);
    t.bound_exchange_hz.uniform = float(kf);
    t.bound_lineshape = shape;
    t.bound_t2_s = t2b;
    const std::vector<float> s = simulate::Simulator(d).run(t);
    ASSERT_EQ(s.size(), 2u);
    const std::complex<double> got(s[0], s[1]);
    EXPECT_LT(std::abs(got - std::complex<double>(0.0, want)), 3e-6)
        << "got " << got << ", want " << want << " i, kept " << kept;
  }
}

TEST(HardPulsePower, mt_spgr_excitation_carries_its_power_and_must_fit_its_gap) {
  sequence::MtSpgrParams p;
  p.repetitions = 2;
  p.mt.samples = 8;
  p.excitation_duration_s = 0.8e-3;  // gap 0.5 ms, TE 3 ms
  const sequence::Description d = sequence::build_mt_spgr(p);
  int excitations = 0;
  for (const auto& e : d.events) {
    if (e.kind != sequence::EventKind::pulse || e.rf_frequency_hz != 0.0) continue;
    const double a = p.flip_deg * kPi / 180.0;
    EXPECT_FLOAT_EQ(e.saturation, float(a * a / 0.8e-3));
    ++excitations;
  }
  EXPECT_EQ(excitations, 2);
  p.excitation_duration_s = 1.2e-3;  // half of it (0.6 ms) outruns the 0.5 ms gap
  EXPECT_THROW(sequence::build_mt_spgr(p), std::invalid_argument);
}

}  // namespace
}  // namespace larmor
