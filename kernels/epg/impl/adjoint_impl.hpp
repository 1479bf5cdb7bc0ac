// The adjoint (vector-Jacobian product) of the event loop, with checkpoints.
//
// One thread walks one voxel. The forward sweep keeps the state at the start
// of every C-th event (a checkpoint); the reverse sweep takes the stretches
// last to first, replays each from its checkpoint keeping the state at the
// start of each of its events, then walks them backwards: the adjoint state
// goes through the transpose of each step in reverse order, and each
// parametrised step adds <adjoint, d step / d parameter applied to the state>
// to its gradients. Memory per voxel is (E / C + C) states, whatever the
// stream length; C defaults to sqrt(E).
//
// The steps are those of event_loop.hpp, taken from operators.hpp: the
// adjoint of a rotation is a rotation (adjoint_rotation), of an evolution the
// evolution by the conjugate factor, of a shift the shift the other way, and
// the parameter derivatives come from the same operators at a dual number.
//
// The whole sweep is written over a number type: at float it is the
// vector-Jacobian product; at a one-tangent dual number seeded along a tissue
// direction it is forward over reverse, the Hessian-vector product (the
// parameter derivatives are then dual numbers of dual numbers).
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "common/denormals.hpp"
#include "common/dual.hpp"
#include "epg/adjoint.hpp"
#include "epg/impl/adjoint_pulse.hpp"
#include "epg/impl/adjoint_tissue.hpp"
#include "epg/impl/event_loop.hpp"

namespace larmor::epg {

namespace adjoint_detail {

// Every order of one voxel, plainly indexed (the reverse sweep needs the
// state at arbitrary points, so it is copied often; rings would not help).
template <int K, class Real>
struct PlainState {
  static constexpr int components = 6;
  Real fp_re[K], fp_im[K], fm_re[K], fm_im[K], z_re[K], z_im[K];

