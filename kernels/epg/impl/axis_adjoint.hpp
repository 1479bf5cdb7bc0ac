// The adjoint sweep on the axis states (the real-subspace path's reverse
// mode, at float): the layout, checkpoints, replays, scratch stretch and team
// sums of the grouped kernel (adjoint_grouped.hpp), with each order three
// real numbers instead of six.
//
// The forward state stays on the axis, x = (a, b, c) with F+ = i a, F- = i b,
// Z = c (axis_state.hpp). The adjoint does not: a complex cotangent seeds it
// on the axis and on the other eigenspace of the rewrite, y = (p, q, r) with
// F+ = p, F- = q, Z = i r. The two are orthogonal under the loss's pairing
// Re <l, x> (each becomes the plain dot product of its coordinates), and the
// pulses at phase 0, the shift and relaxation keep each one: so the adjoint is
// two real states, l (on the axis) and m (off it), each taken back through the
// transpose of its channel's steps. Off the axis a rotation's sine terms
// change sign and the shift's coupling is p_0 <- +q_0 (axis_state.hpp).
//
// What pairs with what. The derivative of a step along the flip stays on the
// axis (the rotation generator N about the pulse's axis keeps it:
// N (a, b, c) = (-c, c, (a - b) / 2)), so flip, B1, T1, T2, M0 and duration
// need l only. The phase generator G (F+ -> i F+, F- -> -i F-) takes the axis
// onto the other eigenspace, G (a, b, c) = (p, q, r) = (-a, b, 0), so the
// derivatives along a pulse's or sample's phase and along df (at df = 0, the
// path's condition) pair m with G x. These are adjoint_impl.hpp's pairings
// written in the two channels' coordinates.
//
// Lanes. A device thread holds one voxel (L = 1; its group's threads split the
// orders). A host thread holds every order of L voxels, each order's lanes
// side by side, so that the per-order steps run as SIMD loops over the lanes,
// as the forward host blocks do (axis_state.hpp); LaunchOptions::real_scalar runs
// L = 1 there too, for comparison.
#pragma once

#include <cstddef>
#include <cstring>

#include "epg/impl/adjoint_block_moves.hpp"
#include "epg/impl/adjoint_impl.hpp"
#include "epg/impl/axis_adjoint_lanes.hpp"
#include "epg/impl/state_block.hpp"

