// Pins the double-precision reference simulators (tests/reference) and the
// closed forms (src/simulate/closed_form) against values derived by hand, so
// that the kernels can then be tested against the reference.
//
// Tolerances. Every signal here is at most M0 <= 1 in magnitude and each event
// costs O(1e-16) of round-off; relaxation contracts old errors, so a stream of
// up to a few thousand events stays below ~1e-13. Algebraic identities are
// therefore asserted to 1e-12 (1e-14 for single matrix products), and
// approaches to a steady state to (derived residual bound) + 1e-12.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <random>
#include <vector>

#include "reference/constants.hpp"
#include "reference/epg_reference.hpp"
#include "sequence/description.hpp"
#include "simulate/closed_form.hpp"

namespace {

using larmor::reference::Complex;
using larmor::reference::EpgState;
using larmor::reference::Tissue;
using larmor::sequence::Description;
using larmor::sequence::Event;
using larmor::sequence::EventKind;
namespace action = larmor::sequence::action;
namespace ref = larmor::reference;
namespace cf = larmor::simulate;

using larmor::test::kPi;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kIdentityTol = 1e-12;
const Complex kI{0.0, 1.0};

Event make_event(EventKind kind, double flip, double phase, double duration, std::uint32_t bits) {
  Event e;
  e.kind = kind;
  e.flip_rad = flip;
  e.phase_rad = phase;
  e.duration_s = duration;
  e.action = bits;
  return e;
}
Event pulse(double flip, double phase, double duration, std::uint32_t bits = 0) {
  return make_event(EventKind::pulse, flip, phase, duration, bits);
}
Event adc(double phase, double duration, std::uint32_t bits = 0) {
  return make_event(EventKind::adc, 0.0, phase, duration, bits);
}
Event wait(double duration, std::uint32_t bits = 0) {
  return make_event(EventKind::wait, 0.0, 0.0, duration, bits);
}

int total_shifts(const Description& d) {
  int shifts = 0;
  for (const Event& e : d.events) shifts += larmor::abi::shifts_of(e.action);
  return shifts;
}

double wrap_phase(double angle) { return std::remainder(angle, 2.0 * kPi); }

// Phase-cycled pulse n carries phase n q, stored in double: off by up to
// eps n q (pi's representation and the product's rounding). dR/dp = [Jz, R] has
// norm <= 2, so each pulse errs by <= 2 eps n q, and a map contracting by E
// per TR sums these to <= 2 eps n q / (1 - E).
double phase_roundoff_bound(int n, double increment, double contraction) {
  return 2.0 * std::numeric_limits<double>::epsilon() * n * std::abs(increment) /
         (1.0 - contraction);
}

// Random stream of every event kind and action bit.
Description random_sequence(std::mt19937_64& rng, int n_events) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Description d;
  for (int i = 0; i < n_events; ++i) {
    const double r = unit(rng);
    const EventKind kind =
        r < 0.4 ? EventKind::pulse : (r < 0.8 ? EventKind::adc : EventKind::wait);
    std::uint32_t bits = 0;
    if (unit(rng) < 0.3) bits |= action::crush_before;
    if (unit(rng) < 0.3) bits |= action::crush_after;
    if (unit(rng) < 0.3) bits |= action::shift_after;
    if (unit(rng) < 0.05) bits |= action::spoil_after;
    const double flip = kind == EventKind::pulse ? kPi * unit(rng) : 0.0;
    d.events.push_back(make_event(kind, flip, 40.0 * unit(rng) - 20.0, 0.02 * unit(rng), bits));
  }
  return d;
}

// CPMG: excitation at `phase`, refocusing at phase + pi/2 between crushers,
// echo n sampled at n ESP with receiver phase `phase`.
Description cpmg(double excitation, double refocusing, double esp, int echoes, double phase) {
  Description d;
  d.events.push_back(pulse(excitation, phase, esp / 2));
  for (int n = 0; n < echoes; ++n) {
    d.events.push_back(
        pulse(refocusing, phase + kPi / 2, esp / 2, action::crush_before | action::crush_after));
    d.events.push_back(adc(phase, esp / 2, action::echo_centre));
  }
  return d;
}

