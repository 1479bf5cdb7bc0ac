// Closed-form signals of sequences that have one, in larmor's conventions
// (kernels/epg/event_abi.hpp): an RF pulse of flip a at phase p turns the
// magnetisation right-handedly about (cos p, sin p, 0), so from equilibrium
// it leaves Mxy = F+_0 = -i exp(i p) sin a; off-resonance turns F+ by
// exp(+i 2 pi df t); an adc records M0 F+_0 exp(-i receiver_phase).
//
// Host-only double-precision expressions, for checking simulators against.
// Flip angles are the effective ones (nominal times B1). T1, T2 may be
// infinite. Derivations are in closed_form.cpp.
#pragma once

#include <array>
#include <cmath>
#include <complex>
#include <limits>

namespace larmor::simulate {

inline constexpr double kInfinite = std::numeric_limits<double>::infinity();

// Spoiled gradient-echo steady state with ideal spoiling, as a magnitude:
//   M0 sin a (1 - E1) / (1 - E1 cos a) exp(-TE/T2),  E1 = exp(-TR/T1).
// In larmor's event stream [pulse (a, p); adc at TE (receiver p); spoil] the
// sample is -i times this (times exp(i 2 pi df TE) off resonance).
// The Ernst expression over any number type (double, or a dual number for
// its derivatives: the CRLB machinery differentiates it). No argument checks.
template <class Real>
Real ernst_expression(const Real& flip_rad, const Real& tr_s, const Real& t1_s, const Real& t2_s,
                      const Real& te_s, const Real& m0) {
  using std::cos;
  using std::exp;
  using std::sin;
  const Real e1 = exp(-tr_s / t1_s);
  return m0 * sin(flip_rad) * (Real(1.0) - e1) / (Real(1.0) - e1 * cos(flip_rad)) *
         exp(-te_s / t2_s);
}

double ernst_signal(double flip_rad, double tr_s, double t1_s, double t2_s = kInfinite,
                    double te_s = 0.0, double m0 = 1.0);

// Balanced SSFP steady state. The sequence: repeat [pulse of flip a at phase
// p_n = n * rf_phase_increment; free evolution for TR with relaxation and
// off-resonance df, no gradient shift], sampled TE after each pulse
// (0 <= TE <= TR) with the receiver phase equal to that pulse's phase p_n. The
// value is the sample once the transient has died away (needs finite T1).
std::complex<double> bssfp_signal(double flip_rad, double tr_s, double te_s, double t1_s,
                                  double t2_s, double df_hz, double rf_phase_increment_rad,
                                  double m0 = 1.0);

// Hahn spin echo: excitation (flip a, phase p_e) from equilibrium, an ideal
// 180-degree pulse at phase p_r at TE/2 (with or without crushers around it),
// sampled at TE with receiver phase 0; independent of off-resonance and T1:
//   i exp(i (2 p_r - p_e)) M0 sin a exp(-TE/T2).
std::complex<double> spin_echo_signal(double excitation_flip_rad, double excitation_phase_rad,
                                      double refocusing_phase_rad, double te_s, double t2_s,
                                      double m0 = 1.0);

// CPMG train: excitation (flip a, phase p) from equilibrium; refocusing pulses
// at phase p + pi/2 at (n - 1/2) ESP, each between a crusher before and one
// after (crush_before | crush_after); echo n sampled at n ESP with receiver
// phase p. The results do not depend on p.
//
// Ideal 180-degree refocusing: echo n (n >= 1) = -i M0 sin a exp(-n ESP/T2),
// at any off-resonance.
std::complex<double> cpmg_ideal_echo(int echo_number, double excitation_flip_rad, double esp_s,
                                     double t2_s, double m0 = 1.0);

// Refocusing flip b (any), on resonance: echoes 1, 2 and 3, with
// E1 = exp(-ESP/T1), E2 = exp(-ESP/T2), P = cos^2(b/2), Q = sin^2(b/2):
//   echo 1 = -i M0 sin a  Q E2
//   echo 2 = -i M0 sin a [Q^2 E2^2 + (1/2) sin^2 b E2 E1]
//   echo 3 = -i M0 sin a [Q (Q^2 + P^2) E2^3 + Q sin^2 b E2^2 E1 + (1/2) cos b sin^2 b E2 E1^2]
std::array<std::complex<double>, 3> cpmg_first_echoes(double excitation_flip_rad,
                                                      double refocusing_flip_rad, double esp_s,
                                                      double t1_s, double t2_s, double m0 = 1.0);

}  // namespace larmor::simulate