  KOKKOS_INLINE_FUNCTION Real* component(int c) {
    Real* parts[6] = {fp_re, fp_im, fm_re, fm_im, z_re, z_im};
    return parts[c];
  }
  KOKKOS_INLINE_FUNCTION void clear(int n) {
    for (int k = 0; k < n; ++k) {
      fp_re[k] = fp_im[k] = fm_re[k] = fm_im[k] = z_re[k] = z_im[k] = Real(0.0f);
    }
  }
  KOKKOS_INLINE_FUNCTION void clear_transverse(int n) {
    for (int k = 0; k < n; ++k) fp_re[k] = fp_im[k] = fm_re[k] = fm_im[k] = Real(0.0f);
  }
  // The forward shift (StateBlock::shift with one thread).
  KOKKOS_INLINE_FUNCTION void shift(int n) {
    for (int k = n - 1; k > 0; --k) {
      fp_re[k] = fp_re[k - 1];
      fp_im[k] = fp_im[k - 1];
    }
    for (int k = 0; k < n - 1; ++k) {
      fm_re[k] = fm_re[k + 1];
      fm_im[k] = fm_im[k + 1];
    }
    fm_re[n - 1] = fm_im[n - 1] = Real(0.0f);
    fp_re[0] = fm_re[0];
    fp_im[0] = -fm_im[0];
  }
  // Diffusion and flow factors (transport.hpp) on orders [0, live).
  KOKKOS_INLINE_FUNCTION void transport(int live, TransportWalks w, bool shared) {
    for (int k = 0; k < live; ++k) {
      w.fp.apply(fp_re[k], fp_im[k]);
      (shared ? w.fp : w.fm).apply(fm_re[k], fm_im[k]);
      (shared ? w.fp : w.z).apply(z_re[k], z_im[k]);
      w.fp.advance();
      if (!shared) {
        w.fm.advance();
        w.z.advance();
      }
    }
  }
  // Its transpose on an adjoint state: F+ moves down, F- up, and the new
  // F+_0 = conj(old F-_1) sends its adjoint back to F-_1, conjugated.
  KOKKOS_INLINE_FUNCTION void unshift(int n) {
    const Real a_re = fp_re[0], a_im = fp_im[0];
    for (int k = 0; k < n - 1; ++k) {
      fp_re[k] = fp_re[k + 1];
      fp_im[k] = fp_im[k + 1];
    }
    fp_re[n - 1] = fp_im[n - 1] = Real(0.0f);
    for (int k = n - 1; k > 0; --k) {
      fm_re[k] = fm_re[k - 1];
      fm_im[k] = fm_im[k - 1];
    }
    fm_re[0] = fm_im[0] = Real(0.0f);
    if (n > 1) {
      fm_re[1] += a_re;
      fm_im[1] -= a_im;
    }
  }
};

// A shift, with a declared crusher lobe's diffusion and flow factors.
template <int K, class Real, class MemorySpace>
KOKKOS_INLINE_FUNCTION void shift_with_lobe(PlainState<K, Real>& s,
                                            const DeclaredTerms<MemorySpace>& d,
                                            const VoxelTissue<Real>& x, int n, int live) {
  s.shift(n);
  if (d.lobes) s.transport(live, lobe_walks(x.transport, d.lobe_s, 0), false);
}

// The transpose: the conjugate lobe factors, then the shift the other way.
template <int K, class Real, class MemorySpace>
KOKKOS_INLINE_FUNCTION void unshift_with_lobe(PlainState<K, Real>& lam,
                                              const DeclaredTerms<MemorySpace>& d,
                                              const VoxelTissue<Real>& x, int n, int live) {
  if (d.lobes) {
    const TransportWalks w = lobe_walks(x.transport, d.lobe_s, 0);
    lam.transport(live, {w.fp.conjugate(), w.fm.conjugate(), w.z.conjugate()}, false);
  }
  lam.unshift(n);
}

// One event forward, as the fused kernel computes it (the spoiler applied as
// a step of its own rather than folded into the decay: the same values).
template <bool Shaped, int K, class Real, class Terms>
KOKKOS_INLINE_FUNCTION void apply_event(PlainState<K, Real>& s, const EventRecord& rec,
                                        const VoxelTissue<Real>& x, const Terms& d, int n) {
  const std::uint32_t act = action_of(rec);
  const int live = live_orders_of(rec);
  if (act & abi::action::crush_before) shift_with_lobe(s, d, x, n, live);
  if (kind_of(rec) == abi::EventKind::pulse) {
    const auto p = reverse_pulse_of<Real, Shaped>(rec, d, x);
    for (int k = 0; k < live; ++k) {
      rotate_pulse<Shaped>(p, s.fp_re[k], s.fp_im[k], s.fm_re[k], s.fm_im[k], s.z_re[k], s.z_im[k]);
    }
  }
  if (act & abi::action::crush_after) shift_with_lobe(s, d, x, n, live);
  if (act & abi::action::shift_after) shift_with_lobe(s, d, x, n, live);
  if (act & abi::action::spoil_after) s.clear_transverse(n);
  if (rec.duration > 0.0f) {
    const auto ev = evolution_of(rec, x);
    for (int k = 0; k < live; ++k) {
      evolve_transverse(ev, s.fp_re[k], s.fp_im[k], s.fm_re[k], s.fm_im[k]);
      evolve_longitudinal(ev, k == 0, s.z_re[k], s.z_im[k]);
    }
    if (d.transport) {
      s.transport(live, {interval_walk(x.transport, free_duration_of(rec, d.lobe_s), 0), {}, {}},
                  true);
    }
  }
}

// Tissue gradients of one voxel, accumulated over the reverse sweep.
template <class Real>
struct Gradients {
  Real tissue[tissue_direction::count] = {};
};

// A state's components (State::component(c), c < State::components) to and
// from row `slot` of a checkpoint store [voxel][slot][component x part][order],
// a dual number's parts side by side.
template <class Store, class State>
KOKKOS_INLINE_FUNCTION void save_state(const Store& store, int v, int slot, State& s, int n) {
  using Real = std::remove_reference_t<decltype(*s.component(0))>;
  constexpr int parts = part_count_v<Real>;
  for (int c = 0; c < State::components; ++c) {
    const Real* component = s.component(c);
    for (int j = 0; j < parts; ++j) {
      for (int k = 0; k < n; ++k) store(v, slot, c * parts + j, k) = part_of(component[k], j);
    }
  }
}
template <class Store, class State>
KOKKOS_INLINE_FUNCTION void load_state(const Store& store, int v, int slot, State& s, int n) {
  using Real = std::remove_reference_t<decltype(*s.component(0))>;
  constexpr int parts = part_count_v<Real>;
  for (int c = 0; c < State::components; ++c) {
    Real* component = s.component(c);
    for (int j = 0; j < parts; ++j) {
      for (int k = 0; k < n; ++k) part_of(component[k], j) = store(v, slot, c * parts + j, k);
    }
  }
}

// Adds one event's sequence derivative (and, at dual numbers, its tangent),
// summed over voxels.
template <class MemorySpace, class Real>
KOKKOS_INLINE_FUNCTION void add_sequence_gradient(const ReverseOutputs<MemorySpace>& out, int e,
                                                  int column, const Real& g) {
  if (!out.wants_sequence()) return;
  const float value = part_of(g, 0);
  if (value != 0.0f) Kokkos::atomic_add(&out.sequence_gradients(e, column), value);
  if constexpr (part_count_v < Real >> 1) {
    const float tangent = part_of(g, 1);
    if (tangent != 0.0f) Kokkos::atomic_add(&out.sequence_hvp(e, column), tangent);
  }
}

template <class MemorySpace, class Real>
KOKKOS_INLINE_FUNCTION void write_tissue_gradients(const ReverseOutputs<MemorySpace>& out, int v,
                                                   const Gradients<Real>& g) {
  for (int d = 0; d < tissue_direction::count; ++d) {
    out.tissue_gradients(v, d) = part_of(g.tissue[d], 0);
    if constexpr (part_count_v < Real >> 1) out.tissue_hvp(v, d) = part_of(g.tissue[d], 1);
  }
}

// The derivatives of one interval from three sums over the orders. With
// rot = E2 exp(i 2 pi df t) (F+' = rot F+, F-' = conj(rot) F-) and
// Z' = E1 Z (+ 1 - E1 for order 0):
//   A = sum Re(conj(l+) F+' + conj(l-) F-'),  B = sum Im(conj(l-) F-' - conj(l+) F+'),
//   Z = sum Re(conj(lz) Z) (before the interval), lz0 = Re lz_0,
// dL/dR2 = -t A, dL/ddf = 2 pi t B, dL/dR1 = t E1 (lz0 - Z),
// dL/dt = -R2 A + 2 pi df B + R1 E1 (lz0 - Z); linear in the sums, so a group
// of threads may each pass its share. Writes {dL/dR1, dL/dR2, dL/ddf, dL/dt}.
// The interval's diffusion and flow factors g_k = exp(-D (kq)^2 t - i 2 pi
// m v k t) scale every family of order k, so their part of dL/dt is
// sum_k Re conj(l_k) (-D q^2 k^2 - i 2 pi m v k) X'_k
//   = -D q^2 sum k^2 Re(conj(l) X') + 2 pi m v sum k Im(conj(l) X'),
// accumulated per order by transport_sums (the adjoint already taken back
// through g, against the relaxed state: the same products).
template <class Real>
struct TransportSums {
  Real k2_re = Real(0.0f), k_im = Real(0.0f);

