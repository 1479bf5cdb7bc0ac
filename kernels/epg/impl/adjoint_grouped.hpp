// The adjoint sweep in the forward kernel's device layout: a voxel's orders
// spread over a group of threads of one warp, `OPT` orders per thread in
// registers (StateBlock), so the state, the state before the pulse and the
// adjoint never leave registers. Shifts and their transposes trade block
// edges by warp shuffles; the per-event sums of the sequence derivatives are
// butterfly reductions over the team (one warp), added once per team; the
// tissue derivatives are summed per thread and reduced once at the end (every
// pairing is linear in the per-order sums, adjoint_impl.hpp). Checkpoints go
// to global memory as rows of orders, so a group writes them in contiguous
// runs; so does the stretch, a row only the orders its event reads, unless
// the team keeps it in its scratch (adjoint_dispatch.hpp decides).
//
// On the host the group is one thread holding every order (a team of one):
// fixed-size blocks, faster there too than the plain one-voxel kernel of
// adjoint_impl.hpp (which takes over above 64 orders). A host run without
// declared terms (VJP or HVP) holds `L` voxels side by side in each order
// (StateBlock's lanes), so that the per-order steps and pairings run as SIMD
// loops over the lanes, as the on-axis sweep's do (axis_adjoint.hpp); a
// device thread holds one voxel. A host thread's checkpoints and stretch
// stay in one store row of its own (WorkerRows).
//
// `Declared` compiles the declared terms' code (diffusion and flow factors,
// a transmit array's fields). A device run that declares none takes the
// variant without it: the sweep waits on fetching its own instructions, and
// that code nearly triples its size (docs/performance.md, "Reverse sweeps").
#pragma once

#include <cstddef>
#include <cstring>
#include <type_traits>

#include "epg/impl/adjoint_block_moves.hpp"
#include "epg/impl/adjoint_block_steps.hpp"
#include "epg/impl/adjoint_impl.hpp"
#include "epg/impl/event_coefficients.hpp"
#include "epg/impl/state_block.hpp"

