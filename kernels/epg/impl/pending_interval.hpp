// Deferred relaxation for the forward kernels at float (on the axis, and
// complex without declared terms): what the event loop counts between pulses,
// the factors of the intervals it skipped, and the next pulse's rotation with
// that relaxation folded into it.
#pragma once

#include "common/kokkos_compat.hpp"
#include "common/sincos.hpp"
#include "epg/impl/operators.hpp"
#include "epg/impl/state_block.hpp"
#include "epg/slice_profile.hpp"

namespace larmor::epg {

#if defined(__CUDA_ARCH__)
__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
#endif

// exp(-t rate). On a device one MUFU.EX2 instead of expf's sequence of about
// ten instructions (relative error below 2^-22; factors below 2^-126 flush
// to zero, as an interval of over 87 relaxation times leaves nothing).
KOKKOS_FORCEINLINE_FUNCTION float relaxation_decay(float t, float rate) {
#if defined(__CUDA_ARCH__)
  return exp2_approx((-t * 1.44269504088896341f) * rate);
#else
  return kx::exp(-t * rate);
#endif
}

// Deferred relaxation (forward runs at float). On the axis an interval's
// relaxation is diagonal (E2 on a and b, E1 on c) plus the recovery of c_0,
// and it commutes with shifts (the same E2 for every F order), spoilers and
// samples up to a factor; successive intervals compose into that of their
// summed duration. So the event loop only counts the time since the last
// pulse (and whether a spoiler came), and the next pulse applies its
// relaxation as a column scaling of the rotation: one pass over the orders
// per pulse instead of one per pulse and one per interval, and the
// exponentials once per pulse. The stored state (a*, b*, c*) and the
// pending factors give the true state
//   a = e2 a*,  b = e2 b*,  c_k = e1 c*_k,  c_0 = e1 c*_0 + recovery.
//
// On devices, shifts are deferred the same way: they commute with the
// relaxation (one E2 for every F order, and c is never shifted) and with a
// spoiler, so the loop only counts them. The next pulse reads its inputs
// shifted (a rotation writes every order anyway: a shift folded into it costs
// no register moves), and a sample reads F+_0 after p shifts, which is -F-_p
// before them (a_0 = -b_p). Counts past a block's reach are applied as plain
// shifts first.
struct PendingInterval {
  float elapsed = 0.0f;  // [s] since the last pulse
  bool spoiled = false;  // a spoiler since the last pulse: the F states are zero
  int shifts = 0;        // shifts since the last pulse (device blocks)
};

// The relaxation factors of the last interval a pulse (`WithT1`) or a sample
// took, per lane. Trains repeat their intervals (mese: one before each pulse,
// one before each sample) or change them every repetition (mrf), so one
// entry per use suffices; the complex kernels' two-slot cache, shared by both
// uses, missed on every mrf event and cost more register selects than the
// exponentials. A duration of zero gives the identity (exp(0) is exactly 1).
template <int Lanes, bool WithT1>
struct IntervalCache {
  float duration = -1.0f;
  float e1[Lanes], e2[Lanes];

  KOKKOS_FORCEINLINE_FUNCTION IntervalCache() {
    LARMOR_UNROLL
    for (int l = 0; l < Lanes; ++l) e1[l] = e2[l] = 1.0f;
  }
  KOKKOS_FORCEINLINE_FUNCTION void look_up(float t, const float (&r1)[Lanes],
                                           const float (&r2)[Lanes]) {
    if (t == duration) return;
    duration = t;
    LARMOR_UNROLL
    for (int l = 0; l < Lanes; ++l) {
      e2[l] = relaxation_decay(t, r2[l]);
      if constexpr (WithT1) e1[l] = relaxation_decay(t, r1[l]);
    }
  }
};

// A pending interval's factors per lane (a sample's cache has no T1 part:
// it reads only F+_0).
template <int Lanes>
struct PendingFactors {
  float e1[Lanes], e2[Lanes], recovery[Lanes];

  template <bool WithT1>
  KOKKOS_FORCEINLINE_FUNCTION PendingFactors(const IntervalCache<Lanes, WithT1>& interval,
                                             bool spoiled) {
    LARMOR_UNROLL
    for (int l = 0; l < Lanes; ++l) {
      e1[l] = WithT1 ? interval.e1[l] : 1.0f;
      e2[l] = spoiled ? 0.0f : interval.e2[l];
      recovery[l] = WithT1 ? 1.0f - interval.e1[l] : 0.0f;
    }
  }
};

// A pulse's rotation R after the pending relaxation D (plus recovery r on
// c_0): R D scales R's columns, and R r adds (-v r, v r, ca r) to order 0.
template <int Lanes>
struct PendingRotation {
  float c2[Lanes], u[Lanes], v[Lanes], h[Lanes], ca[Lanes];  // columns scaled
  float zero_a[Lanes], zero_c[Lanes];                        // order 0: v r, ca r

  KOKKOS_FORCEINLINE_FUNCTION PendingRotation(const LaneRotations<float, Lanes>& r,
                                              const PendingFactors<Lanes>& p) {
    LARMOR_UNROLL
    for (int l = 0; l < Lanes; ++l) {
      c2[l] = r.c2[l] * p.e2[l];
      u[l] = r.u_re[l] * p.e2[l];
      h[l] = r.h_re[l] * p.e2[l];
      v[l] = r.v_re[l] * p.e1[l];
      ca[l] = r.ca[l] * p.e1[l];
      zero_a[l] = r.v_re[l] * p.recovery[l];
      zero_c[l] = r.ca[l] * p.recovery[l];
    }
  }

