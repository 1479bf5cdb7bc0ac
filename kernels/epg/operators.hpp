// The EPG operators on one order of one voxel: where each event kind's physics
// lives. Layouts (state_block.hpp) decide which thread holds which order and
// call these; the event loop (event_loop.hpp) decides when.
//
// Every function is written over a number type `Real` (float for the forward
// simulation, a dual number for forward-mode derivatives) and works on split
// real/imaginary parts so that host loops over voxel lanes vectorise.
#pragma once

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

template <class Real>
KOKKOS_FORCEINLINE_FUNCTION void rotate(const FlipFactors<Real>& f, const PhaseFactors<Real>& r,
                                        Real& fp_re, Real& fp_im, Real& fm_re, Real& fm_im,
                                        Real& z_re, Real& z_im) {
  // e^{2ip} F-, e^{-2ip} F+
  const Real a_re = r.e2p_re * fm_re - r.e2p_im * fm_im;
  const Real a_im = r.e2p_re * fm_im + r.e2p_im * fm_re;
  const Real b_re = r.e2p_re * fp_re + r.e2p_im * fp_im;
  const Real b_im = r.e2p_re * fp_im - r.e2p_im * fp_re;
  // i e^{ip} Z and i e^{-ip} Z
  const Real pz_re = -(r.ep_re * z_im + r.ep_im * z_re);
  const Real pz_im = r.ep_re * z_re - r.ep_im * z_im;
  const Real mz_re = -(r.ep_re * z_im - r.ep_im * z_re);
  const Real mz_im = r.ep_re * z_re + r.ep_im * z_im;
  // e^{-ip} F+ and e^{ip} F- for the Z row
  const Real q_re = r.ep_re * fp_re + r.ep_im * fp_im;
  const Real q_im = r.ep_re * fp_im - r.ep_im * fp_re;
  const Real w_re = r.ep_re * fm_re - r.ep_im * fm_im;
  const Real w_im = r.ep_re * fm_im + r.ep_im * fm_re;
  const Real half_sa = Real(0.5f) * f.sa;
  const Real nfp_re = f.c2 * fp_re + f.s2 * a_re - f.sa * pz_re;
  const Real nfp_im = f.c2 * fp_im + f.s2 * a_im - f.sa * pz_im;
  const Real nfm_re = f.s2 * b_re + f.c2 * fm_re + f.sa * mz_re;
  const Real nfm_im = f.s2 * b_im + f.c2 * fm_im + f.sa * mz_im;
  // -(i/2) sa (q - w), with -i x = (x_im, -x_re)
  const Real nz_re = half_sa * (q_im - w_im) + f.ca * z_re;
  const Real nz_im = -half_sa * (q_re - w_re) + f.ca * z_im;
  fp_re = nfp_re;
  fp_im = nfp_im;
  fm_re = nfm_re;
  fm_im = nfm_im;
  z_re = nz_re;
  z_im = nz_im;
}

// Free evolution over one interval: transverse decay and precession, and
// longitudinal decay with recovery of Z_0 towards equilibrium (1).
template <class Real>
struct Evolution {
  Real e1, e2;          // exp(-t/T1), exp(-t/T2)
  Real rot_re, rot_im;  // e2 * exp(+i 2 pi df t): applied to F+, conjugate to F-
  Real recovery;        // 1 - e1
};

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
