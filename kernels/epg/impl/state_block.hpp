// The state layout: which thread of a team holds which orders of which voxels.
//
// A team walks one event stream for `Lanes` voxels. Its threads split the
// orders into contiguous blocks: thread t holds orders [t * OPT, t * OPT + OPT)
// of every lane, in registers on a GPU (all indices below are compile-time
// after unrolling) and in L1-resident arrays on the host, where the lane loop
// is the SIMD loop. A shift moves states across block edges, so only the edge
// values go through team scratch; everything else moves within a thread.
#pragma once

#include "common/kokkos_compat.hpp"
#include "epg/impl/dual_steps.hpp"
#include "epg/impl/operators.hpp"
#include "epg/impl/transport.hpp"
#include "epg/slice_profile.hpp"

namespace larmor::epg {

// Scratch holding the edge values a shift exchanges between threads: two
// buffers used alternately, so one barrier per shift suffices.
template <class Real, int Lanes>
struct EdgeExchange {
  static constexpr bool run_time = true;  // counts and scratch set per launch (team_exchange)
  Real* data = nullptr;                   // [2 buffers][4 components][team threads][Lanes]
  int team_threads = 1;
  int threads = 1;       // per voxel group: the threads that share one set of lanes
  bool shuffle = false;  // the team is one warp and groups are power-of-two sized
  int parity = 0;

  static KOKKOS_INLINE_FUNCTION std::size_t bytes(int team_threads) {
    return sizeof(Real) * 2 * 4 * std::size_t(team_threads) * Lanes;
  }
  KOKKOS_FORCEINLINE_FUNCTION Real& at(int buffer, int component, int rank, int lane) const {
    return data[((buffer * 4 + component) * team_threads + rank) * Lanes + lane];
  }

  // Each thread offers `Words` values per lane upwards (its last F+: re and
  // im, or one real word on the axis) and `Words` downwards (its first F-),
  // and receives those of its group's previous and next threads. Values from
  // beyond the group's first or last thread are left unspecified; the caller
  // ignores them. A one-warp team trades through shuffles (no barrier, no
  // scratch); larger teams through the double-buffered scratch.
  template <class Member, int Words>
  KOKKOS_INLINE_FUNCTION void trade(const Member& team, int thread, Real (&up)[Words][Lanes],
                                    Real (&down)[Words][Lanes]) {
    static_assert(Words == 1 || Words == 2, "the scratch holds two words each way");
    if (threads == 1) return;
#if defined(__CUDA_ARCH__)
    if (shuffle) {
      // Kokkos lays a CUDA team out along threadIdx.y with vector length 1, so
      // the team rank is the lane within the warp; `threads`-wide segments
      // keep groups apart.
      const unsigned mask = team_threads == 32 ? 0xffffffffu : ((1u << team_threads) - 1u);
      LARMOR_UNROLL
      for (int l = 0; l < Lanes; ++l) {
        LARMOR_UNROLL
        for (int w = 0; w < Words; ++w) up[w][l] = shuffle_words<true>(mask, up[w][l], threads);
        LARMOR_UNROLL
        for (int w = 0; w < Words; ++w) {
          down[w][l] = shuffle_words<false>(mask, down[w][l], threads);
        }
      }
      return;
    }
#endif
    const int rank = team.team_rank();
    const int buf = parity;
    parity ^= 1;
    LARMOR_UNROLL
    for (int l = 0; l < Lanes; ++l) {
      LARMOR_UNROLL
      for (int w = 0; w < Words; ++w) {
        at(buf, w, rank, l) = up[w][l];
        at(buf, 2 + w, rank, l) = down[w][l];
      }
    }
    team.team_barrier();
    LARMOR_UNROLL
    for (int l = 0; l < Lanes; ++l) {
      LARMOR_UNROLL
      for (int w = 0; w < Words; ++w) {
        if (thread > 0) up[w][l] = at(buf, w, rank - 1, l);
        if (thread + 1 < threads) down[w][l] = at(buf, 2 + w, rank + 1, l);
      }
    }
  }