  KOKKOS_FORCEINLINE_FUNCTION void apply(int l, float& a, float& b, float& c) const {
    const float na = c2[l] * a + u[l] * b - v[l] * c;
    const float nb = u[l] * a + c2[l] * b + v[l] * c;
    const float nc = ca[l] * c + h[l] * (a - b);
    a = na;
    b = nb;
    c = nc;
  }
  // Order 0 after apply(); `weight` 0 or 1 keeps device threads uniform.
  KOKKOS_FORCEINLINE_FUNCTION void recover(int l, float weight, float& a, float& b,
                                           float& c) const {
    a -= weight * zero_a[l];
    b += weight * zero_a[l];
    c += weight * zero_c[l];
  }
};

// The complex kernels defer the same way (forward runs at float without
// declared terms). There the pending interval is a free evolution: E1 and
// the recovery on Z, and on F+ the factor e2 e^{i phi} (phi the precession
// since the last pulse; F- takes its conjugate), still the same for every
// order, so it commutes with shifts and spoilers as on the axis. The
// factors of the pending interval, per lane (a sample's have no T1 part).
template <int Lanes>
struct PendingEvolution {
  // Lane arrays, so that the host's lane loops vectorise.
  float e1[Lanes], e2[Lanes], recovery[Lanes], rot_re[Lanes], rot_im[Lanes];

  template <bool WithT1>
  KOKKOS_FORCEINLINE_FUNCTION PendingEvolution(const IntervalCache<Lanes, WithT1>& interval,
                                               const PendingInterval& pending,
                                               const float (&df_hz)[Lanes], bool precess) {
    const float transverse = pending.spoiled ? 0.0f : 1.0f;
    LARMOR_UNROLL
    for (int l = 0; l < Lanes; ++l) {
      e1[l] = WithT1 ? interval.e1[l] : 1.0f;
      recovery[l] = WithT1 ? 1.0f - interval.e1[l] : 0.0f;
      e2[l] = transverse * interval.e2[l];
      rot_re[l] = e2[l];
      rot_im[l] = 0.0f;
    }
    if (precess) {
      LARMOR_UNROLL
      for (int l = 0; l < Lanes; ++l) {
        float s, c;
        sincos_turns(df_hz[l] * pending.elapsed, s, c);
        rot_re[l] = e2[l] * c;
        rot_im[l] = e2[l] * s;
      }
    }
  }

  KOKKOS_FORCEINLINE_FUNCTION Evolution<float> lane(int l) const {
    return {e1[l], e2[l], rot_re[l], rot_im[l], recovery[l]};
  }
};

// A pulse's complex rotation R after the pending evolution D: R D scales R's
// columns (F+ by a = e2 e^{i phi}, F- by conj(a), Z by e1), which keeps the
// rotation's form with c2 a (complex: slice_profile.hpp's general rotation),
// u conj(a), h conj(a), v e1 and ca e1; R r adds the recovery's image
// (-i v r, i conj(v) r, ca r) to order 0. Off resonance nowhere in the team,
// a is real and c2 stays real (`Precess` false).
template <int Lanes>
struct PendingComplexRotation {
  LaneRotations<float, Lanes> r;
  float c2_im[Lanes];
  float zero_re[Lanes], zero_im[Lanes], zero_z[Lanes];  // order 0: v_im r, v_re r, ca r

  // Filled by the caller (set(), or the train kernel from its step factors).
  PendingComplexRotation() = default;

  KOKKOS_FORCEINLINE_FUNCTION PendingComplexRotation(const LaneRotations<float, Lanes>& rotation,
                                                     const PendingEvolution<Lanes>& pending) {
    LARMOR_UNROLL
    for (int l = 0; l < Lanes; ++l) {
      set(l, rotation.get(l), pending.rot_re[l], pending.rot_im[l], pending.e1[l],
          pending.recovery[l]);
    }
  }

  // Lane l: rotation R after the evolution a (on F+), e1 and `recovery`.
  KOKKOS_FORCEINLINE_FUNCTION void set(int l, const RotationCoefficients<float>& rotation,
                                       float a_re, float a_im, float e1, float recovery) {
    r.c2[l] = rotation.c2 * a_re;
    c2_im[l] = rotation.c2 * a_im;
    r.u_re[l] = rotation.u_re * a_re + rotation.u_im * a_im;
    r.u_im[l] = rotation.u_im * a_re - rotation.u_re * a_im;
    r.h_re[l] = rotation.h_re * a_re + rotation.h_im * a_im;
    r.h_im[l] = rotation.h_im * a_re - rotation.h_re * a_im;
    r.v_re[l] = rotation.v_re * e1;
    r.v_im[l] = rotation.v_im * e1;
    r.ca[l] = rotation.ca * e1;
    zero_re[l] = rotation.v_im * recovery;
    zero_im[l] = rotation.v_re * recovery;
    zero_z[l] = rotation.ca * recovery;
  }

  template <bool Precess>
  KOKKOS_FORCEINLINE_FUNCTION void apply(int l, float& fp_re, float& fp_im, float& fm_re,
                                         float& fm_im, float& z_re, float& z_im) const {
    if constexpr (Precess) {
      rotate_general(r.get(l), c2_im[l], fp_re, fp_im, fm_re, fm_im, z_re, z_im);
    } else {
      rotate(r.get(l), fp_re, fp_im, fm_re, fm_im, z_re, z_im);
    }
  }
  // Order 0 after apply(); `weight` 0 or 1 keeps device threads uniform.
  KOKKOS_FORCEINLINE_FUNCTION void recover(int l, float weight, float& fp_re, float& fp_im,
                                           float& fm_re, float& fm_im, float& z_re) const {
    fp_re += weight * zero_re[l];
    fp_im -= weight * zero_im[l];
    fm_re += weight * zero_re[l];
    fm_im += weight * zero_im[l];
    z_re += weight * zero_z[l];
  }
};

}  // namespace larmor::epg
