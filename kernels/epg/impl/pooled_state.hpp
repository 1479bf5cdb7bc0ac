// The pooled models' state and steps: EPG with several magnetisation pools
// per voxel, shared by the forward kernel (pooled_impl.hpp) and its reverse
// sweep (pooled_adjoint.hpp). Its evolution is a coupled relaxation-exchange
// operator, not two scalar factors, so pooled models run layouts of their own
// rather than terms on the single-pool kernels.
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
//    event on the host, src/simulate/impl/device_tissue.hpp);
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
// Everything is written over the number type: the JVP is the forward loop at
// a dual number, and the reverse sweep differentiates an interval's operators
// by evaluating them at a dual number along (T1, T2, df, duration).
#pragma once

#include "common/dual.hpp"
#include "epg/impl/event_loop.hpp"
#include "epg/impl/pool_exchange.hpp"

namespace larmor::epg {

template <class Real, int Free, int Long>
struct PoolTissue {
  Real m0, b1, df;
  Real r1[Long], r2[Free], eq[Long];
  Real k[Long][Long];  // k[i][j]: exchange from pool i to pool j [1/s]
  bool precess;
};

// How a kernel makes its tissue numbers from the stored floats: `seed(value,
// tissue_direction)` gives the number (the independent variable of forward
// mode, a constant, or the reverse sweep's seeding).
template <class Real>
struct ForwardSeed {
  KOKKOS_FORCEINLINE_FUNCTION Real operator()(float value, int direction) const {
    return tissue_value<Real>(value, direction);
  }
};

// 1/T through the seeded T (zero for T = infinity: no relaxation).
template <class Real, class Seed>
KOKKOS_INLINE_FUNCTION Real seeded_rate(const Seed& seed, float t, int direction) {
  if (!(t > 0.0f) || !(t <= 3.4028235e38f)) return Real(0.0f);
  return Real(1.0f) / seed(t, direction);
}

template <class Real, int Free, int Long, class MemorySpace, class Seed>
KOKKOS_INLINE_FUNCTION PoolTissue<Real, Free, Long> load_pool_tissue(
    const TissueViews<MemorySpace>& t, int v, const Seed& seed) {
  constexpr bool bound = Long > Free;
  PoolTissue<Real, Free, Long> x;
  x.m0 = seed(t.m0.at(v), tissue_direction::m0);
  x.b1 = seed(t.b1.at(v), tissue_direction::b1);
  const float df = t.df_hz.at(v);
  x.df = seed(df, tissue_direction::df);
  x.precess = tangent_count_v<Real> > 0 || df != 0.0f;
  const float second = Free > 1 ? t.pools.fraction.at(v) : 0.0f;
  const float bound_share = bound ? t.pools.bound_fraction.at(v) : 0.0f;
  for (int i = 0; i < Long; ++i)
    for (int j = 0; j < Long; ++j) x.k[i][j] = Real(0.0f);
  x.eq[0] = Real(1.0f - second - bound_share);
  x.r1[0] = seeded_rate<Real>(seed, t.t1_s.at(v), tissue_direction::t1);
  x.r2[0] = seeded_rate<Real>(seed, t.t2_s.at(v), tissue_direction::t2);
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
KOKKOS_INLINE_FUNCTION void make_pool_evolution(const Real& t,
                                                const PoolTissue<Real, Free, Long>& x,
                                                PoolEvolution<Real, Free, Long>& ev) {
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

// Trains repeat their intervals: the last two evolutions are kept (as the
// single-pool loop keeps its factors, event_loop.hpp).
// How an interval's duration enters its operators: a constant, or (for the
// reverse sweep's interval derivatives) a seeded variable.
struct PlainDuration {
  template <class Real>
  static KOKKOS_FORCEINLINE_FUNCTION Real make(float duration) {
    return Real(duration);
  }
};

template <class Real, int Free, int Long, class Duration = PlainDuration>
struct PoolIntervalCache {
  float duration_a = -1.0f, duration_b = -1.0f;
  bool b_used_last = false;
  PoolEvolution<Real, Free, Long> slot_a, slot_b;

  KOKKOS_INLINE_FUNCTION const PoolEvolution<Real, Free, Long>& get(
      float duration, const PoolTissue<Real, Free, Long>& x) {
    bool use_b = duration == duration_b;
    if (!use_b && duration != duration_a) {
      use_b = !b_used_last;
      if (use_b) {
        duration_b = duration;
        make_pool_evolution(Duration::template make<Real>(duration), x, slot_b);
      } else {
        duration_a = duration;
        make_pool_evolution(Duration::template make<Real>(duration), x, slot_a);
      }
    }
    b_used_last = use_b;
    return use_b ? slot_b : slot_a;
  }
};

// Every order of every pool of one voxel. Components (for checkpoint rows):
// per free pool F+ re, im, F- re, im; then per pool Z re, im.
template <int K, int Free, int Long, class Real>
struct PooledState {
  static constexpr int components = 4 * Free + 2 * Long;
  Real fp_re[Free][K], fp_im[Free][K], fm_re[Free][K], fm_im[Free][K];
  Real z_re[Long][K], z_im[Long][K];

  KOKKOS_INLINE_FUNCTION Real* component(int c) {
    if (c < 4 * Free) {
      const int p = c / 4;
      Real* parts[4] = {fp_re[p], fp_im[p], fm_re[p], fm_im[p]};
      return parts[c % 4];
    }
    const int p = (c - 4 * Free) / 2;
    return (c - 4 * Free) % 2 ? z_im[p] : z_re[p];
  }
  KOKKOS_INLINE_FUNCTION void clear() {
    for (int p = 0; p < Free; ++p)
      for (int k = 0; k < K; ++k)
        fp_re[p][k] = fp_im[p][k] = fm_re[p][k] = fm_im[p][k] = Real(0.0f);
    for (int p = 0; p < Long; ++p)
      for (int k = 0; k < K; ++k) z_re[p][k] = z_im[p][k] = Real(0.0f);
  }
  KOKKOS_INLINE_FUNCTION void reset(const Real (&eq)[Long]) {
    clear();
    for (int p = 0; p < Long; ++p) z_re[p][0] = eq[p];
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
  // The shift's transpose on an adjoint state (PlainState::unshift).
  KOKKOS_INLINE_FUNCTION void unshift(int n) {
    for (int p = 0; p < Free; ++p) {
      const Real a_re = fp_re[p][0], a_im = fp_im[p][0];
      for (int k = 0; k < n - 1; ++k) {
        fp_re[p][k] = fp_re[p][k + 1];
        fp_im[p][k] = fp_im[p][k + 1];
      }
      fp_re[p][n - 1] = fp_im[p][n - 1] = Real(0.0f);
      for (int k = n - 1; k > 0; --k) {
        fm_re[p][k] = fm_re[p][k - 1];
        fm_im[p][k] = fm_im[p][k - 1];
      }
      fm_re[p][0] = fm_im[p][0] = Real(0.0f);
      if (n > 1) {
        fm_re[p][1] += a_re;
        fm_im[p][1] -= a_im;
      }
    }
  }
  KOKKOS_INLINE_FUNCTION void spoil(int n) {
    for (int p = 0; p < Free; ++p)
      for (int k = 0; k < n; ++k)
        fp_re[p][k] = fp_im[p][k] = fm_re[p][k] = fm_im[p][k] = Real(0.0f);
  }
  KOKKOS_INLINE_FUNCTION void rotate_free(const RotationCoefficients<Real>& r, int live) {
    for (int p = 0; p < Free; ++p) {
      for (int k = 0; k < live; ++k) {
        rotate(r, fp_re[p][k], fp_im[p][k], fm_re[p][k], fm_im[p][k], z_re[p][k], z_im[p][k]);
      }
    }
  }
  KOKKOS_INLINE_FUNCTION void scale_bound(const Real& kept, int live) {
    for (int k = 0; k < live; ++k) {
      z_re[Long - 1][k] *= kept;
      z_im[Long - 1][k] *= kept;
    }
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

// Every pool sees the same field: the scalar b1 times a transmit array's
// field for the pulse's shim setting (gain and phase; identity without one).
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION PulseAxis pooled_axis(const TissueViews<MemorySpace>& tissue, int v,
                                             const EventRecord& rec) {
  return pulse_axis(rec, tissue.transmit.field(v, shim_of(rec)));
}

template <class Real, int Free, int Long>
KOKKOS_INLINE_FUNCTION RotationCoefficients<Real> pooled_rotation(
    const EventRecord& rec, const PulseAxis& axis, const PoolTissue<Real, Free, Long>& x) {
  return make_rotation(make_flip(Real(rec.flip * axis.gain) * pulse_b1(rec, x.b1)),
                       make_phase(Real(axis.cos_phase), Real(axis.sin_phase)));
}

// The bound pool's share kept through a pulse, exp(-a B1^2), with `exponent`
// a times the transmit array's gain squared.
template <class Real>
KOKKOS_INLINE_FUNCTION Real bound_kept(float exponent, const Real& b1) {
  using kx::exp;
  return exp(-Real(exponent) * b1 * b1);
}

// One event forward; `sample(state)` is called at a readout, before the
// shifts that follow it.
template <int K, int Free, int Long, class Real, class MemorySpace, class Sample>
KOKKOS_INLINE_FUNCTION void apply_pooled_event(PooledState<K, Free, Long, Real>& s,
                                               const EventTable<MemorySpace>& events, int e,
                                               const TissueViews<MemorySpace>& tissue, int v,
                                               const PoolTissue<Real, Free, Long>& x,
                                               PoolIntervalCache<Real, Free, Long>& cache,
                                               const Sample& sample) {
  const int n = events.orders;
  const EventRecord rec = events.records(e);
  const std::uint32_t act = action_of(rec);
  const int live = live_orders_of(rec);
  const auto kind = kind_of(rec);
  if (act & abi::action::crush_before) s.shift(n);
  if (kind == abi::EventKind::pulse) {
    const PulseAxis axis = pooled_axis(tissue, v, rec);
    s.rotate_free(pooled_rotation(rec, axis, x), live);
    if constexpr (Long > Free) {
      const float a = tissue.pools.saturation(e) * axis.gain * axis.gain;
      if (a > 0.0f) s.scale_bound(bound_kept(a, pulse_b1(rec, x.b1)), live);
    }
  } else if (kind == abi::EventKind::adc) {
    sample(rec, s);
  }
  if (act & abi::action::crush_after) s.shift(n);
  if (act & abi::action::shift_after) s.shift(n);
  if (act & abi::action::spoil_after) s.spoil(n);
  if (rec.duration > 0.0f) s.evolve(live, cache.get(rec.duration, x));
}

}  // namespace larmor::epg
