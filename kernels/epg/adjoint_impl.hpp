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

#include "common/denormals.hpp"
#include "common/dual.hpp"
#include "epg/adjoint.hpp"
#include "epg/event_loop.hpp"

namespace larmor::epg {

namespace adjoint_detail {

// Every order of one voxel, plainly indexed (the reverse sweep needs the
// state at arbitrary points, so it is copied often; rings would not help).
template <int K, class Real>
struct PlainState {
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

template <class Real>
struct VoxelTissue {
  Real m0, t1, t2, b1, df, r1, r2;
  bool precess;
};

// A tissue value; for a dual number, with the tangent of the HVP direction.
template <class Real>
KOKKOS_INLINE_FUNCTION Real seeded(float value, float tangent) {
  Real r(value);
  if constexpr (tangent_count_v < Real >> 0) r.tangent[0] = tangent;
  (void)tangent;
  return r;
}

// 1/T, zero for T = infinity (no relaxation).
template <class Real>
KOKKOS_INLINE_FUNCTION Real rate_of(const Real& t) {
  const float v = scalar_value(t);
  if (!(v > 0.0f) || !(v <= 3.4028235e38f)) return Real(0.0f);
  return Real(1.0f) / t;
}

template <class Real, class MemorySpace>
KOKKOS_INLINE_FUNCTION VoxelTissue<Real> voxel_tissue(
    const TissueViews<MemorySpace>& t,
    const Kokkos::View<const float**, Kokkos::LayoutRight, MemorySpace>& directions, int v) {
  float u[tissue_direction::count] = {0, 0, 0, 0, 0};
  if constexpr (tangent_count_v < Real >> 0) {
    for (int d = 0; d < tissue_direction::count; ++d) u[d] = directions(v, d);
  }
  VoxelTissue<Real> x;
  x.m0 = seeded<Real>(t.m0.at(v), u[tissue_direction::m0]);
  x.t1 = seeded<Real>(t.t1_s.at(v), u[tissue_direction::t1]);
  x.t2 = seeded<Real>(t.t2_s.at(v), u[tissue_direction::t2]);
  x.b1 = seeded<Real>(t.b1.at(v), u[tissue_direction::b1]);
  x.df = seeded<Real>(t.df_hz.at(v), u[tissue_direction::df]);
  x.r1 = rate_of(x.t1);
  x.r2 = rate_of(x.t2);
  // A tangent along df needs the precession even where df is zero.
  x.precess = tangent_count_v<Real> > 0 || scalar_value(x.df) != 0.0f;
  return x;
}

template <class Real>
KOKKOS_INLINE_FUNCTION RotationCoefficients<Real> rotation_of(const EventRecord& rec,
                                                              const VoxelTissue<Real>& x) {
  return make_rotation(make_flip(Real(rec.flip) * x.b1),
                       make_phase(Real(rec.cos_phase), Real(rec.sin_phase)));
}

template <class Real>
KOKKOS_INLINE_FUNCTION Evolution<Real> evolution_of(const EventRecord& rec,
                                                    const VoxelTissue<Real>& x) {
  return make_evolution(Real(rec.duration), x.r1, x.r2, x.df, x.precess);
}

// One event forward, as the fused kernel computes it (the spoiler applied as
// a step of its own rather than folded into the decay: the same values).
template <int K, class Real>
KOKKOS_INLINE_FUNCTION void apply_event(PlainState<K, Real>& s, const EventRecord& rec,
                                        const VoxelTissue<Real>& x, int n) {
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
    const auto ev = evolution_of(rec, x);
    for (int k = 0; k < live; ++k) {
      evolve_transverse(ev, s.fp_re[k], s.fp_im[k], s.fm_re[k], s.fm_im[k]);
      evolve_longitudinal(ev, k == 0, s.z_re[k], s.z_im[k]);
    }
  }
}

// Tissue gradients of one voxel, accumulated over the reverse sweep.
template <class Real>
struct Gradients {
  Real tissue[tissue_direction::count] = {};
};

// sum over the live orders of <adjoint, tangent i of the stepped state>.
template <int K, class Real, class D, int N>
KOKKOS_INLINE_FUNCTION void accumulate_pairings(const PlainState<K, Real>& lam, int k,
                                                const D (&stepped)[6], Real (&g)[N]) {
  for (int i = 0; i < N; ++i) {
    g[i] += lam.fp_re[k] * stepped[0].tangent[i] + lam.fp_im[k] * stepped[1].tangent[i] +
            lam.fm_re[k] * stepped[2].tangent[i] + lam.fm_im[k] * stepped[3].tangent[i] +
            lam.z_re[k] * stepped[4].tangent[i] + lam.z_im[k] * stepped[5].tangent[i];
  }
}

// <adjoint, d(evolution)/d(r1, r2, df, t) applied to s> over the live orders.
template <int K, class Real>
KOKKOS_INLINE_FUNCTION void evolution_gradients(const PlainState<K, Real>& s,
                                                const PlainState<K, Real>& lam,
                                                const EventRecord& rec, const VoxelTissue<Real>& x,
                                                int live, Real (&g)[4]) {
  using D = Dual<Real, 4>;
  const D r1 = scalar_value(x.r1) > 0.0f ? D::variable(x.r1, 0) : D(0.0f);
  const D r2 = scalar_value(x.r2) > 0.0f ? D::variable(x.r2, 1) : D(0.0f);
  const auto ev = make_evolution(D::variable(Real(rec.duration), 3), r1, r2, D::variable(x.df, 2));
  for (int k = 0; k < live; ++k) {
    D m[6] = {D(s.fp_re[k]), D(s.fp_im[k]), D(s.fm_re[k]),
              D(s.fm_im[k]), D(s.z_re[k]),  D(s.z_im[k])};
    evolve_transverse(ev, m[0], m[1], m[2], m[3]);
    evolve_longitudinal(ev, k == 0, m[4], m[5]);
    accumulate_pairings(lam, k, m, g);
  }
}

// <adjoint, d(rotation)/d(flip x B1, phase) applied to s> over the live orders.
template <int K, class Real>
KOKKOS_INLINE_FUNCTION void rotation_gradients(const PlainState<K, Real>& s,
                                               const PlainState<K, Real>& lam,
                                               const EventRecord& rec, const VoxelTissue<Real>& x,
                                               int live, Real (&g)[2]) {
  using D = Dual<Real, 2>;
  D cos_p(rec.cos_phase), sin_p(rec.sin_phase);
  cos_p.tangent[1] = Real(-rec.sin_phase);
  sin_p.tangent[1] = Real(rec.cos_phase);
  const auto r =
      make_rotation(make_flip(D::variable(Real(rec.flip) * x.b1, 0)), make_phase(cos_p, sin_p));
  for (int k = 0; k < live; ++k) {
    D m[6] = {D(s.fp_re[k]), D(s.fp_im[k]), D(s.fm_re[k]),
              D(s.fm_im[k]), D(s.z_re[k]),  D(s.z_im[k])};
    rotate(r, m[0], m[1], m[2], m[3], m[4], m[5]);
    accumulate_pairings(lam, k, m, g);
  }
}

}  // namespace adjoint_detail

template <class ExecSpace, int K, class Real>
struct AdjointKernel {
  using memory_space = typename ExecSpace::memory_space;
  using State = adjoint_detail::PlainState<K, Real>;
  using Tissue = adjoint_detail::VoxelTissue<Real>;
  // [voxel][slot][6 components x parts][K]
  using Store = Kokkos::View<float****, Kokkos::LayoutLeft, memory_space>;
  static constexpr int parts = part_count_v<Real>;