  KOKKOS_FORCEINLINE_FUNCTION void add(int order, const Real& l_re, const Real& l_im,
                                       const Real& y_re, const Real& y_im) {
    const float k = float(order);
    k2_re += (k * k) * (l_re * y_re + l_im * y_im);
    k_im += k * (l_re * y_im - l_im * y_re);
  }
  KOKKOS_FORCEINLINE_FUNCTION Real duration_derivative(const TransportRates& r) const {
    return Real(-r.diffusion) * k2_re + Real(6.2831853f * r.flow_turns) * k_im;
  }
};

template <class Real>
KOKKOS_INLINE_FUNCTION void evolution_derivatives(const Real& a, const Real& b, const Real& z,
                                                  const Real& lz0, const Evolution<Real>& ev,
                                                  const EventRecord& rec,
                                                  const VoxelTissue<Real>& x, Real (&g)[4]) {
  const Real t(rec.duration);
  const Real two_pi(6.283185307179586f);
  const Real recovery_term = ev.e1 * (lz0 - z);
  g[0] = t * recovery_term;
  g[1] = -(t * a);
  g[2] = two_pi * t * b;
  g[3] = -(x.r2 * a) + two_pi * x.df * b + x.r1 * recovery_term;
}

// The reverse of one interval, fused over the live orders: the pairings of
// evolution_derivatives, then the adjoint taken back through the interval.
// `s` is the state before the interval.
template <int K, class Real>
KOKKOS_INLINE_FUNCTION void reverse_evolution(const PlainState<K, Real>& s,
                                              PlainState<K, Real>& lam, const Evolution<Real>& ev,
                                              const EventRecord& rec, const VoxelTissue<Real>& x,
                                              bool transport, float lobe_s, int live,
                                              Real (&g)[4]) {
  // X' = g E X: the adjoint goes back through g first, and then pairs with
  // E X exactly as without the terms. g acts over the duration less the lobes
  // inside it, whose derivative along the duration is the same.
  if (transport) {
    const float free_s = free_duration_of(rec, lobe_s);
    lam.transport(live, {interval_walk(x.transport, free_s, 0).conjugate(), {}, {}}, true);
  }
  TransportSums<Real> sums;
  Real a(0.0f), b(0.0f), z(0.0f);
  const Real lz0 = live > 0 ? lam.z_re[0] : Real(0.0f);  // before the transpose scales it
  Evolution<Real> conj_ev = ev;
  conj_ev.rot_im = -ev.rot_im;
  for (int k = 0; k < live; ++k) {
    Real p_re = s.fp_re[k], p_im = s.fp_im[k], m_re = s.fm_re[k], m_im = s.fm_im[k];
    evolve_transverse(ev, p_re, p_im, m_re, m_im);
    a += lam.fp_re[k] * p_re + lam.fp_im[k] * p_im + lam.fm_re[k] * m_re + lam.fm_im[k] * m_im;
    b += lam.fm_re[k] * m_im - lam.fm_im[k] * m_re - lam.fp_re[k] * p_im + lam.fp_im[k] * p_re;
    z += lam.z_re[k] * s.z_re[k] + lam.z_im[k] * s.z_im[k];
    if (transport && k > 0) {
      sums.add(k, lam.fp_re[k], lam.fp_im[k], p_re, p_im);
      sums.add(k, lam.fm_re[k], lam.fm_im[k], m_re, m_im);
      sums.add(k, lam.z_re[k], lam.z_im[k], ev.e1 * s.z_re[k], ev.e1 * s.z_im[k]);
    }
    // Transpose: the conjugate factor on F+ and F-, E1 on Z.
    evolve_transverse(conj_ev, lam.fp_re[k], lam.fp_im[k], lam.fm_re[k], lam.fm_im[k]);
    lam.z_re[k] *= ev.e1;
    lam.z_im[k] *= ev.e1;
  }
  evolution_derivatives(a, b, z, lz0, ev, rec, x, g);
  if (transport) g[3] += sums.duration_derivative(x.transport);
}

// The reverse of one pulse over the live orders; `s` is the state before the
// pulse and `lam` goes from l' to l. Writes {dL/da, dL/dp}.
// `slope`: dT/da of a slice-selective pulse (shaped_pulse_slope).
template <bool Shaped, int K, class Real>
KOKKOS_INLINE_FUNCTION void reverse_rotation(const PlainState<K, Real>& s, PlainState<K, Real>& lam,
                                             const ReversePulse<Real>& pulse,
                                             const GeneralRotation<Real>& slope, int live,
                                             Real (&g)[2]) {
  const auto adj = adjoint_rotation(pulse.rot);
  Real da(0.0f), dp(0.0f);
  if (Shaped && pulse.shaped) {
    for (int k = 0; k < live; ++k) {
      shaped_pulse_pairings(pulse, slope, adj, s.fp_re[k], s.fp_im[k], s.fm_re[k], s.fm_im[k],
                            s.z_re[k], s.z_im[k], lam.fp_re[k], lam.fp_im[k], lam.fm_re[k],
                            lam.fm_im[k], lam.z_re[k], lam.z_im[k], da, dp);
    }
  } else {
    for (int k = 0; k < live; ++k) {
      rotation_pairings(pulse.rot, adj, pulse.axis, s.fp_re[k], s.fp_im[k], s.fm_re[k], s.fm_im[k],
                        s.z_re[k], s.z_im[k], lam.fp_re[k], lam.fp_im[k], lam.fm_re[k],
                        lam.fm_im[k], lam.z_re[k], lam.z_im[k], da, dp);
    }
  }
  g[0] = da;
  g[1] = dp;
}

// The sum over a device team of one warp, every lane getting it (identity
// on a host thread): a team adds each event's sequence sums once, for all
// its voxels, since the adds of every voxel group contend on the event's row.
KOKKOS_FORCEINLINE_FUNCTION float warp_sum(float v) {
#if defined(__CUDA_ARCH__)
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
#endif
  return v;
}

}  // namespace adjoint_detail

// What every reverse kernel reads and writes, and its checkpoint stores
// (configured by adjoint_detail::configure): [row][slot][component x part][
// padded orders] in the kernel's `StoreLayout`.
template <class MemorySpace, class StoreLayout>
struct ReverseKernelBase {
  using memory_space = MemorySpace;
  using Store = Kokkos::View<float****, StoreLayout, memory_space>;