// The RF rotation turns each spin's M, so |M(theta)|^2 = |M+|^2 + Mz^2 is kept
// at every theta. Averaged over theta (Parseval, F_{-k} = conj(F-_k),
// Z_{-k} = conj(Z_k)) the kept quantity is
//   sum_{signed k} |F_k|^2 + Z_0^2 + 2 sum_{k>=1} |Z_k|^2,
// i.e. per order |F+_k|^2 + |F-_k|^2 + 2 |Z_k|^2: D R D^-1 is unitary, D = diag(1, 1, sqrt 2).
double rotation_invariant(const EpgState& s) {
  double sum = std::norm(s.z(0));
  for (int k = -(s.orders() - 1); k < s.orders(); ++k) sum += std::norm(s.f(k));
  for (int k = 1; k < s.orders(); ++k) sum += 2.0 * std::norm(s.z(k));
  return sum;
}

TEST(ReferenceRf, ScaledMatrixIsUnitary) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> angle(-7.0, 7.0);
  const double d[3] = {1.0, 1.0, std::sqrt(2.0)};
  for (int trial = 0; trial < 20; ++trial) {
    const ref::RfMatrix r = ref::rf_matrix(angle(rng), angle(rng));
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) {
        Complex product = 0.0;  // (D R D^-1)^H (D R D^-1), entry (i, j)
        for (int m = 0; m < 3; ++m) {
          product += std::conj(d[m] * r[m][i] / d[i]) * (d[m] * r[m][j] / d[j]);
        }
        EXPECT_NEAR(std::abs(product - Complex(i == j ? 1.0 : 0.0)), 0.0, 1e-14);
      }
    }
  }
}

TEST(ReferenceRf, RotationKeepsInvariantOfRandomState) {
  std::mt19937_64 rng(12);
  std::normal_distribution<double> normal;
  EpgState state(9);
  for (int k = -8; k <= 8; ++k) state.set_f(k, {normal(rng), normal(rng)});
  state.set_z(0, normal(rng));
  for (int k = 1; k < 9; ++k) state.set_z(k, {normal(rng), normal(rng)});
  const double before = rotation_invariant(state);
  state.rotate(1.234, -0.77);
  state.rotate(2.9, 5.1);
  EXPECT_NEAR(rotation_invariant(state) / before, 1.0, 1e-14);
}

TEST(ReferencePhysics, FreeInductionDecayPrecessesAtOffResonance) {
  const Tissue tissue{0.8, 0.9, 0.07, 1.1, 23.5};
  const double flip = 0.7, phase = 0.4, receiver = -1.3, step = 1.7e-3;
  Description d;
  d.events.push_back(pulse(flip, phase, step));
  for (int n = 1; n <= 20; ++n) d.events.push_back(adc(receiver, step));
  const std::vector<Complex> s = ref::simulate(d, tissue, 8);
  ASSERT_EQ(s.size(), 20u);
  for (int n = 1; n <= 20; ++n) {
    const double t = n * step;
    // F+_0 = -i e^{ip} sin(a B1) right after the pulse, then T2 and precession.
    const Complex expected = tissue.m0 * -kI * std::polar(1.0, phase - receiver) *
                             std::sin(flip * tissue.b1) * std::exp(-t / tissue.t2_s) *
                             std::polar(1.0, 2 * kPi * tissue.df_hz * t);
    EXPECT_NEAR(std::abs(s[n - 1] - expected), 0.0, kIdentityTol) << "n = " << n;
    EXPECT_NEAR(wrap_phase(std::arg(s[n - 1] / s[0]) - 2 * kPi * tissue.df_hz * (t - step)), 0.0,
                1e-12);
  }
}

TEST(ReferencePhysics, InfiniteRelaxationTimesMeanNoRelaxation) {
  const Tissue tissue{1.0, kInf, kInf, 1.0, 0.0};
  Description d;
  d.events.push_back(pulse(kPi / 3, 0.0, 10.0));
  d.events.push_back(adc(0.0, 10.0, action::spoil_after));
  d.events.push_back(wait(10.0));
  d.events.push_back(pulse(kPi / 2, 0.0, 0.0));
  d.events.push_back(adc(0.0, 0.0));
  const std::vector<Complex> s = ref::simulate(d, tissue, 8);
  EXPECT_NEAR(std::abs(s[0] - -kI * std::sin(kPi / 3)), 0.0, kIdentityTol);
  EXPECT_NEAR(std::abs(s[1] - -kI * std::cos(kPi / 3)), 0.0, kIdentityTol);  // Z_0 not recovered
}

