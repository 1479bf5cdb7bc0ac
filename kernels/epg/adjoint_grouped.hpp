// The adjoint sweep in the forward kernel's device layout: a voxel's orders
// spread over a group of threads of one warp, `OPT` orders per thread in
// registers (StateBlock), so the state, the state before the pulse and the
// adjoint never leave registers. Shifts and their transposes trade block
// edges by warp shuffles; the per-event sums of the sequence derivatives are
// butterfly reductions over the group; the tissue derivatives are summed per
// thread and reduced once at the end (every pairing is linear in the per-order
// sums, adjoint_impl.hpp). Checkpoints and stretches go to global memory as
// rows of orders, so a group writes them in contiguous runs.
//
// On the host the group is one thread holding every order (a team of one):
// fixed-size blocks that the compiler unrolls, faster there too than the
// plain one-voxel kernel of adjoint_impl.hpp (which takes over above 64
// orders).
//
// `Declared` compiles the declared terms' code (diffusion and flow factors,
// a transmit array's fields). A device run that declares none takes the
// variant without it: the sweep waits on fetching its own instructions, and
// that code nearly triples its size (docs/performance.md, "Reverse sweeps").
// Host runs take the full variant (the split measured no faster there).
#pragma once

#include "epg/adjoint_impl.hpp"
#include "epg/state_block.hpp"

