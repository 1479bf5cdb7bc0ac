// The pooled layouts: EPG with several magnetisation pools per voxel, a
// kernel of its own rather than terms on the single-pool one (its evolution is
// a coupled relaxation-exchange operator, not two scalar factors).
//
// Pools 0 .. Free-1 are free water with F+, F- and Z states; pool Free (when
// Bound = 1) is a bound (macromolecular) pool with Z states only (its T2 of
// microseconds leaves no transverse states between events). Equilibrium
// magnetisation per pool is its share of M0: 1 - f - f_bound for pool 0, f for
// pool 1 and f_bound for the bound pool. The layouts compiled are two free
// pools (myelin water), one free and a bound pool (magnetisation transfer),
// and two free and a bound pool (three pools), as in EPG-X (Malik et al., MRM
// 80:767, 2018).
//
// Per event, in the order of event_abi.hpp:
//  * a pulse rotates every free pool by the same rotation; the bound pool's Z
//    keeps exp(-a B1^2) of itself, with a = pi g(offset) sum omega1^2 dt from
//    the pulse's power integral, offset and the pool's lineshape (computed per
//    event on the host, src/simulate/device_tissue.hpp);
//  * a shift moves every free pool's F states;
//  * an interval evolves each order k by the coupled operators: the free
//    pools' transverse states by exp(M t) exp(+-i 2 pi df t), M_ii = -R2_i -
//    sum_j k_ij and M_ji = k_ij over free pools j (transverse exchange between
//    free pools; the bound pool has none), and every pool's Z by
//    exp(A t) Z (+ c at k = 0), the longitudinal step of pool_exchange.hpp
//    with exchange between the free pools and between the last free pool and
//    the bound pool. Back-exchange rates follow detailed balance,
//    k_ji = k_ij M0_i / M0_j.
//  * the receiver sums the free pools' F+_0.
//
// One thread holds one voxel's every order (the orders x pools of a voxel do
// not fit a register block); written over the number type, so the JVP is the
// same loop at a dual number.
#pragma once

#include <stdexcept>
#include <string>
#include <type_traits>

#include "common/denormals.hpp"
#include "common/dual.hpp"
#include "epg/event_loop.hpp"
#include "epg/pool_exchange.hpp"

