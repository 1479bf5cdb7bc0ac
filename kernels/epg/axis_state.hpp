// The on-axis state layouts: the real-subspace path's states
// (src/sequence/real_subspace.hpp). When a run's states stay on one axis of
// the complex plane, each order is three real numbers instead of six:
//   F+_k = i a_k,  F-_k = i b_k,  Z_k = c_k
// in the frame of the pulses' common axis, which the packed stream's rewrite
// (every pulse at phase 0, half turns folded into the flip's sign, each
// receiver phase moved by the axis) makes the lab frame of the kernel. The
// blocks present the interface of StateBlock and RingStateBlock, so the one
// event loop (event_loop.hpp) runs them unchanged; each step is the complex
// step restricted to the axis:
//   rotation (phase 0):  a' = c2 a + s2 b - sin(f) c,  b' = s2 a + c2 b + sin(f) c,
//                        c' = cos(f) c + sin(f) (a - b) / 2
//   shift:               a_k <- a_{k-1},  b_k <- b_{k+1},  a_0 <- -b_0
//   relaxation:          E2 on a and b, E1 on c (+ 1 - E1 on c_0); never precession
//
// Forward mode (dual numbers). Along M0, T1, T2 and B1 the tangent of an
// on-axis state stays on the axis, so a dual number's parts take the same
// steps. Along df it does not: at df = 0 the precession's derivative turns the
// axis states onto the other eigenspace (F real, Z imaginary),
//   dF+_k = p_k,  dF-_k = q_k,  dZ_k = i r_k,
// where the rotation's sine terms change sign, the shift's coupling is
// p_0 <- +q_0, and relaxation feeds it from the axis states:
//   p' = E2 (p - 2 pi t a),  q' = E2 (q + 2 pi t b),  r' = E1 r.
// Since the axis parts of a, b, c along df are zero, their df parts carry
// (p, q, r) (the helpers below); a sample reads F+_0 = p_0 + i a_0.
#pragma once

#include <type_traits>

#include "common/kokkos_compat.hpp"
#include "epg/operators.hpp"
#include "epg/ring_state.hpp"
#include "epg/state_block.hpp"
#include "epg/tissue_views.hpp"
#include "epg/transport.hpp"

namespace larmor::epg {

// Whether a number type carries the df direction (forward mode along every
// tissue direction), whose tangent leaves the axis.
template <class Real>
inline constexpr bool carries_df_v = tangent_count_v<Real> == tissue_direction::count;

template <class Real>
KOKKOS_FORCEINLINE_FUNCTION float& off_axis_part(Real& x) {
  return x.tangent[tissue_direction::df];
}
template <class Real>
KOKKOS_FORCEINLINE_FUNCTION float off_axis_part(const Real& x) {
  return x.tangent[tissue_direction::df];
}

// One order of one lane through a rotation at phase 0 (the real parts of the
// coefficients: u = s2, v = sin f, h = sin f / 2).
template <class Real, int Lanes>
KOKKOS_FORCEINLINE_FUNCTION void rotate_on_axis(const LaneRotations<Real, Lanes>& r, int l, Real& a,
                                                Real& b, Real& c) {
  Real na = r.c2[l] * a + r.u_re[l] * b - r.v_re[l] * c;
  Real nb = r.u_re[l] * a + r.c2[l] * b + r.v_re[l] * c;
  Real nc = r.ca[l] * c + r.h_re[l] * (a - b);
  if constexpr (carries_df_v<Real>) {  // the other eigenspace: the sine terms negated
    const float p = off_axis_part(a), q = off_axis_part(b), s = off_axis_part(c);
    off_axis_part(na) = r.c2[l].value * p + r.u_re[l].value * q + r.v_re[l].value * s;
    off_axis_part(nb) = r.u_re[l].value * p + r.c2[l].value * q - r.v_re[l].value * s;
    off_axis_part(nc) = r.ca[l].value * s - r.h_re[l].value * (p - q);
  }
  a = na;
  b = nb;
  c = nc;
}

// (A spoiled interval has e2 and rot_im zero.)
template <class Real>
KOKKOS_FORCEINLINE_FUNCTION void relax_on_axis(const Evolution<Real>& ev, bool order_zero, Real& a,
                                               Real& b, Real& c) {
  if constexpr (carries_df_v<Real>) {
    // ev.rot_im = E2 sin(2 pi df t): its df part is E2 2 pi t.
    const float turn = off_axis_part(ev.rot_im), e2 = ev.e2.value;
    const float p = e2 * off_axis_part(a) - turn * a.value;
    const float q = e2 * off_axis_part(b) + turn * b.value;
    a = ev.e2 * a;
    b = ev.e2 * b;
    off_axis_part(a) = p;
    off_axis_part(b) = q;
  } else {
    a = ev.e2 * a;
    b = ev.e2 * b;
  }
  c = ev.e1 * c + (order_zero ? ev.recovery : Real(0.0f));
}

// After a shift: F+_0 = conj(F-_0) is a_0 = -b_0 on the axis and p_0 = q_0
// off it.
template <class Real>
KOKKOS_FORCEINLINE_FUNCTION Real plus_zero_from_minus_zero(const Real& b0) {
  Real a0 = -b0;
  if constexpr (carries_df_v<Real>) off_axis_part(a0) = off_axis_part(b0);
  return a0;
}

// A sample's F+_0 = (p_0) + i (a_0): its real part holds the df part only.
template <class Real>
KOKKOS_FORCEINLINE_FUNCTION Real sample_re(const Real& a0) {
  Real x(0.0f);
  if constexpr (carries_df_v<Real>) off_axis_part(x) = off_axis_part(a0);
  return x;
}
template <class Real>
KOKKOS_FORCEINLINE_FUNCTION Real sample_im(const Real& a0) {
  Real x = a0;
  if constexpr (carries_df_v<Real>) off_axis_part(x) = 0.0f;
  return x;
}

// The device layout: thread t of a group holds orders [t OPT, t OPT + OPT) of
// every lane in registers (StateBlock's layout, half its registers).
template <class Real, int OrdersPerThread, int Lanes>
struct AxisStateBlock {
  static constexpr int opt = OrdersPerThread;
  static constexpr int lanes = Lanes;