  // Sums each lane's `Words` values over the group's threads into its first
  // thread (the others keep their own), through the trade's scratch: one
  // barrier, the buffers alternating as the trade's do.
  template <class Member, int Words>
  KOKKOS_INLINE_FUNCTION void sum_to_first(const Member& team, int thread,
                                           Real (&values)[Words][Lanes]) {
    static_assert(Words <= 4, "the scratch holds four words per thread");
    if (threads == 1) return;
    const int rank = team.team_rank();
    const int buf = parity;
    parity ^= 1;
    for (int l = 0; l < Lanes; ++l) {
      for (int w = 0; w < Words; ++w) at(buf, w, rank, l) = values[w][l];
    }
    team.team_barrier();
    if (thread != 0) return;
    for (int t = 1; t < threads; ++t) {
      for (int l = 0; l < Lanes; ++l) {
        for (int w = 0; w < Words; ++w) values[w][l] += at(buf, w, rank + t, l);
      }
    }
  }

#if defined(__CUDA_ARCH__)
  // Shuffles any number type (float or a dual number) word by word: up takes
  // the value of the lane below, down that of the lane above.
  template <bool Up>
  static __device__ Real shuffle_words(unsigned mask, Real value, int width) {
    static_assert(sizeof(Real) % sizeof(int) == 0, "shuffled types are whole 32-bit words");
    int words[sizeof(Real) / sizeof(int)];
    memcpy(words, &value, sizeof(Real));
    for (int w = 0; w < int(sizeof(Real) / sizeof(int)); ++w) {
      words[w] = Up ? __shfl_up_sync(mask, words[w], 1, width)
                    : __shfl_down_sync(mask, words[w], 1, width);
    }
    memcpy(&value, words, sizeof(Real));
    return value;
  }
#endif
};

// EdgeExchange's shuffles for a team that is one full warp of groups of
// `Threads` threads, all fixed at compile time. The run-time exchange keeps
// its thread counts and shuffle switch in the kernel's launch constants,
// which ptxas reloads inside the event loop rather than hold in registers
// (docs/performance.md, "Device kernels"); here the segment width and mask
// are immediates. Device backends only: host teams are one thread.
template <class Real, int Lanes, int Threads>
struct WarpExchange {
  static_assert(Threads >= 1 && Threads <= 32 && (Threads & (Threads - 1)) == 0,
                "groups tile the warp");
  static constexpr int threads = Threads;
  static constexpr bool run_time = false;

  static KOKKOS_INLINE_FUNCTION std::size_t bytes(int) { return 0; }

  template <class Member, int Words>
  KOKKOS_FORCEINLINE_FUNCTION void trade(const Member&, int, Real (&up)[Words][Lanes],
                                         Real (&down)[Words][Lanes]) const {
#if defined(__CUDA_ARCH__)
    if constexpr (Threads > 1) {
      LARMOR_UNROLL
      for (int l = 0; l < Lanes; ++l) {
        LARMOR_UNROLL
        for (int w = 0; w < Words; ++w) {
          up[w][l] = EdgeExchange<Real, Lanes>::template shuffle_words<true>(0xffffffffu, up[w][l],
                                                                             Threads);
        }
        LARMOR_UNROLL
        for (int w = 0; w < Words; ++w) {
          down[w][l] = EdgeExchange<Real, Lanes>::template shuffle_words<false>(
              0xffffffffu, down[w][l], Threads);
        }
      }
    }
#else
    // Never launched on a host backend (forward_impl.hpp chooses it only for
    // device teams); compiled there as the CUDA build's host pass.
    (void)up;
    (void)down;
#endif
  }
};

// A kernel's exchange for its team: an EdgeExchange takes the launch's
// counts and its buffers from the team's scratch; a WarpExchange has its
// counts compiled in.
template <class Exchange, class Member>
KOKKOS_INLINE_FUNCTION Exchange team_exchange(const Member& team, int team_threads,
                                              int group_threads, bool shuffle) {
  Exchange x;
  if constexpr (Exchange::run_time) {
    x.team_threads = team_threads;
    x.threads = group_threads;
    x.shuffle = shuffle;
    x.data =
        static_cast<decltype(x.data)>(team.team_shmem().get_shmem(Exchange::bytes(team_threads)));
  } else {
    (void)team, (void)team_threads, (void)group_threads, (void)shuffle;
  }
  return x;
}

// One pulse's rotation coefficients for every lane, stored lane-contiguous so
// that the host's lane loop loads them as vectors.
template <class Real, int Lanes>
struct LaneRotations {
  Real c2[Lanes], ca[Lanes], u_re[Lanes], u_im[Lanes], v_re[Lanes], v_im[Lanes], h_re[Lanes],
      h_im[Lanes];
  // Forward mode: the directions of the coefficients' tangents (dual_steps.hpp).
  unsigned directions = ~0u;

