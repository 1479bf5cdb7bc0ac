// The real-subspace test and rewrite (src/sequence/real_subspace.hpp): on
// random trains that qualify, the real recurrence of the header, written out
// here and played on the rewritten stream, gives the complex double-precision
// reference's samples, and the reference's states stay on the axis; a
// quarter-turn excitation (larmor's CPMG `mese`) is refused and its states do
// fill the plane; every arrangement that only looks real is refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "reference/constants.hpp"
#include "reference/epg_reference.hpp"
#include "sequence/builders/builders.hpp"
#include "sequence/on_axis_trains.hpp"
#include "sequence/real_subspace.hpp"

namespace larmor::sequence {
namespace {

using larmor::test::kPi;
using reference::Complex;

// The real EPG of real_subspace.hpp on orders [0, K), in double.
std::vector<Complex> play_real(const Description& d, const RealSubspacePlan& plan,
                               const reference::Tissue& x, int orders) {
  std::vector<double> a(std::size_t(orders), 0.0), b = a, c = a;
  c[0] = 1.0;
  const auto shift = [&] {
    for (int k = orders - 1; k > 0; --k) a[std::size_t(k)] = a[std::size_t(k - 1)];
    for (int k = 0; k + 1 < orders; ++k) b[std::size_t(k)] = b[std::size_t(k + 1)];
    b[std::size_t(orders - 1)] = 0.0;
    a[0] = -b[0];
  };
  std::vector<Complex> samples;
  std::size_t sample = 0;
  for (std::size_t i = 0; i < d.events.size(); ++i) {
    const Event& e = d.events[i];
    if (e.action & action::crush_before) shift();
    if (e.kind == EventKind::pulse) {
      const double f = plan.signed_flip_rad[i] * x.b1;
      const double c2 = std::pow(std::cos(f / 2), 2), s2 = std::pow(std::sin(f / 2), 2);
      for (int k = 0; k < orders; ++k) {
        const double ak = a[std::size_t(k)], bk = b[std::size_t(k)], ck = c[std::size_t(k)];
        a[std::size_t(k)] = c2 * ak + s2 * bk - std::sin(f) * ck;
        b[std::size_t(k)] = s2 * ak + c2 * bk + std::sin(f) * ck;
        c[std::size_t(k)] = std::sin(f) * (ak - bk) / 2 + std::cos(f) * ck;
      }
    }
    if (e.kind == EventKind::adc) samples.push_back(x.m0 * a[0] * plan.sample_factor[sample++]);
    if (e.action & action::crush_after) shift();
    if (e.action & action::shift_after) shift();
    if (e.action & action::spoil_after)
      std::fill(a.begin(), a.end(), 0.0), std::fill(b.begin(), b.end(), 0.0);
    if (e.duration_s > 0.0) {
      const double e1 = std::exp(-e.duration_s / x.t1_s), e2 = std::exp(-e.duration_s / x.t2_s);
      for (int k = 0; k < orders; ++k) {
        a[std::size_t(k)] *= e2;
        b[std::size_t(k)] *= e2;
        c[std::size_t(k)] *= e1;
      }
      c[0] += 1.0 - e1;
    }
  }
  return samples;
}

using test::on_axis_train;

// Largest |component off the axis| and |component on it| of a reference state
// in the frame turned by p0: Re of e^{-ip0} F+ and e^{ip0} F- and Im of Z off,
// their counterparts on.
std::pair<double, double> off_and_on_axis(const reference::EpgState& s, double p0) {
  double off = 0.0, on = 0.0;
  for (int k = 0; k < s.orders(); ++k) {
    const Complex fp = s.f_plus(k) * std::polar(1.0, -p0), fm = s.f_minus(k) * std::polar(1.0, p0);
    off = std::max({off, std::abs(fp.real()), std::abs(fm.real()), std::abs(s.z(k).imag())});
    on = std::max({on, std::abs(fp.imag()), std::abs(fm.imag()), std::abs(s.z(k).real())});
  }
  return {off, on};
}

TEST(RealSubspace, the_real_recurrence_on_the_rewrite_is_the_complex_reference) {
  for (unsigned seed = 1; seed <= 6; ++seed) {
    const double axis = 0.37 * seed;  // some beyond a half turn
    const Description d = on_axis_train(seed, axis, 120);
    const auto plan = plan_real_subspace(d, {});
    ASSERT_TRUE(plan.eligible) << plan.reason;
    EXPECT_NEAR(plan.axis_rad, std::fmod(axis, kPi), 1e-12);
    reference::Tissue x;
    x.m0 = 0.8;
    x.t1_s = 0.9;
    x.t2_s = 0.08;
    x.b1 = 0.93;
    const int orders = 24;
    const auto want = reference::simulate(d, x, orders);
    const auto got = play_real(d, plan, x, orders);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t n = 0; n < want.size(); ++n) {
      ASSERT_LT(std::abs(got[n] - want[n]), 1e-12) << "seed " << seed << ", sample " << n;
    }
    reference::EpgState s(orders);
    std::vector<Complex> samples;
    reference::run_events(d, x, s, samples);
    const auto [off, on] = off_and_on_axis(s, plan.axis_rad);
    EXPECT_LT(off, 1e-13) << "seed " << seed;
    EXPECT_GT(on, 1e-3) << "seed " << seed;
  }
}

TEST(RealSubspace, half_turns_fold_into_the_flip_signs) {
  Description d;
  d.name = "anti";
  const auto pulse = [](double flip_deg, double phase_deg) {
    Event e;
    e.kind = EventKind::pulse;
    e.flip_rad = flip_deg * kPi / 180;
    e.phase_rad = phase_deg * kPi / 180;
    return e;
  };
  d.events = {pulse(90, 200),   pulse(180, 20),  pulse(180, 560),
              pulse(150, -160), pulse(120, 740), pulse(0, 45)};
  const auto plan = plan_real_subspace(d, {});
  ASSERT_TRUE(plan.eligible) << plan.reason;
  EXPECT_NEAR(plan.axis_rad, 20 * kPi / 180, 1e-12);
  EXPECT_EQ(plan.flip_sign, (std::vector<int>{-1, 1, -1, -1, 1, 1}));
  EXPECT_NEAR(plan.signed_flip_rad[3], -150 * kPi / 180, 1e-12);
  EXPECT_EQ(plan.signed_flip_rad[5], 0.0);  // no flip: no axis to keep
}

// The classic CPMG (excitation a quarter turn from the refocusing pulses):
// refused, and on the reference its states do fill the plane.
TEST(RealSubspace, a_quarter_turn_excitation_fills_the_plane) {
  MeseParams p;
  p.echoes = 8;
  p.refocusing_deg = 150.0;
  const Description d = build_mese(p);
  const auto plan = plan_real_subspace(d, {});
  EXPECT_FALSE(plan.eligible);
  EXPECT_NE(plan.reason.find("event 1: its phase is 90 deg from the axis"), std::string::npos)
      << plan.reason;
  reference::Tissue x;
  x.t1_s = 0.9;
  x.t2_s = 0.08;
  reference::EpgState s(16);
  std::vector<Complex> samples;
  reference::run_events(d, x, s, samples);
  for (double axis : {p.refocusing_phase_deg * kPi / 180, p.excitation_phase_deg * kPi / 180}) {
    const auto [off, on] = off_and_on_axis(s, axis);
    EXPECT_GT(std::min(off, on), 1e-3) << "axis " << axis;
  }
  // In phase (Carr-Purcell), the same train stays on the axis.
  p.excitation_phase_deg = p.refocusing_phase_deg;
  const auto cp = build_mese(p);
  ASSERT_TRUE(plan_real_subspace(cp, {}).eligible);
}

TEST(RealSubspace, arrangements_that_only_look_real_are_refused_by_name) {
  const Description d = on_axis_train(11, 0.5, 40);
  const std::pair<bool RealSubspaceDeclarations::*, const char*> cases[] = {
      {&RealSubspaceDeclarations::off_resonance, "off-resonance"},
      {&RealSubspaceDeclarations::flow, "flow"},
      {&RealSubspaceDeclarations::transmit_array, "transmit array"},
      {&RealSubspaceDeclarations::pools, "pooled"},
      {&RealSubspaceDeclarations::carried_state, "carried state"}};
  for (const auto& [field, word] : cases) {
    RealSubspaceDeclarations declared;
    declared.*field = true;
    const auto plan = plan_real_subspace(d, declared);
    EXPECT_FALSE(plan.eligible) << word;
    EXPECT_NE(plan.reason.find(word), std::string::npos) << plan.reason;
  }
  // A pulse at an RF offset (a shaped pulse off resonance).
  Description shaped = d;
  std::size_t first_pulse = 0;
  while (shaped.events[first_pulse].kind != EventKind::pulse) ++first_pulse;
  shaped.events[first_pulse].rf_frequency_hz = 1200.0;
  const auto plan = plan_real_subspace(shaped, {});
  EXPECT_FALSE(plan.eligible);
  EXPECT_NE(plan.reason.find("event " + std::to_string(first_pulse) + ": a pulse"),
            std::string::npos)
      << plan.reason;
}

}  // namespace
}  // namespace larmor::sequence
