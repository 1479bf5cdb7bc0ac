// Forward mode by parts: the rotation and free evolution of a state at
// Dual<float, N>, taken on the value and each tangent separately.
//
// A step is bilinear in its coefficients c and the state s (plus, for the
// evolution, the recovery of Z_0, affine in c). The product of two dual
// numbers spends 2N + 1 multiply-adds per term, yet a step's coefficients
// depend on few tissue directions: a rotation on B1 only, a free evolution on
// T1, T2 and df. By parts, tangent d of the result is the step at the
// coefficients' value applied to tangent d of the state, plus the step at the
// coefficients' tangent d applied to the state's value. That second term is
// taken only along the directions the coefficients are expected to depend on
// (ExpectedDirections) when the mask of their nonzero tangents (directions_of,
// taken where they are made) shows no other; otherwise along every direction.
// So the result is the dual product's for any input (a term left out is an
// exact zero), only summed in another order.
#pragma once

#include "common/dual.hpp"
#include "common/kokkos_compat.hpp"
#include "epg/impl/operators.hpp"
#include "epg/tissue_views.hpp"

namespace larmor::epg::dual_steps {

// The number types stepped by parts: dual numbers over float with several
// tangents. With one tangent (the HVP's direction, which every coefficient
// depends on) by parts does the dual product's work, so that stays.
template <class Real>
inline constexpr bool applies_v = false;
template <int N>
inline constexpr bool applies_v<Dual<float, N>> = N >= 2;

// Bit d set: the tangent d of x is not zero. The event loop takes the masks
// of a step's coefficients when it makes them (it caches the flips and the
// intervals' factors), not at every step. A mask may include directions whose
// tangent is zero; it must not omit one. Every direction (~0u) is always
// correct.
template <int N>
KOKKOS_FORCEINLINE_FUNCTION unsigned directions_of(const Dual<float, N>& x) {
  unsigned used = 0;
  LARMOR_UNROLL
  for (int d = 0; d < N; ++d) used |= x.tangent[d] != 0.0f ? (1u << d) : 0u;
  return used;
}

// Number types that are not stepped by parts take every direction.
template <class Real>
KOKKOS_FORCEINLINE_FUNCTION unsigned directions_of(const Real&) {
  return ~0u;
}

template <int N>
KOKKOS_FORCEINLINE_FUNCTION RotationCoefficients<float> part(
    const RotationCoefficients<Dual<float, N>>& r, int p) {
  return {part_of(r.c2, p),   part_of(r.ca, p),   part_of(r.u_re, p), part_of(r.u_im, p),
          part_of(r.v_re, p), part_of(r.v_im, p), part_of(r.h_re, p), part_of(r.h_im, p)};
}

template <int N>
KOKKOS_FORCEINLINE_FUNCTION unsigned directions_of(const FlipFactors<Dual<float, N>>& f) {
  return directions_of(f.c2) | directions_of(f.s2) | directions_of(f.sa) | directions_of(f.ca);
}

template <int N>
KOKKOS_FORCEINLINE_FUNCTION Evolution<float> part(const Evolution<Dual<float, N>>& ev, int p) {
  return {part_of(ev.e1, p), part_of(ev.e2, p), part_of(ev.rot_re, p), part_of(ev.rot_im, p),
          part_of(ev.recovery, p)};
}

template <int N>
KOKKOS_FORCEINLINE_FUNCTION unsigned directions_of(const Evolution<Dual<float, N>>& ev) {
  return directions_of(ev.e1) | directions_of(ev.e2) | directions_of(ev.rot_re) |
         directions_of(ev.rot_im) | directions_of(ev.recovery);
}

// The six components of one order and lane, part p of each.
struct Parts {
  float fp_re, fp_im, fm_re, fm_im, z_re, z_im;
};

template <class Real>
KOKKOS_FORCEINLINE_FUNCTION Parts read(int p, const Real& fp_re, const Real& fp_im,
                                       const Real& fm_re, const Real& fm_im, const Real& z_re,
                                       const Real& z_im) {
  return {part_of(fp_re, p), part_of(fp_im, p), part_of(fm_re, p),
          part_of(fm_im, p), part_of(z_re, p),  part_of(z_im, p)};
}

// The steps a sweep takes: `step(coefficients, order, x)` applies the step at
// float coefficients to the parts x of one order.
struct RotationStep {
  template <class Coefficients>
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const Coefficients& r, int, Parts& x) const {
    rotate(r, x.fp_re, x.fp_im, x.fm_re, x.fm_im, x.z_re, x.z_im);
  }
};

template <bool Precess>
struct EvolutionStep {
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const Evolution<float>& ev, int order,
                                              Parts& x) const {
    if constexpr (Precess) {
      evolve_transverse(ev, x.fp_re, x.fp_im, x.fm_re, x.fm_im);
    } else {
      decay_transverse(ev, x.fp_re, x.fp_im, x.fm_re, x.fm_im);
    }
    evolve_longitudinal(ev, order == 0, x.z_re, x.z_im);
  }
};

// The directions a step's coefficients depend on in the forward kernel's
// runs (operators.hpp): the flip scales with B1, the free evolution's factors
// depend on T1, T2 and df. Each step checks its mask against them once; a step
// whose coefficients carry any other direction takes every direction.
template <int N>
struct ExpectedDirections {
  static constexpr unsigned all = (1u << N) - 1u;
  static constexpr unsigned rotation = all, evolution = all;
};
template <>
struct ExpectedDirections<tissue_direction::count> {
  static constexpr unsigned all = (1u << tissue_direction::count) - 1u;
  static constexpr unsigned rotation = 1u << tissue_direction::b1;
  static constexpr unsigned evolution =
      (1u << tissue_direction::t1) | (1u << tissue_direction::t2) | (1u << tissue_direction::df);
};

