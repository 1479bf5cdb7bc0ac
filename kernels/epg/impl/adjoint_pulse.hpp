// A pulse as the reverse sweeps take it (adjoint_impl.hpp, adjoint_grouped.hpp,
// pooled_adjoint.hpp): an instantaneous rotation about an axis in the
// transverse plane, or a slice-selective pulse's general rotation read from
// its table at the voxel's slice position (slice_profile.hpp). Both go
// forward through the same rotate() form; their reverses differ in how the
// derivative along the effective flip a = flip x gain x B1 is found.
#pragma once

#include <type_traits>

#include "epg/impl/event_loop.hpp"
#include "epg/impl/operators.hpp"
#include "epg/slice_profile.hpp"

namespace larmor::epg::adjoint_detail {

using epg::pulse_axis;
using epg::PulseAxis;

// An instantaneous pulse's rotation for a voxel's tissue `x` (its b1).
template <class Tissue>
KOKKOS_INLINE_FUNCTION auto rotation_of(const EventRecord& rec, const PulseAxis& axis,
                                        const Tissue& x) {
  using Real = std::decay_t<decltype(x.b1)>;
  return make_rotation(make_flip(Real(rec.flip * axis.gain) * pulse_b1(rec, x.b1)),
                       make_phase(Real(axis.cos_phase), Real(axis.sin_phase)));
}

// sum over orders of Im(conj(l-) F- - conj(l+) F+): the pairing of the
// adjoint with the z-rotation generator G (F+ -> i F+, F- -> -i F-).
template <class Real>
KOKKOS_INLINE_FUNCTION Real phase_pairing(const Real& lp_re, const Real& lp_im, const Real& lm_re,
                                          const Real& lm_im, const Real& p_re, const Real& p_im,
                                          const Real& m_re, const Real& m_im) {
  return lm_re * m_im - lm_im * m_re - lp_re * p_im + lp_im * p_re;
}

// One order of the reverse of a pulse. A pulse is T = exp(a N) about the axis
// at phase p, so dT/da = N T and, with T = R(p) T0 R(-p), dT/dp = G T - T G.
// With s' = T s and l = T^H l':
//   dL/da = <l', N s'>,  dL/dp = <l', G s'> - <l, G s>,
// N: F+ -> -i e^{ip} Z, F- -> i e^{-ip} Z, Z -> (i/2)(e^{ip} F- - e^{-ip} F+).
// Adds this order's share to da and dp, and takes its adjoint from l' to l.
// `_after`: given s' (p, m, z) as well as s, for a caller that kept it, and
// the axis' cosine `c` and sine `sn`.
template <class Real>
LARMOR_HOST_FORCEINLINE_FUNCTION void rotation_pairings_after(
    const RotationCoefficients<Real>& adj, const Real& c, const Real& sn, const Real& s_fp_re,
    const Real& s_fp_im, const Real& s_fm_re, const Real& s_fm_im, const Real& p_re,
    const Real& p_im, const Real& m_re, const Real& m_im, const Real& z_re, const Real& z_im,
    Real& lp_re, Real& lp_im, Real& lm_re, Real& lm_im, Real& lz_re, Real& lz_im, Real& da,
    Real& dp) {
  const Real half(0.5f);
  const Real ez_re = c * z_re - sn * z_im, ez_im = c * z_im + sn * z_re;  // e^{ip} Z'
  const Real cz_re = c * z_re + sn * z_im, cz_im = c * z_im - sn * z_re;  // e^{-ip} Z'
  const Real em_re = c * m_re - sn * m_im, em_im = c * m_im + sn * m_re;  // e^{ip} F-'
  const Real cp_re = c * p_re + sn * p_im, cp_im = c * p_im - sn * p_re;  // e^{-ip} F+'
  // Re conj(l) (-i w) = Re l Im w - Im l Re w on F+; the opposite sign on F-.
  da += lp_re * ez_im - lp_im * ez_re - lm_re * cz_im + lm_im * cz_re -
        half * (lz_re * (em_im - cp_im) - lz_im * (em_re - cp_re));
  dp += phase_pairing(lp_re, lp_im, lm_re, lm_im, p_re, p_im, m_re, m_im);
  rotate(adj, lp_re, lp_im, lm_re, lm_im, lz_re, lz_im);
  dp -= phase_pairing(lp_re, lp_im, lm_re, lm_im, s_fp_re, s_fp_im, s_fm_re, s_fm_im);
}
template <class Real>
LARMOR_HOST_FORCEINLINE_FUNCTION void rotation_pairings(
    const RotationCoefficients<Real>& rot, const RotationCoefficients<Real>& adj,
    const PulseAxis& axis, const Real& s_fp_re, const Real& s_fp_im, const Real& s_fm_re,
    const Real& s_fm_im, const Real& s_z_re, const Real& s_z_im, Real& lp_re, Real& lp_im,
    Real& lm_re, Real& lm_im, Real& lz_re, Real& lz_im, Real& da, Real& dp) {
  const Real c(axis.cos_phase), sn(axis.sin_phase);
  Real p_re = s_fp_re, p_im = s_fp_im, m_re = s_fm_re, m_im = s_fm_im, z_re = s_z_re, z_im = s_z_im;
  rotate(rot, p_re, p_im, m_re, m_im, z_re, z_im);  // s'
  rotation_pairings_after(adj, c, sn, s_fp_re, s_fp_im, s_fm_re, s_fm_im, p_re, p_im, m_re, m_im,
                          z_re, z_im, lp_re, lp_im, lm_re, lm_im, lz_re, lz_im, da, dp);
}

// A pulse's rotation T for one voxel. A slice-selective pulse also keeps
// the imaginary part of c2 (its axis may leave the transverse plane); its
// reverse needs dT/da too (shaped_pulse_slope), since its T is not exp(a N)
// and rotation_pairings' dT/da = N T does not hold for it.
template <class Real>
struct ReversePulse {
  RotationCoefficients<Real> rot;
  PulseAxis axis;
  bool shaped = false;
  Real c2_im = Real(0.0f);
};

// The effective flip a = flip x gain x B1 of a pulse for a voxel (`x`: its
// b1; a b1_fixed pulse takes B1 = 1).
template <class Tissue>
KOKKOS_INLINE_FUNCTION auto effective_flip(const EventRecord& rec, const PulseAxis& axis,
                                           const Tissue& x) {
  using Real = std::decay_t<decltype(x.b1)>;
  return Real(rec.flip * axis.gain) * pulse_b1(rec, x.b1);
}

// da/dB1 of that flip: 0 for a b1_fixed pulse.
KOKKOS_INLINE_FUNCTION float flip_per_b1(const EventRecord& rec, float gain) {
  return follows_b1(rec) ? rec.flip * gain : 0.0f;
}

// `d` gives the transmit field, the slice tables and the voxel's slice
// position; `x` its b1. `Shaped`: the sweep runs slice-selective pulses
// (`d` is then a SliceTerms; without, the sweep compiles as before they
// existed: their branches cost the plain kernel registers, and so occupancy,
// on a device; docs/performance.md, "Reverse sweeps").
template <class Real, bool Shaped, class Terms, class Tissue>
KOKKOS_INLINE_FUNCTION ReversePulse<Real> reverse_pulse_of(const EventRecord& rec, const Terms& d,
                                                           const Tissue& x) {
  ReversePulse<Real> p;
  p.axis = pulse_axis(rec, d.field(rec));
  if constexpr (Shaped) {  // `d` holds the tables (SliceTerms)
    const int profile = slice_profile_of(rec) - 1;
    if (profile >= 0) {
      p.shaped = true;
      const PulseQuaternion<Real> q =
          read_slice_rotation(d.slice, profile, d.position, effective_flip(rec, p.axis, x));
      const GeneralRotation<Real> g =
          make_general_rotation(q, Real(p.axis.cos_phase), Real(p.axis.sin_phase));
      p.rot = g.r;
      p.c2_im = g.c2_im;
      return p;
    }
  }
  p.rot = rotation_of(rec, p.axis, x);
  return p;
}

// dT/da of a slice-selective pulse, from the slope of its table's read-back
// (taken where the reverse needs it, so that no sweep keeps it through an
// event).
template <class Real, class Terms, class Tissue>
KOKKOS_INLINE_FUNCTION GeneralRotation<Real> shaped_pulse_slope(const EventRecord& rec,
                                                                const Terms& d, const Tissue& x,
                                                                const PulseAxis& axis) {
  PulseQuaternion<Real> dq;
  const PulseQuaternion<Real> q = read_slice_rotation(
      d.slice, slice_profile_of(rec) - 1, d.position, effective_flip(rec, axis, x), &dq);
  return general_rotation_slope(q, dq, Real(axis.cos_phase), Real(axis.sin_phase));
}

// T on one order.
template <bool Shaped, class Real>
KOKKOS_FORCEINLINE_FUNCTION void rotate_pulse(const ReversePulse<Real>& p, Real& fp_re, Real& fp_im,
                                              Real& fm_re, Real& fm_im, Real& z_re, Real& z_im) {
  if (Shaped && p.shaped) {
    rotate_general(p.rot, p.c2_im, fp_re, fp_im, fm_re, fm_im, z_re, z_im);
  } else {
    rotate(p.rot, fp_re, fp_im, fm_re, fm_im, z_re, z_im);
  }
}

// rotation_pairings for a slice-selective pulse: dL/da = <l', (dT/da) s>
// from the table's slope (`slope`), dL/dp as there (its phase turns b as an
// instantaneous pulse's does, so T = R(p) T0 R(-p) still), and l = T^H l',
// whose coefficients are adjoint_rotation's with c2 conjugated.
template <class Real>
KOKKOS_INLINE_FUNCTION void shaped_pulse_pairings(
    const ReversePulse<Real>& p, const GeneralRotation<Real>& slope,
    const RotationCoefficients<Real>& adj, const Real& s_fp_re, const Real& s_fp_im,
    const Real& s_fm_re, const Real& s_fm_im, const Real& s_z_re, const Real& s_z_im, Real& lp_re,
    Real& lp_im, Real& lm_re, Real& lm_im, Real& lz_re, Real& lz_im, Real& da, Real& dp) {
  Real p_re = s_fp_re, p_im = s_fp_im, m_re = s_fm_re, m_im = s_fm_im, z_re = s_z_re, z_im = s_z_im;
  rotate_general(p.rot, p.c2_im, p_re, p_im, m_re, m_im, z_re, z_im);  // s'
  Real dp_re = s_fp_re, dp_im = s_fp_im, dm_re = s_fm_re, dm_im = s_fm_im, dz_re = s_z_re,
       dz_im = s_z_im;
  rotate_general(slope.r, slope.c2_im, dp_re, dp_im, dm_re, dm_im, dz_re, dz_im);
  da +=
      lp_re * dp_re + lp_im * dp_im + lm_re * dm_re + lm_im * dm_im + lz_re * dz_re + lz_im * dz_im;
  dp += phase_pairing(lp_re, lp_im, lm_re, lm_im, p_re, p_im, m_re, m_im);
  rotate_general(adj, -p.c2_im, lp_re, lp_im, lm_re, lm_im, lz_re, lz_im);
  dp -= phase_pairing(lp_re, lp_im, lm_re, lm_im, s_fp_re, s_fp_im, s_fm_re, s_fm_im);
}

}  // namespace larmor::epg::adjoint_detail