namespace larmor::epg {

template <class ExecSpace, class Real, int OPT, bool Declared = true, int L = 1>
struct GroupedAdjointKernel
    : ReverseKernelBase<typename ExecSpace::memory_space, Kokkos::LayoutRight> {
  using Base = ReverseKernelBase<typename ExecSpace::memory_space, Kokkos::LayoutRight>;
  static_assert(OPT >= 2, "the transpose of a shift needs orders 0 and 1 on one thread");
  static constexpr bool host = kx::is_host_space_v<ExecSpace>;
  // Lanes: a host thread's sweep without declared terms (whose fields and
  // factors are read per voxel).
  static constexpr bool lane_loops = host && L > 1;
  static_assert(L == 1 || (lane_loops && !Declared),
                "voxel lanes are a host sweep without declared terms");
  LARMOR_REVERSE_KERNEL_MEMBERS(Base);
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename policy::member_type;
  using Block = StateBlock<Real, OPT, L>;
  using Exchange = EdgeExchange<Real, L>;
  using Tissue = adjoint_detail::VoxelTissue<Real>;
  using Rotations = LaneRotations<Real, L>;
  static constexpr int components = 6;
  static constexpr int parts = part_count_v<Real>;
  static constexpr int lanes = L;

  // The variant without declared terms at float is held to 128 registers
  // on a device (a one-warp team, 16 per multiprocessor): four warps per
  // scheduler instead of three hide more of its fetch and load latency than
  // the few spilled registers cost (docs/performance.md, "Reverse sweeps").
  using launch_bounds = std::conditional_t<!Declared && std::is_same_v<Real, float>,
                                           Kokkos::LaunchBounds<32, 16>, Kokkos::LaunchBounds<>>;

  int groups = 1;         // lane blocks per team
  int group_threads = 1;  // threads per lane block (a power of two dividing a warp)

  // A device team may keep the stretch in its scratch (`stretch_in_scratch`,
  // the interval's slots): the reverse sweep then reads each state back from
  // shared memory instead of global memory.
  static constexpr bool scratch_stretch = !host;
  static constexpr int slot_floats = components * parts * OPT * L;
  bool stretch_in_scratch = false;
  static std::size_t stretch_scratch_bytes(int slots, int team_threads) {
    return sizeof(float) * std::size_t(slots) * slot_floats * std::size_t(team_threads);
  }

  WorkerRows<ExecSpace> workers;
  static constexpr bool stores_per_worker = WorkerRows<ExecSpace>::enabled;

  // Where a thread's block sits: its group's row of lanes, the voxels of
  // its lanes (lane l holds voxel first_voxel + l) and its row of the stores.
  struct Place {
    int row = 0, first_voxel = 0, store_row = 0;
    bool any_active = false;  // lane 0 holds a voxel
    bool precess = false;     // some lane precesses: the steps' uniform branch
    bool active[L];
    Tissue tissue[L];
    bool writes_sums = false;  // the team's first thread adds the sequence sums
    float* scratch = nullptr;  // this thread's first stretch value in team scratch, if kept there
    int stride = 0;            // the team's threads
  };

  using Moves = adjoint_detail::BlockMoves<Real, OPT, L, lane_loops>;
  using Steps = adjoint_detail::BlockSteps<Real, OPT, L, lane_loops>;
  using Evolutions = adjoint_detail::LaneEvolutions<Real, L>;
  // A host thread with lanes (no declared terms) keeps its coefficients.
  using Coefficients = adjoint_detail::EventCoefficients<Rotations, Evolutions, lane_loops>;

  KOKKOS_INLINE_FUNCTION void save(const Store& store, int slot, const Place& at, Block& b,
                                   int orders = OPT) const {
    Moves::save(store, at.store_row, slot, b, orders);
  }
  KOKKOS_INLINE_FUNCTION void load(const Store& store, int slot, const Place& at, Block& b,
                                   int orders = OPT) const {
    Moves::load(store, at.store_row, slot, b, orders);
  }

  // A stretch slot, in team scratch or in the global store.
  KOKKOS_INLINE_FUNCTION void save_stretch(int slot, const Place& at, Block& b, int orders) const {
    if constexpr (scratch_stretch) {
      if (at.scratch != nullptr) {
        if (orders > 0)
          Moves::save_column(at.scratch + slot * slot_floats * at.stride, at.stride, b);
        return;
      }
    }
    save(stretch, slot, at, b, orders);
  }
  KOKKOS_INLINE_FUNCTION void load_stretch(int slot, const Place& at, Block& b, int orders) const {
    if constexpr (scratch_stretch) {
      if (at.scratch != nullptr) {
        if (orders > 0)
          Moves::load_column(at.scratch + slot * slot_floats * at.stride, at.stride, b);
        return;
      }
    }
    load(stretch, slot, at, b, orders);
  }

  // Sum over the group's threads (butterfly; every thread gets the sum).
  KOKKOS_INLINE_FUNCTION float group_sum_float(float v) const {
#if defined(__CUDA_ARCH__)
    for (int offset = group_threads / 2; offset > 0; offset /= 2) {
      v += __shfl_xor_sync(0xffffffffu, v, offset, group_threads);
    }
#endif
    return v;
  }
  KOKKOS_INLINE_FUNCTION Real group_sum(const Real& x) const {
    Real r = x;
    for (int p = 0; p < parts; ++p) part_of(r, p) = group_sum_float(part_of(x, p));
    return r;
  }

  // Block::shift; a host thread with lanes holds every order and moves rows.
  KOKKOS_INLINE_FUNCTION void shift_block(const member& team, Exchange& x, Block& b,
                                          int live) const {
    if constexpr (lane_loops) {
      const int here = b.live_here(live);
      Moves::rows_up(b.fp_re, here);
      Moves::rows_up(b.fp_im, here);
      Moves::rows_down(b.fm_re, here);
      Moves::rows_down(b.fm_im, here);
      for (int l = 0; l < L; ++l) {
        b.fm_re[OPT - 1][l] = b.fm_im[OPT - 1][l] = Real(0.0f);
        b.fp_re[0][l] = b.fm_re[0][l];
        b.fp_im[0][l] = -b.fm_im[0][l];
      }
    } else {
      (void)live;
      b.shift(team, x);
    }
  }

  // The transpose of Block::shift: F+ moves down, F- up, and the old F+_0
  // sends its adjoint to F-_1, conjugated (orders 0 and 1 live on thread 0).
  KOKKOS_INLINE_FUNCTION void unshift(const member& team, Exchange& x, Block& b, int live) const {
    const int thread = b.thread_in_group;
    Real a_re[L], a_im[L];
    // trade() brings the previous thread's first pair and the next thread's
    // second: offer the last F- upwards and the first F+ downwards.
    Real up[2][L], down[2][L];
    LARMOR_UNROLL
    for (int l = 0; l < L; ++l) {
      a_re[l] = down[0][l] = b.fp_re[0][l];
      a_im[l] = down[1][l] = b.fp_im[0][l];
      up[0][l] = b.fm_re[OPT - 1][l];
      up[1][l] = b.fm_im[OPT - 1][l];
    }
    x.trade(team, thread, up, down);
    const bool has_next = thread + 1 < group_threads;
    const int here = b.live_here(live);
    Moves::rows_down(b.fp_re, here);
    Moves::rows_down(b.fp_im, here);
    Moves::rows_up(b.fm_re, here);
    Moves::rows_up(b.fm_im, here);
    LARMOR_UNROLL
    for (int l = 0; l < L; ++l) {
      b.fp_re[OPT - 1][l] = has_next ? down[0][l] : Real(0.0f);
      b.fp_im[OPT - 1][l] = has_next ? down[1][l] : Real(0.0f);
      b.fm_re[0][l] = thread > 0 ? up[0][l] : Real(0.0f);
      b.fm_im[0][l] = thread > 0 ? up[1][l] : Real(0.0f);
      if (thread == 0) {
        b.fm_re[1][l] += a_re[l];
        b.fm_im[1][l] -= a_im[l];
      }
    }
  }

  using Terms = adjoint_detail::DeclaredTerms<memory_space>;

  // The run's declared terms, constant false in the variant without them.
  static KOKKOS_FORCEINLINE_FUNCTION bool has_lobes(const Terms& d) { return Declared && d.lobes; }
  static KOKKOS_FORCEINLINE_FUNCTION bool has_transport(const Terms& d) {
    return Declared && d.transport;
  }
  static KOKKOS_FORCEINLINE_FUNCTION adjoint_detail::PulseAxis axis_of(const EventRecord& rec,
                                                                       const Terms& d) {
    return adjoint_detail::pulse_axis(rec, Declared ? d.field(rec) : TransmitField{});
  }

  // Each lane's coefficients of a pulse and of an interval.
  static KOKKOS_FORCEINLINE_FUNCTION Rotations lane_rotations(const EventRecord& rec,
                                                              const adjoint_detail::PulseAxis& a,
                                                              const Place& at) {
    Rotations r;
    LARMOR_UNROLL
    for (int l = 0; l < L; ++l) r.set(l, adjoint_detail::rotation_of(rec, a, at.tissue[l]));
    return r;
  }
  static KOKKOS_FORCEINLINE_FUNCTION Evolutions lane_evolutions(const EventRecord& rec,
                                                                const Place& at) {
    Evolutions ev;
    LARMOR_UNROLL
    for (int l = 0; l < L; ++l) ev.lane[l] = adjoint_detail::evolution_of(rec, at.tissue[l]);
    return ev;
  }

  // A lobe's factors on a block (conjugated for the adjoint), and an
  // interval's.
  static KOKKOS_INLINE_FUNCTION void transport_lobe(Block& b, const Place& at, const Terms& d,
                                                    int live, bool conjugate) {
    LaneWalks<L> fp, fm, z;
    LARMOR_UNROLL
    for (int l = 0; l < L; ++l) {
      const TransportWalks w = lobe_walks(at.tissue[l].transport, d.lobe_s, b.first_order);
      fp.set(l, conjugate ? w.fp.conjugate() : w.fp);
      fm.set(l, conjugate ? w.fm.conjugate() : w.fm);
      z.set(l, conjugate ? w.z.conjugate() : w.z);
    }
    b.template transport<transport_families::plus, true>(live, fp);
    b.template transport<transport_families::minus, true>(live, fm);
    b.template transport<transport_families::z, true>(live, z);
  }
  static KOKKOS_INLINE_FUNCTION void transport_interval(Block& b, const Place& at, float duration,
                                                        int live, bool conjugate) {
    LaneWalks<L> walk;
    LARMOR_UNROLL
    for (int l = 0; l < L; ++l) {
      const OrderWalk w = interval_walk(at.tissue[l].transport, duration, b.first_order);
      walk.set(l, conjugate ? w.conjugate() : w);
    }
    b.template transport<transport_families::all, true>(live, walk);
  }

  // A shift with a declared lobe's factors, and its transpose.
  KOKKOS_INLINE_FUNCTION void shift(const member& team, Exchange& x, Block& s, const Place& at,
                                    const Terms& d, int live) const {
    shift_block(team, x, s, live);
    if (has_lobes(d)) transport_lobe(s, at, d, live, false);
  }
  KOKKOS_INLINE_FUNCTION void unshift(const member& team, Exchange& x, Block& lam, const Place& at,
                                      const Terms& d, int live) const {
    if (has_lobes(d)) transport_lobe(lam, at, d, live, true);
    unshift(team, x, lam, live);
  }

  KOKKOS_INLINE_FUNCTION void apply_event(const member& team, Exchange& x, Block& s,
                                          const EventRecord& rec, const Place& at, const Terms& d,
                                          Coefficients& coefficients) const {
    const std::uint32_t act = action_of(rec);
    const int live = live_orders_of(rec);
    if (act & abi::action::crush_before) shift(team, x, s, at, d, live);
    if (kind_of(rec) == abi::EventKind::pulse) {
      // Copies, as on the axis (axis_adjoint.hpp): g++ keeps loops that read
      // a reference into the cache scalar.
      const Rotations r =
          coefficients.pulse(rec, [&] { return lane_rotations(rec, axis_of(rec, d), at); });
      Steps::rotate(s, live, r);
    }
    if (act & abi::action::crush_after) shift(team, x, s, at, d, live);
    if (act & abi::action::shift_after) shift(team, x, s, at, d, live);
    const bool spoil = (act & abi::action::spoil_after) != 0;
    if (rec.duration > 0.0f) {
      const Evolutions ev = coefficients.interval(rec, [&] { return lane_evolutions(rec, at); });
      Steps::evolve(s, live, ev.lane, at.precess, spoil);
      if (has_transport(d)) {
        transport_interval(s, at, free_duration_of(rec, d.lobe_s), live, false);
      }
    } else if (spoil) {
      s.spoil();
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    using namespace adjoint_detail;
    const FlushDenormalsOnHost flush_denormals;
    const int group = team.team_rank() / group_threads;
    const int thread = team.team_rank() - group * group_threads;
    Place at;
    at.row = team.league_rank() * groups + group;
    at.first_voxel = at.row * L;
    at.store_row = workers.acquire(at.row);
    // Inactive lanes walk a copy of voxel 0 with no cotangent (a device's
    // shuffles are warp-synchronous) and touch no memory of their own.
    LARMOR_UNROLL
    for (int l = 0; l < L; ++l) {
      at.active[l] = at.first_voxel + l < tissue.voxels;
      at.tissue[l] = voxel_tissue<Real>(tissue, directions, at.active[l] ? at.first_voxel + l : 0);
      at.precess = at.precess || at.tissue[l].precess;
    }
    at.any_active = at.active[0];
    at.writes_sums = team.team_rank() == 0;
    if constexpr (scratch_stretch) {
      if (stretch_in_scratch) {
        const int slots = interval;
        Kokkos::View<float*, typename ExecSpace::scratch_memory_space, kx::Unmanaged> kept(
            team.team_scratch(0), std::size_t(slots) * slot_floats * team.team_size());
        at.scratch = kept.data() + team.team_rank();
        at.stride = team.team_size();
      }
    }
    const Terms d = Declared ? declared_terms(tissue, at.any_active ? at.first_voxel : 0) : Terms{};
    Exchange x;
    x.team_threads = team.team_size();
    x.threads = group_threads;
    x.shuffle = group_threads > 1;
    Coefficients coefficients;
    Block s, s1, lam;
    s.reset(thread);
    lam.reset(thread);
    Steps::clear(lam);
    Real g[tissue_direction::count][L];
    LARMOR_UNROLL
    for (int i = 0; i < tissue_direction::count; ++i) {
      LARMOR_UNROLL
      for (int l = 0; l < L; ++l) g[i][l] = Real(0.0f);
    }
    // One loop of forward steps, so that the event code is compiled once:
    // the first pass saves a checkpoint at the start of each stretch and
    // every state of the last stretch, whose reverse follows at once; each
    // earlier stretch is replayed from its checkpoint, then reversed. An
    // interval as long as the stream is one stretch: no replay at all.
    const int stretches = (events.count + interval - 1) / interval;
    int c = stretches - 1;
    int first = c * interval;  // the stretch whose states the pass saves
    int e = 0, end = events.count;
    for (;;) {
      for (; e < end; ++e) {
        const EventRecord& rec = events.records(e);
        if (at.any_active && e >= first) save_stretch(e - first, at, s, read_orders(s, rec));
        if (at.any_active && e < first && e % interval == 0) save(checkpoints, e / interval, at, s);
        apply_event(team, x, s, rec, at, d, coefficients);
      }
      for (int r = end - 1; r >= first; --r) {
        if (at.any_active) load_stretch(r - first, at, s, read_orders(s, events.records(r)));
        reverse_event(team, x, at, coefficients, r, events.records(r), d, s, s1, lam, g);
      }
      if (--c < 0) break;
      first = c * interval;
      e = first;
      end = first + interval;
      if (at.any_active) load(checkpoints, c, at, s);
    }
    for (int i = 0; i < tissue_direction::count; ++i) {
      LARMOR_UNROLL
      for (int l = 0; l < L; ++l) {
        const Real total = group_sum(g[i][l]);
        if (at.active[l] && thread == 0) {
          out.tissue_gradients(at.first_voxel + l, i) = part_of(total, 0);
          if constexpr (parts > 1) out.tissue_hvp(at.first_voxel + l, i) = part_of(total, 1);
        }
      }
    }
    workers.release(at.store_row);
  }

  // The orders of a thread's block that an event reads.
  static KOKKOS_FORCEINLINE_FUNCTION int read_orders(const Block& b, const EventRecord& rec) {
    return adjoint_detail::read_rows<OPT>(b.first_order, live_orders_of(rec));
  }

  // One event's derivative along a sequence parameter, summed over the
  // lanes (an inactive lane's adjoint is zero) and the team.
  KOKKOS_INLINE_FUNCTION void add_sequence(bool write, int e, int column,
                                           const Real (&partial)[L]) const {
    if (!out.wants_sequence()) return;  // uniform over the team
    Real lanes_sum = partial[0];
    LARMOR_UNROLL
    for (int l = 1; l < L; ++l) lanes_sum += partial[l];
    Real g = lanes_sum;
    for (int p = 0; p < parts; ++p) part_of(g, p) = adjoint_detail::warp_sum(part_of(lanes_sum, p));
    if (!write) return;
    const float value = part_of(g, 0);
    if (value != 0.0f) Kokkos::atomic_add(&out.sequence_gradients(e, column), value);
    if constexpr (parts > 1) {
      const float tangent = part_of(g, 1);
      if (tangent != 0.0f) Kokkos::atomic_add(&out.sequence_hvp(e, column), tangent);
    }
  }

  // As AdjointKernel::reverse_event, on this thread's block of orders.
  KOKKOS_INLINE_FUNCTION void reverse_event(const member& team, Exchange& x, const Place& at,
                                            Coefficients& coefficients, int e,
                                            const EventRecord& rec, const Terms& d, Block& s,
                                            Block& s1, Block& lam,
                                            Real (&g)[tissue_direction::count][L]) const {
    using namespace adjoint_detail;
    const std::uint32_t act = action_of(rec);
    const int here = s.live_here(live_orders_of(rec));
    const auto kind = kind_of(rec);
    const bool order_zero = s.first_order == 0;
    const int live = live_orders_of(rec);
    if (act & abi::action::crush_before) shift(team, x, s, at, d, live);
    // What the event's pairings read of the state before it: a pulse's live
    // orders, a sample's F+_0 (a host thread with lanes copies no more).
    if constexpr (lane_loops) {
      if (kind == abi::EventKind::pulse) {
        for (int c = 0; c < 6; ++c) {
          std::memcpy(Moves::component(s1, c), Moves::component(s, c), sizeof(Real) * L * here);
        }
      } else {
        for (int l = 0; l < L; ++l) {
          s1.fp_re[0][l] = s.fp_re[0][l];
          s1.fp_im[0][l] = s.fp_im[0][l];
        }
      }
    } else {
      s1 = s;
    }
    Rotations rot{};
    PulseAxis axis{};
    if (kind == abi::EventKind::pulse) {
      axis = axis_of(rec, d);
      rot = coefficients.pulse(rec, [&] { return lane_rotations(rec, axis, at); });
      Steps::rotate(s, live, rot);
    }
    if (act & abi::action::crush_after) shift(team, x, s, at, d, live);
    if (act & abi::action::shift_after) shift(team, x, s, at, d, live);
    if (act & abi::action::spoil_after) s.spoil();
    Real seq_flip[L], seq_phase[L], seq_duration[L];
    LARMOR_UNROLL
    for (int l = 0; l < L; ++l) seq_flip[l] = seq_phase[l] = seq_duration[l] = Real(0.0f);
    if (rec.duration > 0.0f) {
      Real ge[4][L];
      const Evolutions ev = coefficients.interval(rec, [&] { return lane_evolutions(rec, at); });
      block_reverse_evolution(s, lam, ev.lane, rec, at, has_transport(d), d.lobe_s, here,
                              order_zero, ge);
      LARMOR_UNROLL
      for (int l = 0; l < L; ++l) {
        const Tissue& t = at.tissue[l];
        g[tissue_direction::t1][l] += ge[0][l] * -(t.inv_t1 * t.inv_t1);
        g[tissue_direction::t2][l] += ge[1][l] * -(t.inv_t2 * t.inv_t2);
        g[tissue_direction::df][l] += ge[2][l];
        seq_duration[l] = ge[3][l];
      }
    }
    if (act & abi::action::spoil_after) lam.spoil();
    if (act & abi::action::shift_after) unshift(team, x, lam, at, d, live);
    if (act & abi::action::crush_after) unshift(team, x, lam, at, d, live);
    if (kind == abi::EventKind::pulse) {
      Real da[L], dp[L];
      if constexpr (lane_loops) {
        // Where nothing moved it, `s` is still the state after the pulse: a
        // host thread's pairings take it rather than rotate again.
        constexpr std::uint32_t moves_after =
            abi::action::crush_after | abi::action::shift_after | abi::action::spoil_after;
        if ((act & moves_after) == 0) {
          Steps::reverse_rotation_after(s1, s, lam, rot, axis, here, da, dp);
        } else {
          Steps::reverse_rotation(s1, lam, rot, axis, here, da, dp);
        }
      } else {
        Steps::reverse_rotation(s1, lam, rot, axis, here, da, dp);
      }
      const float per_b1 = adjoint_detail::flip_per_b1(rec, axis.gain);
      LARMOR_UNROLL
      for (int l = 0; l < L; ++l) {
        g[tissue_direction::b1][l] += da[l] * per_b1;
        seq_flip[l] = da[l] * pulse_b1(rec, at.tissue[l].b1) * axis.gain;
        seq_phase[l] = dp[l];
      }
    } else if (kind == abi::EventKind::adc && order_zero) {
      const float c = rec.cos_phase, sn = rec.sin_phase;
      LARMOR_UNROLL
      for (int l = 0; l < L; ++l) {
        const int v = at.first_voxel + l;
        const float w_re = at.active[l] ? cotangents(v, rec.output_index, 0) : 0.0f;
        const float w_im = at.active[l] ? cotangents(v, rec.output_index, 1) : 0.0f;
        const Real q_re = s1.fp_re[0][l] * c + s1.fp_im[0][l] * sn;
        const Real q_im = s1.fp_im[0][l] * c - s1.fp_re[0][l] * sn;
        const Real& m0 = at.tissue[l].m0;
        g[tissue_direction::m0][l] += q_re * w_re + q_im * w_im;
        seq_phase[l] = m0 * (q_im * w_re - q_re * w_im);
        lam.fp_re[0][l] += m0 * (w_re * c - w_im * sn);
        lam.fp_im[0][l] += m0 * (w_im * c + w_re * sn);
      }
    }
    if (act & abi::action::crush_before) unshift(team, x, lam, at, d, live);
    const bool write = at.any_active && at.writes_sums;
    // Uniform over the warp: the event decides which sums exist.
    if (kind == abi::EventKind::pulse) add_sequence(write, e, sequence_gradient::flip, seq_flip);
    if (kind == abi::EventKind::pulse || kind == abi::EventKind::adc) {
      add_sequence(write, e, sequence_gradient::phase, seq_phase);
    }
    if (rec.duration > 0.0f) add_sequence(write, e, sequence_gradient::duration, seq_duration);
  }

  // reverse_evolution and reverse_rotation of adjoint_impl.hpp on a block:
  // this thread's share of the sums (the recovery term only where order 0 is),
  // per lane.
  static KOKKOS_INLINE_FUNCTION void block_reverse_evolution(
      const Block& s, Block& lam, const Evolution<Real> (&ev)[L], const EventRecord& rec,
      const Place& at, bool transport, float lobe_s, int here, bool order_zero, Real (&g)[4][L]) {
    if (Declared && transport) {  // as reverse_evolution: back through the factors first
      transport_interval(lam, at, free_duration_of(rec, lobe_s), lam.first_order + here, true);
    }
    adjoint_detail::TransportSums<Real> sums[L];
    Real a[L], b[L], z[L], lz0[L], rot_re[L], rot_im[L], e1[L];
    LARMOR_UNROLL
    for (int l = 0; l < L; ++l) {
      a[l] = b[l] = z[l] = Real(0.0f);
      lz0[l] = order_zero && here > 0 ? lam.z_re[0][l] : Real(0.0f);
      rot_re[l] = ev[l].rot_re;
      rot_im[l] = ev[l].rot_im;
      e1[l] = ev[l].e1;
    }
    Moves::for_live(here, [&](int j, int l) LARMOR_INLINE_LAMBDA {
      Evolution<Real> lane_ev{}, conj_ev{};
      lane_ev.rot_re = conj_ev.rot_re = rot_re[l];
      lane_ev.rot_im = rot_im[l];
      conj_ev.rot_im = -rot_im[l];
      Real p_re = s.fp_re[j][l], p_im = s.fp_im[j][l], m_re = s.fm_re[j][l], m_im = s.fm_im[j][l];
      evolve_transverse(lane_ev, p_re, p_im, m_re, m_im);
      a[l] += lam.fp_re[j][l] * p_re + lam.fp_im[j][l] * p_im + lam.fm_re[j][l] * m_re +
              lam.fm_im[j][l] * m_im;
      b[l] += lam.fm_re[j][l] * m_im - lam.fm_im[j][l] * m_re - lam.fp_re[j][l] * p_im +
              lam.fp_im[j][l] * p_re;
      z[l] += lam.z_re[j][l] * s.z_re[j][l] + lam.z_im[j][l] * s.z_im[j][l];
      if (Declared && transport) {
        const int k = s.first_order + j;
        sums[l].add(k, lam.fp_re[j][l], lam.fp_im[j][l], p_re, p_im);
        sums[l].add(k, lam.fm_re[j][l], lam.fm_im[j][l], m_re, m_im);
        sums[l].add(k, lam.z_re[j][l], lam.z_im[j][l], e1[l] * s.z_re[j][l], e1[l] * s.z_im[j][l]);
      }
      evolve_transverse(conj_ev, lam.fp_re[j][l], lam.fp_im[j][l], lam.fm_re[j][l],
                        lam.fm_im[j][l]);
      lam.z_re[j][l] *= e1[l];
      lam.z_im[j][l] *= e1[l];
    });
    LARMOR_UNROLL
    for (int l = 0; l < L; ++l) {
      Real gl[4];
      adjoint_detail::evolution_derivatives(a[l], b[l], z[l], lz0[l], ev[l], rec, at.tissue[l], gl);
      if (Declared && transport) gl[3] += sums[l].duration_derivative(at.tissue[l].transport);
      LARMOR_UNROLL
      for (int i = 0; i < 4; ++i) g[i][l] = gl[i];
    }
  }
};

}  // namespace larmor::epg