  KOKKOS_FORCEINLINE_FUNCTION void set(int l, const RotationCoefficients<Real>& r) {
    c2[l] = r.c2;
    ca[l] = r.ca;
    u_re[l] = r.u_re;
    u_im[l] = r.u_im;
    v_re[l] = r.v_re;
    v_im[l] = r.v_im;
    h_re[l] = r.h_re;
    h_im[l] = r.h_im;
  }
  KOKKOS_FORCEINLINE_FUNCTION RotationCoefficients<Real> get(int l) const {
    return {c2[l], ca[l], u_re[l], u_im[l], v_re[l], v_im[l], h_re[l], h_im[l]};
  }
};

// A pulse's rotation after the pending free evolution (pending_interval.hpp)
// on every live order of a complex block (StateBlock, RingStateBlock).
// `precess` is the team's, so the branch is uniform.
template <class Block, class Pending>
KOKKOS_FORCEINLINE_FUNCTION void rotate_live_orders_pending(Block& block, int live,
                                                            const Pending& r, bool precess) {
  with_precession(precess, [&](auto precess_flag) {
    block.for_each_order(live, [&](int, int l, auto& fp_re, auto& fp_im, auto& fm_re, auto& fm_im,
                                   auto& z_re, auto& z_im) {
      r.template apply<decltype(precess_flag)::value>(l, fp_re, fp_im, fm_re, fm_im, z_re, z_im);
    });
  });
}

// A shift within one thread's block of one family's rows, for lane l: F+
// rows move up an order (`keep(j, value)` is what row j keeps of the value
// arriving from below; row 0 is the caller's), F- rows down, the last taking
// `from_above` (the next thread's first, or zero).
template <class Real, int Opt, int Lanes, class Keep>
KOKKOS_FORCEINLINE_FUNCTION void move_rows_up(Real (&rows)[Opt][Lanes], int l, const Keep& keep) {
  LARMOR_UNROLL
  for (int j = Opt - 1; j > 0; --j) rows[j][l] = keep(j, rows[j - 1][l]);
}
template <class Real, int Opt, int Lanes>
KOKKOS_FORCEINLINE_FUNCTION void move_rows_down(Real (&rows)[Opt][Lanes], int l,
                                                const Real& from_above) {
  LARMOR_UNROLL
  for (int j = 0; j < Opt - 1; ++j) rows[j][l] = rows[j + 1][l];
  rows[Opt - 1][l] = from_above;
}

// Whatever arrives (the complex blocks keep every order a thread holds).
struct KeepAll {
  template <class Real>
  KOKKOS_FORCEINLINE_FUNCTION const Real& operator()(int, const Real& x) const {
    return x;
  }
};

template <class Real, int OrdersPerThread, int Lanes>
struct StateBlock {
  using real_type = Real;
  static constexpr int opt = OrdersPerThread;
  static constexpr int lanes = Lanes;