namespace larmor::epg {

inline constexpr const char* pooled_kernel_name = "larmor::epg::pooled";

template <class Real, int Free, int Long>
struct PoolTissue {
  Real m0, b1, df;
  Real r1[Long], r2[Free], eq[Long];
  Real k[Long][Long];  // k[i][j]: exchange from pool i to pool j [1/s]
  bool precess;
};

template <class Real, int Free, int Long, class MemorySpace>
KOKKOS_INLINE_FUNCTION PoolTissue<Real, Free, Long> load_pool_tissue(
    const TissueViews<MemorySpace>& t, int v) {
  constexpr bool bound = Long > Free;
  PoolTissue<Real, Free, Long> x;
  x.m0 = tissue_value<Real>(t.m0.at(v), tissue_direction::m0);
  x.b1 = tissue_value<Real>(t.b1.at(v), tissue_direction::b1);
  const float df = t.df_hz.at(v);
  x.df = tissue_value<Real>(df, tissue_direction::df);
  x.precess = tangent_count_v<Real> > 0 || df != 0.0f;
  const float second = Free > 1 ? t.pools.fraction.at(v) : 0.0f;
  const float bound_share = bound ? t.pools.bound_fraction.at(v) : 0.0f;
  for (int i = 0; i < Long; ++i)
    for (int j = 0; j < Long; ++j) x.k[i][j] = Real(0.0f);
  x.eq[0] = Real(1.0f - second - bound_share);
  x.r1[0] = relaxation_rate<Real>(t.t1_s.at(v), tissue_direction::t1);
  x.r2[0] = relaxation_rate<Real>(t.t2_s.at(v), tissue_direction::t2);
  if constexpr (Free > 1) {
    x.eq[1] = Real(second);
    x.r1[1] = Real(relaxation_rate<float>(t.pools.t1_s.at(v), -1));
    x.r2[1] = Real(relaxation_rate<float>(t.pools.t2_s.at(v), -1));
    if (second > 0.0f) {
      const float kab = t.pools.exchange_hz.at(v);
      x.k[0][1] = Real(kab);
      x.k[1][0] = Real(kab * (1.0f - second - bound_share) / second);
    }
  }
  if constexpr (bound) {
    constexpr int b = Long - 1, f = Free - 1;  // the bound pool touches the last free pool
    x.eq[b] = Real(bound_share);
    x.r1[b] = Real(relaxation_rate<float>(t.pools.bound_t1_s.at(v), -1));
    if (bound_share > 0.0f) {
      const float kfb = t.pools.bound_exchange_hz.at(v);
      x.k[f][b] = Real(kfb);
      x.k[b][f] = Real(kfb) * x.eq[f] / Real(bound_share);
    }
  }
  return x;
}

// The coupled evolution of one interval.
template <class Real, int Free, int Long>
struct PoolEvolution {
  Real transverse[Free][Free];
  Real rot_re, rot_im;  // exp(+i 2 pi df t)
  Real longitudinal[Long][Long];
  Real recovery[Long];  // added to Z_0 of each pool
};

template <class Real, int Free, int Long>
KOKKOS_INLINE_FUNCTION void make_pool_evolution(float duration,
                                                const PoolTissue<Real, Free, Long>& x,
                                                PoolEvolution<Real, Free, Long>& ev) {
  const Real t(duration);
  Real m[Free][Free];
  for (int i = 0; i < Free; ++i) {
    Real out = x.r2[i];
    for (int j = 0; j < Free; ++j) {
      if (j == i) continue;
      out = out + x.k[i][j];
      m[j][i] = x.k[i][j] * t;
    }
    m[i][i] = -out * t;
  }
  if constexpr (Free == 1) {
    using kx::exp;
    ev.transverse[0][0] = exp(m[0][0]);
  } else {
    small_expm<Free>(m, ev.transverse);
  }
  if (x.precess) {
    sincos_turns(x.df * t, ev.rot_im, ev.rot_re);
  } else {
    ev.rot_re = Real(1.0f);
    ev.rot_im = Real(0.0f);
  }
  const PoolStep<Long, Real> step = pool_longitudinal_step<Long>(x.r1, x.eq, x.k, t);
  for (int i = 0; i < Long; ++i) {
    for (int j = 0; j < Long; ++j) ev.longitudinal[i][j] = step.e[i][j];
    ev.recovery[i] = step.c[i];
  }
}

template <int K, int Free, int Long, class Real>
struct PooledState {
  Real fp_re[Free][K], fp_im[Free][K], fm_re[Free][K], fm_im[Free][K];
  Real z_re[Long][K], z_im[Long][K];

  KOKKOS_INLINE_FUNCTION void reset(const Real (&eq)[Long]) {
    for (int p = 0; p < Free; ++p)
      for (int k = 0; k < K; ++k)
        fp_re[p][k] = fp_im[p][k] = fm_re[p][k] = fm_im[p][k] = Real(0.0f);
    for (int p = 0; p < Long; ++p) {
      for (int k = 0; k < K; ++k) z_re[p][k] = z_im[p][k] = Real(0.0f);
      z_re[p][0] = eq[p];
    }
  }
  // Every free pool's shift (PlainState::shift of adjoint_impl.hpp).
  KOKKOS_INLINE_FUNCTION void shift(int n) {
    for (int p = 0; p < Free; ++p) {
      for (int k = n - 1; k > 0; --k) {
        fp_re[p][k] = fp_re[p][k - 1];
        fp_im[p][k] = fp_im[p][k - 1];
      }
      for (int k = 0; k < n - 1; ++k) {
        fm_re[p][k] = fm_re[p][k + 1];
        fm_im[p][k] = fm_im[p][k + 1];
      }
      fm_re[p][n - 1] = fm_im[p][n - 1] = Real(0.0f);
      fp_re[p][0] = fm_re[p][0];
      fp_im[p][0] = -fm_im[p][0];
    }
  }
  KOKKOS_INLINE_FUNCTION void spoil(int n) {
    for (int p = 0; p < Free; ++p)
      for (int k = 0; k < n; ++k)
        fp_re[p][k] = fp_im[p][k] = fm_re[p][k] = fm_im[p][k] = Real(0.0f);
  }
  KOKKOS_INLINE_FUNCTION void evolve(int live, const PoolEvolution<Real, Free, Long>& ev) {
    for (int k = 0; k < live; ++k) {
      Real p_re[Free], p_im[Free], m_re[Free], m_im[Free];
      for (int i = 0; i < Free; ++i) {
        p_re[i] = p_im[i] = m_re[i] = m_im[i] = Real(0.0f);
        for (int j = 0; j < Free; ++j) {
          p_re[i] += ev.transverse[i][j] * fp_re[j][k];
          p_im[i] += ev.transverse[i][j] * fp_im[j][k];
          m_re[i] += ev.transverse[i][j] * fm_re[j][k];
          m_im[i] += ev.transverse[i][j] * fm_im[j][k];
        }
      }
      for (int i = 0; i < Free; ++i) {  // F+ turns by +df, F- by -df
        fp_re[i][k] = ev.rot_re * p_re[i] - ev.rot_im * p_im[i];
        fp_im[i][k] = ev.rot_re * p_im[i] + ev.rot_im * p_re[i];
        fm_re[i][k] = ev.rot_re * m_re[i] + ev.rot_im * m_im[i];
        fm_im[i][k] = ev.rot_re * m_im[i] - ev.rot_im * m_re[i];
      }
      Real zr[Long], zi[Long];
      for (int i = 0; i < Long; ++i) {
        zr[i] = k == 0 ? ev.recovery[i] : Real(0.0f);
        zi[i] = Real(0.0f);
        for (int j = 0; j < Long; ++j) {
          zr[i] += ev.longitudinal[i][j] * z_re[j][k];
          zi[i] += ev.longitudinal[i][j] * z_im[j][k];
        }
      }
      for (int i = 0; i < Long; ++i) {
        z_re[i][k] = zr[i];
        z_im[i][k] = zi[i];
      }
    }
  }
};

template <class ExecSpace, class Real, int K, int Free, int Bound>
struct PooledKernel {
  static constexpr int Long = Free + Bound;
  using memory_space = typename ExecSpace::memory_space;
  EventTable<memory_space> events;
  TissueViews<memory_space> tissue;
  Kokkos::View<float***, Kokkos::LayoutRight, memory_space> signals;
  Kokkos::View<float****, Kokkos::LayoutRight, memory_space> tangents;  // dual runs only