  Real a[opt][lanes], b[opt][lanes], c[opt][lanes];
  int thread_in_group = 0;
  int first_order = 0;

  KOKKOS_INLINE_FUNCTION void reset(int thread) {
    thread_in_group = thread;
    first_order = thread * opt;
    LARMOR_UNROLL
    for (int j = 0; j < opt; ++j) {
      LARMOR_UNROLL
      for (int l = 0; l < lanes; ++l) {
        a[j][l] = b[j][l] = Real(0.0f);
        c[j][l] = Real((first_order + j) == 0 ? 1.0f : 0.0f);
      }
    }
  }

  // A carried state is never on the axis (the plan refuses one); written in
  // StateBlock's components for completeness.
  template <class View>
  KOKKOS_INLINE_FUNCTION void load(const View& in, const int (&voxel)[lanes],
                                   const bool (&active)[lanes], int orders) {
    LARMOR_UNROLL
    for (int j = 0; j < opt; ++j) {
      LARMOR_UNROLL
      for (int l = 0; l < lanes; ++l) {
        const int k = first_order + j;
        if (k >= orders || !active[l]) continue;
        a[j][l] = Real(in(voxel[l], 1, k));
        b[j][l] = Real(in(voxel[l], 3, k));
        c[j][l] = Real(in(voxel[l], 4, k));
      }
    }
  }
  template <class View>
  KOKKOS_INLINE_FUNCTION void store(const View& out, const int (&voxel)[lanes],
                                    const bool (&active)[lanes], int orders) const {
    LARMOR_UNROLL
    for (int j = 0; j < opt; ++j) {
      LARMOR_UNROLL
      for (int l = 0; l < lanes; ++l) {
        const int k = first_order + j;
        if (k >= orders || !active[l]) continue;
        const int v = voxel[l];
        out(v, 0, k) = out(v, 2, k) = out(v, 5, k) = 0.0f;
        out(v, 1, k) = value_of(a[j][l]);
        out(v, 3, k) = value_of(b[j][l]);
        out(v, 4, k) = value_of(c[j][l]);
      }
    }
  }

  KOKKOS_FORCEINLINE_FUNCTION Real fp0_re(int l) const { return sample_re(a[0][l]); }
  KOKKOS_FORCEINLINE_FUNCTION Real fp0_im(int l) const { return sample_im(a[0][l]); }

  KOKKOS_FORCEINLINE_FUNCTION int live_here(int live) const {
    const int n = live - first_order;
    return n < 0 ? 0 : (n > opt ? opt : n);
  }