  Real fp_re[opt][lanes], fp_im[opt][lanes];
  Real fm_re[opt][lanes], fm_im[opt][lanes];
  Real z_re[opt][lanes], z_im[opt][lanes];
  int thread_in_group = 0;
  int first_order = 0;  // of this thread's block
  // Forward mode: the directions the tangents may be nonzero along
  // (dual_steps.hpp); reset and loaded states have zero tangents.
  unsigned carried = 0;

  KOKKOS_INLINE_FUNCTION void reset(int thread) {
    thread_in_group = thread;
    first_order = thread * opt;
    carried = 0;
    LARMOR_UNROLL
    for (int j = 0; j < opt; ++j) {
      LARMOR_UNROLL
      for (int l = 0; l < lanes; ++l) {
        fp_re[j][l] = fp_im[j][l] = fm_re[j][l] = fm_im[j][l] = Real(0.0f);
        z_re[j][l] = Real((first_order + j) == 0 ? 1.0f : 0.0f);
        z_im[j][l] = Real(0.0f);
      }
    }
  }

  // The state of each active lane's voxel from / to [voxel][component][order]
  // (components F+ re, im, F- re, im, Z re, im): a steady-state iteration
  // carries it from one period to the next.
  template <class View>
  KOKKOS_INLINE_FUNCTION void load(const View& in, const int (&voxel)[lanes],
                                   const bool (&active)[lanes], int orders) {
    LARMOR_UNROLL
    for (int j = 0; j < opt; ++j) {
      const int k = first_order + j;
      LARMOR_UNROLL
      for (int l = 0; l < lanes; ++l) {
        if (k >= orders || !active[l]) continue;
        const int v = voxel[l];
        fp_re[j][l] = Real(in(v, 0, k));
        fp_im[j][l] = Real(in(v, 1, k));
        fm_re[j][l] = Real(in(v, 2, k));
        fm_im[j][l] = Real(in(v, 3, k));
        z_re[j][l] = Real(in(v, 4, k));
        z_im[j][l] = Real(in(v, 5, k));
      }
    }
  }
  template <class View>
  KOKKOS_INLINE_FUNCTION void store(const View& out, const int (&voxel)[lanes],
                                    const bool (&active)[lanes], int orders) const {
    LARMOR_UNROLL
    for (int j = 0; j < opt; ++j) {
      const int k = first_order + j;
      LARMOR_UNROLL
      for (int l = 0; l < lanes; ++l) {
        if (k >= orders || !active[l]) continue;
        const int v = voxel[l];
        out(v, 0, k) = value_of(fp_re[j][l]);
        out(v, 1, k) = value_of(fp_im[j][l]);
        out(v, 2, k) = value_of(fm_re[j][l]);
        out(v, 3, k) = value_of(fm_im[j][l]);
        out(v, 4, k) = value_of(z_re[j][l]);
        out(v, 5, k) = value_of(z_im[j][l]);
      }
    }
  }

  // F+_0 of lane l (valid on the thread holding order 0).
  KOKKOS_FORCEINLINE_FUNCTION const Real& fp0_re(int l) const { return fp_re[0][l]; }
  KOKKOS_FORCEINLINE_FUNCTION const Real& fp0_im(int l) const { return fp_im[0][l]; }

  // Number of this thread's orders below `live`.
  KOKKOS_FORCEINLINE_FUNCTION int live_here(int live) const {
    const int n = live - first_order;
    return n < 0 ? 0 : (n > opt ? opt : n);
  }

