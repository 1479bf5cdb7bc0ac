// The adjoint sweep on the axis states (the real-subspace path's reverse
// mode, at float): the layout, checkpoints and replays of the grouped kernel
// (adjoint_grouped.hpp), with each order three real numbers instead of six.
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
#pragma once

#include <cstring>

#include "epg/adjoint_impl.hpp"
#include "epg/state_block.hpp"

namespace larmor::epg {

namespace axis_adjoint_detail {

// One thread's block of a voxel's orders in one real channel.
template <int OPT>
struct Channel {
  float a[OPT], b[OPT], c[OPT];

  KOKKOS_FORCEINLINE_FUNCTION void clear() {
    LARMOR_UNROLL
    for (int j = 0; j < OPT; ++j) a[j] = b[j] = c[j] = 0.0f;
  }
  KOKKOS_FORCEINLINE_FUNCTION void spoil() {
    LARMOR_UNROLL
    for (int j = 0; j < OPT; ++j) a[j] = b[j] = 0.0f;
  }
};

// A pulse at phase 0 by the signed flip f (rotate_on_axis's coefficients:
// c2 = cos^2(f/2), u = sin^2(f/2), v = sin f, h = v / 2).
struct AxisRotation {
  float c2, ca, u, v, h;
};

KOKKOS_FORCEINLINE_FUNCTION AxisRotation axis_rotation(const RotationCoefficients<float>& r) {
  return {r.c2, r.ca, r.u_re, r.v_re, r.h_re};
}

// The forward step on the axis.
KOKKOS_FORCEINLINE_FUNCTION void rotate(const AxisRotation& r, float& a, float& b, float& c) {
  const float na = r.c2 * a + r.u * b - r.v * c;
  const float nb = r.u * a + r.c2 * b + r.v * c;
  c = r.ca * c + r.h * (a - b);
  a = na;
  b = nb;
}

// The transposes of the step on the axis (l) and off it (m, sines negated).
KOKKOS_FORCEINLINE_FUNCTION void rotate_transposed_on_axis(const AxisRotation& r, float& a,
                                                           float& b, float& c) {
  const float na = r.c2 * a + r.u * b + r.h * c;
  const float nb = r.u * a + r.c2 * b - r.h * c;
  c = r.v * (b - a) + r.ca * c;
  a = na;
  b = nb;
}
KOKKOS_FORCEINLINE_FUNCTION void rotate_transposed_off_axis(const AxisRotation& r, float& p,
                                                            float& q, float& s) {
  const float np = r.c2 * p + r.u * q - r.h * s;
  const float nq = r.u * p + r.c2 * q + r.h * s;
  s = r.v * (p - q) + r.ca * s;
  p = np;
  q = nq;
}

}  // namespace axis_adjoint_detail

template <class ExecSpace, int OPT>
struct AxisAdjointKernel {
  static_assert(OPT >= 2, "the transpose of a shift needs orders 0 and 1 on one thread");
  using memory_space = typename ExecSpace::memory_space;
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename policy::member_type;
  using Channel = axis_adjoint_detail::Channel<OPT>;
  using Exchange = EdgeExchange<float, 1>;
  using Tissue = adjoint_detail::VoxelTissue<float>;
  // [voxel][slot][a, b, c][padded orders]
  using Store = Kokkos::View<float****, Kokkos::LayoutRight, memory_space>;
  static constexpr int components = 3;
  static constexpr int parts = 1;
  static constexpr bool host = kx::is_host_space_v<ExecSpace>;

  // `f(j)` for the live orders [0, here) of a thread's block. Device threads
  // unroll over the whole block with a guard (their blocks are registers,
  // which need compile-time indices); a host thread holds every order and
  // loops to `here`, which g++ vectorises (a guarded loop over the block it
  // left scalar). `f` must not carry anything from one order to the next.
  template <class F>
  static KOKKOS_FORCEINLINE_FUNCTION void for_live(int here, F&& f) {
    if constexpr (host) {
#pragma omp simd
      for (int j = 0; j < here; ++j) f(j);
    } else {
      LARMOR_UNROLL
      for (int j = 0; j < OPT; ++j) {
        if (j < here) f(j);
      }
    }
  }