  KOKKOS_INLINE_FUNCTION void rotate(int live, const LaneRotations<Real, lanes>& rotation) {
    const int n = live_here(live);
    LARMOR_UNROLL
    for (int j = 0; j < opt; ++j) {
      if (j < n) {
        LARMOR_UNROLL
        for (int l = 0; l < lanes; ++l) rotate_on_axis(rotation, l, a[j][l], b[j][l], c[j][l]);
      }
    }
  }

  // No precession on the axis (the plan refuses off-resonance); a spoiler
  // folds into the decay as in StateBlock.
  KOKKOS_INLINE_FUNCTION void evolve(int live, const Evolution<Real> (&ev)[lanes], bool,
                                     bool spoil) {
    const int n = live_here(live);
    Evolution<Real> applied[lanes];
    LARMOR_UNROLL
    for (int l = 0; l < lanes; ++l) {
      applied[l] = ev[l];
      if (spoil) applied[l].e2 = applied[l].rot_im = Real(0.0f);
    }
    LARMOR_UNROLL
    for (int j = 0; j < opt; ++j) {
      if (j < n) {
        const bool order_zero = (first_order + j) == 0;
        LARMOR_UNROLL
        for (int l = 0; l < lanes; ++l)
          relax_on_axis(applied[l], order_zero, a[j][l], b[j][l], c[j][l]);
      }
    }
  }

  // Diffusion's factors are real (flow, whose are not, leaves the axis).
  template <int Families, bool Complex>
  KOKKOS_INLINE_FUNCTION void transport(int live, LaneWalks<lanes> walk) {
    // Complex factors (flow) leave the axis: the simulator never takes the
    // path with flow, and the on-axis kernels compile no declared terms.
    if constexpr (Complex) return;
    const int n = live_here(live);
    LARMOR_UNROLL
    for (int j = 0; j < opt; ++j) {
      if (j < n) {
        LARMOR_UNROLL
        for (int l = 0; l < lanes; ++l) {
          Real unused(0.0f);
          if constexpr ((Families & transport_families::plus) != 0)
            walk.template apply<false>(l, a[j][l], unused);
          if constexpr ((Families & transport_families::minus) != 0)
            walk.template apply<false>(l, b[j][l], unused);
          if constexpr ((Families & transport_families::z) != 0)
            walk.template apply<false>(l, c[j][l], unused);
        }
        walk.template advance<false>();
      }
    }
  }

  KOKKOS_INLINE_FUNCTION void spoil() {
    LARMOR_UNROLL
    for (int j = 0; j < opt; ++j) {
      LARMOR_UNROLL
      for (int l = 0; l < lanes; ++l) a[j][l] = b[j][l] = Real(0.0f);
    }
  }

  // StateBlock::shift on the axis: the block edges go through the same
  // exchange (its imaginary slots unused), and F+_0 = conj(F-_0) becomes
  // a_0 = -b_0.
  template <class Member>
  KOKKOS_INLINE_FUNCTION void shift(const Member& team, EdgeExchange<Real, lanes>& x) {
    const int thread = thread_in_group;
    Real prev_a[lanes], next_b[lanes], unused_p[lanes], unused_m[lanes];
    LARMOR_UNROLL
    for (int l = 0; l < lanes; ++l) {
      prev_a[l] = a[opt - 1][l];
      next_b[l] = b[0][l];
      unused_p[l] = unused_m[l] = Real(0.0f);
    }
    x.trade(team, thread, prev_a, unused_p, next_b, unused_m);
    const bool has_next = thread + 1 < x.threads;
    LARMOR_UNROLL
    for (int l = 0; l < lanes; ++l) {
      LARMOR_UNROLL
      for (int j = opt - 1; j > 0; --j) a[j][l] = a[j - 1][l];
      LARMOR_UNROLL
      for (int j = 0; j < opt - 1; ++j) b[j][l] = b[j + 1][l];
      b[opt - 1][l] = has_next ? next_b[l] : Real(0.0f);
      a[0][l] = thread > 0 ? prev_a[l] : plus_zero_from_minus_zero(b[0][l]);
    }
  }
};

// The host layout: one thread holds every order of `Lanes` voxels in rings
// (RingStateBlock's layout: a shift moves two offsets).
template <class Real, int Orders, int Lanes>
struct AxisRingStateBlock {
  static constexpr int opt = Orders;
  static constexpr int lanes = Lanes;
  static constexpr int ring = RingStateBlock<Real, Orders, Lanes>::ring;
  static constexpr int mask = ring - 1;
  static constexpr int first_order = 0;