namespace larmor::epg {

template <class ExecSpace, class Real, int OPT, bool Declared = true>
struct GroupedAdjointKernel
    : ReverseKernelBase<typename ExecSpace::memory_space, Kokkos::LayoutRight> {
  using Base = ReverseKernelBase<typename ExecSpace::memory_space, Kokkos::LayoutRight>;
  static_assert(OPT >= 2, "the transpose of a shift needs orders 0 and 1 on one thread");
  LARMOR_REVERSE_KERNEL_MEMBERS(Base);
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename policy::member_type;
  using Block = StateBlock<Real, OPT, 1>;
  using Exchange = EdgeExchange<Real, 1>;
  using Tissue = adjoint_detail::VoxelTissue<Real>;
  static constexpr int components = 6;
  static constexpr int parts = part_count_v<Real>;

  // The variant without declared terms at float is held to 128 registers
  // on a device (a one-warp team, 16 per multiprocessor): four warps per
  // scheduler instead of three hide more of its fetch and load latency than
  // the few spilled registers cost (docs/performance.md, "Reverse sweeps").
  using launch_bounds = std::conditional_t<!Declared && std::is_same_v<Real, float>,
                                           Kokkos::LaunchBounds<32, 16>, Kokkos::LaunchBounds<>>;

  int groups = 1;         // voxels per team
  int group_threads = 1;  // threads per voxel (a power of two dividing a warp)

  static KOKKOS_FORCEINLINE_FUNCTION Real* component(Block& b, int c) {
    Real* parts_of_block[6] = {&b.fp_re[0][0], &b.fp_im[0][0], &b.fm_re[0][0],
                               &b.fm_im[0][0], &b.z_re[0][0],  &b.z_im[0][0]};
    return parts_of_block[c];
  }

  KOKKOS_INLINE_FUNCTION void save(const Store& store, int v, int slot, Block& b) const {
    LARMOR_UNROLL
    for (int c = 0; c < 6; ++c) {
      const Real* x = component(b, c);
      LARMOR_UNROLL
      for (int p = 0; p < parts; ++p) {
        LARMOR_UNROLL
        for (int j = 0; j < OPT; ++j)
          store(v, slot, c * parts + p, b.first_order + j) = part_of(x[j], p);
      }
    }
  }
  KOKKOS_INLINE_FUNCTION void load(const Store& store, int v, int slot, Block& b) const {
    LARMOR_UNROLL
    for (int c = 0; c < 6; ++c) {
      Real* x = component(b, c);
      LARMOR_UNROLL
      for (int p = 0; p < parts; ++p) {
        LARMOR_UNROLL
        for (int j = 0; j < OPT; ++j)
          part_of(x[j], p) = store(v, slot, c * parts + p, b.first_order + j);
      }
    }
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

  // The transpose of Block::shift: F+ moves down, F- up, and the old F+_0
  // sends its adjoint to F-_1, conjugated (orders 0 and 1 live on thread 0).
  KOKKOS_INLINE_FUNCTION void unshift(const member& team, Exchange& x, Block& b) const {
    const int thread = b.thread_in_group;
    const Real a_re = b.fp_re[0][0], a_im = b.fp_im[0][0];
    // trade() brings the previous thread's first pair and the next thread's
    // second: offer the last F- upwards and the first F+ downwards.
    Real up[2][1] = {{b.fm_re[OPT - 1][0]}, {b.fm_im[OPT - 1][0]}};
    Real down[2][1] = {{b.fp_re[0][0]}, {b.fp_im[0][0]}};
    x.trade(team, thread, up, down);
    const bool has_next = thread + 1 < group_threads;
    LARMOR_UNROLL
    for (int j = 0; j < OPT - 1; ++j) {
      b.fp_re[j][0] = b.fp_re[j + 1][0];
      b.fp_im[j][0] = b.fp_im[j + 1][0];
    }
    b.fp_re[OPT - 1][0] = has_next ? down[0][0] : Real(0.0f);
    b.fp_im[OPT - 1][0] = has_next ? down[1][0] : Real(0.0f);
    LARMOR_UNROLL
    for (int j = OPT - 1; j > 0; --j) {
      b.fm_re[j][0] = b.fm_re[j - 1][0];
      b.fm_im[j][0] = b.fm_im[j - 1][0];
    }
    b.fm_re[0][0] = thread > 0 ? up[0][0] : Real(0.0f);
    b.fm_im[0][0] = thread > 0 ? up[1][0] : Real(0.0f);
    if (thread == 0) {
      b.fm_re[1][0] += a_re;
      b.fm_im[1][0] -= a_im;
    }
  }

  KOKKOS_INLINE_FUNCTION void clear(Block& b) const {
    LARMOR_UNROLL
    for (int j = 0; j < OPT; ++j) {
      b.fp_re[j][0] = b.fp_im[j][0] = b.fm_re[j][0] = b.fm_im[j][0] = Real(0.0f);
      b.z_re[j][0] = b.z_im[j][0] = Real(0.0f);
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

  // A lobe's factors on a block (conjugated for the adjoint), and an
  // interval's.
  static KOKKOS_INLINE_FUNCTION void transport_lobe(Block& b, const Tissue& t, const Terms& d,
                                                    int live, bool conjugate) {
    const TransportWalks w = lobe_walks(t.transport, d.lobe_s, b.first_order);
    LaneWalks<1> fp, fm, z;
    fp.set(0, conjugate ? w.fp.conjugate() : w.fp);
    fm.set(0, conjugate ? w.fm.conjugate() : w.fm);
    z.set(0, conjugate ? w.z.conjugate() : w.z);
    b.template transport<transport_families::plus, true>(live, fp);
    b.template transport<transport_families::minus, true>(live, fm);
    b.template transport<transport_families::z, true>(live, z);
  }
  static KOKKOS_INLINE_FUNCTION void transport_interval(Block& b, const Tissue& t, float duration,
                                                        int live, bool conjugate) {
    const OrderWalk w = interval_walk(t.transport, duration, b.first_order);
    LaneWalks<1> walk;
    walk.set(0, conjugate ? w.conjugate() : w);
    b.template transport<transport_families::all, true>(live, walk);
  }

  // A shift with a declared lobe's factors, and its transpose.
  KOKKOS_INLINE_FUNCTION void shift(const member& team, Exchange& x, Block& s, const Tissue& t,
                                    const Terms& d, int live) const {
    s.shift(team, x);
    if (has_lobes(d)) transport_lobe(s, t, d, live, false);
  }
  KOKKOS_INLINE_FUNCTION void unshift(const member& team, Exchange& x, Block& lam, const Tissue& t,
                                      const Terms& d, int live) const {
    if (has_lobes(d)) transport_lobe(lam, t, d, live, true);
    unshift(team, x, lam);
  }

  KOKKOS_INLINE_FUNCTION void apply_event(const member& team, Exchange& x, Block& s,
                                          const EventRecord& rec, const Tissue& t,
                                          const Terms& d) const {
    const std::uint32_t act = action_of(rec);
    const int live = live_orders_of(rec);
    if (act & abi::action::crush_before) shift(team, x, s, t, d, live);
    if (kind_of(rec) == abi::EventKind::pulse) {
      LaneRotations<Real, 1> r;
      r.set(0, adjoint_detail::rotation_of(rec, axis_of(rec, d), t));
      s.rotate(live, r);
    }
    if (act & abi::action::crush_after) shift(team, x, s, t, d, live);
    if (act & abi::action::shift_after) shift(team, x, s, t, d, live);
    const bool spoil = (act & abi::action::spoil_after) != 0;
    if (rec.duration > 0.0f) {
      const Evolution<Real> ev[1] = {adjoint_detail::evolution_of(rec, t)};
      s.evolve(live, ev, t.precess, spoil);
      if (has_transport(d)) transport_interval(s, t, free_duration_of(rec, d.lobe_s), live, false);
    } else if (spoil) {
      s.spoil();
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    using namespace adjoint_detail;
    const FlushDenormalsOnHost flush_denormals;
    const int group = team.team_rank() / group_threads;
    const int thread = team.team_rank() - group * group_threads;
    const int v = team.league_rank() * groups + group;
    const bool active = v < tissue.voxels;
    // Inactive groups walk a copy of voxel 0 (warp-synchronous shuffles) and
    // touch no memory of their own.
    const Tissue t = voxel_tissue<Real>(tissue, directions, active ? v : 0);
    const Terms d = Declared ? declared_terms(tissue, active ? v : 0) : Terms{};
    Exchange x;
    x.team_threads = team.team_size();
    x.threads = group_threads;
    x.shuffle = group_threads > 1;
    Block s, s1, lam;
    s.reset(thread);
    lam.reset(thread);
    clear(lam);
    Gradients<Real> g;
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
        if (active && e >= first) save(stretch, v, e - first, s);
        if (active && e < first && e % interval == 0) save(checkpoints, v, e / interval, s);
        apply_event(team, x, s, events.records(e), t, d);
      }
      for (int r = end - 1; r >= first; --r) {
        if (active) load(stretch, v, r - first, s);
        reverse_event(team, x, v, active, r, events.records(r), t, d, s, s1, lam, g);
      }
      if (--c < 0) break;
      first = c * interval;
      e = first;
      end = first + interval;
      if (active) load(checkpoints, v, c, s);
    }
    for (int d = 0; d < tissue_direction::count; ++d) {
      const Real total = group_sum(g.tissue[d]);
      if (active && thread == 0) {
        out.tissue_gradients(v, d) = part_of(total, 0);
        if constexpr (parts > 1) out.tissue_hvp(v, d) = part_of(total, 1);
      }
    }
  }

  KOKKOS_INLINE_FUNCTION void add_sequence(bool write, int e, int column,
                                           const Real& partial) const {
    const Real g = group_sum(partial);
    if (!write) return;
    const float value = part_of(g, 0);
    if (value != 0.0f) Kokkos::atomic_add(&out.sequence_gradients(e, column), value);
    if constexpr (parts > 1) {
      const float tangent = part_of(g, 1);
      if (tangent != 0.0f) Kokkos::atomic_add(&out.sequence_hvp(e, column), tangent);
    }
  }

  // As AdjointKernel::reverse_event, on this thread's block of orders.
  KOKKOS_INLINE_FUNCTION void reverse_event(const member& team, Exchange& x, int v, bool active,
                                            int e, const EventRecord& rec, const Tissue& t,
                                            const Terms& d, Block& s, Block& s1, Block& lam,
                                            adjoint_detail::Gradients<Real>& g) const {
    using namespace adjoint_detail;
    const std::uint32_t act = action_of(rec);
    const int here = s.live_here(live_orders_of(rec));
    const auto kind = kind_of(rec);
    const bool order_zero = s.first_order == 0;
    const int live = live_orders_of(rec);
    if (act & abi::action::crush_before) shift(team, x, s, t, d, live);
    s1 = s;
    RotationCoefficients<Real> rot{};
    PulseAxis axis{};
    if (kind == abi::EventKind::pulse) {
      axis = axis_of(rec, d);
      rot = rotation_of(rec, axis, t);
      LaneRotations<Real, 1> r;
      r.set(0, rot);
      s.rotate(live, r);
    }
    if (act & abi::action::crush_after) shift(team, x, s, t, d, live);
    if (act & abi::action::shift_after) shift(team, x, s, t, d, live);
    if (act & abi::action::spoil_after) s.spoil();
    Real seq_flip(0.0f), seq_phase(0.0f), seq_duration(0.0f);
    if (rec.duration > 0.0f) {
      Real ge[4] = {};
      block_reverse_evolution(s, lam, evolution_of(rec, t), rec, t, has_transport(d), d.lobe_s,
                              here, order_zero, ge);
      g.tissue[tissue_direction::t1] += ge[0] * -(t.inv_t1 * t.inv_t1);
      g.tissue[tissue_direction::t2] += ge[1] * -(t.inv_t2 * t.inv_t2);
      g.tissue[tissue_direction::df] += ge[2];
      seq_duration = ge[3];
    }
    if (act & abi::action::spoil_after) lam.spoil();
    if (act & abi::action::shift_after) unshift(team, x, lam, t, d, live);
    if (act & abi::action::crush_after) unshift(team, x, lam, t, d, live);
    if (kind == abi::EventKind::pulse) {
      Real gr[2] = {};
      block_reverse_rotation(s1, lam, rot, axis, here, gr);
      g.tissue[tissue_direction::b1] += gr[0] * adjoint_detail::flip_per_b1(rec, axis.gain);
      seq_flip = gr[0] * pulse_b1(rec, t.b1) * axis.gain;
      seq_phase = gr[1];
    } else if (kind == abi::EventKind::adc && order_zero) {
      const float w_re = active ? cotangents(v, rec.output_index, 0) : 0.0f;
      const float w_im = active ? cotangents(v, rec.output_index, 1) : 0.0f;
      const float c = rec.cos_phase, sn = rec.sin_phase;
      const Real q_re = s1.fp_re[0][0] * c + s1.fp_im[0][0] * sn;
      const Real q_im = s1.fp_im[0][0] * c - s1.fp_re[0][0] * sn;
      g.tissue[tissue_direction::m0] += q_re * w_re + q_im * w_im;
      seq_phase = t.m0 * (q_im * w_re - q_re * w_im);
      lam.fp_re[0][0] += t.m0 * (w_re * c - w_im * sn);
      lam.fp_im[0][0] += t.m0 * (w_im * c + w_re * sn);
    }
    if (act & abi::action::crush_before) unshift(team, x, lam, t, d, live);
    const bool write = active && s.thread_in_group == 0;
    // Uniform over the warp: the event decides which sums exist.
    if (kind == abi::EventKind::pulse) add_sequence(write, e, sequence_gradient::flip, seq_flip);
    if (kind == abi::EventKind::pulse || kind == abi::EventKind::adc) {
      add_sequence(write, e, sequence_gradient::phase, seq_phase);
    }
    if (rec.duration > 0.0f) add_sequence(write, e, sequence_gradient::duration, seq_duration);
  }

  // reverse_evolution and reverse_rotation of adjoint_impl.hpp on a block:
  // this thread's share of the sums (the recovery term only where order 0 is).
  static KOKKOS_INLINE_FUNCTION void block_reverse_evolution(
      const Block& s, Block& lam, const Evolution<Real>& ev, const EventRecord& rec,
      const Tissue& t, bool transport, float lobe_s, int here, bool order_zero, Real (&g)[4]) {
    if (transport) {  // as reverse_evolution: back through the factors first
      transport_interval(lam, t, free_duration_of(rec, lobe_s), lam.first_order + here, true);
    }
    adjoint_detail::TransportSums<Real> sums;
    Real a(0.0f), b(0.0f), z(0.0f);
    const Real lz0 = order_zero && here > 0 ? lam.z_re[0][0] : Real(0.0f);
    Evolution<Real> conj_ev = ev;
    conj_ev.rot_im = -ev.rot_im;
    LARMOR_UNROLL
    for (int j = 0; j < OPT; ++j) {
      if (j < here) {
        Real p_re = s.fp_re[j][0], p_im = s.fp_im[j][0], m_re = s.fm_re[j][0], m_im = s.fm_im[j][0];
        evolve_transverse(ev, p_re, p_im, m_re, m_im);
        a += lam.fp_re[j][0] * p_re + lam.fp_im[j][0] * p_im + lam.fm_re[j][0] * m_re +
             lam.fm_im[j][0] * m_im;
        b += lam.fm_re[j][0] * m_im - lam.fm_im[j][0] * m_re - lam.fp_re[j][0] * p_im +
             lam.fp_im[j][0] * p_re;
        z += lam.z_re[j][0] * s.z_re[j][0] + lam.z_im[j][0] * s.z_im[j][0];
        if (transport) {
          const int k = s.first_order + j;
          sums.add(k, lam.fp_re[j][0], lam.fp_im[j][0], p_re, p_im);
          sums.add(k, lam.fm_re[j][0], lam.fm_im[j][0], m_re, m_im);
          sums.add(k, lam.z_re[j][0], lam.z_im[j][0], ev.e1 * s.z_re[j][0], ev.e1 * s.z_im[j][0]);
        }
        evolve_transverse(conj_ev, lam.fp_re[j][0], lam.fp_im[j][0], lam.fm_re[j][0],
                          lam.fm_im[j][0]);
        lam.z_re[j][0] *= ev.e1;
        lam.z_im[j][0] *= ev.e1;
      }
    }
    adjoint_detail::evolution_derivatives(a, b, z, lz0, ev, rec, t, g);
    if (transport) g[3] += sums.duration_derivative(t.transport);
  }

  static KOKKOS_INLINE_FUNCTION void block_reverse_rotation(const Block& s, Block& lam,
                                                            const RotationCoefficients<Real>& rot,
                                                            const adjoint_detail::PulseAxis& axis,
                                                            int here, Real (&g)[2]) {
    const auto adj = adjoint_rotation(rot);
    Real da(0.0f), dp(0.0f);
    LARMOR_UNROLL
    for (int j = 0; j < OPT; ++j) {
      if (j < here) {
        adjoint_detail::rotation_pairings(rot, adj, axis, s.fp_re[j][0], s.fp_im[j][0],
                                          s.fm_re[j][0], s.fm_im[j][0], s.z_re[j][0], s.z_im[j][0],
                                          lam.fp_re[j][0], lam.fp_im[j][0], lam.fm_re[j][0],
                                          lam.fm_im[j][0], lam.z_re[j][0], lam.z_im[j][0], da, dp);
      }
    }
    g[0] = da;
    g[1] = dp;
  }
};

}  // namespace larmor::epg