  EventTable<memory_space> events;
  TissueViews<memory_space> tissue;
  Kokkos::View<const float**, Kokkos::LayoutRight, memory_space> directions;
  Kokkos::View<const float***, Kokkos::LayoutRight, memory_space> cotangents;
  ReverseOutputs<memory_space> out;
  Store checkpoints, stretch;
  int interval = 1;
  int groups = 1;         // voxels per team
  int group_threads = 1;  // threads per voxel (a power of two dividing a warp)

  // Where this thread's block sits in its voxel's group.
  struct Place {
    int thread = 0, first_order = 0;
    bool has_next = false;

    KOKKOS_FORCEINLINE_FUNCTION int live_here(int live) const {
      const int n = live - first_order;
      return n < 0 ? 0 : (n > OPT ? OPT : n);
    }
  };

  // A host thread's block is whole rows of the store: three row copies,
  // which g++ does with vector moves (its element loop stayed scalar and
  // was a fifth of the host sweep's time).
  KOKKOS_INLINE_FUNCTION void save(const Store& store, int v, int slot, const Place& at,
                                   const Channel& s) const {
    if constexpr (host) {
      std::memcpy(&store(v, slot, 0, 0), s.a, sizeof s.a);
      std::memcpy(&store(v, slot, 1, 0), s.b, sizeof s.b);
      std::memcpy(&store(v, slot, 2, 0), s.c, sizeof s.c);
    } else {
      LARMOR_UNROLL
      for (int j = 0; j < OPT; ++j) {
        store(v, slot, 0, at.first_order + j) = s.a[j];
        store(v, slot, 1, at.first_order + j) = s.b[j];
        store(v, slot, 2, at.first_order + j) = s.c[j];
      }
    }
  }
  KOKKOS_INLINE_FUNCTION void load(const Store& store, int v, int slot, const Place& at,
                                   Channel& s) const {
    if constexpr (host) {
      std::memcpy(s.a, &store(v, slot, 0, 0), sizeof s.a);
      std::memcpy(s.b, &store(v, slot, 1, 0), sizeof s.b);
      std::memcpy(s.c, &store(v, slot, 2, 0), sizeof s.c);
    } else {
      LARMOR_UNROLL
      for (int j = 0; j < OPT; ++j) {
        s.a[j] = store(v, slot, 0, at.first_order + j);
        s.b[j] = store(v, slot, 1, at.first_order + j);
        s.c[j] = store(v, slot, 2, at.first_order + j);
      }
    }
  }

  KOKKOS_INLINE_FUNCTION float group_sum(float v) const {
#if defined(__CUDA_ARCH__)
    for (int offset = group_threads / 2; offset > 0; offset /= 2) {
      v += __shfl_xor_sync(0xffffffffu, v, offset, group_threads);
    }
#endif
    return v;
  }

  // The forward shift on the axis: a_k <- a_{k-1}, b_k <- b_{k+1}, a_0 <- -b_0
  // (beyond the run's orders as StateBlock::shift: nothing flows back).
  KOKKOS_INLINE_FUNCTION void shift(const member& team, Exchange& x, const Place& at,
                                    Channel& s) const {
    float up[1][1] = {{s.a[OPT - 1]}}, down[1][1] = {{s.b[0]}};
    x.trade(team, at.thread, up, down);
    LARMOR_UNROLL
    for (int j = OPT - 1; j > 0; --j) s.a[j] = s.a[j - 1];
    LARMOR_UNROLL
    for (int j = 0; j < OPT - 1; ++j) s.b[j] = s.b[j + 1];
    s.b[OPT - 1] = at.has_next ? down[0][0] : 0.0f;
    s.a[0] = at.thread > 0 ? up[0][0] : -s.b[0];
  }