TEST(ReferencePhysics, HahnSpinEchoRefocusesOffResonance) {
  const Tissue tissue{0.9, 1.2, 0.08, 1.0, 41.0};
  const double te = 0.03, excitation_phase = 0.3, refocusing_phase = 1.9;
  for (std::uint32_t crushers : {0u, action::crush_before | action::crush_after}) {
    Description d;
    d.events.push_back(pulse(kPi / 2, excitation_phase, te / 2));
    d.events.push_back(pulse(kPi, refocusing_phase, te / 2, crushers));
    d.events.push_back(adc(0.0, 0.0));
    const Complex echo = ref::simulate(d, tissue, 8).at(0);
    // conj turns -i e^{i p_e} into i e^{-i p_e}; the pulse adds e^{2 i p_r}.
    const Complex expected = kI * std::polar(1.0, 2 * refocusing_phase - excitation_phase) *
                             tissue.m0 * std::exp(-te / tissue.t2_s);
    EXPECT_NEAR(std::abs(echo - expected), 0.0, kIdentityTol);
    EXPECT_NEAR(std::abs(echo), tissue.m0 * std::exp(-te / tissue.t2_s), kIdentityTol);
    EXPECT_NEAR(std::abs(echo - cf::spin_echo_signal(kPi / 2, excitation_phase, refocusing_phase,
                                                     te, tissue.t2_s, tissue.m0)),
                0.0, kIdentityTol);
  }
}

TEST(ReferencePhysics, T1RecoveryAfterInversion) {
  const Tissue tissue{1.0, 0.6, 0.05, 1.0, 0.0};
  for (double ti : {0.0, 0.1, 0.6 * std::log(2.0), 0.9, 3.0}) {
    Description d;
    d.events.push_back(pulse(kPi, 0.0, ti, action::spoil_after));
    d.events.push_back(pulse(kPi / 2, 0.0, 0.0));
    d.events.push_back(adc(0.0, 0.0));
    const Complex s = ref::simulate(d, tissue, 8).at(0);
    EXPECT_NEAR(std::abs(s - -kI * (1.0 - 2.0 * std::exp(-ti / tissue.t1_s))), 0.0, kIdentityTol)
        << "TI = " << ti;
  }
}

TEST(ReferencePhysics, StatesPushedPastLastOrderAreLost) {
  // 90, two shifts (F+_2), 180 (F-_2), two shifts (F-_0): an echo of 1 with
  // three orders; with two, F+_1 is pushed off and nothing comes back.
  Description d;
  d.events.push_back(pulse(kPi / 2, 0.0, 0.0, action::shift_after | action::crush_after));
  d.events.push_back(pulse(kPi, 0.0, 0.0, action::crush_after | action::shift_after));
  d.events.push_back(adc(0.0, 0.0));
  const Tissue tissue{};
  EXPECT_NEAR(std::abs(ref::simulate(d, tissue, 3).at(0) - kI), 0.0, kIdentityTol);
  EXPECT_NEAR(std::abs(ref::simulate_isochromats(d, tissue, 9).at(0) - kI), 0.0, kIdentityTol);
  EXPECT_LT(std::abs(ref::simulate(d, tissue, 2).at(0)), 1e-15);
}

TEST(ReferenceIsochromats, DephasingSignMatchesEpgShift) {
  // 90 about x then one shift: the EPG has F+_1 = -i and F-_1 = 0. With spin
  // j turned by +2 pi j/n, mean M+ e^{-i theta} is F+_1; the mirror convention
  // would put the -i in F-_1 instead.
  Description d;
  d.events.push_back(pulse(kPi / 2, 0.0, 0.0, action::crush_after));
  const Tissue tissue{};
  const EpgState from_spins = ref::isochromat_final_states(d, tissue, 5, 3);
  EXPECT_NEAR(std::abs(from_spins.f_plus(1) - -kI), 0.0, kIdentityTol);
  EXPECT_NEAR(std::abs(from_spins.f_minus(1)), 0.0, kIdentityTol);
  EXPECT_NEAR(std::abs(from_spins.f_plus(0)), 0.0, kIdentityTol);
  EXPECT_GT(ref::isochromat_dephasing_rad(1, 5), 0.0);
}