  KOKKOS_INLINE_FUNCTION void operator()(int v) const {
    const FlushDenormalsOnHost flush_denormals;
    const auto x = load_pool_tissue<Real, Free, Long>(tissue, v);
    const int n = events.orders;
    PooledState<K, Free, Long, Real> s;
    s.reset(x.eq);
    // Trains repeat their intervals: keep the last two (event_loop.hpp).
    float duration_a = -1.0f, duration_b = -1.0f;
    bool b_used_last = false;
    PoolEvolution<Real, Free, Long> slot_a, slot_b;
    for (int e = 0; e < events.count; ++e) {
      const EventRecord rec = events.records(e);
      const std::uint32_t act = action_of(rec);
      const int live = live_orders_of(rec);
      const auto kind = kind_of(rec);
      if (act & abi::action::crush_before) s.shift(n);
      if (kind == abi::EventKind::pulse) {
        const auto r = make_rotation(make_flip(Real(rec.flip) * x.b1),
                                     make_phase(Real(rec.cos_phase), Real(rec.sin_phase)));
        for (int p = 0; p < Free; ++p) {
          for (int k = 0; k < live; ++k) {
            rotate(r, s.fp_re[p][k], s.fp_im[p][k], s.fm_re[p][k], s.fm_im[p][k], s.z_re[p][k],
                   s.z_im[p][k]);
          }
        }
        if constexpr (Bound > 0) {
          const float a = tissue.pools.saturation(e);
          if (a > 0.0f) {
            using kx::exp;
            const Real kept = exp(-Real(a) * x.b1 * x.b1);
            for (int k = 0; k < live; ++k) {
              s.z_re[Long - 1][k] *= kept;
              s.z_im[Long - 1][k] *= kept;
            }
          }
        }
      } else if (kind == abi::EventKind::adc) {
        record(v, rec, x, s);
      }
      if (act & abi::action::crush_after) s.shift(n);
      if (act & abi::action::shift_after) s.shift(n);
      if (act & abi::action::spoil_after) s.spoil(n);
      if (rec.duration > 0.0f) {
        bool use_b = rec.duration == duration_b;
        if (!use_b && rec.duration != duration_a) {
          use_b = !b_used_last;
          if (use_b) {
            duration_b = rec.duration;
            make_pool_evolution(rec.duration, x, slot_b);
          } else {
            duration_a = rec.duration;
            make_pool_evolution(rec.duration, x, slot_a);
          }
        }
        b_used_last = use_b;
        s.evolve(live, use_b ? slot_b : slot_a);
      }
    }
  }