  // Its transpose on both adjoint channels: a moves down, b up, and the old
  // a_0 sends its adjoint to b_1, negated on the axis and as it is off it.
  KOKKOS_INLINE_FUNCTION void unshift(const member& team, Exchange& x, const Place& at, Channel& l,
                                      Channel& m) const {
    const float l0 = l.a[0], m0 = m.a[0];
    float up[2][1] = {{l.b[OPT - 1]}, {m.b[OPT - 1]}};
    float down[2][1] = {{l.a[0]}, {m.a[0]}};
    x.trade(team, at.thread, up, down);
    unshift_block(at, l, down[0][0], up[0][0]);
    unshift_block(at, m, down[1][0], up[1][0]);
    if (at.thread == 0) {
      l.b[1] -= l0;
      m.b[1] += m0;
    }
  }

  // One channel's moves: `down` is the next thread's first a, `up` the
  // previous thread's last b.
  static KOKKOS_FORCEINLINE_FUNCTION void unshift_block(const Place& at, Channel& ch, float down,
                                                        float up) {
    LARMOR_UNROLL
    for (int j = 0; j < OPT - 1; ++j) ch.a[j] = ch.a[j + 1];
    LARMOR_UNROLL
    for (int j = OPT - 1; j > 0; --j) ch.b[j] = ch.b[j - 1];
    ch.a[OPT - 1] = at.has_next ? down : 0.0f;
    ch.b[0] = at.thread > 0 ? up : 0.0f;
  }

  static KOKKOS_INLINE_FUNCTION axis_adjoint_detail::AxisRotation rotation_of(
      const EventRecord& rec, const Tissue& t) {
    return axis_adjoint_detail::axis_rotation(
        adjoint_detail::rotation_of(rec, adjoint_detail::pulse_axis(rec, TransmitField{}), t));
  }