TEST(ReferenceIsochromats, AgreeWithEpgOnRandomSequence) {
  std::mt19937_64 rng(2024);
  const Tissue tissue{0.85, 0.35, 0.06, 0.93, 17.3};
  for (int trial = 0; trial < 4; ++trial) {
    const Description d = random_sequence(rng, 70);
    const int shifts = total_shifts(d);
    const int orders = shifts + 1;  // nothing is truncated
    EpgState epg(orders);
    std::vector<Complex> epg_samples;
    ref::run_events(d, tissue, epg, epg_samples);
    ASSERT_GT(epg_samples.size(), 5u);
    for (int n_spins : {2 * shifts + 1, 2 * shifts + 6}) {  // n > 2 S: no aliasing
      const std::vector<Complex> spin_samples = ref::simulate_isochromats(d, tissue, n_spins);
      ASSERT_EQ(spin_samples.size(), epg_samples.size());
      for (std::size_t i = 0; i < epg_samples.size(); ++i) {
        EXPECT_NEAR(std::abs(spin_samples[i] - epg_samples[i]), 0.0, kIdentityTol) << i;
      }
      const EpgState spins = ref::isochromat_final_states(d, tissue, n_spins, orders);
      for (int k = -(orders - 1); k < orders; ++k) {
        EXPECT_NEAR(std::abs(spins.f(k) - epg.f(k)), 0.0, kIdentityTol) << "F_" << k;
      }
      for (int k = 0; k < orders; ++k) {
        EXPECT_NEAR(std::abs(spins.z(k) - epg.z(k)), 0.0, kIdentityTol) << "Z_" << k;
      }
    }
  }
}

TEST(SpoiledGradientEcho, IdealSpoilingApproachesErnstExactly) {
  const Tissue tissue{0.9, 0.25, 0.04, 1.05, 12.0};
  const double flip = 0.35, tr = 0.008, te = 0.003;
  const int reps = 400;
  Description d;
  for (int n = 0; n < reps; ++n) {
    const double phase =
        0.5 * n * (n + 1) * 117.0 * kPi / 180.0;  // irrelevant under ideal spoiling
    d.events.push_back(pulse(flip, phase, te));
    d.events.push_back(adc(phase, tr - te, action::spoil_after));
  }
  const std::vector<Complex> s = ref::simulate(d, tissue, 8);
  const double a = flip * tissue.b1, e1 = std::exp(-tr / tissue.t1_s);
  const double z_ss = (1 - e1) / (1 - e1 * std::cos(a));
  const Complex readout = -kI * tissue.m0 * std::sin(a) * std::exp(-te / tissue.t2_s) *
                          std::polar(1.0, 2 * kPi * tissue.df_hz * te);
  for (int n = 0; n < reps; ++n) {  // Z_0 before pulse n: z_ss + (E1 cos a)^n (1 - z_ss)
    const Complex expected = readout * (z_ss + std::pow(e1 * std::cos(a), n) * (1 - z_ss));
    EXPECT_NEAR(std::abs(s[n] - expected), 0.0, kIdentityTol) << n;
  }
  const Complex ernst = -kI * cf::ernst_signal(a, tr, tissue.t1_s, tissue.t2_s, te, tissue.m0) *
                        std::polar(1.0, 2 * kPi * tissue.df_hz * te);
  const double residual = std::abs(readout) * std::pow(e1 * std::cos(a), reps - 1) * (1 - z_ss);
  EXPECT_NEAR(std::abs(s.back() - ernst), 0.0, residual + kIdentityTol);
}