  Real a[ring][lanes], b[ring][lanes], c[opt][lanes];
  int plus_base = 0, minus_base = 0;

  KOKKOS_FORCEINLINE_FUNCTION int plus_slot(int k) const { return (plus_base + k) & mask; }
  KOKKOS_FORCEINLINE_FUNCTION int minus_slot(int k) const { return (minus_base + k) & mask; }

  KOKKOS_INLINE_FUNCTION void reset(int) {
    plus_base = minus_base = 0;
    for (int j = 0; j < ring; ++j)
      for (int l = 0; l < lanes; ++l) a[j][l] = b[j][l] = Real(0.0f);
    for (int j = 0; j < opt; ++j)
      for (int l = 0; l < lanes; ++l) c[j][l] = Real(j == 0 ? 1.0f : 0.0f);
  }

  template <class View>
  KOKKOS_INLINE_FUNCTION void load(const View& in, const int (&voxel)[lanes],
                                   const bool (&active)[lanes], int orders) {
    const int n = orders < opt ? orders : opt;
    for (int k = 0; k < n; ++k) {
      for (int l = 0; l < lanes; ++l) {
        if (!active[l]) continue;
        a[plus_slot(k)][l] = Real(in(voxel[l], 1, k));
        b[minus_slot(k)][l] = Real(in(voxel[l], 3, k));
        c[k][l] = Real(in(voxel[l], 4, k));
      }
    }
  }
  template <class View>
  KOKKOS_INLINE_FUNCTION void store(const View& out, const int (&voxel)[lanes],
                                    const bool (&active)[lanes], int orders) const {
    const int n = orders < opt ? orders : opt;
    for (int k = 0; k < n; ++k) {
      for (int l = 0; l < lanes; ++l) {
        if (!active[l]) continue;
        const int v = voxel[l];
        out(v, 0, k) = out(v, 2, k) = out(v, 5, k) = 0.0f;
        out(v, 1, k) = value_of(a[plus_slot(k)][l]);
        out(v, 3, k) = value_of(b[minus_slot(k)][l]);
        out(v, 4, k) = value_of(c[k][l]);
      }
    }
  }

  KOKKOS_FORCEINLINE_FUNCTION Real fp0_re(int l) const { return sample_re(a[plus_base][l]); }
  KOKKOS_FORCEINLINE_FUNCTION Real fp0_im(int l) const { return sample_im(a[plus_base][l]); }

  KOKKOS_INLINE_FUNCTION void rotate(int live, const LaneRotations<Real, lanes>& rotation) {
    const int n = live < opt ? live : opt;
    for (int k = 0; k < n; ++k) {
      const int p = plus_slot(k), m = minus_slot(k);
#pragma omp simd
      for (int l = 0; l < lanes; ++l) rotate_on_axis(rotation, l, a[p][l], b[m][l], c[k][l]);
    }
  }

  // A pulse and the relaxation of the interval after it, in one pass over
  // the orders: the relaxation scales the rotation's rows (E2 on a and b, E1
  // on c), then order zero recovers. The event loop calls it ahead of the
  // event's shifts and spoiler, which relaxation commutes with on the axis
  // (diagonal, the same factor for every order; `spoil` zeroes E2 as
  // evolve() does). Forward runs only: dual numbers keep the separate steps.
  KOKKOS_INLINE_FUNCTION void rotate_relaxed(int live, const LaneRotations<Real, lanes>& r,
                                             const Evolution<Real> (&ev)[lanes], bool spoil) {
    const int n = live < opt ? live : opt;
    if (n <= 0) return;  // as evolve()
    Real ac2[lanes], au[lanes], av[lanes], cca[lanes], ch[lanes], recovery[lanes];
    for (int l = 0; l < lanes; ++l) {
      const Real e2 = spoil ? Real(0.0f) : ev[l].e2;
      ac2[l] = e2 * r.c2[l];
      au[l] = e2 * r.u_re[l];
      av[l] = e2 * r.v_re[l];
      cca[l] = ev[l].e1 * r.ca[l];
      ch[l] = ev[l].e1 * r.h_re[l];
      recovery[l] = ev[l].recovery;
    }
    for (int k = 0; k < n; ++k) {
      const int p = plus_slot(k), m = minus_slot(k);
#pragma omp simd
      for (int l = 0; l < lanes; ++l) {
        const Real x = a[p][l], y = b[m][l], z = c[k][l];
        a[p][l] = ac2[l] * x + au[l] * y - av[l] * z;
        b[m][l] = au[l] * x + ac2[l] * y + av[l] * z;
        c[k][l] = cca[l] * z + ch[l] * (x - y);
      }
    }
#pragma omp simd
    for (int l = 0; l < lanes; ++l) c[0][l] += recovery[l];
  }