// The directions a state's tangents may be nonzero along: a block starts with
// none (its tangents zero) and gains those each step adds (`carried` of
// StateBlock and RingStateBlock). Along M0 they stay zero (M0 enters at the
// receiver), so the sparse sweep skips stepping that tangent while the state
// carries only the expected directions.
template <int N>
inline constexpr unsigned expected_carried_v =
    ExpectedDirections<N>::rotation | ExpectedDirections<N>::evolution;

// The sweep over a block's live orders (`for_each_order` of StateBlock and
// RingStateBlock), one pass: each order's tangents, then its value.
// `coefficients[p][l]` are part p of lane l's coefficients (0 the value, 1 + d
// the tangent d), `homogeneous[l]` their value without the affine term (what
// multiplies a tangent). `Added`: the directions whose coefficient tangents
// are applied to the value; `Carried`: those the state's tangents may be
// nonzero along (the others are zero and stepped only where added). Both are
// fixed at compile time so the order loop has no branch on them.
template <int N, unsigned Added, unsigned Carried, int Lanes, class Block, class Coefficients,
          class Step>
KOKKOS_FORCEINLINE_FUNCTION void sweep(Block& s, int live,
                                       const Coefficients (&coefficients)[N + 1][Lanes],
                                       const Coefficients (&homogeneous)[Lanes], const Step& step) {
  s.for_each_order(live, [&](int order, int l, auto& fp_re, auto& fp_im, auto& fm_re, auto& fm_im,
                             auto& z_re, auto& z_im) {
    const Parts value = read(0, fp_re, fp_im, fm_re, fm_im, z_re, z_im);
    LARMOR_UNROLL
    for (int d = 0; d < N; ++d) {
      if ((((Carried | Added) >> d) & 1u) == 0) continue;
      Parts t{};
      if ((Carried >> d) & 1u) {
        t = read(1 + d, fp_re, fp_im, fm_re, fm_im, z_re, z_im);
        step(homogeneous[l], order, t);
      }
      if ((Added >> d) & 1u) {
        Parts x = value;
        step(coefficients[1 + d][l], order, x);
        t.fp_re += x.fp_re, t.fp_im += x.fp_im, t.fm_re += x.fm_re;
        t.fm_im += x.fm_im, t.z_re += x.z_re, t.z_im += x.z_im;
      }
      fp_re.tangent[d] = t.fp_re, fp_im.tangent[d] = t.fp_im, fm_re.tangent[d] = t.fm_re;
      fm_im.tangent[d] = t.fm_im, z_re.tangent[d] = t.z_re, z_im.tangent[d] = t.z_im;
    }
    Parts x = value;
    step(coefficients[0][l], order, x);
    fp_re.value = x.fp_re, fp_im.value = x.fp_im, fm_re.value = x.fm_re;
    fm_im.value = x.fm_im, z_re.value = x.z_re, z_im.value = x.z_im;
  });
}

// `rotation.directions`: the directions of its coefficients' tangents.
template <class Block, class Rotations>
KOKKOS_INLINE_FUNCTION void rotate(Block& s, int live, const Rotations& rotation) {
  constexpr int lanes = Block::lanes;
  using Real = typename Block::real_type;
  constexpr int N = tangent_count_v<Real>;
  using Expected = ExpectedDirections<N>;
  RotationCoefficients<float> parts[N + 1][lanes];
  LARMOR_UNROLL
  for (int l = 0; l < lanes; ++l) {
    const RotationCoefficients<Real> r = rotation.get(l);
    LARMOR_UNROLL
    for (int p = 0; p <= N; ++p) parts[p][l] = part(r, p);
  }
  constexpr unsigned carried = expected_carried_v<N>;
  if ((rotation.directions & ~Expected::rotation) == 0 && (s.carried & ~carried) == 0) {
    sweep<N, Expected::rotation, carried>(s, live, parts, parts[0], RotationStep{});
  } else {
    sweep<N, Expected::all, Expected::all>(s, live, parts, parts[0], RotationStep{});
  }
  s.carried |= rotation.directions;
}

// `ev` with the spoiler already folded in (zero transverse factors);
// `directions` those of its factors' tangents.
template <bool Precess, class Block, class Real, int Lanes>
KOKKOS_INLINE_FUNCTION void evolve(Block& s, int live, const Evolution<Real> (&ev)[Lanes],
                                   unsigned directions) {
  constexpr int N = tangent_count_v<Real>;
  using Expected = ExpectedDirections<N>;
  Evolution<float> parts[N + 1][Lanes], homogeneous[Lanes];
  LARMOR_UNROLL
  for (int l = 0; l < Lanes; ++l) {
    LARMOR_UNROLL
    for (int p = 0; p <= N; ++p) parts[p][l] = part(ev[l], p);
    homogeneous[l] = parts[0][l];
    homogeneous[l].recovery = 0.0f;
  }
  constexpr unsigned carried = expected_carried_v<N>;
  if ((directions & ~Expected::evolution) == 0 && (s.carried & ~carried) == 0) {
    sweep<N, Expected::evolution, carried>(s, live, parts, homogeneous, EvolutionStep<Precess>{});
  } else {
    sweep<N, Expected::all, Expected::all>(s, live, parts, homogeneous, EvolutionStep<Precess>{});
  }
  s.carried |= directions;
}

}  // namespace larmor::epg::dual_steps