  EventTable<memory_space> events;
  TissueViews<memory_space> tissue;
  Kokkos::View<const float**, Kokkos::LayoutRight, memory_space> directions;
  Kokkos::View<const float***, Kokkos::LayoutRight, memory_space> cotangents;
  ReverseOutputs<memory_space> out;
  Store checkpoints, stretch;
  int interval = 1;
  // Whether a kernel may keep its stretch in team scratch instead (then the
  // interval is at most the slots its scratch holds).
  static constexpr bool scratch_stretch = false;
  // Rows of the stores: one per block of voxels, or one per host worker
  // thread where a kernel holds WorkerRows.
  static constexpr bool stores_per_worker = false;
};

// The store rows of a sweep's host worker threads: each keeps its
// checkpoints and stretch in a row of its own, reused by every block of
// voxels it runs, so that they stay in its caches (configure() sizes the
// stores by size()); a device group writes the row of its block.
template <class ExecSpace>
struct WorkerRows {
  static constexpr bool enabled = kx::is_host_space_v<ExecSpace>;
  std::conditional_t<enabled, Kokkos::Experimental::UniqueToken<ExecSpace>, char> token{};

  int size() const {
    if constexpr (enabled) return int(token.size());
    return 0;
  }
  // The row a block of voxels at `own_row` writes.
  KOKKOS_INLINE_FUNCTION int acquire(int own_row) const {
    if constexpr (enabled) return int(token.acquire());
    return own_row;
  }
  KOKKOS_INLINE_FUNCTION void release(int row) const {
    if constexpr (enabled) token.release(row);
    (void)row;
  }
};

// A kernel names the base's members (they are of a dependent base).
#define LARMOR_REVERSE_KERNEL_MEMBERS(BASE)                                        \
  using typename BASE::memory_space;                                               \
  using typename BASE::Store;                                                      \
  using BASE::events, BASE::tissue, BASE::directions, BASE::cotangents, BASE::out, \
      BASE::checkpoints, BASE::stretch, BASE::interval

// `Shaped`: the stream has slice-selective pulses (adjoint_pulse.hpp).
template <class ExecSpace, int K, class Real, bool Shaped = false>
struct AdjointKernel : ReverseKernelBase<typename ExecSpace::memory_space, Kokkos::LayoutLeft> {
  using Base = ReverseKernelBase<typename ExecSpace::memory_space, Kokkos::LayoutLeft>;
  LARMOR_REVERSE_KERNEL_MEMBERS(Base);
  using State = adjoint_detail::PlainState<K, Real>;
  using Tissue = adjoint_detail::VoxelTissue<Real>;
  using Terms = std::conditional_t<Shaped, adjoint_detail::SliceTerms<memory_space>,
                                   adjoint_detail::DeclaredTerms<memory_space>>;
  static constexpr int components = 6;
  static constexpr int parts = part_count_v<Real>;