// With a gradient shift every TR and RF spoiling, the coherences reaching F_0
// at a pulse have been transverse for a whole TR, so |F_0^-| <= eps = E2(TR).
// They perturb Z_0 by at most sin a eps per pulse, which the recursion
// z -> E1 (cos a z + .) accumulates to E1 sin a eps / (1 - E1 |cos a|), so
//   |s_n - ernst| <= M0 E2(TE) [eps (1 + E1 sin^2 a / (1 - E1 |cos a|))
//                               + sin a |E1 cos a|^n (1 - z_ss)].
TEST(SpoiledGradientEcho, RfSpoiledShortT2ApproachesErnstWithinBound) {
  const Tissue tissue{1.0, 0.05, 0.0004, 1.0, 7.0};
  const double flip = 0.5, tr = 0.01, te = 0.0002;
  const int reps = 300;
  Description d;
  for (int n = 0; n < reps; ++n) {
    const double phase = 0.5 * n * (n + 1) * 117.0 * kPi / 180.0;
    d.events.push_back(pulse(flip, phase, te));
    d.events.push_back(adc(phase, tr - te, action::shift_after));
  }
  const std::vector<Complex> s = ref::simulate(d, tissue, total_shifts(d) + 1);
  const double e1 = std::exp(-tr / tissue.t1_s), eps = std::exp(-tr / tissue.t2_s);
  const double ca = std::cos(flip), sa = std::sin(flip);
  const double z_ss = (1 - e1) / (1 - e1 * ca);
  const Complex ernst = -kI * cf::ernst_signal(flip, tr, tissue.t1_s, tissue.t2_s, te) *
                        std::polar(1.0, 2 * kPi * tissue.df_hz * te);
  for (int n : {0, 3, 10, reps - 1}) {
    const double bound =
        std::exp(-te / tissue.t2_s) * (eps * (1 + e1 * sa * sa / (1 - e1 * std::abs(ca))) +
                                       sa * std::pow(e1 * std::abs(ca), n) * (1 - z_ss));
    EXPECT_LE(std::abs(s[n] - ernst), bound + kIdentityTol) << n;
  }
}

Description bssfp(double flip, double tr, double te, double increment, int reps) {
  Description d;
  for (int n = 0; n < reps; ++n) {
    d.events.push_back(pulse(flip, n * increment, te));
    d.events.push_back(adc(n * increment, tr - te));
  }
  return d;
}

// The per-TR map is affine with linear part R_z diag(E2, E2, E1) R_x: norm
// <= E = max(E1, E2). Start and fixed point lie in the unit ball (T2 <= T1), so
//   |s_n - s_ss| <= 2 M0 E2(TE) E^n.
TEST(Bssfp, SteadyStateMatchesClosedForm) {
  const double flip = 0.6, tr = 0.005, te = 0.0025;
  const int reps = 2000;
  for (double increment : {0.0, kPi, 1.1}) {  // pi alone cannot tell +q from -q
    for (double df : {0.0, 23.0, 100.0, -61.0, 180.0}) {
      const Tissue tissue{0.9, 0.2, 0.05, 0.95, df};
      const std::vector<Complex> s = ref::simulate(bssfp(flip, tr, te, increment, reps), tissue, 8);
      const Complex expected = cf::bssfp_signal(flip * tissue.b1, tr, te, tissue.t1_s, tissue.t2_s,
                                                df, increment, tissue.m0);
      const double contraction = std::exp(-tr / std::max(tissue.t1_s, tissue.t2_s));
      for (int n : {20, 200, reps - 1}) {
        const double bound = 2 * tissue.m0 * std::exp(-te / tissue.t2_s) * std::pow(contraction, n);
        EXPECT_LE(std::abs(s[n] - expected),
                  bound + kIdentityTol + phase_roundoff_bound(n, increment, contraction))
            << "increment " << increment << " df " << df << " n " << n;
      }
    }
  }
}

// Phase cycling by q equals an extra off-resonance of -q/(2 pi TR), except for
// the precession between pulse and sample: s(q, df) = s(0, df - q/(2 pi TR)) e^{i q TE/TR}.
TEST(Bssfp, PhaseCyclingActsAsOffResonance) {
  const double flip = 0.9, tr = 0.004, te = 0.0013;
  const int reps = 1500;
  const Tissue cycled{1.0, 0.15, 0.06, 1.0, 37.0};
  const double contraction = std::exp(-tr / std::max(cycled.t1_s, cycled.t2_s));
  for (double q : {kPi, 1.1}) {
    Tissue shifted = cycled;
    shifted.df_hz = cycled.df_hz - q / (2 * kPi * tr);
    const std::vector<Complex> a = ref::simulate(bssfp(flip, tr, te, q, reps), cycled, 8);
    const std::vector<Complex> b = ref::simulate(bssfp(flip, tr, te, 0.0, reps), shifted, 8);
    for (int n = 0; n < reps; ++n) {  // the map is identical in the frame, so at every n
      EXPECT_NEAR(std::abs(a[n] - b[n] * std::polar(1.0, q * te / tr)), 0.0,
                  kIdentityTol + phase_roundoff_bound(n, q, contraction))
          << "q " << q << " n " << n;
    }
  }
}

