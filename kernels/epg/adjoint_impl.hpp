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
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>

#include "common/denormals.hpp"
#include "common/dual.hpp"
#include "epg/adjoint.hpp"
#include "epg/event_loop.hpp"

namespace larmor::epg {

namespace adjoint_detail {

// Every order of one voxel, plainly indexed (the reverse sweep needs the
// state at arbitrary points, so it is copied often; rings would not help).
template <int K>
struct PlainState {
  float fp_re[K], fp_im[K], fm_re[K], fm_im[K], z_re[K], z_im[K];

  KOKKOS_INLINE_FUNCTION float* component(int c) {
    float* parts[6] = {fp_re, fp_im, fm_re, fm_im, z_re, z_im};
    return parts[c];
  }
  KOKKOS_INLINE_FUNCTION void clear(int n) {
    for (int k = 0; k < n; ++k) fp_re[k] = fp_im[k] = fm_re[k] = fm_im[k] = z_re[k] = z_im[k] = 0;
  }
  KOKKOS_INLINE_FUNCTION void clear_transverse(int n) {
    for (int k = 0; k < n; ++k) fp_re[k] = fp_im[k] = fm_re[k] = fm_im[k] = 0;
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
    fm_re[n - 1] = fm_im[n - 1] = 0;
    fp_re[0] = fm_re[0];
    fp_im[0] = -fm_im[0];
  }
  // Its transpose on an adjoint state: F+ moves down, F- up, and the new
  // F+_0 = conj(old F-_1) sends its adjoint back to F-_1, conjugated.
  KOKKOS_INLINE_FUNCTION void unshift(int n) {
    const float a_re = fp_re[0], a_im = fp_im[0];
    for (int k = 0; k < n - 1; ++k) {
      fp_re[k] = fp_re[k + 1];
      fp_im[k] = fp_im[k + 1];
    }
    fp_re[n - 1] = fp_im[n - 1] = 0;
    for (int k = n - 1; k > 0; --k) {
      fm_re[k] = fm_re[k - 1];
      fm_im[k] = fm_im[k - 1];
    }
    fm_re[0] = fm_im[0] = 0;
    if (n > 1) {
      fm_re[1] += a_re;
      fm_im[1] -= a_im;
    }
  }
};

struct VoxelTissue {
  float m0, t1, t2, b1, df, r1, r2;
};

template <class MemorySpace>
KOKKOS_INLINE_FUNCTION VoxelTissue voxel_tissue(const TissueViews<MemorySpace>& t, int v) {
  VoxelTissue x;
  x.m0 = t.m0.at(v);
  x.t1 = t.t1_s.at(v);
  x.t2 = t.t2_s.at(v);
  x.b1 = t.b1.at(v);
  x.df = t.df_hz.at(v);
  x.r1 = relaxation_rate<float>(x.t1, 0);
  x.r2 = relaxation_rate<float>(x.t2, 0);
  return x;
}

KOKKOS_INLINE_FUNCTION RotationCoefficients<float> rotation_of(const EventRecord& rec,
                                                               const VoxelTissue& x) {
  return make_rotation(make_flip(rec.flip * x.b1), make_phase(rec.cos_phase, rec.sin_phase));
}

// One event forward, as the fused kernel computes it (the spoiler applied as
// a step of its own rather than folded into the decay: the same values).
template <int K>
KOKKOS_INLINE_FUNCTION void apply_event(PlainState<K>& s, const EventRecord& rec,
                                        const VoxelTissue& x, int n) {
  const std::uint32_t act = action_of(rec);
  const int live = live_orders_of(rec);
  if (act & abi::action::crush_before) s.shift(n);
  if (kind_of(rec) == abi::EventKind::pulse) {
    const auto r = rotation_of(rec, x);
    for (int k = 0; k < live; ++k) {
      rotate(r, s.fp_re[k], s.fp_im[k], s.fm_re[k], s.fm_im[k], s.z_re[k], s.z_im[k]);
    }
  }
  if (act & abi::action::crush_after) s.shift(n);
  if (act & abi::action::shift_after) s.shift(n);
  if (act & abi::action::spoil_after) s.clear_transverse(n);
  if (rec.duration > 0.0f) {
    const auto ev = make_evolution(rec.duration, x.r1, x.r2, x.df, x.df != 0.0f);
    for (int k = 0; k < live; ++k) {
      evolve_transverse(ev, s.fp_re[k], s.fp_im[k], s.fm_re[k], s.fm_im[k]);
      evolve_longitudinal(ev, k == 0, s.z_re[k], s.z_im[k]);
    }
  }
}

// Tissue gradients of one voxel, accumulated over the reverse sweep.
struct Gradients {
  float tissue[tissue_direction::count] = {0, 0, 0, 0, 0};
};

// <adjoint, d(evolution)/d(r1, r2, df, t) applied to s> over the live orders.
template <int K>
KOKKOS_INLINE_FUNCTION void evolution_gradients(const PlainState<K>& s, const PlainState<K>& lam,
                                                const EventRecord& rec, const VoxelTissue& x,
                                                int live, float (&g)[4]) {
  using D = Dual<float, 4>;
  const D r1 = x.r1 > 0.0f ? D::variable(x.r1, 0) : D(0.0f);
  const D r2 = x.r2 > 0.0f ? D::variable(x.r2, 1) : D(0.0f);
  const auto ev = make_evolution(D::variable(rec.duration, 3), r1, r2, D::variable(x.df, 2), true);
  for (int k = 0; k < live; ++k) {
    D a(s.fp_re[k]), b(s.fp_im[k]), c(s.fm_re[k]), d(s.fm_im[k]), e(s.z_re[k]), f(s.z_im[k]);
    evolve_transverse(ev, a, b, c, d);
    evolve_longitudinal(ev, k == 0, e, f);
    for (int i = 0; i < 4; ++i) {
      g[i] += lam.fp_re[k] * a.tangent[i] + lam.fp_im[k] * b.tangent[i] +
              lam.fm_re[k] * c.tangent[i] + lam.fm_im[k] * d.tangent[i] +
              lam.z_re[k] * e.tangent[i] + lam.z_im[k] * f.tangent[i];
    }
  }
}

// <adjoint, d(rotation)/d(flip x B1, phase) applied to s> over the live orders.
template <int K>
KOKKOS_INLINE_FUNCTION void rotation_gradients(const PlainState<K>& s, const PlainState<K>& lam,
                                               const EventRecord& rec, const VoxelTissue& x,
                                               int live, float (&g)[2]) {
  using D = Dual<float, 2>;
  D cos_p(rec.cos_phase), sin_p(rec.sin_phase);
  cos_p.tangent[1] = -rec.sin_phase;
  sin_p.tangent[1] = rec.cos_phase;
  const auto r =
      make_rotation(make_flip(D::variable(rec.flip * x.b1, 0)), make_phase(cos_p, sin_p));
  for (int k = 0; k < live; ++k) {
    D a(s.fp_re[k]), b(s.fp_im[k]), c(s.fm_re[k]), d(s.fm_im[k]), e(s.z_re[k]), f(s.z_im[k]);
    rotate(r, a, b, c, d, e, f);
    for (int i = 0; i < 2; ++i) {
      g[i] += lam.fp_re[k] * a.tangent[i] + lam.fp_im[k] * b.tangent[i] +
              lam.fm_re[k] * c.tangent[i] + lam.fm_im[k] * d.tangent[i] +
              lam.z_re[k] * e.tangent[i] + lam.z_im[k] * f.tangent[i];
    }
  }
}

}  // namespace adjoint_detail

template <class ExecSpace, int K>
struct AdjointKernel {
  using memory_space = typename ExecSpace::memory_space;
  using State = adjoint_detail::PlainState<K>;
  using Store = Kokkos::View<float****, Kokkos::LayoutLeft, memory_space>;  // [voxel][slot][6][K]

