// One-reduction sine and cosine for the kernels' per-voxel angles.
//
// The flip angle times B1 is per voxel, so it cannot be tabulated on the host.
// Two library calls would each reduce the argument; here one Cody-Waite
// reduction by a quarter turn feeds the single-precision minimax polynomials
// published with Cephes (sinf/cosf), which are accurate to about an ulp on
// |r| <= pi/4. Valid for |x| up to a few thousand radians, far beyond any
// flip angle; precession angles go through sincos_turns instead.
#pragma once

#include <cstdint>
#include <cstring>

#include "common/kokkos_compat.hpp"

namespace larmor {

// The plain value of a number (dual numbers overload this).
KOKKOS_FORCEINLINE_FUNCTION float value_of(float x) { return x; }
KOKKOS_FORCEINLINE_FUNCTION double value_of(double x) { return x; }
// The innermost float of a number (nested dual numbers overload this).
KOKKOS_FORCEINLINE_FUNCTION float scalar_value(float x) { return x; }
KOKKOS_FORCEINLINE_FUNCTION double scalar_value(double x) { return x; }

namespace detail {
// The minimax coefficients of sin(r) = r (1 + r^2 P(r^2)) and
// cos(r) = 1 - r^2 / 2 + r^4 Q(r^2) on |r| <= pi / 4.
inline constexpr float sin_p0 = -1.6666654611e-1f, sin_p1 = 8.3321608736e-3f,
                       sin_p2 = -1.9515295891e-4f;
inline constexpr float cos_q0 = 4.166664568298827e-2f, cos_q1 = -1.388731625493765e-3f,
                       cos_q2 = 2.443315711809948e-5f;
}  // namespace detail

// sin and cos of |r| <= pi / 4 by the polynomials alone (no reduction).
KOKKOS_FORCEINLINE_FUNCTION void sincos_small(float r, float& s, float& c) {
  using namespace detail;
  const float r2 = r * r;
  s = r + r * r2 * (sin_p0 + r2 * (sin_p1 + r2 * sin_p2));
  c = 1.0f - 0.5f * r2 + r2 * r2 * (cos_q0 + r2 * (cos_q1 + r2 * cos_q2));
}

// sin(r) / r and cos(r) from r^2 <= (pi / 4)^2: a rotation by an angle known
// through its square (|w|^2 dt^2) needs no square root for its axis, whose
// length cancels against the sine's.
KOKKOS_FORCEINLINE_FUNCTION void sinc_cos_of_square(float r2, float& sinc, float& c) {
  using namespace detail;
  sinc = 1.0f + r2 * (sin_p0 + r2 * (sin_p1 + r2 * sin_p2));
  c = 1.0f - 0.5f * r2 + r2 * r2 * (cos_q0 + r2 * (cos_q1 + r2 * cos_q2));
}

KOKKOS_FORCEINLINE_FUNCTION void sincos_reduced(float x, float& s, float& c) {
  // Quarter turn split in three parts whose leading parts multiply a small
  // integer exactly in float.
  constexpr float two_over_pi = 0.636619772367581343f;
  constexpr float qt1 = 1.5703125f;
  constexpr float qt2 = 4.837512969970703125e-4f;
  constexpr float qt3 = 7.54978995489188216e-8f;
  // The nearest quarter turn by adding and removing 1.5 x 2^23, its low bits
  // from the sum's mantissa: rint and a float-to-int conversion run at a
  // quarter of the FMA rate on a GPU and sit in the chain from a pulse's
  // record to its rotation (docs/performance.md, "Device kernels":
  // `larmor-bench -w mrf` on the H200). The reduction itself stays
  // Cody-Waite's. Valid for |x| < 2^22 quarter turns.
  constexpr float round_magic = 12582912.0f;  // 1.5 x 2^23
  const float shifted = x * two_over_pi + round_magic;
  const float jf = shifted - round_magic;
  std::int32_t bits;
  std::memcpy(&bits, &shifted, sizeof bits);
  const int quadrant = bits & 3;
  const float r = ((x - jf * qt1) - jf * qt2) - jf * qt3;
  float sr, cr;
  sincos_small(r, sr, cr);
  // The quadrant by selects, not a switch: the same values, and host loops
  // over voxels stay vectorisable.
  const bool odd = (quadrant & 1) != 0;
  const float s0 = odd ? cr : sr, c0 = odd ? sr : cr;
  s = (quadrant & 2) != 0 ? -s0 : s0;
  c = ((quadrant + 1) & 2) != 0 ? -c0 : c0;
}

KOKKOS_FORCEINLINE_FUNCTION void sincos_reduced(double x, double& s, double& c) {
  s = kx::sin(x);
  c = kx::cos(x);
}

// The same polynomials for an angle given in quarter turns (t = 2 x / pi).
// Kernels whose angles are dot products fold 2 / pi into one factor ahead of
// time; the reduction is then exact (t - rint(t)), with no split constant.
// The nearest integer comes from adding and removing 1.5 x 2^23 (two adds,
// where rint and a float-to-int conversion run at a quarter of the FMA rate
// on a GPU), its low bits from the sum's mantissa. Valid for |t| < 2^22
// quarter turns.
KOKKOS_FORCEINLINE_FUNCTION void quarter_turn_polynomials(float t, int& quadrant, float& sr,
                                                          float& cr) {
  constexpr float round_magic = 12582912.0f;  // 1.5 x 2^23
  const float shifted = t + round_magic;
  const float jf = shifted - round_magic;
  std::int32_t bits;
  std::memcpy(&bits, &shifted, sizeof bits);
  quadrant = bits & 3;
  sincos_small((t - jf) * 1.57079632679489662f, sr, cr);
}

KOKKOS_FORCEINLINE_FUNCTION float cos_quarter_turns(float t) {
  int quadrant;
  float sr, cr;
  quarter_turn_polynomials(t, quadrant, sr, cr);
  const float c0 = (quadrant & 1) != 0 ? sr : cr;
  return ((quadrant + 1) & 2) != 0 ? -c0 : c0;
}

KOKKOS_FORCEINLINE_FUNCTION void sincos_quarter_turns(float t, float& s, float& c) {
  int quadrant;
  float sr, cr;
  quarter_turn_polynomials(t, quadrant, sr, cr);
  const bool odd = (quadrant & 1) != 0;
  const float s0 = odd ? cr : sr, c0 = odd ? sr : cr;
  s = (quadrant & 2) != 0 ? -s0 : s0;
  c = ((quadrant + 1) & 2) != 0 ? -c0 : c0;
}

// sin and cos of 2 pi * turns. Whole turns are removed exactly first, so a long
// interval at a large off-resonance keeps its fractional phase.
template <class Real>
KOKKOS_FORCEINLINE_FUNCTION void sincos_turns(const Real& turns, Real& s, Real& c) {
  const Real whole = Real(kx::nearbyint(scalar_value(turns)));
  sincos_reduced((turns - whole) * Real(6.283185307179586), s, c);
}

}  // namespace larmor