  // One event forward on the axis (the spoiler as its own step).
  KOKKOS_INLINE_FUNCTION void apply_event(const member& team, Exchange& x, const Place& at,
                                          Channel& s, const EventRecord& rec,
                                          const Tissue& t) const {
    const std::uint32_t act = action_of(rec);
    const int here = at.live_here(live_orders_of(rec));
    if (act & abi::action::crush_before) shift(team, x, at, s);
    if (kind_of(rec) == abi::EventKind::pulse) {
      const auto r = rotation_of(rec, t);
      for_live(here, [&](int j) { axis_adjoint_detail::rotate(r, s.a[j], s.b[j], s.c[j]); });
    }
    if (act & abi::action::crush_after) shift(team, x, at, s);
    if (act & abi::action::shift_after) shift(team, x, at, s);
    if (act & abi::action::spoil_after) s.spoil();
    if (rec.duration > 0.0f) {
      const auto ev = adjoint_detail::evolution_of(rec, t);
      for_live(here, [&](int j) {
        s.a[j] *= ev.e2;
        s.b[j] *= ev.e2;
        s.c[j] = ev.e1 * s.c[j] + (at.first_order + j == 0 ? ev.recovery : 0.0f);
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
    const int v = team.league_rank() * groups + group;
    const bool active = v < tissue.voxels;
    // Inactive groups walk a copy of voxel 0 (warp-synchronous shuffles) and
    // touch no memory of their own.
    const Tissue t = voxel_tissue<float>(tissue, directions, active ? v : 0);
    Exchange x;
    x.team_threads = team.team_size();
    x.threads = group_threads;
    x.shuffle = group_threads > 1;
    Channel s, l, m;
    s.clear();
    if (at.first_order == 0) s.c[0] = 1.0f;
    const bool keep_all = interval >= events.count;
    for (int e = 0; e < events.count; ++e) {
      if (active && keep_all) save(stretch, v, e, at, s);
      if (active && !keep_all && e % interval == 0) save(checkpoints, v, e / interval, at, s);
      apply_event(team, x, at, s, events.records(e), t);
    }
    l.clear();
    m.clear();
    Gradients<float> g;
    const int stretches = (events.count + interval - 1) / interval;
    for (int c = stretches - 1; c >= 0; --c) {
      const int first = c * interval;
      const int end = first + interval < events.count ? first + interval : events.count;
      if (!keep_all) {
        if (active) load(checkpoints, v, c, at, s);
        for (int e = first; e < end; ++e) {
          if (active) save(stretch, v, e - first, at, s);
          apply_event(team, x, at, s, events.records(e), t);
        }
      }
      for (int e = end - 1; e >= first; --e) {
        if (active) load(stretch, v, e - first, at, s);
        reverse_event(team, x, at, v, active, e, events.records(e), t, s, l, m, g);
      }
    }
    for (int d = 0; d < tissue_direction::count; ++d) {
      const float total = group_sum(g.tissue[d]);
      if (active && at.thread == 0) out.tissue_gradients(v, d) = total;
    }
  }

  KOKKOS_INLINE_FUNCTION void add_sequence(bool write, int e, int column, float partial) const {
    const float g = group_sum(partial);
    if (write && g != 0.0f) Kokkos::atomic_add(&out.sequence_gradients(e, column), g);
  }

  // As GroupedAdjointKernel::reverse_event, in the two channels. `s` holds
  // the state at the event's start on entry (and is used as scratch).
  KOKKOS_INLINE_FUNCTION void reverse_event(const member& team, Exchange& x, const Place& at, int v,
                                            bool active, int e, const EventRecord& rec,
                                            const Tissue& t, Channel& s, Channel& l, Channel& m,
                                            adjoint_detail::Gradients<float>& g) const {
    const std::uint32_t act = action_of(rec);
    const int here = at.live_here(live_orders_of(rec));
    const auto kind = kind_of(rec);
    const bool order_zero = at.first_order == 0;
    if (act & abi::action::crush_before) shift(team, x, at, s);
    const Channel s1 = s;  // before the pulse (or the sample)
    axis_adjoint_detail::AxisRotation rot{};
    if (kind == abi::EventKind::pulse) {
      rot = rotation_of(rec, t);
      for_live(here, [&](int j) { axis_adjoint_detail::rotate(rot, s.a[j], s.b[j], s.c[j]); });
    }
    if (act & abi::action::crush_after) shift(team, x, at, s);
    if (act & abi::action::shift_after) shift(team, x, at, s);
    if (act & abi::action::spoil_after) s.spoil();
    float seq_flip = 0.0f, seq_phase = 0.0f, seq_duration = 0.0f;
    if (rec.duration > 0.0f) {
      float ge[4] = {};
      reverse_relaxation(s, l, m, adjoint_detail::evolution_of(rec, t), rec, t, here, order_zero,
                         ge);
      g.tissue[tissue_direction::t1] += ge[0] * -(t.inv_t1 * t.inv_t1);
      g.tissue[tissue_direction::t2] += ge[1] * -(t.inv_t2 * t.inv_t2);
      g.tissue[tissue_direction::df] += ge[2];
      seq_duration = ge[3];
    }
    if (act & abi::action::spoil_after) {
      l.spoil();
      m.spoil();
    }
    if (act & abi::action::shift_after) unshift(team, x, at, l, m);
    if (act & abi::action::crush_after) unshift(team, x, at, l, m);
    if (kind == abi::EventKind::pulse) {
      float da = 0.0f, dp = 0.0f;
      reverse_rotation(s1, l, m, rot, here, da, dp);
      const float gain = adjoint_detail::pulse_axis(rec, TransmitField{}).gain;
      g.tissue[tissue_direction::b1] += da * (rec.flip * gain);
      seq_flip = da * t.b1 * gain;
      seq_phase = dp;
    } else if (kind == abi::EventKind::adc && order_zero) {
      // F+_0 = i a_0 read at phase q: y = M0 a_0 (sin q + i cos q). Its
      // cotangent's image M0 w e^{iq} on F+_0 has the axis part Im and the
      // off-axis part Re.
      const float w_re = active ? cotangents(v, rec.output_index, 0) : 0.0f;
      const float w_im = active ? cotangents(v, rec.output_index, 1) : 0.0f;
      const float c = rec.cos_phase, sn = rec.sin_phase;
      const float q_re = s1.a[0] * sn, q_im = s1.a[0] * c;
      g.tissue[tissue_direction::m0] += q_re * w_re + q_im * w_im;
      seq_phase = t.m0 * (q_im * w_re - q_re * w_im);
      l.a[0] += t.m0 * (w_im * c + w_re * sn);
      m.a[0] += t.m0 * (w_re * c - w_im * sn);
    }
    if (act & abi::action::crush_before) unshift(team, x, at, l, m);
    const bool write = active && at.thread == 0;
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
                                                        const Evolution<float>& ev,
                                                        const EventRecord& rec, const Tissue& t,
                                                        int here, bool order_zero, float (&g)[4]) {
    float a = 0.0f, b = 0.0f, z = 0.0f;
    const float lz0 = order_zero && here > 0 ? l.c[0] : 0.0f;
    const auto order = [&](int j, float& sum_a, float& sum_b, float& sum_z) {
      sum_a += l.a[j] * s.a[j] + l.b[j] * s.b[j];
      sum_b += m.b[j] * s.b[j] - m.a[j] * s.a[j];
      sum_z += l.c[j] * s.c[j];
      l.a[j] *= ev.e2;
      l.b[j] *= ev.e2;
      l.c[j] *= ev.e1;
      m.a[j] *= ev.e2;
      m.b[j] *= ev.e2;
      m.c[j] *= ev.e1;
    };
    if constexpr (host) {  // as for_live, with the sums declared
#pragma omp simd reduction(+ : a, b, z)
      for (int j = 0; j < here; ++j) order(j, a, b, z);
    } else {
      LARMOR_UNROLL
      for (int j = 0; j < OPT; ++j) {
        if (j < here) order(j, a, b, z);
      }
    }
    adjoint_detail::evolution_derivatives(ev.e2 * a, ev.e2 * b, z, lz0, ev, rec, t, g);
  }

  // rotation_pairings in the two channels: with s' = R s,
  //   dL/df = l' . N s',  dL/dp = m' . G s' - m . G s,
  // and both channels back through R's transposes. `s` is the state before
  // the pulse.
  static KOKKOS_INLINE_FUNCTION void reverse_rotation(const Channel& s, Channel& l, Channel& m,
                                                      const axis_adjoint_detail::AxisRotation& r,
                                                      int here, float& da, float& dp) {
    const auto order = [&](int j, float& sum_da, float& sum_dp) {
      float a = s.a[j], b = s.b[j], c = s.c[j];
      axis_adjoint_detail::rotate(r, a, b, c);
      sum_da += (l.b[j] - l.a[j]) * c + 0.5f * l.c[j] * (a - b);
      sum_dp += m.b[j] * b - m.a[j] * a;
      axis_adjoint_detail::rotate_transposed_on_axis(r, l.a[j], l.b[j], l.c[j]);
      axis_adjoint_detail::rotate_transposed_off_axis(r, m.a[j], m.b[j], m.c[j]);
      sum_dp -= m.b[j] * s.b[j] - m.a[j] * s.a[j];
    };
    if constexpr (host) {  // as for_live, with the sums declared
      float sum_da = 0.0f, sum_dp = 0.0f;
#pragma omp simd reduction(+ : sum_da, sum_dp)
      for (int j = 0; j < here; ++j) order(j, sum_da, sum_dp);
      da += sum_da;
      dp += sum_dp;
    } else {
      LARMOR_UNROLL
      for (int j = 0; j < OPT; ++j) {
        if (j < here) order(j, da, dp);
      }
    }
  }
};

}  // namespace larmor::epg