  // f(order, lane, fp_re, fp_im, fm_re, fm_im, z_re, z_im) on every live order
  // of this thread's block (dual_steps.hpp).
  template <class F>
  KOKKOS_FORCEINLINE_FUNCTION void for_each_order(int live, const F& f) {
    const int n = live_here(live);
    LARMOR_UNROLL
    for (int j = 0; j < opt; ++j) {
      if (j < n) {
        LARMOR_UNROLL
        for (int l = 0; l < lanes; ++l) {
          f(first_order + j, l, fp_re[j][l], fp_im[j][l], fm_re[j][l], fm_im[j][l], z_re[j][l],
            z_im[j][l]);
        }
      }
    }
  }

  KOKKOS_INLINE_FUNCTION void rotate(int live, const LaneRotations<Real, lanes>& rotation) {
    if constexpr (dual_steps::applies_v<Real>) {
      dual_steps::rotate(*this, live, rotation);
      return;
    }
    const int n = live_here(live);
    LARMOR_UNROLL
    for (int j = 0; j < opt; ++j) {
      if (j < n) {
        LARMOR_UNROLL
        for (int l = 0; l < lanes; ++l) {
          epg::rotate(rotation.get(l), fp_re[j][l], fp_im[j][l], fm_re[j][l], fm_im[j][l],
                      z_re[j][l], z_im[j][l]);
        }
      }
    }
  }

  // The rotation after the pending free evolution (PendingComplexRotation;
  // float); the recovery's image on order 0, weighted so that device threads
  // stay uniform.
  template <class Pending>
  KOKKOS_INLINE_FUNCTION void rotate_pending(int live, const Pending& r, bool precess) {
    rotate_live_orders_pending(*this, live, r, precess);
    const float weight = first_order == 0 ? 1.0f : 0.0f;
    LARMOR_UNROLL
    for (int l = 0; l < lanes; ++l) {
      r.recover(l, weight, fp_re[0][l], fp_im[0][l], fm_re[0][l], fm_im[0][l], z_re[0][l]);
    }
  }

  // A slice-selective pulse: each lane's general rotation (slice_profile.hpp).
  KOKKOS_INLINE_FUNCTION void rotate_general(int live,
                                             const GeneralRotation<Real> (&rotation)[lanes]) {
    carried = ~0u;  // dual products: whatever directions its coefficients carry
    const int n = live_here(live);
    for (int j = 0; j < opt; ++j) {
      if (j < n) {
        for (int l = 0; l < lanes; ++l) {
          epg::rotate_general(rotation[l].r, rotation[l].c2_im, fp_re[j][l], fp_im[j][l],
                              fm_re[j][l], fm_im[j][l], z_re[j][l], z_im[j][l]);
        }
      }
    }
  }

  // `precess` and `spoil` are the same on every thread of a team: the branch
  // is uniform and taken outside the order and lane loops. A spoiler just
  // before the interval zeroes the transverse states; folded into the decay
  // factor it costs nothing per order.
  // `directions`: those of the factors' tangents in forward mode (dual_steps.hpp).
  KOKKOS_INLINE_FUNCTION void evolve(int live, const Evolution<Real> (&ev)[lanes], bool precess,
                                     bool spoil, unsigned directions = ~0u) {
    with_precession(precess, [&](auto precess_flag) {
      this->template evolve_orders<decltype(precess_flag)::value>(live, ev, spoil, directions);
    });
  }

  template <bool Precess>
  KOKKOS_FORCEINLINE_FUNCTION void evolve_orders(int live, const Evolution<Real> (&ev)[lanes],
                                                 bool spoil, unsigned directions) {
    Evolution<Real> applied[lanes];
    LARMOR_UNROLL
    for (int l = 0; l < lanes; ++l) applied[l] = spoiled_if(ev[l], spoil);
    if constexpr (dual_steps::applies_v<Real>) {
      dual_steps::evolve<Precess>(*this, live, applied, directions);
      return;
    }
    const int n = live_here(live);
    LARMOR_UNROLL
    for (int j = 0; j < opt; ++j) {
      if (j < n) {
        const bool order_zero = (first_order + j) == 0;
        LARMOR_UNROLL
        for (int l = 0; l < lanes; ++l) {
          if constexpr (Precess) {
            evolve_transverse(applied[l], fp_re[j][l], fp_im[j][l], fm_re[j][l], fm_im[j][l]);
          } else {
            decay_transverse(applied[l], fp_re[j][l], fp_im[j][l], fm_re[j][l], fm_im[j][l]);
          }
          evolve_longitudinal(applied[l], order_zero, z_re[j][l], z_im[j][l]);
        }
      }
    }
  }