  KOKKOS_INLINE_FUNCTION void save(const Store& store, int v, int slot, State& s, int n) const {
    adjoint_detail::save_state(store, v, slot, s, n);
  }
  KOKKOS_INLINE_FUNCTION void load(const Store& store, int v, int slot, State& s, int n) const {
    adjoint_detail::load_state(store, v, slot, s, n);
  }
  KOKKOS_INLINE_FUNCTION void add_sequence(int e, int column, const Real& g) const {
    adjoint_detail::add_sequence_gradient(out, e, column, g);
  }

  KOKKOS_INLINE_FUNCTION void operator()(int v) const {
    using namespace adjoint_detail;
    const FlushDenormalsOnHost flush_denormals;
    const int n = events.orders;
    const SliceVoxel at = slice_voxel(tissue, v);
    const Tissue x = voxel_tissue<Real>(tissue, directions, v, at.source);
    Terms terms;
    static_cast<adjoint_detail::DeclaredTerms<memory_space>&>(terms) =
        declared_terms(tissue, at.source);
    if constexpr (Shaped) {
      terms.slice = tissue.slice;
      terms.position = at.position;
    }
    State s, s1, lam;
    s.clear(n);
    s.z_re[0] = Real(1.0f);
    for (int e = 0; e < events.count; ++e) {
      if (e % interval == 0) save(checkpoints, v, e / interval, s, n);
      apply_event<Shaped>(s, events.records(e), x, terms, n);
    }
    lam.clear(n);
    Gradients<Real> g;
    const int stretches = (events.count + interval - 1) / interval;
    for (int c = stretches - 1; c >= 0; --c) {
      const int first = c * interval;
      const int end = first + interval < events.count ? first + interval : events.count;
      load(checkpoints, v, c, s, n);
      for (int e = first; e < end; ++e) {
        save(stretch, v, e - first, s, n);
        apply_event<Shaped>(s, events.records(e), x, terms, n);
      }
      for (int e = end - 1; e >= first; --e) {
        load(stretch, v, e - first, s, n);
        reverse_event(v, e, events.records(e), x, terms, n, s, s1, lam, g);
      }
    }
    write_tissue_gradients(out, v, g);
  }

