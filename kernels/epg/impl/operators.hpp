// The EPG operators on one order of one voxel: where each event kind's physics
// lives. Layouts (state_block.hpp) decide which thread holds which order and
// call these; the event loop (event_loop.hpp) decides when.
//
// Every function is written over a number type `Real` (float for the forward
// simulation, a dual number for forward-mode derivatives) and works on split
// real/imaginary parts so that host loops over voxel lanes vectorise.
#pragma once

#include <type_traits>

#include "common/kokkos_compat.hpp"
#include "common/sincos.hpp"

namespace larmor::epg {

// The RF rotation by flip `a` about the axis at phase `p`:
//   F+' = c2 F+ + e^{2ip} s2 F- - i e^{ip} sa Z
//   F-' = e^{-2ip} s2 F+ + c2 F- + i e^{-ip} sa Z
//   Z'  = -(i/2) e^{-ip} sa F+ + (i/2) e^{ip} sa F- + ca Z
// with c2 = cos^2(a/2), s2 = sin^2(a/2), sa = sin a, ca = cos a. The flip part
// depends on the voxel (B1); the phase part is the event's, shared by voxels.
template <class Real>
struct FlipFactors {
  Real c2, s2, sa, ca;
};

template <class Real>
struct PhaseFactors {
  Real ep_re, ep_im;    // e^{ip}
  Real e2p_re, e2p_im;  // e^{2ip}
};

template <class Real>
KOKKOS_FORCEINLINE_FUNCTION FlipFactors<Real> make_flip(const Real& flip) {
  FlipFactors<Real> f;
  sincos_reduced(flip, f.sa, f.ca);
  f.c2 = Real(0.5f) * (Real(1.0f) + f.ca);
  f.s2 = Real(0.5f) * (Real(1.0f) - f.ca);
  return f;
}

// `cos_p`, `sin_p` come from the host's double-precision phase table: RF
// spoiling phases grow without bound and must not be reduced in float. The
// double angle follows from their products.
template <class Real>
KOKKOS_FORCEINLINE_FUNCTION PhaseFactors<Real> make_phase(const Real& cos_p, const Real& sin_p) {
  PhaseFactors<Real> p;
  p.ep_re = cos_p;
  p.ep_im = sin_p;
  p.e2p_re = cos_p * cos_p - sin_p * sin_p;
  p.e2p_im = Real(2.0f) * cos_p * sin_p;
  return p;
}

// The rotation's matrix with the phase folded into its coefficients once per
// pulse and voxel: u = s2 e^{2ip}, v = sa e^{ip}, h = v / 2. Then
//   F+' = c2 F+ + u F- - i v Z
//   F-' = c2 F- + conj(u) F+ + i conj(v) Z
//   Z'  = ca Z + i (h F- - conj(h) F+)
// costs 30 multiply-adds per order instead of the 44 of applying the phase
// and the flip separately.
template <class Real>
struct RotationCoefficients {
  Real c2, ca;
  Real u_re, u_im;
  Real v_re, v_im;
  Real h_re, h_im;
};

template <class Real>
KOKKOS_FORCEINLINE_FUNCTION RotationCoefficients<Real> make_rotation(const FlipFactors<Real>& f,
                                                                     const PhaseFactors<Real>& p) {
  RotationCoefficients<Real> r;
  r.c2 = f.c2;
  r.ca = f.ca;
  r.u_re = f.s2 * p.e2p_re;
  r.u_im = f.s2 * p.e2p_im;
  r.v_re = f.sa * p.ep_re;
  r.v_im = f.sa * p.ep_im;
  r.h_re = Real(0.5f) * r.v_re;
  r.h_im = Real(0.5f) * r.v_im;
  return r;
}

template <class Real>
KOKKOS_FORCEINLINE_FUNCTION void rotate(const RotationCoefficients<Real>& r, Real& fp_re,
                                        Real& fp_im, Real& fm_re, Real& fm_im, Real& z_re,
                                        Real& z_im) {
  // F+' = c2 F+ + u F- - i v Z, with -i (x + iy) = y - ix
  const Real nfp_re =
      r.c2 * fp_re + r.u_re * fm_re - r.u_im * fm_im + r.v_re * z_im + r.v_im * z_re;
  const Real nfp_im =
      r.c2 * fp_im + r.u_re * fm_im + r.u_im * fm_re + r.v_im * z_im - r.v_re * z_re;
  // F-' = c2 F- + conj(u) F+ + i conj(v) Z
  const Real nfm_re =
      r.c2 * fm_re + r.u_re * fp_re + r.u_im * fp_im + r.v_im * z_re - r.v_re * z_im;
  const Real nfm_im =
      r.c2 * fm_im + r.u_re * fp_im - r.u_im * fp_re + r.v_re * z_re + r.v_im * z_im;
  // Z' = ca Z + i (h F- - conj(h) F+)
  const Real nz_re =
      r.ca * z_re - r.h_re * fm_im + r.h_re * fp_im - r.h_im * fm_re - r.h_im * fp_re;
  const Real nz_im =
      r.ca * z_im + r.h_re * fm_re - r.h_re * fp_re - r.h_im * fm_im - r.h_im * fp_im;
  fp_re = nfp_re;
  fp_im = nfp_im;
  fm_re = nfm_re;
  fm_im = nfm_im;
  z_re = nz_re;
  z_im = nz_im;
}

// The adjoint of a rotation, T^H under the inner product Re sum conj(a) b: the
// same form with v and h exchanged and negated (T^H_13 = i h, T^H_31 =
// i conj(v), ...), so the reverse sweep reuses rotate().
template <class Real>
KOKKOS_FORCEINLINE_FUNCTION RotationCoefficients<Real> adjoint_rotation(
    const RotationCoefficients<Real>& r) {
  RotationCoefficients<Real> a = r;
  a.v_re = -r.h_re;
  a.v_im = -r.h_im;
  a.h_re = -r.v_re;
  a.h_im = -r.v_im;
  return a;
}

// The same rotation from its flip and phase parts (tests, one-off callers).
template <class Real>
KOKKOS_FORCEINLINE_FUNCTION void rotate(const FlipFactors<Real>& f, const PhaseFactors<Real>& p,
                                        Real& fp_re, Real& fp_im, Real& fm_re, Real& fm_im,
                                        Real& z_re, Real& z_im) {
  rotate(make_rotation(f, p), fp_re, fp_im, fm_re, fm_im, z_re, z_im);
}

// Free evolution over one interval: transverse decay and precession, and
// longitudinal decay with recovery of Z_0 towards equilibrium (1).
template <class Real>
struct Evolution {
  Real e1, e2;          // exp(-t/T1), exp(-t/T2)
  Real rot_re, rot_im;  // e2 * exp(+i 2 pi df t): applied to F+, conjugate to F-
  Real recovery;        // 1 - e1
};

// An interval's factors with a spoiler just before it folded in: it zeroes the
// transverse states, so their factors become zero and cost nothing per order.
template <class Real>
KOKKOS_FORCEINLINE_FUNCTION Evolution<Real> spoiled_if(Evolution<Real> ev, bool spoil) {
  if (spoil) ev.e2 = ev.rot_re = ev.rot_im = Real(0.0f);
  return ev;
}

// The team-uniform `precess` as a compile-time flag, so that the branch is
// taken outside the order and lane loops: f(std::true_type) or f(false_type).
template <class F>
KOKKOS_FORCEINLINE_FUNCTION void with_precession(bool precess, const F& f) {
  if (precess) {
    f(std::true_type{});
  } else {
    f(std::false_type{});
  }
}

// `precess` is false when no voxel of the caller's lanes is off resonance:
// the precession is then the identity and its sine and cosine are skipped.
template <class Real>
KOKKOS_FORCEINLINE_FUNCTION Evolution<Real> make_evolution(const Real& t, const Real& r1,
                                                           const Real& r2, const Real& df_hz,
                                                           bool precess = true) {
  using kx::exp;
  Evolution<Real> ev;
  ev.e1 = exp(-t * r1);
  ev.e2 = exp(-t * r2);
  ev.recovery = Real(1.0f) - ev.e1;
  if (precess) {
    Real s, c;
    sincos_turns(df_hz * t, s, c);
    ev.rot_re = ev.e2 * c;
    ev.rot_im = ev.e2 * s;
  } else {
    ev.rot_re = ev.e2;
    ev.rot_im = Real(0.0f);
  }
  return ev;
}

template <class Real>
KOKKOS_FORCEINLINE_FUNCTION void evolve_transverse(const Evolution<Real>& ev, Real& fp_re,
                                                   Real& fp_im, Real& fm_re, Real& fm_im) {
  const Real p_re = ev.rot_re * fp_re - ev.rot_im * fp_im;
  const Real p_im = ev.rot_re * fp_im + ev.rot_im * fp_re;
  const Real m_re = ev.rot_re * fm_re + ev.rot_im * fm_im;
  const Real m_im = ev.rot_re * fm_im - ev.rot_im * fm_re;
  fp_re = p_re;
  fp_im = p_im;
  fm_re = m_re;
  fm_im = m_im;
}

// The same without precession (no voxel of the caller's lanes off resonance):
// a real scale, half the multiplies.
template <class Real>
KOKKOS_FORCEINLINE_FUNCTION void decay_transverse(const Evolution<Real>& ev, Real& fp_re,
                                                  Real& fp_im, Real& fm_re, Real& fm_im) {
  fp_re = ev.e2 * fp_re;
  fp_im = ev.e2 * fp_im;
  fm_re = ev.e2 * fm_re;
  fm_im = ev.e2 * fm_im;
}

// Orders above zero only decay; order zero also recovers.
template <class Real>
KOKKOS_FORCEINLINE_FUNCTION void evolve_longitudinal(const Evolution<Real>& ev, bool order_zero,
                                                     Real& z_re, Real& z_im) {
  z_re = ev.e1 * z_re + (order_zero ? ev.recovery : Real(0.0f));
  z_im = ev.e1 * z_im;
}

// Receiver: s = M0 F+_0 e^{-i phase}.
template <class Real>
KOKKOS_FORCEINLINE_FUNCTION void demodulate(const Real& m0, const Real& fp_re, const Real& fp_im,
                                            const Real& cos_p, const Real& sin_p, Real& s_re,
                                            Real& s_im) {
  s_re = m0 * (fp_re * cos_p + fp_im * sin_p);
  s_im = m0 * (fp_im * cos_p - fp_re * sin_p);
}

}  // namespace larmor::epg