  // s = M0 sum over free pools of F+_0, demodulated.
  KOKKOS_INLINE_FUNCTION void record(int v, const EventRecord& rec,
                                     const PoolTissue<Real, Free, Long>& x,
                                     const PooledState<K, Free, Long, Real>& s) const {
    Real f_re = s.fp_re[0][0], f_im = s.fp_im[0][0];
    for (int p = 1; p < Free; ++p) {
      f_re += s.fp_re[p][0];
      f_im += s.fp_im[p][0];
    }
    Real s_re, s_im;
    demodulate(x.m0, f_re, f_im, Real(rec.cos_phase), Real(rec.sin_phase), s_re, s_im);
    signals(v, rec.output_index, 0) = value_of(s_re);
    signals(v, rec.output_index, 1) = value_of(s_im);
    if constexpr (tangent_count_v < Real >> 0) {
      for (int d = 0; d < tangent_count_v<Real>; ++d) {
        tangents(v, d, rec.output_index, 0) = tangent_of(s_re, d);
        tangents(v, d, rec.output_index, 1) = tangent_of(s_im, d);
      }
    }
  }
};

// Orders x pools above one tile's 1024 threads are refused (the limit every
// EPG kernel keeps); the order count picks the compiled bucket.
inline void check_pooled_orders(int orders, int pools, bool dual) {
  const int limit = dual ? 64 : 512;
  if (orders * pools > abi::max_orders || orders > limit) {
    throw std::invalid_argument(
        std::string(pooled_kernel_name) + ": " + std::to_string(orders) + " orders x " +
        std::to_string(pools) + " pools exceed the kernel's limit (orders x pools <= " +
        std::to_string(abi::max_orders) + ", and at most " + std::to_string(limit) +
        " orders for " + (dual ? "forward mode" : "a forward run") + ")");
  }
}

template <class ExecSpace, class Real, int Free, int Bound>
void launch_pooled_layout(
    const ExecSpace& exec, const EventTable<typename ExecSpace::memory_space>& events,
    const TissueViews<typename ExecSpace::memory_space>& tissue,
    const Kokkos::View<float***, Kokkos::LayoutRight, typename ExecSpace::memory_space>& signals,
    const Kokkos::View<float****, Kokkos::LayoutRight, typename ExecSpace::memory_space>&
        tangents) {
  const auto run = [&](auto bucket) {
    PooledKernel<ExecSpace, Real, decltype(bucket)::value, Free, Bound> kernel;
    kernel.events = events;
    kernel.tissue = tissue;
    kernel.signals = signals;
    kernel.tangents = tangents;
    Kokkos::parallel_for(pooled_kernel_name, Kokkos::RangePolicy<ExecSpace>(exec, 0, tissue.voxels),
                         kernel);
  };
  if (events.orders <= 16) {
    run(std::integral_constant<int, 16>{});
  } else if (events.orders <= 64) {
    run(std::integral_constant<int, 64>{});
  } else if constexpr (tangent_count_v<Real> == 0) {
    run(std::integral_constant<int, 512>{});
  }
}

// The pooled layout the tissue selects, at number type Real.
template <class ExecSpace, class Real>
void simulate_pooled(
    const ExecSpace& exec, const EventTable<typename ExecSpace::memory_space>& events,
    const TissueViews<typename ExecSpace::memory_space>& tissue,
    const Kokkos::View<float***, Kokkos::LayoutRight, typename ExecSpace::memory_space>& signals,
    const Kokkos::View<float****, Kokkos::LayoutRight, typename ExecSpace::memory_space>&
        tangents) {
  const auto& p = tissue.pools;
  check_pooled_orders(events.orders, p.count(), tangent_count_v<Real> > 0);
  if (p.free == 2 && p.bound == 0) {
    launch_pooled_layout<ExecSpace, Real, 2, 0>(exec, events, tissue, signals, tangents);
  } else if (p.free == 1 && p.bound == 1) {
    launch_pooled_layout<ExecSpace, Real, 1, 1>(exec, events, tissue, signals, tangents);
  } else if (p.free == 2 && p.bound == 1) {
    launch_pooled_layout<ExecSpace, Real, 2, 1>(exec, events, tissue, signals, tangents);
  } else {
    throw std::invalid_argument(std::string(pooled_kernel_name) + ": no layout for " +
                                std::to_string(p.free) + " free and " + std::to_string(p.bound) +
                                " bound pools");
  }
}

}  // namespace larmor::epg
