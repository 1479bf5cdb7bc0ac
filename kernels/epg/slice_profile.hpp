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
#include "epg/impl/operators.hpp"

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
// last cubic (the host refuses voxels that would need it). `slope`, where
// given, receives the interpolant's derivative along the flip (per radian;
// the reverse sweeps pair it with their adjoint).
template <class Real, class MemorySpace>
KOKKOS_INLINE_FUNCTION PulseQuaternion<Real> read_slice_rotation(
    const SliceProfileViews<MemorySpace>& views, int profile, int position, const Real& flip,
    PulseQuaternion<Real>* slope = nullptr) {
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
  Real q[4], dq[4];
  for (int c = 0; c < 4; ++c) {
    const Real q0(views.nodes(profile, position, i, c));
    const Real d0(views.nodes(profile, position, i, 4 + c));
    const Real q1(views.nodes(profile, position, i + 1, c));
    const Real d1(views.nodes(profile, position, i + 1, 4 + c));
    q[c] = h00 * q0 + h10 * d0 + h01 * q1 + h11 * d1;
    if (slope != nullptr) {
      // d/dflip = (1 / step) d/du of the Hermite weights.
      const Real six_u_um = Real(6.0f) * u * um;
      dq[c] = (q1 - q0) * six_u_um * Real(1.0f / step) + um * (one - three * u) * d0 +
              u * (three * u - two) * d1;
    }
  }
  if (slope != nullptr) *slope = {dq[0], dq[1], dq[2], dq[3]};
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

// The derivative of make_general_rotation's coefficients along the flip,
// from the quaternion `q` and its slope `dq` (the product rule on each
// coefficient, which is quadratic in q).
template <class Real>
KOKKOS_INLINE_FUNCTION GeneralRotation<Real> general_rotation_slope(const PulseQuaternion<Real>& q,
                                                                    const PulseQuaternion<Real>& dq,
                                                                    const Real& cos_p,
                                                                    const Real& sin_p) {
  const Real b_re = cos_p * q.x - sin_p * q.y, b_im = sin_p * q.x + cos_p * q.y;
  const Real db_re = cos_p * dq.x - sin_p * dq.y, db_im = sin_p * dq.x + cos_p * dq.y;
  const Real two(2.0f);
  GeneralRotation<Real> g;
  g.r.c2 = two * (q.w * dq.w - q.z * dq.z);
  g.c2_im = two * (dq.w * q.z + q.w * dq.z);
  g.r.ca = two * (q.w * dq.w + q.z * dq.z - b_re * db_re - b_im * db_im);
  g.r.u_re = two * (b_re * db_re - b_im * db_im);
  g.r.u_im = two * (db_re * b_im + b_re * db_im);
  g.r.v_re = two * (dq.w * b_re + q.w * db_re - dq.z * b_im - q.z * db_im);
  g.r.v_im = two * (dq.w * b_im + q.w * db_im + dq.z * b_re + q.z * db_re);
  g.r.h_re = dq.w * b_re + q.w * db_re + dq.z * b_im + q.z * db_im;
  g.r.h_im = dq.w * b_im + q.w * db_im - dq.z * b_re - q.z * db_re;
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