namespace larmor::epg {

template <class ExecSpace, int OPT, int L = 1>
struct AxisAdjointKernel
    : ReverseKernelBase<typename ExecSpace::memory_space, Kokkos::LayoutRight> {
  using Base = ReverseKernelBase<typename ExecSpace::memory_space, Kokkos::LayoutRight>;
  static_assert(OPT >= 2, "the transpose of a shift needs orders 0 and 1 on one thread");
  static constexpr bool host = kx::is_host_space_v<ExecSpace>;
  static_assert(L == 1 || host, "a device thread holds one voxel's orders");
  LARMOR_REVERSE_KERNEL_MEMBERS(Base);
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename policy::member_type;
  using Channel = axis_adjoint_detail::Channel<OPT, L>;
  using Rotations = axis_adjoint_detail::LaneAxisRotations<L>;
  using Relaxations = axis_adjoint_detail::LaneRelaxations<L>;
  using Coefficients = axis_adjoint_detail::LaneCoefficients<L, host>;
  using Exchange = EdgeExchange<float, L>;
  using Tissue = adjoint_detail::VoxelTissue<float>;
  static constexpr int components = 3;
  static constexpr int parts = 1;
  using launch_bounds = Kokkos::LaunchBounds<>;
  static constexpr int lanes = L;

  // `f(j, l)` for the live orders [0, here) of a thread's block and each
  // lane. Device threads unroll over the whole block with a guard (their
  // blocks are registers, which need compile-time indices); a host thread
  // holds every order and loops to `here`, vectorising over the lanes, or
  // over the orders when it has one lane (a guarded loop over the block g++
  // left scalar). `f` must not carry anything from one order to the next.
  template <class F>
  static KOKKOS_FORCEINLINE_FUNCTION void for_live(int here, F&& f) {
    if constexpr (host && L == 1) {
#pragma omp simd
      for (int j = 0; j < here; ++j) f(j, 0);
    } else {
      adjoint_detail::BlockMoves<float, OPT, L, host>::for_live(here, f);
    }
  }

  // As for_live, with three sums per lane that `f(j, l, x, y, z)` adds to
  // (declared as reductions where the loop runs over the orders).
  template <class F>
  static KOKKOS_FORCEINLINE_FUNCTION void sum_live(int here, F&& f, float (&x)[L], float (&y)[L],
                                                   float (&z)[L]) {
    if constexpr (host && L == 1) {
      float sx = 0.0f, sy = 0.0f, sz = 0.0f;
#pragma omp simd reduction(+ : sx, sy, sz)
      for (int j = 0; j < here; ++j) f(j, 0, sx, sy, sz);
      x[0] += sx;
      y[0] += sy;
      z[0] += sz;
    } else if constexpr (host) {
      for (int j = 0; j < here; ++j) {
#pragma omp simd
        for (int l = 0; l < L; ++l) f(j, l, x[l], y[l], z[l]);
      }
    } else {
      LARMOR_UNROLL
      for (int j = 0; j < OPT; ++j) {
        if (j < here) {
          LARMOR_UNROLL
          for (int l = 0; l < L; ++l) f(j, l, x[l], y[l], z[l]);
        }
      }
    }
  }

  int groups = 1;         // lane blocks per team
  int group_threads = 1;  // threads per lane block (a power of two dividing a warp)

  // A device team may keep the stretch in its scratch, as the grouped
  // kernel does (adjoint_grouped.hpp; adjoint_dispatch.hpp decides).
  static constexpr bool scratch_stretch = !host;
  static constexpr int slot_floats = components * OPT * L;
  bool stretch_in_scratch = false;
  static std::size_t stretch_scratch_bytes(int slots, int team_threads) {
    return sizeof(float) * std::size_t(slots) * slot_floats * std::size_t(team_threads);
  }

  WorkerRows<ExecSpace> workers;  // a host thread's store row (a device block's is `block`)
  static constexpr bool stores_per_worker = WorkerRows<ExecSpace>::enabled;

  // Where this thread's block sits in its group, and the group's voxels:
  // lane l holds voxel first_voxel + l.
  struct Place {
    int thread = 0, first_order = 0;
    bool has_next = false;
    int block = 0, first_voxel = 0;
    int store_row = 0;          // a host thread's own row
    bool block_active = false;  // some lane holds a voxel
    bool active[L];
    Tissue tissue[L];
    bool writes_sums = false;  // the team's first thread adds the sequence sums
    float* scratch = nullptr;  // this thread's first stretch value in team scratch, if kept there
    int stride = 0;            // the team's threads

    KOKKOS_FORCEINLINE_FUNCTION int live_here(int live) const {
      const int n = live - first_order;
      return n < 0 ? 0 : (n > OPT ? OPT : n);
    }
  };

  // A host thread's block is whole rows of the store: three row copies,
  // which g++ does with vector moves (its element loop stayed scalar and
  // was a fifth of the host sweep's time), of the first `orders` orders: a
  // stretch row holds those an event reads (its live orders and the one
  // above, which a shift moves down), a checkpoint row all (a replay from it
  // runs events whose live orders grow). A device thread saves its whole
  // block, or nothing where every order it holds is above those.
  KOKKOS_INLINE_FUNCTION void save(const Store& store, int slot, const Place& at, const Channel& s,
                                   int orders = OPT) const {
    if constexpr (host) {
      const std::size_t bytes = sizeof(float) * L * std::size_t(orders);
      std::memcpy(&store(at.store_row, slot, 0, 0), s.a, bytes);
      std::memcpy(&store(at.store_row, slot, 1, 0), s.b, bytes);
      std::memcpy(&store(at.store_row, slot, 2, 0), s.c, bytes);
    } else {
      if (orders == 0) return;
      LARMOR_UNROLL
      for (int j = 0; j < OPT; ++j) {
        LARMOR_UNROLL
        for (int l = 0; l < L; ++l) {
          const int k = (at.first_order + j) * L + l;
          store(at.block, slot, 0, k) = s.a[j][l];
          store(at.block, slot, 1, k) = s.b[j][l];
          store(at.block, slot, 2, k) = s.c[j][l];
        }
      }
    }
  }
  KOKKOS_INLINE_FUNCTION void load(const Store& store, int slot, const Place& at, Channel& s,
                                   int orders = OPT) const {
    if constexpr (host) {
      const std::size_t bytes = sizeof(float) * L * std::size_t(orders);
      std::memcpy(s.a, &store(at.store_row, slot, 0, 0), bytes);
      std::memcpy(s.b, &store(at.store_row, slot, 1, 0), bytes);
      std::memcpy(s.c, &store(at.store_row, slot, 2, 0), bytes);
    } else {
      if (orders == 0) return;
      LARMOR_UNROLL
      for (int j = 0; j < OPT; ++j) {
        LARMOR_UNROLL
        for (int l = 0; l < L; ++l) {
          const int k = (at.first_order + j) * L + l;
          s.a[j][l] = store(at.block, slot, 0, k);
          s.b[j][l] = store(at.block, slot, 1, k);
          s.c[j][l] = store(at.block, slot, 2, k);
        }
      }
    }
  }

  // A stretch slot, in team scratch (Channel::for_column) or in the global
  // store.
  KOKKOS_INLINE_FUNCTION void save_stretch(int slot, const Place& at, Channel& s,
                                           int orders) const {
    if constexpr (scratch_stretch) {
      if (at.scratch != nullptr) {
        float* kept = at.scratch + slot * slot_floats * at.stride;
        if (orders > 0)
          s.for_column(at.stride, [&](int i, float& v) LARMOR_INLINE_LAMBDA { kept[i] = v; });
        return;
      }
    }
    save(stretch, slot, at, s, orders);
  }
  KOKKOS_INLINE_FUNCTION void load_stretch(int slot, const Place& at, Channel& s,
                                           int orders) const {
    if constexpr (scratch_stretch) {
      if (at.scratch != nullptr) {
        const float* kept = at.scratch + slot * slot_floats * at.stride;
        if (orders > 0)
          s.for_column(at.stride, [&](int i, float& v) LARMOR_INLINE_LAMBDA { v = kept[i]; });
        return;
      }
    }
    load(stretch, slot, at, s, orders);
  }

  KOKKOS_INLINE_FUNCTION float group_sum(float v) const {
#if defined(__CUDA_ARCH__)
    for (int offset = group_threads / 2; offset > 0; offset /= 2) {
      v += __shfl_xor_sync(0xffffffffu, v, offset, group_threads);
    }
#endif
    return v;
  }

  // Moves the rows of `up` one order up and those of `down` one order down
  // (the ends are the caller's). A device thread moves its whole block (its
  // registers); a host thread only the event's live orders and the one above
  // them (above, the state is zero and the adjoint dead: it never reaches a
  // live order), as two block moves (g++ left the row loops as scalar copies).
  static KOKKOS_FORCEINLINE_FUNCTION void move_rows(float (&up)[OPT][L], float (&down)[OPT][L],
                                                    int here) {
    if constexpr (host) {
      const int rows = here < OPT ? here + 1 : OPT;
      if (rows < 2) return;
      adjoint_detail::move_elements(&up[1][0], &up[0][0], std::size_t(rows - 1) * L);
      adjoint_detail::move_elements(&down[0][0], &down[1][0], std::size_t(rows - 1) * L);
    } else {
      (void)here;
      LARMOR_UNROLL
      for (int j = OPT - 1; j > 0; --j) {
        LARMOR_UNROLL
        for (int l = 0; l < L; ++l) up[j][l] = up[j - 1][l];
      }
      LARMOR_UNROLL
      for (int j = 0; j < OPT - 1; ++j) {
        LARMOR_UNROLL
        for (int l = 0; l < L; ++l) down[j][l] = down[j + 1][l];
      }
    }
  }

  static KOKKOS_FORCEINLINE_FUNCTION void copy_live(Channel& to, const Channel& from, int here) {
    if constexpr (host) {
      const std::size_t bytes = sizeof(float) * L * std::size_t(here);
      std::memcpy(&to.a[0][0], &from.a[0][0], bytes);
      std::memcpy(&to.b[0][0], &from.b[0][0], bytes);
      std::memcpy(&to.c[0][0], &from.c[0][0], bytes);
    } else {
      (void)here;
      to = from;
    }
  }

  // The orders of a thread's block that an event reads.
  static KOKKOS_FORCEINLINE_FUNCTION int read_orders(const Place& at, const EventRecord& rec) {
    return adjoint_detail::read_rows<OPT>(at.first_order, live_orders_of(rec));
  }

  // The forward shift on the axis: a_k <- a_{k-1}, b_k <- b_{k+1}, a_0 <- -b_0
  // (beyond the run's orders as StateBlock::shift: nothing flows back).
  KOKKOS_INLINE_FUNCTION void shift(const member& team, Exchange& x, const Place& at, Channel& s,
                                    int here) const {
    float up[1][L], down[1][L];
    LARMOR_UNROLL
    for (int l = 0; l < L; ++l) {
      up[0][l] = s.a[OPT - 1][l];
      down[0][l] = s.b[0][l];
    }
    x.trade(team, at.thread, up, down);
    move_rows(s.a, s.b, here);
    LARMOR_UNROLL
    for (int l = 0; l < L; ++l) {
      s.b[OPT - 1][l] = at.has_next ? down[0][l] : 0.0f;
      s.a[0][l] = at.thread > 0 ? up[0][l] : -s.b[0][l];
    }
  }

  // Its transpose on both adjoint channels: a moves down, b up, and the old
  // a_0 sends its adjoint to b_1, negated on the axis and as it is off it.
  KOKKOS_INLINE_FUNCTION void unshift(const member& team, Exchange& x, const Place& at, Channel& l,
                                      Channel& m, int here) const {
    float l0[L], m0[L], up[2][L], down[2][L];
    LARMOR_UNROLL
    for (int k = 0; k < L; ++k) {
      l0[k] = l.a[0][k];
      m0[k] = m.a[0][k];
      up[0][k] = l.b[OPT - 1][k];
      up[1][k] = m.b[OPT - 1][k];
      down[0][k] = l.a[0][k];
      down[1][k] = m.a[0][k];
    }
    x.trade(team, at.thread, up, down);
    unshift_block(at, l, down[0], up[0], here);
    unshift_block(at, m, down[1], up[1], here);
    if (at.thread == 0) {
      LARMOR_UNROLL
      for (int k = 0; k < L; ++k) {
        l.b[1][k] -= l0[k];
        m.b[1][k] += m0[k];
      }
    }
  }

  // One channel's moves: `down` is the next thread's first a, `up` the
  // previous thread's last b.
  static KOKKOS_FORCEINLINE_FUNCTION void unshift_block(const Place& at, Channel& ch,
                                                        const float (&down)[L],
                                                        const float (&up)[L], int here) {
    move_rows(ch.b, ch.a, here);
    LARMOR_UNROLL
    for (int l = 0; l < L; ++l) {
      ch.a[OPT - 1][l] = at.has_next ? down[l] : 0.0f;
      ch.b[0][l] = at.thread > 0 ? up[l] : 0.0f;
    }
  }

  // One event forward on the axis (the spoiler as its own step).
  KOKKOS_INLINE_FUNCTION void apply_event(const member& team, Exchange& x, const Place& at,
                                          Coefficients& coefficients, Channel& s,
                                          const EventRecord& rec) const {
    const std::uint32_t act = action_of(rec);
    const int here = at.live_here(live_orders_of(rec));
    if (act & abi::action::crush_before) shift(team, x, at, s, here);
    if (kind_of(rec) == abi::EventKind::pulse) {
      // Copies: a reference into the cache kept g++'s loops scalar (the
      // stores to the state might alias it).
      const Rotations r = coefficients.pulse(
          rec, [&] { return axis_adjoint_detail::lane_rotations(rec, at.tissue); });
      for_live(here, [&](int j, int l) {
        axis_adjoint_detail::rotate(axis_adjoint_detail::axis_rotation(r, l), s.a[j][l], s.b[j][l],
                                    s.c[j][l]);
      });
    }
    if (act & abi::action::crush_after) shift(team, x, at, s, here);
    if (act & abi::action::shift_after) shift(team, x, at, s, here);
    if (act & abi::action::spoil_after) s.spoil();
    if (rec.duration > 0.0f) {
      const Relaxations ev = coefficients.interval(
          rec, [&] { return axis_adjoint_detail::lane_relaxations(rec, at.tissue); });
      for_live(here, [&](int j, int l) {
        s.a[j][l] *= ev.e2[l];
        s.b[j][l] *= ev.e2[l];
        s.c[j][l] = ev.e1[l] * s.c[j][l] + (at.first_order + j == 0 ? ev.recovery[l] : 0.0f);
      });
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    using namespace adjoint_detail;
    const FlushDenormalsOnHost flush_denormals;
    const int group = team.team_rank() / group_threads;
    Place at;
    at.thread = team.team_rank() - group * group_threads;
    at.first_order = at.thread * OPT;
    at.has_next = at.thread + 1 < group_threads;
    at.block = team.league_rank() * groups + group;
    at.first_voxel = at.block * L;
    at.block_active = at.first_voxel < tissue.voxels;
    at.store_row = workers.acquire(at.block);
    // Inactive lanes walk a copy of voxel 0 with no cotangent (a device's
    // shuffles are warp-synchronous) and touch no memory of their own.
    LARMOR_UNROLL
    for (int l = 0; l < L; ++l) {
      at.active[l] = at.first_voxel + l < tissue.voxels;
      at.tissue[l] = voxel_tissue<float>(tissue, directions, at.active[l] ? at.first_voxel + l : 0);
    }
    at.writes_sums = team.team_rank() == 0;
    if constexpr (scratch_stretch) {
      if (stretch_in_scratch) {
        Kokkos::View<float*, typename ExecSpace::scratch_memory_space, kx::Unmanaged> kept(
            team.team_scratch(0), std::size_t(interval) * slot_floats * team.team_size());
        at.scratch = kept.data() + team.team_rank();
        at.stride = team.team_size();
      }
    }
    Exchange x;
    x.team_threads = team.team_size();
    x.threads = group_threads;
    x.shuffle = group_threads > 1;
    Coefficients coefficients;
    Channel s, l, m;
    s.clear();
    if (at.first_order == 0) {
      LARMOR_UNROLL
      for (int k = 0; k < L; ++k) s.c[0][k] = 1.0f;
    }
    l.clear();
    m.clear();
    float g[tissue_direction::count][L] = {};
    // One loop of forward steps, as GroupedAdjointKernel's: the first pass
    // saves the checkpoints and the last stretch, each earlier stretch is
    // replayed from its checkpoint before its reverse.
    const int stretches = (events.count + interval - 1) / interval;
    int c = stretches - 1;
    int first = c * interval;  // the stretch whose states the pass saves
    int e = 0, end = events.count;
    for (;;) {
      for (; e < end; ++e) {
        const EventRecord& rec = events.records(e);
        if (at.block_active && e >= first) save_stretch(e - first, at, s, read_orders(at, rec));
        if (at.block_active && e < first && e % interval == 0) {
          save(checkpoints, e / interval, at, s);
        }
        apply_event(team, x, at, coefficients, s, rec);
      }
      for (int r = end - 1; r >= first; --r) {
        if (at.block_active) load_stretch(r - first, at, s, read_orders(at, events.records(r)));
        reverse_event(team, x, at, coefficients, r, events.records(r), s, l, m, g);
      }
      if (--c < 0) break;
      first = c * interval;
      e = first;
      end = first + interval;
      if (at.block_active) load(checkpoints, c, at, s);
    }
    for (int d = 0; d < tissue_direction::count; ++d) {
      LARMOR_UNROLL
      for (int k = 0; k < L; ++k) {
        const float total = group_sum(g[d][k]);
        if (at.active[k] && at.thread == 0) out.tissue_gradients(at.first_voxel + k, d) = total;
      }
    }
    workers.release(at.store_row);
  }

  // One event's derivative along a sequence parameter, summed over the
  // lanes (an inactive lane's adjoint is zero) and the team.
  KOKKOS_INLINE_FUNCTION void add_sequence(bool write, int e, int column,
                                           const float (&partial)[L]) const {
    if (!out.wants_sequence()) return;  // uniform over the team
    float lanes_sum = partial[0];
    LARMOR_UNROLL
    for (int k = 1; k < L; ++k) lanes_sum += partial[k];
    const float g = adjoint_detail::warp_sum(lanes_sum);
    if (write && g != 0.0f) Kokkos::atomic_add(&out.sequence_gradients(e, column), g);
  }

  // As GroupedAdjointKernel::reverse_event, in the two channels. `s` holds
  // the state at the event's start on entry (and is used as scratch).
  KOKKOS_INLINE_FUNCTION void reverse_event(const member& team, Exchange& x, const Place& at,
                                            Coefficients& coefficients, int e,
                                            const EventRecord& rec, Channel& s, Channel& l,
                                            Channel& m,
                                            float (&g)[tissue_direction::count][L]) const {
    const std::uint32_t act = action_of(rec);
    const int here = at.live_here(live_orders_of(rec));
    const auto kind = kind_of(rec);
    const bool order_zero = at.first_order == 0;
    if (act & abi::action::crush_before) shift(team, x, at, s, here);
    // What the event's pairings read of the state before it: a pulse's live
    // orders, a sample's F+_0.
    Channel s1;
    float a0[L];
    LARMOR_UNROLL
    for (int k = 0; k < L; ++k) a0[k] = s.a[0][k];
    Rotations rot{};
    if (kind == abi::EventKind::pulse) {
      copy_live(s1, s, here);
      rot = coefficients.pulse(rec,
                               [&] { return axis_adjoint_detail::lane_rotations(rec, at.tissue); });
      for_live(here, [&](int j, int k) {
        axis_adjoint_detail::rotate(axis_adjoint_detail::axis_rotation(rot, k), s.a[j][k],
                                    s.b[j][k], s.c[j][k]);
      });
    }
    if (act & abi::action::crush_after) shift(team, x, at, s, here);
    if (act & abi::action::shift_after) shift(team, x, at, s, here);
    if (act & abi::action::spoil_after) s.spoil();
    float seq_flip[L] = {}, seq_phase[L] = {}, seq_duration[L] = {};
    if (rec.duration > 0.0f) {
      float ge[4][L] = {};
      const Relaxations ev = coefficients.interval(
          rec, [&] { return axis_adjoint_detail::lane_relaxations(rec, at.tissue); });
      reverse_relaxation(s, l, m, ev, rec, at, here, order_zero, ge);
      LARMOR_UNROLL
      for (int k = 0; k < L; ++k) {
        const Tissue& t = at.tissue[k];
        g[tissue_direction::t1][k] += ge[0][k] * -(t.inv_t1 * t.inv_t1);
        g[tissue_direction::t2][k] += ge[1][k] * -(t.inv_t2 * t.inv_t2);
        g[tissue_direction::df][k] += ge[2][k];
        seq_duration[k] = ge[3][k];
      }
    }
    if (act & abi::action::spoil_after) {
      l.spoil();
      m.spoil();
    }
    if (act & abi::action::shift_after) unshift(team, x, at, l, m, here);
    if (act & abi::action::crush_after) unshift(team, x, at, l, m, here);
    if (kind == abi::EventKind::pulse) {
      float da[L] = {}, dp[L] = {};
      reverse_rotation(s1, l, m, rot, here, da, dp);
      const float gain = adjoint_detail::pulse_axis(rec, TransmitField{}).gain;
      LARMOR_UNROLL
      for (int k = 0; k < L; ++k) {
        g[tissue_direction::b1][k] += da[k] * adjoint_detail::flip_per_b1(rec, gain);
        seq_flip[k] = da[k] * pulse_b1(rec, at.tissue[k].b1) * gain;
        seq_phase[k] = dp[k];
      }
    } else if (kind == abi::EventKind::adc && order_zero) {
      // F+_0 = i a_0 read at phase q: y = M0 a_0 (sin q + i cos q). Its
      // cotangent's image M0 w e^{iq} on F+_0 has the axis part Im and the
      // off-axis part Re.
      const float c = rec.cos_phase, sn = rec.sin_phase;
      LARMOR_UNROLL
      for (int k = 0; k < L; ++k) {
        float w_re = 0.0f, w_im = 0.0f;
        if (at.active[k]) {
          w_re = cotangents(at.first_voxel + k, rec.output_index, 0);
          w_im = cotangents(at.first_voxel + k, rec.output_index, 1);
        }
        const float m0 = at.tissue[k].m0;
        const float q_re = a0[k] * sn, q_im = a0[k] * c;
        g[tissue_direction::m0][k] += q_re * w_re + q_im * w_im;
        seq_phase[k] = m0 * (q_im * w_re - q_re * w_im);
        l.a[0][k] += m0 * (w_im * c + w_re * sn);
        m.a[0][k] += m0 * (w_re * c - w_im * sn);
      }
    }
    if (act & abi::action::crush_before) unshift(team, x, at, l, m, here);
    const bool write = at.block_active && at.writes_sums;
    // Uniform over the warp: the event decides which sums exist.
    if (kind == abi::EventKind::pulse) add_sequence(write, e, sequence_gradient::flip, seq_flip);
    if (kind == abi::EventKind::pulse || kind == abi::EventKind::adc) {
      add_sequence(write, e, sequence_gradient::phase, seq_phase);
    }
    if (rec.duration > 0.0f) add_sequence(write, e, sequence_gradient::duration, seq_duration);
  }

  // reverse_evolution's sums at df = 0: with x' = E2 x on the F families,
  // A = l . x', B = m . G x' (the df pairing), Z = l_c . c before the
  // interval; then both channels back through the (diagonal) relaxation.
  static KOKKOS_INLINE_FUNCTION void reverse_relaxation(const Channel& s, Channel& l, Channel& m,
                                                        const Relaxations& r,
                                                        const EventRecord& rec, const Place& at,
                                                        int here, bool order_zero,
                                                        float (&ge)[4][L]) {
    float a[L] = {}, b[L] = {}, z[L] = {}, lz0[L];
    LARMOR_UNROLL
    for (int k = 0; k < L; ++k) lz0[k] = order_zero && here > 0 ? l.c[0][k] : 0.0f;
    const auto order = [&](int j, int k, float& sum_a, float& sum_b, float& sum_z) {
      sum_a += l.a[j][k] * s.a[j][k] + l.b[j][k] * s.b[j][k];
      sum_b += m.b[j][k] * s.b[j][k] - m.a[j][k] * s.a[j][k];
      sum_z += l.c[j][k] * s.c[j][k];
      l.a[j][k] *= r.e2[k];
      l.b[j][k] *= r.e2[k];
      l.c[j][k] *= r.e1[k];
      m.a[j][k] *= r.e2[k];
      m.b[j][k] *= r.e2[k];
      m.c[j][k] *= r.e1[k];
    };
    sum_live(here, order, a, b, z);
    LARMOR_UNROLL
    for (int k = 0; k < L; ++k) {
      Evolution<float> ev{};  // evolution_derivatives reads e1 and the tissue's rates
      ev.e1 = r.e1[k];
      ev.e2 = r.e2[k];
      ev.recovery = r.recovery[k];
      float gk[4];
      adjoint_detail::evolution_derivatives(r.e2[k] * a[k], r.e2[k] * b[k], z[k], lz0[k], ev, rec,
                                            at.tissue[k], gk);
      LARMOR_UNROLL
      for (int i = 0; i < 4; ++i) ge[i][k] = gk[i];
    }
  }

  // rotation_pairings in the two channels: with s' = R s,
  //   dL/df = l' . N s',  dL/dp = m' . G s' - m . G s,
  // and both channels back through R's transposes. `s` is the state before
  // the pulse.
  static KOKKOS_INLINE_FUNCTION void reverse_rotation(const Channel& s, Channel& l, Channel& m,
                                                      const Rotations& rot, int here,
                                                      float (&da)[L], float (&dp)[L]) {
    float unused[L] = {};
    const auto order = [&](int j, int k, float& sum_da, float& sum_dp, float&) {
      const auto r = axis_adjoint_detail::axis_rotation(rot, k);
      float a = s.a[j][k], b = s.b[j][k], c = s.c[j][k];
      axis_adjoint_detail::rotate(r, a, b, c);
      sum_da += (l.b[j][k] - l.a[j][k]) * c + 0.5f * l.c[j][k] * (a - b);
      sum_dp += m.b[j][k] * b - m.a[j][k] * a;
      axis_adjoint_detail::rotate_transposed_on_axis(r, l.a[j][k], l.b[j][k], l.c[j][k]);
      axis_adjoint_detail::rotate_transposed_off_axis(r, m.a[j][k], m.b[j][k], m.c[j][k]);
      sum_dp -= m.b[j][k] * s.b[j][k] - m.a[j][k] * s.a[j][k];
    };
    sum_live(here, order, da, dp, unused);
  }
};

}  // namespace larmor::epg