  // Diffusion and flow (transport.hpp): a walk from this thread's first
  // order applied to the families in `Families` (transport_families); real
  // factors unless Complex (flow declared).
  template <int Families, bool Complex>
  KOKKOS_INLINE_FUNCTION void transport(int live, LaneWalks<lanes> walk) {
    const int n = live_here(live);
    LARMOR_UNROLL
    for (int j = 0; j < opt; ++j) {
      if (j < n) {
        LARMOR_UNROLL
        for (int l = 0; l < lanes; ++l) {
          if constexpr ((Families & transport_families::plus) != 0)
            walk.template apply<Complex>(l, fp_re[j][l], fp_im[j][l]);
          if constexpr ((Families & transport_families::minus) != 0)
            walk.template apply<Complex>(l, fm_re[j][l], fm_im[j][l]);
          if constexpr ((Families & transport_families::z) != 0)
            walk.template apply<Complex>(l, z_re[j][l], z_im[j][l]);
        }
        walk.template advance<Complex>();
      }
    }
  }

  KOKKOS_INLINE_FUNCTION void spoil() {
    LARMOR_UNROLL
    for (int j = 0; j < opt; ++j) {
      LARMOR_UNROLL
      for (int l = 0; l < lanes; ++l) {
        fp_re[j][l] = fp_im[j][l] = fm_re[j][l] = fm_im[j][l] = Real(0.0f);
      }
    }
  }

  // Dephase by one order: F+_k <- F+_{k-1}, F-_k <- F-_{k+1}, F-_{K-1} <- 0
  // (it came from beyond the last order), then F+_0 <- conj(F-_0).
  //
  // A block may extend past the run's last order K - 1 (K not a multiple of
  // the block size). Those slots need no clearing: the live count never
  // exceeds K, so they are never rotated or evolved; their F- and Z stay zero
  // (F- only arrives from higher slots) and the F+ pushed into them only moves
  // further up and never flows back.
  template <class Member, class Exchange>
  KOKKOS_INLINE_FUNCTION void shift(const Member& team, Exchange& x) {
    const int thread = thread_in_group;
    Real prev_fp[2][lanes], next_fm[2][lanes];  // re, im
    LARMOR_UNROLL
    for (int l = 0; l < lanes; ++l) {
      prev_fp[0][l] = fp_re[opt - 1][l];
      prev_fp[1][l] = fp_im[opt - 1][l];
      next_fm[0][l] = fm_re[0][l];
      next_fm[1][l] = fm_im[0][l];
    }
    x.trade(team, thread, prev_fp, next_fm);
    const bool has_next = thread + 1 < x.threads;
    LARMOR_UNROLL
    for (int l = 0; l < lanes; ++l) {
      move_rows_up(fp_re, l, KeepAll{});
      move_rows_up(fp_im, l, KeepAll{});
      move_rows_down(fm_re, l, has_next ? next_fm[0][l] : Real(0.0f));
      move_rows_down(fm_im, l, has_next ? next_fm[1][l] : Real(0.0f));
      if (thread > 0) {
        fp_re[0][l] = prev_fp[0][l];
        fp_im[0][l] = prev_fp[1][l];
      } else {
        fp_re[0][l] = fm_re[0][l];
        fp_im[0][l] = -fm_im[0][l];
      }
    }
  }
};

}  // namespace larmor::epg
