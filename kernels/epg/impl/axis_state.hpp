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
#include "epg/impl/operators.hpp"
#include "epg/impl/pending_interval.hpp"
#include "epg/impl/ring_offsets.hpp"
#include "epg/impl/state_block.hpp"
#include "epg/impl/transport.hpp"
#include "epg/tissue_views.hpp"

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
//
// Every order is rotated and relaxed at every event, live or not: the
// threads of a warp run in lockstep and the group's first thread always
// holds live orders, so skipping a thread's dead ones saves no time, while
// the per-order tests cost instructions (docs/performance.md, "Device
// kernels"). Dead orders are exactly zero and stay so; the run's truncation at
// `orders` (below the group's threads x OPT) is kept by `kept`, which clears
// F+ where a shift moves it past the last order.
template <class Real, int OrdersPerThread, int Lanes>
struct AxisStateBlock {
  static constexpr int opt = OrdersPerThread;
  static constexpr int lanes = Lanes;

  // Deferred shifts (PendingInterval) a pulse folds into its rotation, and a
  // sample reads past on the group's first thread (which holds b_1, b_2).
  static constexpr int pulse_reach = opt >= 2 ? 2 : 1;
  static constexpr int sample_reach = opt - 1 < 2 ? opt - 1 : 2;

  Real a[opt][lanes], b[opt][lanes], c[opt][lanes];
  // This thread's orders below the truncation (any integer: whole threads lie
  // past it). A count, not a factor per order: the factors took registers
  // through the whole event loop.
  int below_truncation = 0;
  int thread_in_group = 0;
  int first_order = 0;
  // The truncation falls on a block edge (the same on every thread): then
  // whole threads lie past it, and only the orders entering a block need
  // `kept` when a shift is folded into a rotation.
  bool clips_at_edges = true;