  EventTable<memory_space> events;
  TissueViews<memory_space> tissue;
  Kokkos::View<const float**, Kokkos::LayoutRight, memory_space> directions;
  Kokkos::View<const float***, Kokkos::LayoutRight, memory_space> cotangents;
  ReverseOutputs<memory_space> out;
  Store checkpoints, stretch;
  int interval = 1;

  KOKKOS_INLINE_FUNCTION void save(const Store& store, int v, int slot, State& s, int n) const {
    for (int c = 0; c < 6; ++c) {
      const Real* component = s.component(c);
      for (int j = 0; j < parts; ++j) {
        for (int k = 0; k < n; ++k) store(v, slot, c * parts + j, k) = part_of(component[k], j);
      }
    }
  }
  KOKKOS_INLINE_FUNCTION void load(const Store& store, int v, int slot, State& s, int n) const {
    for (int c = 0; c < 6; ++c) {
      Real* component = s.component(c);
      for (int j = 0; j < parts; ++j) {
        for (int k = 0; k < n; ++k) part_of(component[k], j) = store(v, slot, c * parts + j, k);
      }
    }
  }

  // Adds one event's sequence derivative (and, at dual numbers, its tangent).
  KOKKOS_INLINE_FUNCTION void add_sequence(int e, int column, const Real& g) const {
    const float value = part_of(g, 0);
    if (value != 0.0f) Kokkos::atomic_add(&out.sequence_gradients(e, column), value);
    if constexpr (parts > 1) {
      const float tangent = part_of(g, 1);
      if (tangent != 0.0f) Kokkos::atomic_add(&out.sequence_hvp(e, column), tangent);
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(int v) const {
    using namespace adjoint_detail;
    const FlushDenormalsOnHost flush_denormals;
    const int n = events.orders;
    const Tissue x = voxel_tissue<Real>(tissue, directions, v);
    State s, s1, lam;
    s.clear(n);
    s.z_re[0] = Real(1.0f);
    for (int e = 0; e < events.count; ++e) {
      if (e % interval == 0) save(checkpoints, v, e / interval, s, n);
      apply_event(s, events.records(e), x, n);
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
        apply_event(s, events.records(e), x, n);
      }
      for (int e = end - 1; e >= first; --e) {
        load(stretch, v, e - first, s, n);
        reverse_event(v, e, events.records(e), x, n, s, s1, lam, g);
      }
    }
    for (int d = 0; d < tissue_direction::count; ++d) {
      out.tissue_gradients(v, d) = part_of(g.tissue[d], 0);
      if constexpr (parts > 1) out.tissue_hvp(v, d) = part_of(g.tissue[d], 1);
    }
  }

  // Takes the adjoint after event `e` back to its start; `s` holds the state
  // at its start on entry (and is used as scratch).
  KOKKOS_INLINE_FUNCTION void reverse_event(int v, int e, const EventRecord& rec, const Tissue& x,
                                            int n, State& s, State& s1, State& lam,
                                            adjoint_detail::Gradients<Real>& g) const {
    using namespace adjoint_detail;
    const std::uint32_t act = action_of(rec);
    const int live = live_orders_of(rec);
    const auto kind = kind_of(rec);
    // The states inside the event: s1 after the leading crusher, s (s3)
    // before the interval.
    if (act & abi::action::crush_before) s.shift(n);
    s1 = s;
    RotationCoefficients<Real> rot{};
    if (kind == abi::EventKind::pulse) {
      rot = rotation_of(rec, x);
      for (int k = 0; k < live; ++k) {
        rotate(rot, s.fp_re[k], s.fp_im[k], s.fm_re[k], s.fm_im[k], s.z_re[k], s.z_im[k]);
      }
    }
    if (act & abi::action::crush_after) s.shift(n);
    if (act & abi::action::shift_after) s.shift(n);
    if (act & abi::action::spoil_after) s.clear_transverse(n);
    Real seq_flip(0.0f), seq_phase(0.0f), seq_duration(0.0f);

    if (rec.duration > 0.0f) {
      Real ge[4] = {};
      evolution_gradients(s, lam, rec, x, live, ge);
      g.tissue[tissue_direction::t1] += ge[0] * -(x.r1 * x.r1);
      g.tissue[tissue_direction::t2] += ge[1] * -(x.r2 * x.r2);
      g.tissue[tissue_direction::df] += ge[2];
      seq_duration = ge[3];
      // Transpose of the evolution: the conjugate factor on F+ and F-.
      const auto ev = evolution_of(rec, x);
      auto conj_ev = ev;
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
      Real gr[2] = {};
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
      const Real q_re = s1.fp_re[0] * c + s1.fp_im[0] * sn;
      const Real q_im = s1.fp_im[0] * c - s1.fp_re[0] * sn;
      g.tissue[tissue_direction::m0] += q_re * w_re + q_im * w_im;
      seq_phase = x.m0 * (q_im * w_re - q_re * w_im);
      lam.fp_re[0] += x.m0 * (w_re * c - w_im * sn);
      lam.fp_im[0] += x.m0 * (w_im * c + w_re * sn);
    }
    if (act & abi::action::crush_before) lam.unshift(n);
    add_sequence(e, sequence_gradient::flip, seq_flip);
    add_sequence(e, sequence_gradient::phase, seq_phase);
    add_sequence(e, sequence_gradient::duration, seq_duration);
  }
};

namespace adjoint_detail {

template <class ExecSpace, int K, class Real>
void launch_reverse(const ExecSpace& exec,
                    const EventTable<typename ExecSpace::memory_space>& events,
                    const TissueViews<typename ExecSpace::memory_space>& tissue,
                    const Kokkos::View<const float**, Kokkos::LayoutRight,
                                       typename ExecSpace::memory_space>& directions,
                    const Kokkos::View<const float***, Kokkos::LayoutRight,
                                       typename ExecSpace::memory_space>& cotangents,
                    const ReverseOutputs<typename ExecSpace::memory_space>& out, int interval) {
  using Kernel = AdjointKernel<ExecSpace, K, Real>;
  const int stretches = (events.count + interval - 1) / interval;
  Kernel kernel;
  kernel.events = events;
  kernel.tissue = tissue;
  kernel.directions = directions;
  kernel.cotangents = cotangents;
  kernel.out = out;
  kernel.interval = interval;
  const int components = 6 * Kernel::parts;
  kernel.checkpoints = typename Kernel::Store(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::adjoint_checkpoints"), tissue.voxels,
      stretches, components, events.orders);
  kernel.stretch = typename Kernel::Store(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::adjoint_stretch"), tissue.voxels,
      interval, components, events.orders);
  Kokkos::parallel_for(adjoint_kernel_name, Kokkos::RangePolicy<ExecSpace>(exec, 0, tissue.voxels),
                       kernel);
}

// Checks the shapes, picks the interval and the order bucket, and launches.
template <class ExecSpace, class Real>
void simulate_reverse(
    const ExecSpace& exec, const EventTable<typename ExecSpace::memory_space>& events,
    const TissueViews<typename ExecSpace::memory_space>& tissue,
    const Kokkos::View<const float**, Kokkos::LayoutRight, typename ExecSpace::memory_space>&
        directions,
    const Kokkos::View<const float***, Kokkos::LayoutRight, typename ExecSpace::memory_space>&
        cotangents,
    const ReverseOutputs<typename ExecSpace::memory_space>& out, int checkpoint_interval) {
  const std::string name = adjoint_kernel_name;
  if (tissue.voxels <= 0 || events.count == 0) return;
  check_order_limit(events.orders, adjoint_kernel_name);
  const auto voxels = std::size_t(tissue.voxels);
  const auto wrong = [&](const auto& m, std::size_t rows, int columns) {
    return m.extent(0) < rows || m.extent(1) != std::size_t(columns);
  };
  bool bad = cotangents.extent(0) < voxels || cotangents.extent(1) < std::size_t(events.samples) ||
             cotangents.extent(2) != 2 ||
             wrong(out.tissue_gradients, voxels, tissue_direction::count) ||
             wrong(out.sequence_gradients, std::size_t(events.count), sequence_gradient::count);
  if constexpr (tangent_count_v < Real >> 0) {
    bad = bad || wrong(directions, voxels, tissue_direction::count) ||
          wrong(out.tissue_hvp, voxels, tissue_direction::count) ||
          wrong(out.sequence_hvp, std::size_t(events.count), sequence_gradient::count);
  }
  if (bad) {
    throw std::invalid_argument(
        name + ": a direction, cotangent or gradient array has the wrong shape for " +
        std::to_string(tissue.voxels) + " voxels, " + std::to_string(events.samples) +
        " samples and " + std::to_string(events.count) + " events");
  }
  if (checkpoint_interval < 0) {
    throw std::invalid_argument(name + ": checkpoint_interval must be >= 1 (0: automatic), got " +
                                std::to_string(checkpoint_interval));
  }
  const int interval = checkpoint_interval > 0 ? std::min(checkpoint_interval, events.count)
                                               : default_checkpoint_interval(events.count);
  if (events.orders <= 16)
    return launch_reverse<ExecSpace, 16, Real>(exec, events, tissue, directions, cotangents, out,
                                               interval);
  if (events.orders <= 64)
    return launch_reverse<ExecSpace, 64, Real>(exec, events, tissue, directions, cotangents, out,
                                               interval);
  if (events.orders <= 256)
    return launch_reverse<ExecSpace, 256, Real>(exec, events, tissue, directions, cotangents, out,
                                                interval);
  return launch_reverse<ExecSpace, 1024, Real>(exec, events, tissue, directions, cotangents, out,
                                               interval);
}

}  // namespace adjoint_detail

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
  ReverseOutputs<typename ExecSpace::memory_space> out;
  out.tissue_gradients = tissue_gradients;
  out.sequence_gradients = sequence_gradients;
  adjoint_detail::simulate_reverse<ExecSpace, float>(exec, events, tissue, {}, cotangents, out,
                                                     checkpoint_interval);
}

template <class ExecSpace>
void simulate_tissue_hvp(
    const ExecSpace& exec, const EventTable<typename ExecSpace::memory_space>& events,
    const TissueViews<typename ExecSpace::memory_space>& tissue,
    const Kokkos::View<const float**, Kokkos::LayoutRight, typename ExecSpace::memory_space>&
        directions,
    const Kokkos::View<const float***, Kokkos::LayoutRight, typename ExecSpace::memory_space>&
        cotangents,
    const Kokkos::View<float**, Kokkos::LayoutRight, typename ExecSpace::memory_space>&
        tissue_gradients,
    const Kokkos::View<float**, Kokkos::LayoutRight, typename ExecSpace::memory_space>&
        sequence_gradients,
    const Kokkos::View<float**, Kokkos::LayoutRight, typename ExecSpace::memory_space>& tissue_hvp,
    const Kokkos::View<float**, Kokkos::LayoutRight, typename ExecSpace::memory_space>&
        sequence_hvp,
    int checkpoint_interval) {
  ReverseOutputs<typename ExecSpace::memory_space> out{tissue_gradients, sequence_gradients,
                                                       tissue_hvp, sequence_hvp};
  adjoint_detail::simulate_reverse<ExecSpace, Dual<float, 1>>(exec, events, tissue, directions,
                                                              cotangents, out, checkpoint_interval);
}

}  // namespace larmor::epg
