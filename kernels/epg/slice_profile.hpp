// Slice-selective pulses in the kernels: the table's read-back and the
// general rotation it gives (src/sequence/slice_profile.hpp builds the table).
//
// A shaped pulse's rotation at one slice position is a general rotation: its
// axis may leave the transverse plane. With Cayley-Klein parameters a = w + iz
// and b = e^{i phase} (x + iy) of its quaternion, the EPG matrix is
//   F+' = a^2 F+ + b^2 F- - i (2 a b) Z
//   Z'  = (|a|^2 - |b|^2) Z + i (conj(a) b F- - a conj(b) F+)
// which is the instantaneous pulse's form (operators.hpp) with c2 = a^2
// complex: a = cos(flip/2), b = e^{i phase} sin(flip/2) gives it back.
#pragma once

#include "common/dual.hpp"
#include "common/kokkos_compat.hpp"
#include "epg/operators.hpp"

namespace larmor::epg {

template <class MemorySpace>
struct SliceProfileViews {
  // [profile][position][node][w, x, y, z, dw, dx, dy, dz]: the rotation's
  // quaternion at flips node x step, and its derivative per radian.
  Kokkos::View<const float****, Kokkos::LayoutRight, MemorySpace> nodes;
  Kokkos::View<const float*, MemorySpace> flip_step;  // per profile [rad]
  int positions = 1;  // a voxel runs once per position (1: no slice profiles)

  KOKKOS_FORCEINLINE_FUNCTION bool active() const { return nodes.extent(0) > 0; }
  int profiles() const { return int(nodes.extent(0)); }
};

template <class Real>
struct PulseQuaternion {
  Real w, x, y, z;
};

// Cubic Hermite read-back along the flip at one profile and position. The
// node index comes from the value; with dual numbers the weights carry the
// derivative of the interpolant. Flips past the last node extrapolate the
// last cubic (the host refuses voxels that would need it).
template <class Real, class MemorySpace>
KOKKOS_INLINE_FUNCTION PulseQuaternion<Real> read_slice_rotation(
    const SliceProfileViews<MemorySpace>& views, int profile, int position, const Real& flip) {
  const float step = views.flip_step(profile);
  const Real t = flip * Real(1.0f / step);
  const int last = int(views.nodes.extent(2)) - 2;
  int i = int(value_of(t));
  i = i < 0 ? 0 : (i > last ? last : i);
  const Real u = t - Real(float(i));
  const Real one(1.0f), two(2.0f), three(3.0f);
  const Real um = one - u;
  const Real h00 = (one + two * u) * um * um, h10 = u * um * um * Real(step);
  const Real h01 = u * u * (three - two * u), h11 = u * u * (u - one) * Real(step);
  Real q[4];
  for (int c = 0; c < 4; ++c) {
    q[c] = h00 * Real(views.nodes(profile, position, i, c)) +
           h10 * Real(views.nodes(profile, position, i, 4 + c)) +
           h01 * Real(views.nodes(profile, position, i + 1, c)) +
           h11 * Real(views.nodes(profile, position, i + 1, 4 + c));
  }
  return {q[0], q[1], q[2], q[3]};
}

// The rotation's coefficients at the event's RF phase (cos_p, sin_p): b turns
// by the phase, a does not. `c2_im` is the imaginary part of c2 = a^2 that an
// instantaneous pulse does not have.
template <class Real>
struct GeneralRotation {
  RotationCoefficients<Real> r;
  Real c2_im;
};

template <class Real>
KOKKOS_INLINE_FUNCTION GeneralRotation<Real> make_general_rotation(const PulseQuaternion<Real>& q,
                                                                   const Real& cos_p,
                                                                   const Real& sin_p) {
  const Real b_re = cos_p * q.x - sin_p * q.y, b_im = sin_p * q.x + cos_p * q.y;
  GeneralRotation<Real> g;
  g.r.c2 = q.w * q.w - q.z * q.z;
  g.c2_im = Real(2.0f) * q.w * q.z;
  g.r.ca = q.w * q.w + q.z * q.z - b_re * b_re - b_im * b_im;
  g.r.u_re = b_re * b_re - b_im * b_im;  // b^2
  g.r.u_im = Real(2.0f) * b_re * b_im;
  g.r.v_re = Real(2.0f) * (q.w * b_re - q.z * b_im);  // 2 a b
  g.r.v_im = Real(2.0f) * (q.w * b_im + q.z * b_re);
  g.r.h_re = q.w * b_re + q.z * b_im;  // conj(a) b
  g.r.h_im = q.w * b_im - q.z * b_re;
  return g;
}

// The rotation's parts are separate arguments, not one GeneralRotation: a
// temporary of the nested struct per lane kept g++ from vectorising the host
// lane loop (data reference analysis failed).
template <class Real>
KOKKOS_FORCEINLINE_FUNCTION void rotate_general(const RotationCoefficients<Real>& r,
                                                const Real& c2_im, Real& fp_re, Real& fp_im,
                                                Real& fm_re, Real& fm_im, Real& z_re, Real& z_im) {
  const Real p_re = fp_re, p_im = fp_im, m_re = fm_re, m_im = fm_im;
  rotate(r, fp_re, fp_im, fm_re, fm_im, z_re, z_im);
  // F+ gains i c2_im F+, F- gains -i c2_im F- (c2 there is conjugated).
  fp_re -= c2_im * p_im;
  fp_im += c2_im * p_re;
  fm_re += c2_im * m_im;
  fm_im -= c2_im * m_re;
}

}  // namespace larmor::epg