  KOKKOS_INLINE_FUNCTION void reset(int thread, int orders) {
    thread_in_group = thread;
    first_order = thread * opt;
    clips_at_edges = orders % opt == 0;
    below_truncation = orders - first_order;
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

  KOKKOS_INLINE_FUNCTION void rotate(int, const LaneRotations<Real, lanes>& rotation) {
    LARMOR_UNROLL
    for (int j = 0; j < opt; ++j) {
      LARMOR_UNROLL
      for (int l = 0; l < lanes; ++l) rotate_on_axis(rotation, l, a[j][l], b[j][l], c[j][l]);
    }
  }

  // The rotation after the pending relaxation (PendingInterval; float).
  KOKKOS_INLINE_FUNCTION void rotate_pending(int, const PendingRotation<lanes>& r) {
    static_assert(std::is_same_v<Real, float>, "deferred relaxation is for forward runs");
    LARMOR_UNROLL
    for (int j = 0; j < opt; ++j) {
      LARMOR_UNROLL
      for (int l = 0; l < lanes; ++l) r.apply(l, a[j][l], b[j][l], c[j][l]);
    }
    const float weight = first_order == 0 ? 1.0f : 0.0f;
    LARMOR_UNROLL
    for (int l = 0; l < lanes; ++l) r.recover(l, weight, a[0][l], b[0][l], c[0][l]);
  }

  // The rotation after `shifts` deferred shifts (at most pulse_reach) and the
  // pending relaxation: the shifts are folded into the rotation's inputs.
  template <class Member, class Exchange>
  KOKKOS_INLINE_FUNCTION void rotate_pending(int live, const PendingRotation<lanes>& r, int shifts,
                                             const Member& team, Exchange& x) {
    if (shifts == 0) {
      rotate_pending(live, r);
    } else if (pulse_reach >= 2 && shifts == 2) {
      if (clips_at_edges) {
        rotate_shifted<pulse_reach, false>(r, team, x);
      } else {
        rotate_shifted<pulse_reach, true>(r, team, x);
      }
    } else if (clips_at_edges) {
      rotate_shifted<1, false>(r, team, x);
    } else {
      rotate_shifted<1, true>(r, team, x);
    }
  }

  // S shifts, then the rotation, in one pass: order j's inputs are a_{j-S}
  // and b_{j+S}. The edges come from the neighbouring threads (S words per
  // family), and the first thread's lowest orders are the conjugates
  // a_j = -b_{S-j} the shifts create. `Interior`: the truncation falls inside
  // a block, so every order is `kept`, not only those entering one.
  template <int S, bool Interior, class Member, class Exchange>
  KOKKOS_INLINE_FUNCTION void rotate_shifted(const PendingRotation<lanes>& r, const Member& team,
                                             Exchange& x) {
    static_assert(std::is_same_v<Real, float> && S >= 1 && S <= opt, "S shifts within a block");
    const int thread = thread_in_group;
    Real up[S][lanes], down[S][lanes];
    LARMOR_UNROLL
    for (int w = 0; w < S; ++w) {
      LARMOR_UNROLL
      for (int l = 0; l < lanes; ++l) {
        up[w][l] = a[opt - S + w][l];
        down[w][l] = b[w][l];
      }
    }
    x.trade(team, thread, up, down);
    const bool first = thread == 0;
    const bool has_next = thread + 1 < x.threads;
    LARMOR_UNROLL
    for (int l = 0; l < lanes; ++l) {
      // b before the shifts, orders [first_order, first_order + opt + S).
      Real b_old[opt + S];
      LARMOR_UNROLL
      for (int k = 0; k < opt; ++k) b_old[k] = b[k][l];
      LARMOR_UNROLL
      for (int w = 0; w < S; ++w) b_old[opt + w] = has_next ? down[w][l] : Real(0.0f);
      Real a_in[opt];
      LARMOR_UNROLL
      for (int j = 0; j < opt; ++j) {
        if (j >= S) {
          a_in[j] = Interior ? kept(j, a[j - S][l]) : a[j - S][l];
        } else {
          a_in[j] = first ? -b_old[S - j] : kept(j, up[j][l]);
        }
      }
      LARMOR_UNROLL
      for (int j = 0; j < opt; ++j) {
        a[j][l] = a_in[j];
        b[j][l] = b_old[j + S];
        r.apply(l, a[j][l], b[j][l], c[j][l]);
      }
    }
    const float weight = first_order == 0 ? 1.0f : 0.0f;
    LARMOR_UNROLL
    for (int l = 0; l < lanes; ++l) r.recover(l, weight, a[0][l], b[0][l], c[0][l]);
  }

  // F+_0 after `shifts` deferred shifts (at most sample_reach; the group's
  // first thread).
  KOKKOS_FORCEINLINE_FUNCTION Real plus_zero_after(int l, int shifts) const {
    if (shifts == 0) return a[0][l];
    if constexpr (sample_reach >= 2) {
      if (shifts == 2) return -b[2][l];
    }
    return -b[sample_reach >= 1 ? 1 : 0][l];
  }

  template <class Member, class Exchange>
  KOKKOS_INLINE_FUNCTION void shift_times(const Member& team, Exchange& x, int shifts) {
    for (int s = 0; s < shifts; ++s) shift(team, x);
  }

  // The pending relaxation itself (before the state leaves the kernel).
  KOKKOS_INLINE_FUNCTION void relax_pending(const PendingFactors<lanes>& p) {
    LARMOR_UNROLL
    for (int j = 0; j < opt; ++j) {
      LARMOR_UNROLL
      for (int l = 0; l < lanes; ++l) {
        a[j][l] = p.e2[l] * a[j][l];
        b[j][l] = p.e2[l] * b[j][l];
        c[j][l] = p.e1[l] * c[j][l] + (first_order + j == 0 ? p.recovery[l] : 0.0f);
      }
    }
  }

  // No precession on the axis (the plan refuses off-resonance); a spoiler
  // folds into the decay as in StateBlock.
  KOKKOS_INLINE_FUNCTION void evolve(int, const Evolution<Real> (&ev)[lanes], bool, bool spoil,
                                     unsigned = ~0u) {
    Evolution<Real> applied[lanes];
    LARMOR_UNROLL
    for (int l = 0; l < lanes; ++l) {
      applied[l] = ev[l];
      if (spoil) applied[l].e2 = applied[l].rot_im = Real(0.0f);
    }
    LARMOR_UNROLL
    for (int j = 0; j < opt; ++j) {
      const bool order_zero = (first_order + j) == 0;
      LARMOR_UNROLL
      for (int l = 0; l < lanes; ++l)
        relax_on_axis(applied[l], order_zero, a[j][l], b[j][l], c[j][l]);
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

  // F+ arriving at this thread's order j: cleared past the truncation.
  KOKKOS_FORCEINLINE_FUNCTION Real kept(int j, const Real& x) const {
    return j < below_truncation ? x : Real(0.0f);
  }

  KOKKOS_FORCEINLINE_FUNCTION int live_here(int live) const {
    const int n = live - first_order;
    return n < 0 ? 0 : (n > opt ? opt : n);
  }

  KOKKOS_INLINE_FUNCTION void spoil() {
    LARMOR_UNROLL
    for (int j = 0; j < opt; ++j) {
      LARMOR_UNROLL
      for (int l = 0; l < lanes; ++l) a[j][l] = b[j][l] = Real(0.0f);
    }
  }

  // StateBlock::shift on the axis: the block edges go through the exchange
  // (one component per family), F+_0 = conj(F-_0) becomes a_0 = -b_0, and
  // F+ moved past the truncation is cleared (`kept`). Deferred shifts
  // (PendingInterval) take this path only for counts past a pulse's or a
  // sample's reach.
  template <class Member, class Exchange>
  KOKKOS_INLINE_FUNCTION void shift(const Member& team, Exchange& x) {
    const int thread = thread_in_group;
    Real prev_a[1][lanes], next_b[1][lanes];
    LARMOR_UNROLL
    for (int l = 0; l < lanes; ++l) {
      prev_a[0][l] = a[opt - 1][l];
      next_b[0][l] = b[0][l];
    }
    x.trade(team, thread, prev_a, next_b);
    const bool has_next = thread + 1 < x.threads;
    LARMOR_UNROLL
    for (int l = 0; l < lanes; ++l) {
      move_rows_up(a, l, [this](int j, const Real& x) { return kept(j, x); });
      move_rows_down(b, l, has_next ? next_b[0][l] : Real(0.0f));
      a[0][l] = thread > 0 ? kept(0, prev_a[0][l]) : plus_zero_from_minus_zero(b[0][l]);
    }
  }
};

// The host layout: one thread holds every order of `Lanes` voxels in rings
// (RingStateBlock's layout: a shift moves two offsets). Forward runs only:
// forward mode has a specialisation that stores the dual numbers' parts apart
// (axis_dual_state.hpp), so that its lane loops vectorise too.
template <class Real, int Orders, int Lanes>
struct AxisRingStateBlock : RingOffsets<Orders> {
  static_assert(std::is_same_v<Real, float>, "forward mode: axis_dual_state.hpp");
  static constexpr int opt = Orders;
  static constexpr int lanes = Lanes;
  using Offsets = RingOffsets<Orders>;
  using Offsets::plus_slot, Offsets::minus_slot, Offsets::each_order;
  using Offsets::ring, Offsets::plus_base, Offsets::minus_base;

  alignas(ring_row_alignment) Real a[ring][lanes];
  Real b[ring][lanes], c[opt][lanes];

  // (The rings hold `Orders` >= the run's orders; the live counts keep the
  // truncation.)
  KOKKOS_INLINE_FUNCTION void reset(int, int) {
    this->reset_offsets();
    for (int j = 0; j < ring; ++j)
      for (int l = 0; l < lanes; ++l) a[j][l] = b[j][l] = Real(0.0f);
    for (int j = 0; j < opt; ++j)
      for (int l = 0; l < lanes; ++l) c[j][l] = Real(j == 0 ? 1.0f : 0.0f);
  }

  template <class View>
  KOKKOS_INLINE_FUNCTION void load(const View& in, const int (&voxel)[lanes],
                                   const bool (&active)[lanes], int orders) {
    each_order(orders, [&](int k, int p, int m) {
      for (int l = 0; l < lanes; ++l) {
        if (!active[l]) continue;
        a[p][l] = Real(in(voxel[l], 1, k));
        b[m][l] = Real(in(voxel[l], 3, k));
        c[k][l] = Real(in(voxel[l], 4, k));
      }
    });
  }
  template <class View>
  KOKKOS_INLINE_FUNCTION void store(const View& out, const int (&voxel)[lanes],
                                    const bool (&active)[lanes], int orders) const {
    each_order(orders, [&](int k, int p, int m) {
      for (int l = 0; l < lanes; ++l) {
        if (!active[l]) continue;
        const int v = voxel[l];
        out(v, 0, k) = out(v, 2, k) = out(v, 5, k) = 0.0f;
        out(v, 1, k) = value_of(a[p][l]);
        out(v, 3, k) = value_of(b[m][l]);
        out(v, 4, k) = value_of(c[k][l]);
      }
    });
  }

  KOKKOS_FORCEINLINE_FUNCTION Real fp0_re(int l) const { return sample_re(a[plus_base][l]); }
  KOKKOS_FORCEINLINE_FUNCTION Real fp0_im(int l) const { return sample_im(a[plus_base][l]); }

  // The rotation after the pending relaxation (PendingInterval); a forward
  // run's only pass over the orders.
  KOKKOS_INLINE_FUNCTION void rotate_pending(int live, const PendingRotation<lanes>& r) {
    each_order(live, [&](int k, int p, int m) {
#pragma omp simd
      for (int l = 0; l < lanes; ++l) r.apply(l, a[p][l], b[m][l], c[k][l]);
    });
    const int p = plus_slot(0), m = minus_slot(0);
#pragma omp simd
    for (int l = 0; l < lanes; ++l) r.recover(l, 1.0f, a[p][l], b[m][l], c[0][l]);
  }

  KOKKOS_INLINE_FUNCTION void relax_pending(const PendingFactors<lanes>& pending) {
    for (int k = 0; k < opt; ++k) {
      const int p = plus_slot(k), m = minus_slot(k);
      for (int l = 0; l < lanes; ++l) {
        a[p][l] = pending.e2[l] * a[p][l];
        b[m][l] = pending.e2[l] * b[m][l];
        c[k][l] = pending.e1[l] * c[k][l] + (k == 0 ? pending.recovery[l] : 0.0f);
      }
    }
  }

  template <int Families, bool Complex>
  KOKKOS_INLINE_FUNCTION void transport(int live, LaneWalks<lanes> walk) {
    // Complex factors (flow) leave the axis: the simulator never takes the
    // path with flow, and the on-axis kernels compile no declared terms.
    if constexpr (Complex) return;
    each_order(live, [&](int k, int p, int m) {
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
    });
  }

  KOKKOS_INLINE_FUNCTION void spoil() {
    for (int j = 0; j < ring; ++j)
      for (int l = 0; l < lanes; ++l) a[j][l] = b[j][l] = Real(0.0f);
  }

  template <class Member>
  KOKKOS_INLINE_FUNCTION void shift(const Member&, EdgeExchange<Real, lanes>&) {
    const int old_minus_zero = this->advance();
    for (int l = 0; l < lanes; ++l) {
      b[old_minus_zero][l] = Real(0.0f);
      a[plus_base][l] = plus_zero_from_minus_zero(b[minus_base][l]);
    }
  }
};

}  // namespace larmor::epg