  EventTable<memory_space> events;
  TissueViews<memory_space> tissue;
  Kokkos::View<const float***, Kokkos::LayoutRight, memory_space> cotangents;
  Kokkos::View<float**, Kokkos::LayoutRight, memory_space> tissue_gradients;
  Kokkos::View<float**, Kokkos::LayoutRight, memory_space> sequence_gradients;
  Store checkpoints, stretch;
  int interval = 1;

  KOKKOS_INLINE_FUNCTION void save(const Store& store, int v, int slot, State& s, int n) const {
    for (int c = 0; c < 6; ++c) {
      const float* part = s.component(c);
      for (int k = 0; k < n; ++k) store(v, slot, c, k) = part[k];
    }
  }
  KOKKOS_INLINE_FUNCTION void load(const Store& store, int v, int slot, State& s, int n) const {
    for (int c = 0; c < 6; ++c) {
      float* part = s.component(c);
      for (int k = 0; k < n; ++k) part[k] = store(v, slot, c, k);
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(int v) const {
    using namespace adjoint_detail;
    const FlushDenormalsOnHost flush_denormals;
    const int n = events.orders;
    const VoxelTissue x = voxel_tissue(tissue, v);
    State s, s1, lam;
    s.clear(n);
    s.z_re[0] = 1.0f;
    for (int e = 0; e < events.count; ++e) {
      if (e % interval == 0) save(checkpoints, v, e / interval, s, n);
      apply_event(s, events.records(e), x, n);
    }
    lam.clear(n);
    Gradients g;
    const int stretches = (events.count + interval - 1) / interval;
    for (int c = stretches - 1; c >= 0; --c) {
      const int first = c * interval;
      const int end = first + interval < events.count ? first + interval : events.count;
      load(checkpoints, v, c, s, n);
      for (int e = first; e < end; ++e) {
        save(stretch, v, e - first, s, n);
        apply_event(s, events.records(e), x, n);
      }
      for (int e = end - 1; e >= first; --e) {
        load(stretch, v, e - first, s, n);
        reverse_event(v, e, events.records(e), x, n, s, s1, lam, g);
      }
    }
    for (int d = 0; d < tissue_direction::count; ++d) tissue_gradients(v, d) = g.tissue[d];
  }

  // Takes the adjoint after event `e` back to its start; `s` holds the state
  // at its start on entry (and is used as scratch).
  KOKKOS_INLINE_FUNCTION void reverse_event(int v, int e, const EventRecord& rec,
                                            const adjoint_detail::VoxelTissue& x, int n, State& s,
                                            State& s1, State& lam,
                                            adjoint_detail::Gradients& g) const {
    using namespace adjoint_detail;
    const std::uint32_t act = action_of(rec);
    const int live = live_orders_of(rec);
    const auto kind = kind_of(rec);
    // The states inside the event: s1 after the leading crusher, s (s3)
    // before the interval.
    if (act & abi::action::crush_before) s.shift(n);
    s1 = s;
    RotationCoefficients<float> rot{};
    if (kind == abi::EventKind::pulse) {
      rot = rotation_of(rec, x);
      for (int k = 0; k < live; ++k) {
        rotate(rot, s.fp_re[k], s.fp_im[k], s.fm_re[k], s.fm_im[k], s.z_re[k], s.z_im[k]);
      }
    }
    if (act & abi::action::crush_after) s.shift(n);
    if (act & abi::action::shift_after) s.shift(n);
    if (act & abi::action::spoil_after) s.clear_transverse(n);
    float seq_flip = 0, seq_phase = 0, seq_duration = 0;

    if (rec.duration > 0.0f) {
      float ge[4] = {0, 0, 0, 0};
      evolution_gradients(s, lam, rec, x, live, ge);
      g.tissue[tissue_direction::t1] += ge[0] * -(x.r1 * x.r1);
      g.tissue[tissue_direction::t2] += ge[1] * -(x.r2 * x.r2);
      g.tissue[tissue_direction::df] += ge[2];
      seq_duration = ge[3];
      // Transpose of the evolution: the conjugate factor on F+ and F-.
      const auto ev = make_evolution(rec.duration, x.r1, x.r2, x.df, x.df != 0.0f);
      Evolution<float> conj_ev = ev;
      conj_ev.rot_im = -ev.rot_im;
      for (int k = 0; k < live; ++k) {
        evolve_transverse(conj_ev, lam.fp_re[k], lam.fp_im[k], lam.fm_re[k], lam.fm_im[k]);
        lam.z_re[k] *= ev.e1;
        lam.z_im[k] *= ev.e1;
      }
    }
    if (act & abi::action::spoil_after) lam.clear_transverse(n);
    if (act & abi::action::shift_after) lam.unshift(n);
    if (act & abi::action::crush_after) lam.unshift(n);
    if (kind == abi::EventKind::pulse) {
      float gr[2] = {0, 0};
      rotation_gradients(s1, lam, rec, x, live, gr);
      g.tissue[tissue_direction::b1] += gr[0] * rec.flip;
      seq_flip = gr[0] * x.b1;
      seq_phase = gr[1];
      const auto adj = adjoint_rotation(rot);
      for (int k = 0; k < live; ++k) {
        rotate(adj, lam.fp_re[k], lam.fp_im[k], lam.fm_re[k], lam.fm_im[k], lam.z_re[k],
               lam.z_im[k]);
      }
    } else if (kind == abi::EventKind::adc) {
      // The sample y = M0 q with q = F+_0 e^{-i phase}, and the loss Re conj(w) y:
      // dL/dM0 = Re conj(w) q, dL/dphase = Re conj(w) (-i y), and the adjoint
      // of F+_0 gains M0 w e^{i phase}.
      const float w_re = cotangents(v, rec.output_index, 0);
      const float w_im = cotangents(v, rec.output_index, 1);
      const float c = rec.cos_phase, sn = rec.sin_phase;
      const float q_re = s1.fp_re[0] * c + s1.fp_im[0] * sn;
      const float q_im = s1.fp_im[0] * c - s1.fp_re[0] * sn;
      g.tissue[tissue_direction::m0] += w_re * q_re + w_im * q_im;
      seq_phase = x.m0 * (w_re * q_im - w_im * q_re);
      lam.fp_re[0] += x.m0 * (w_re * c - w_im * sn);
      lam.fp_im[0] += x.m0 * (w_im * c + w_re * sn);
    }
    if (act & abi::action::crush_before) lam.unshift(n);
    if (seq_flip != 0.0f) Kokkos::atomic_add(&sequence_gradients(e, 0), seq_flip);
    if (seq_phase != 0.0f) Kokkos::atomic_add(&sequence_gradients(e, 1), seq_phase);
    if (seq_duration != 0.0f) Kokkos::atomic_add(&sequence_gradients(e, 2), seq_duration);
  }
};

template <class ExecSpace>
void simulate_tissue_vjp(
    const ExecSpace& exec, const EventTable<typename ExecSpace::memory_space>& events,
    const TissueViews<typename ExecSpace::memory_space>& tissue,
    const Kokkos::View<const float***, Kokkos::LayoutRight, typename ExecSpace::memory_space>&
        cotangents,
    const Kokkos::View<float**, Kokkos::LayoutRight, typename ExecSpace::memory_space>&
        tissue_gradients,
    const Kokkos::View<float**, Kokkos::LayoutRight, typename ExecSpace::memory_space>&
        sequence_gradients,
    int checkpoint_interval) {
  const std::string name = adjoint_kernel_name;
  if (tissue.voxels <= 0 || events.count == 0) return;
  check_order_limit(events.orders, adjoint_kernel_name);
  if (cotangents.extent(0) < std::size_t(tissue.voxels) ||
      cotangents.extent(1) < std::size_t(events.samples) || cotangents.extent(2) != 2 ||
      tissue_gradients.extent(0) < std::size_t(tissue.voxels) ||
      tissue_gradients.extent(1) != std::size_t(tissue_direction::count) ||
      sequence_gradients.extent(0) < std::size_t(events.count) ||
      sequence_gradients.extent(1) != std::size_t(sequence_gradient::count)) {
    throw std::invalid_argument(name + ": a cotangent or gradient array has the wrong shape for " +
                                std::to_string(tissue.voxels) + " voxels, " +
                                std::to_string(events.samples) + " samples and " +
                                std::to_string(events.count) + " events");
  }
  if (checkpoint_interval < 0) {
    throw std::invalid_argument(name + ": checkpoint_interval must be >= 1 (0: automatic), got " +
                                std::to_string(checkpoint_interval));
  }
  const int interval = checkpoint_interval > 0 ? std::min(checkpoint_interval, events.count)
                                               : default_checkpoint_interval(events.count);
  const int stretches = (events.count + interval - 1) / interval;

#define LARMOR_ADJOINT_BUCKET(K)                                                                   \
  if (events.orders <= K) {                                                                        \
    AdjointKernel<ExecSpace, K> kernel;                                                            \
    kernel.events = events;                                                                        \
    kernel.tissue = tissue;                                                                        \
    kernel.cotangents = cotangents;                                                                \
    kernel.tissue_gradients = tissue_gradients;                                                    \
    kernel.sequence_gradients = sequence_gradients;                                                \
    kernel.interval = interval;                                                                    \
    kernel.checkpoints = typename AdjointKernel<ExecSpace, K>::Store(                              \
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::adjoint_checkpoints"),            \
        tissue.voxels, stretches, 6, events.orders);                                               \
    kernel.stretch = typename AdjointKernel<ExecSpace, K>::Store(                                  \
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::adjoint_stretch"), tissue.voxels, \
        interval, 6, events.orders);                                                               \
    Kokkos::parallel_for(name, Kokkos::RangePolicy<ExecSpace>(exec, 0, tissue.voxels), kernel);    \
    return;                                                                                        \
  }
  LARMOR_ADJOINT_BUCKET(16)
  LARMOR_ADJOINT_BUCKET(64)
  LARMOR_ADJOINT_BUCKET(256)
  LARMOR_ADJOINT_BUCKET(1024)
#undef LARMOR_ADJOINT_BUCKET
  throw std::logic_error(name + ": no bucket for " + std::to_string(events.orders) + " orders");
}

}  // namespace larmor::epg