  // The factors go to lane arrays first and order zero's recovery is taken
  // out of the order loop: read from the lanes' Evolution structs inside it,
  // g++ left the loop scalar (perf annotate: strided vmulss).
  KOKKOS_INLINE_FUNCTION void evolve(int live, const Evolution<Real> (&ev)[lanes], bool,
                                     bool spoil) {
    const int n = live < opt ? live : opt;
    if (n <= 0) return;
    if constexpr (!std::is_same_v<Real, float>) {  // dual numbers: no SIMD lanes to keep
      for (int l = 0; l < lanes; ++l) {
        Evolution<Real> applied = ev[l];
        if (spoil) applied.e2 = applied.rot_im = Real(0.0f);
        for (int k = 0; k < n; ++k) {
          relax_on_axis(applied, k == 0, a[plus_slot(k)][l], b[minus_slot(k)][l], c[k][l]);
        }
      }
      return;
    }
    Real e1[lanes], e2[lanes], recovery[lanes];
    for (int l = 0; l < lanes; ++l) {
      e1[l] = ev[l].e1;
      e2[l] = spoil ? Real(0.0f) : ev[l].e2;
      recovery[l] = ev[l].recovery;
    }
#pragma omp simd
    for (int l = 0; l < lanes; ++l) {
      a[plus_slot(0)][l] = e2[l] * a[plus_slot(0)][l];
      b[minus_slot(0)][l] = e2[l] * b[minus_slot(0)][l];
      c[0][l] = e1[l] * c[0][l] + recovery[l];
    }
    for (int k = 1; k < n; ++k) {
      const int p = plus_slot(k), m = minus_slot(k);
#pragma omp simd
      for (int l = 0; l < lanes; ++l) {
        a[p][l] = e2[l] * a[p][l];
        b[m][l] = e2[l] * b[m][l];
        c[k][l] = e1[l] * c[k][l];
      }
    }
  }

  template <int Families, bool Complex>
  KOKKOS_INLINE_FUNCTION void transport(int live, LaneWalks<lanes> walk) {
    // Complex factors (flow) leave the axis: the simulator never takes the
    // path with flow, and the on-axis kernels compile no declared terms.
    if constexpr (Complex) return;
    const int n = live < opt ? live : opt;
    for (int k = 0; k < n; ++k) {
      const int p = plus_slot(k), m = minus_slot(k);
#pragma omp simd
      for (int l = 0; l < lanes; ++l) {
        Real unused(0.0f);
        if constexpr ((Families & transport_families::plus) != 0)
          walk.template apply<false>(l, a[p][l], unused);
        if constexpr ((Families & transport_families::minus) != 0)
          walk.template apply<false>(l, b[m][l], unused);
        if constexpr ((Families & transport_families::z) != 0)
          walk.template apply<false>(l, c[k][l], unused);
        walk.template advance_lane<false>(l);
      }
    }
  }

  KOKKOS_INLINE_FUNCTION void spoil() {
    for (int j = 0; j < ring; ++j)
      for (int l = 0; l < lanes; ++l) a[j][l] = b[j][l] = Real(0.0f);
  }

  template <class Member>
  KOKKOS_INLINE_FUNCTION void shift(const Member&, EdgeExchange<Real, lanes>&) {
    const int old_minus_zero = minus_base;
    plus_base = (plus_base - 1) & mask;
    minus_base = (minus_base + 1) & mask;
    for (int l = 0; l < lanes; ++l) {
      b[old_minus_zero][l] = Real(0.0f);
      a[plus_base][l] = plus_zero_from_minus_zero(b[minus_base][l]);
    }
  }
};

}  // namespace larmor::epg
