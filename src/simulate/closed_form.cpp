#include "simulate/closed_form.hpp"

#include <cmath>
#include <stdexcept>

namespace larmor::simulate {
namespace {

using Complex = std::complex<double>;
constexpr double kPi = 3.14159265358979323846;
constexpr Complex kI{0.0, 1.0};

double decay(double duration_s, double time_constant_s) {
  if (std::isinf(time_constant_s)) return 1.0;
  return std::exp(-duration_s / time_constant_s);
}

void require(bool condition, const char* message) {
  if (!condition) throw std::invalid_argument(message);
}

}  // namespace

// Ideal spoiling leaves only Z_0 across a TR: just before pulse n,
//   z_{n+1} = E1 cos a z_n + (1 - E1),  z_0 = 1,
// whose fixed point is (1 - E1)/(1 - E1 cos a); the pulse turns sin a of it
// into F+_0, which decays for TE. (Approach: z_n - z_ss = (E1 cos a)^n (1 - z_ss).)
double ernst_signal(double flip_rad, double tr_s, double t1_s, double t2_s, double te_s,
                    double m0) {
  require(tr_s > 0.0 && t1_s > 0.0 && t2_s > 0.0 && te_s >= 0.0, "ernst_signal: bad arguments");
  return ernst_expression(flip_rad, tr_s, t1_s, t2_s, te_s, m0);
}

// Balanced SSFP.
// Frame. Between pulse n and n+1 look at the magnetisation turned by -p_n about
// z. There every pulse is R_x(a). The lab precession over TR is R_z(phi) with
// phi = 2 pi df TR, and passing from frame n to frame n+1 adds R_z(-q), so the
// per-TR map in the frame is the fixed
//   m -> R_z(theta) diag(E2, E2, E1) R_x(a) m + (0, 0, 1 - E1),  theta = phi - q:
// an RF phase increment q acts like an extra off-resonance of -q / (2 pi TR).
// The sample demodulates by p_n, the frame angle, so it reads the frame's
// u = Mx + i My just after the pulse, turned by exp(i 2 pi df TE) (the true
// df: the frame does not rotate between a pulse and its own sample) and
// decayed by exp(-TE/T2).
// Fixed point. Before the pulse let v = vx + i vy (transverse), z (longitudinal).
// R_x(a) (right-handed, matching F+' = ... - i sin a Z) gives
//   u = vx + i (cos a vy - sin a z),   w = sin a vy + cos a z,
// and the free evolution closes the loop: v = E2 exp(i theta) u, z = E1 w + 1 - E1.
// From ux = vx and v = E2 e^{i theta} u:
//   vx = -E2 sin(theta) uy / (1 - E2 cos theta),
//   vy =  E2 (cos theta - E2) uy / (1 - E2 cos theta),
// then uy = cos a vy - sin a z and the z equation give (Freeman-Hill form)
//   u = sin a (1 - E1) [E2 sin theta - i (1 - E2 cos theta)] / D,
//   D = (1 - E1 cos a)(1 - E2 cos theta) - E2 (E1 - cos a)(E2 - cos theta).
// Check: E2 -> 0 gives u = -i sin a (1 - E1)/(1 - E1 cos a), the Ernst value.
std::complex<double> bssfp_signal(double flip_rad, double tr_s, double te_s, double t1_s,
                                  double t2_s, double df_hz, double rf_phase_increment_rad,
                                  double m0) {
  require(tr_s > 0.0 && te_s >= 0.0 && te_s <= tr_s, "bssfp_signal: need 0 <= TE <= TR");
  require(t1_s > 0.0 && std::isfinite(t1_s) && t2_s > 0.0, "bssfp_signal: need finite T1");
  const double e1 = decay(tr_s, t1_s), e2 = decay(tr_s, t2_s);
  const double theta = 2.0 * kPi * df_hz * tr_s - rf_phase_increment_rad;
  const double ca = std::cos(flip_rad), sa = std::sin(flip_rad);
  const double ct = std::cos(theta), st = std::sin(theta);
  const double denominator = (1.0 - e1 * ca) * (1.0 - e2 * ct) - e2 * (e1 - ca) * (e2 - ct);
  const Complex after_pulse = sa * (1.0 - e1) * Complex(e2 * st, -(1.0 - e2 * ct)) / denominator;
  return m0 * decay(te_s, t2_s) * std::polar(1.0, 2.0 * kPi * df_hz * te_s) * after_pulse;
}

// The excitation leaves F+_0 = -i e^{i p_e} sin a. An ideal 180 at p_r maps
// F+ -> e^{2 i p_r} F- = e^{2 i p_r} conj(F+) (and Z -> -Z, which sin 180 = 0
// keeps out of the transverse plane). Precession e^{i phi} before it is
// conjugated and undone by the e^{i phi} after it; T2 acts for TE in total:
//   echo = e^{2 i p_r} conj(-i e^{i p_e} sin a) e^{-TE/T2} = i e^{i (2 p_r - p_e)} sin a
//   e^{-TE/T2}.
// Crushers around the pulse move F+_0 to F+_1, F-_1 and back to F-_0 = conj(F+_0): same echo.
std::complex<double> spin_echo_signal(double excitation_flip_rad, double excitation_phase_rad,
                                      double refocusing_phase_rad, double te_s, double t2_s,
                                      double m0) {
  require(te_s >= 0.0 && t2_s > 0.0, "spin_echo_signal: bad arguments");
  return kI * std::polar(1.0, 2.0 * refocusing_phase_rad - excitation_phase_rad) * m0 *
         std::sin(excitation_flip_rad) * decay(te_s, t2_s);
}

// Each ideal 180 at p + pi/2 conjugates the echo and multiplies it by
// e^{2 i (p + pi/2)} = -e^{2 i p}, which maps -i e^{i p} x (x real) to itself:
// every echo keeps the excitation's phase, demodulated to -i; off-resonance
// refocuses at every echo centre as in spin_echo_signal.
std::complex<double> cpmg_ideal_echo(int echo_number, double excitation_flip_rad, double esp_s,
                                     double t2_s, double m0) {
  require(echo_number >= 1 && esp_s >= 0.0 && t2_s > 0.0, "cpmg_ideal_echo: bad arguments");
  return -kI * m0 * std::sin(excitation_flip_rad) * decay(echo_number * esp_s, t2_s);
}

// CPMG with refocusing flip b, from the EPG recurrence by hand.
// Set p = 0 (a common phase rotates every F by e^{i p} and the receiver takes it
// off again), so the refocusing phase is pi/2, where e^{i p_r} = i, e^{2 i p_r} = -1:
//   F+' = P F+ - Q F- + S Z,   F-' = -Q F+ + P F- + S Z,   Z' = -(S/2)(F+ + F-) + C Z,
// P = cos^2(b/2), Q = sin^2(b/2), S = sin b, C = cos b. Half-echo factors
// e2 = exp(-ESP/(2 T2)), e1 = exp(-ESP/(2 T1)); E2 = e2^2, E1 = e1^2; A = sin a.
// Only states that can reach order 0 at an echo are tracked. The echo family
// sits at odd orders at every pulse; an FID a pulse makes from Z_0 (fed by
// cos a and T1 recovery) sits at order 0 there, and rotations keep |order| while
// shifts move both families alike, so FIDs never reach F_0 at an echo centre.
//  exc:            F+_0 = -i A                      ; after ESP/2: F+_0 = -i A e2
//  pulse 1: crush  F+_1 = -i A e2
//           rotate F+_1 = -i P A e2, F-_1 = i Q A e2, Z_1 = i (S/2) A e2
//           crush  F-_0 = i Q A e2 (F+_0 = its conjugate), F+_2 = -i P A e2
//  echo 1:  F+_0 = -i Q A e2^2 = -i A Q E2.
//  Until pulse 2 (ESP): F+_1 = -i Q A e2^3 (the echo, dephased by the crusher),
//           F+_3 = -i P A e2^3, Z_1 = i Y with Y = (S/2) A e2 e1^2.
//  pulse 2, after the crusher before it and the rotation, on order 1:
//           F-_1 = i U,  U = Q^2 A e2^3 + S Y
//           Z_1  = i W,  W = (S/2) Q A e2^3 + C Y
//         and on order 3: F-_3 = i V,  V = Q P A e2^3.
//  echo 2:  F-_1 is crushed to F-_0 and decays e2: echo 2 = -i U e2
//           = -i A [Q^2 E2^2 + (S^2/2) E2 E1]   (spin echo of the echo + stimulated echo).
//  Echo 3 comes from F-_1 after pulse 3, fed, after the crusher before it, by
//           F+_1 = conj(F-_1 after pulse 2) e2^2 = -i U e2^2   (index -1 -> +1),
//           F-_1 = F-_3 after pulse 2 e2^2      =  i V e2^2   (index -3 -> -1),
//           Z_1  = i W e1^2,
//  so F-_1 = -Q F+_1 + P F-_1 + S Z_1 = i (Q U e2^2 + P V e2^2 + S W e1^2), and after
//  the crusher and ESP/2, echo 3 = -i [(Q U + P V) e2^3 + S W e1^2 e2]
//           = -i A [Q (Q^2 + P^2) E2^3 + Q S^2 E2^2 E1 + (C S^2/2) E2 E1^2].
// b = 180 gives -i A E2^n; b = 90 without relaxation gives -i A (1/2, 3/4, 3/4).
std::array<std::complex<double>, 3> cpmg_first_echoes(double excitation_flip_rad,
                                                      double refocusing_flip_rad, double esp_s,
                                                      double t1_s, double t2_s, double m0) {
  require(esp_s >= 0.0 && t1_s > 0.0 && t2_s > 0.0, "cpmg_first_echoes: bad arguments");
  const double p = std::pow(std::cos(refocusing_flip_rad / 2), 2);
  const double q = std::pow(std::sin(refocusing_flip_rad / 2), 2);
  const double s2 = std::pow(std::sin(refocusing_flip_rad), 2);
  const double c = std::cos(refocusing_flip_rad);
  const double e1 = decay(esp_s, t1_s), e2 = decay(esp_s, t2_s);
  const Complex scale = -kI * m0 * std::sin(excitation_flip_rad);
  return {scale * (q * e2), scale * (q * q * e2 * e2 + 0.5 * s2 * e2 * e1),
          scale * (q * (q * q + p * p) * e2 * e2 * e2 + q * s2 * e2 * e2 * e1 +
                   0.5 * c * s2 * e2 * e1 * e1)};
}

}  // namespace larmor::simulate