TEST(ClosedForm, BssfpReducesToErnstWhenT2IsShort) {
  // E2 -> 0 leaves only Z across a TR: the ideally spoiled steady state.
  const double flip = 0.4, tr = 0.01, t1 = 0.5, t2 = 1e-6;
  EXPECT_NEAR(std::abs(cf::bssfp_signal(flip, tr, 0.0, t1, t2, 13.0, 0.7) -
                       -kI * cf::ernst_signal(flip, tr, t1)),
              0.0, 1e-14);
}

TEST(ClosedForm, ErnstAngleMaximisesSignal) {
  const double tr = 0.01, t1 = 0.8, ernst_angle = std::acos(std::exp(-tr / t1));
  const double peak = cf::ernst_signal(ernst_angle, tr, t1);
  EXPECT_GT(peak, cf::ernst_signal(ernst_angle * 1.01, tr, t1));
  EXPECT_GT(peak, cf::ernst_signal(ernst_angle * 0.99, tr, t1));
}

TEST(Cpmg, IdealRefocusingTrainDecaysWithT2) {
  const Tissue tissue{0.7, 0.3, 0.08, 1.0, 31.0};  // off resonance: refocused at every echo
  const double excitation = 1.2, esp = 0.012, phase = 0.8;
  const int echoes = 10;
  const Description d = cpmg(excitation, kPi, esp, echoes, phase);
  const std::vector<Complex> s = ref::simulate(d, tissue, total_shifts(d) + 1);
  ASSERT_EQ(s.size(), std::size_t(echoes));
  for (int n = 1; n <= echoes; ++n) {
    const Complex expected =
        -kI * tissue.m0 * std::sin(excitation) * std::exp(-n * esp / tissue.t2_s);
    EXPECT_NEAR(std::abs(s[n - 1] - expected), 0.0, kIdentityTol) << n;
    EXPECT_NEAR(
        std::abs(s[n - 1] - cf::cpmg_ideal_echo(n, excitation, esp, tissue.t2_s, tissue.m0)), 0.0,
        kIdentityTol);
  }
}

TEST(Cpmg, FirstThreeEchoesMatchHandDerivation) {
  const double esp = 0.01;
  // Without relaxation and b = 90: 1/2, 1/4 + 1/2, 1/2 (1/4 + 1/4) + 1/2 + 0.
  const auto lossless = cf::cpmg_first_echoes(kPi / 2, kPi / 2, esp, kInf, kInf);
  EXPECT_NEAR(std::abs(lossless[0] - -0.5 * kI), 0.0, 1e-15);
  EXPECT_NEAR(std::abs(lossless[1] - -0.75 * kI), 0.0, 1e-15);
  EXPECT_NEAR(std::abs(lossless[2] - -0.75 * kI), 0.0, 1e-15);
  for (double excitation : {kPi / 2, 1.1}) {
    for (double refocusing_deg : {30.0, 60.0, 90.0, 120.0, 150.0, 180.0}) {
      const double refocusing = refocusing_deg * kPi / 180.0;
      const Tissue tissue{0.9, 0.8, 0.09, 1.0, 0.0};
      const Description d = cpmg(excitation, refocusing, esp, 3, 2.2);
      const std::vector<Complex> s = ref::simulate(d, tissue, total_shifts(d) + 1);
      const std::vector<Complex> spins =
          ref::simulate_isochromats(d, tissue, 2 * total_shifts(d) + 1);
      const auto expected =
          cf::cpmg_first_echoes(excitation, refocusing, esp, tissue.t1_s, tissue.t2_s, tissue.m0);
      for (int n = 0; n < 3; ++n) {
        EXPECT_NEAR(std::abs(s[n] - expected[n]), 0.0, kIdentityTol)
            << "b " << refocusing_deg << " echo " << n + 1;
        EXPECT_NEAR(std::abs(spins[n] - expected[n]), 0.0, kIdentityTol);
      }
    }
  }
}

}  // namespace