  // Takes the adjoint after event `e` back to its start; `s` holds the state
  // at its start on entry (and is used as scratch).
  KOKKOS_INLINE_FUNCTION void reverse_event(int v, int e, const EventRecord& rec, const Tissue& x,
                                            const Terms& d, int n, State& s, State& s1, State& lam,
                                            adjoint_detail::Gradients<Real>& g) const {
    using namespace adjoint_detail;
    const std::uint32_t act = action_of(rec);
    const int live = live_orders_of(rec);
    const auto kind = kind_of(rec);
    // The states inside the event: s1 after the leading crusher, s (s3)
    // before the interval.
    if (act & abi::action::crush_before) shift_with_lobe(s, d, x, n, live);
    s1 = s;
    ReversePulse<Real> pulse{};
    if (kind == abi::EventKind::pulse) {
      pulse = reverse_pulse_of<Real, Shaped>(rec, d, x);
      for (int k = 0; k < live; ++k) {
        rotate_pulse<Shaped>(pulse, s.fp_re[k], s.fp_im[k], s.fm_re[k], s.fm_im[k], s.z_re[k],
                             s.z_im[k]);
      }
    }
    if (act & abi::action::crush_after) shift_with_lobe(s, d, x, n, live);
    if (act & abi::action::shift_after) shift_with_lobe(s, d, x, n, live);
    if (act & abi::action::spoil_after) s.clear_transverse(n);
    Real seq_flip(0.0f), seq_phase(0.0f), seq_duration(0.0f);

    if (rec.duration > 0.0f) {
      Real ge[4] = {};
      reverse_evolution(s, lam, evolution_of(rec, x), rec, x, d.transport, d.lobe_s, live, ge);
      g.tissue[tissue_direction::t1] += ge[0] * -(x.inv_t1 * x.inv_t1);
      g.tissue[tissue_direction::t2] += ge[1] * -(x.inv_t2 * x.inv_t2);
      g.tissue[tissue_direction::df] += ge[2];
      seq_duration = ge[3];
    }
    if (act & abi::action::spoil_after) lam.clear_transverse(n);
    if (act & abi::action::shift_after) unshift_with_lobe(lam, d, x, n, live);
    if (act & abi::action::crush_after) unshift_with_lobe(lam, d, x, n, live);
    if (kind == abi::EventKind::pulse) {
      Real gr[2] = {};
      GeneralRotation<Real> slope{};
      if constexpr (Shaped) {
        if (pulse.shaped) slope = shaped_pulse_slope<Real>(rec, d, x, pulse.axis);
      }
      reverse_rotation<Shaped>(s1, lam, pulse, slope, live, gr);
      g.tissue[tissue_direction::b1] += gr[0] * flip_per_b1(rec, pulse.axis.gain);
      seq_flip = gr[0] * pulse_b1(rec, x.b1) * pulse.axis.gain;
      seq_phase = gr[1];
    } else if (kind == abi::EventKind::adc) {
      // The sample y = M0 q with q = F+_0 e^{-i phase}, and the loss Re conj(w) y:
      // dL/dM0 = Re conj(w) q, dL/dphase = Re conj(w) (-i y), and the adjoint
      // of F+_0 gains M0 w e^{i phase}.
      // A sample weighted over the voxel has sum_k W_k F_k in place of F+_0
      // (F_k = F+_k, F_-k = conj(F-_k)): F+_k's adjoint gains conj(W_k) times
      // F+_0's, F-_k's gains W_-k times its conjugate.
      const float w_re = cotangents(v, rec.output_index, 0);
      const float w_im = cotangents(v, rec.output_index, 1);
      const float c = rec.cos_phase, sn = rec.sin_phase;
      const int table = sample_weights_of(rec);
      const int position = slice_voxel(tissue, v).position;
      const SampleWeightViews<memory_space>& weights = tissue.weights;
      Real f_re = s1.fp_re[0], f_im = s1.fp_im[0];
      if (table > 0) {
        f_re = f_im = Real(0.0f);
        for (int k = 0; k < live; ++k) {
          weights.add_order(table, position, k, s1.fp_re[k], s1.fp_im[k], s1.fm_re[k], s1.fm_im[k],
                            f_re, f_im);
        }
      }
      const Real q_re = f_re * c + f_im * sn;
      const Real q_im = f_im * c - f_re * sn;
      g.tissue[tissue_direction::m0] += q_re * w_re + q_im * w_im;
      seq_phase = x.m0 * (q_im * w_re - q_re * w_im);
      const Real l_re = x.m0 * (w_re * c - w_im * sn);
      const Real l_im = x.m0 * (w_im * c + w_re * sn);
      if (table > 0) {
        for (int k = 0; k < live; ++k) {
          weights.seed_order(table, position, k, l_re, l_im, lam.fp_re[k], lam.fp_im[k],
                             lam.fm_re[k], lam.fm_im[k]);
        }
      } else {
        lam.fp_re[0] += l_re;
        lam.fp_im[0] += l_im;
      }
    }
    if (act & abi::action::crush_before) unshift_with_lobe(lam, d, x, n, live);
    add_sequence(e, sequence_gradient::flip, seq_flip);
    add_sequence(e, sequence_gradient::phase, seq_phase);
    add_sequence(e, sequence_gradient::duration, seq_duration);
  }
};

}  // namespace larmor::epg
