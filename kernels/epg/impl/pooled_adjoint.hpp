// The reverse sweep (vector-Jacobian product, and at a one-tangent dual
// number the Hessian-vector product) of the pooled layouts (pooled_state.hpp).
//
// The checkpointing is the single-pool plain sweep's (adjoint_impl.hpp): one
// thread walks one voxel, keeping its state every C events and replaying each
// stretch before walking it backwards. The transposes: a shift's is the shift
// the other way per free pool; a pulse's is the adjoint rotation per free pool
// and the bound pool's kept share; an interval's is the transposed coupled
// operator (T^T exp(-+i 2 pi df t) on the free pools' F+ and F-, E^T on Z).
//
// An interval's derivatives along T1, T2, df and its duration come from its
// operators evaluated at a dual number along those four (IntervalDual): with
// S the state before the interval and l the adjoint after it,
//   dL/dp = sum_ij dT_ij/dp W_ij + Re(dc/dp Q) + sum_ij dE_ij/dp V_ij
//           + sum_i drecovery_i/dp Re l_Z,i,0,
// where c = exp(i 2 pi df t), W_ij = sum_k Re(c conj(l+_ik) F+_jk + conj(c)
// conj(l-_ik) F-_jk), Q = sum_ik conj(l+_ik) (T F+)_ik + l-_ik conj(T F-)_ik
// and V_ij = sum_k Re(conj(lz_ik) Z_jk): the operators are small matrices, so
// differentiating them costs a few dozen numbers per interval while the state
// is touched once, as the forward step touches it.
#pragma once

#include <stdexcept>
#include <string>
#include <type_traits>

#include "common/denormals.hpp"
#include "common/dual.hpp"
#include "epg/impl/adjoint_impl.hpp"
#include "epg/impl/pooled_state.hpp"

namespace larmor::epg {

namespace pooled_reverse {

namespace interval_parameter {
inline constexpr int t1 = 0, t2 = 1, df = 2, duration = 3, count = 4;
}

template <class Real>
using IntervalDual = Dual<Real, interval_parameter::count>;

// The tissue numbers of the sweep: constants, with the HVP direction's
// tangent at a dual number.
template <class Real>
struct ReverseSeed {
  float u[tissue_direction::count];
  KOKKOS_FORCEINLINE_FUNCTION Real operator()(float value, int direction) const {
    return adjoint_detail::seeded<Real>(value, u[direction]);
  }
};

// The same, as the independent variables T1, T2 and df of an interval's
// derivatives.
template <class Real>
struct IntervalSeed {
  float u[tissue_direction::count];
  KOKKOS_FORCEINLINE_FUNCTION IntervalDual<Real> operator()(float value, int direction) const {
    IntervalDual<Real> r(adjoint_detail::seeded<Real>(value, u[direction]));
    if (direction == tissue_direction::t1) r.tangent[interval_parameter::t1] = Real(1.0f);
    if (direction == tissue_direction::t2) r.tangent[interval_parameter::t2] = Real(1.0f);
    if (direction == tissue_direction::df) r.tangent[interval_parameter::df] = Real(1.0f);
    return r;
  }
};

struct SeededDuration {
  template <class Number>
  static KOKKOS_FORCEINLINE_FUNCTION Number make(float duration) {
    Number r(duration);
    r.tangent[interval_parameter::duration] = decltype(r.value)(1.0f);
    return r;
  }
};

// The reverse of one interval over the live orders: `s` is the state before
// it, `lam` goes from the adjoint after it to the adjoint before it. Writes
// dL/d{T1, T2, df, duration}.
template <int K, int Free, int Long, class Real>
KOKKOS_INLINE_FUNCTION void reverse_evolution(
    const PooledState<K, Free, Long, Real>& s, PooledState<K, Free, Long, Real>& lam,
    const PoolEvolution<IntervalDual<Real>, Free, Long>& evd, int live,
    Real (&g)[interval_parameter::count]) {
  Real t[Free][Free], e[Long][Long], w[Free][Free], vz[Long][Long], lz0[Long];
  for (int i = 0; i < Free; ++i)
    for (int j = 0; j < Free; ++j) {
      t[i][j] = value_of(evd.transverse[i][j]);
      w[i][j] = Real(0.0f);
    }
  for (int i = 0; i < Long; ++i) {
    for (int j = 0; j < Long; ++j) {
      e[i][j] = value_of(evd.longitudinal[i][j]);
      vz[i][j] = Real(0.0f);
    }
    lz0[i] = live > 0 ? lam.z_re[i][0] : Real(0.0f);
  }
  const Real c_re = value_of(evd.rot_re), c_im = value_of(evd.rot_im);
  Real q_re(0.0f), q_im(0.0f);
  for (int k = 0; k < live; ++k) {
    Real mp_re[Free], mp_im[Free], mm_re[Free], mm_im[Free];
    for (int i = 0; i < Free; ++i) {
      Real p_re(0.0f), p_im(0.0f), m_re(0.0f), m_im(0.0f);
      for (int j = 0; j < Free; ++j) {
        p_re += t[i][j] * s.fp_re[j][k];
        p_im += t[i][j] * s.fp_im[j][k];
        m_re += t[i][j] * s.fm_re[j][k];
        m_im += t[i][j] * s.fm_im[j][k];
      }
      const Real lp_re = lam.fp_re[i][k], lp_im = lam.fp_im[i][k];
      const Real lm_re = lam.fm_re[i][k], lm_im = lam.fm_im[i][k];
      q_re += lp_re * p_re + lp_im * p_im + lm_re * m_re + lm_im * m_im;
      q_im += lp_re * p_im - lp_im * p_re + lm_im * m_re - lm_re * m_im;
      mp_re[i] = c_re * lp_re + c_im * lp_im;  // conj(c) l+
      mp_im[i] = c_re * lp_im - c_im * lp_re;
      mm_re[i] = c_re * lm_re - c_im * lm_im;  // c l-
      mm_im[i] = c_re * lm_im + c_im * lm_re;
    }
    for (int i = 0; i < Free; ++i) {
      for (int j = 0; j < Free; ++j) {
        w[i][j] += mp_re[i] * s.fp_re[j][k] + mp_im[i] * s.fp_im[j][k] + mm_re[i] * s.fm_re[j][k] +
                   mm_im[i] * s.fm_im[j][k];
      }
    }
    for (int j = 0; j < Free; ++j) {
      Real ap_re(0.0f), ap_im(0.0f), am_re(0.0f), am_im(0.0f);
      for (int i = 0; i < Free; ++i) {
        ap_re += t[i][j] * mp_re[i];
        ap_im += t[i][j] * mp_im[i];
        am_re += t[i][j] * mm_re[i];
        am_im += t[i][j] * mm_im[i];
      }
      lam.fp_re[j][k] = ap_re;
      lam.fp_im[j][k] = ap_im;
      lam.fm_re[j][k] = am_re;
      lam.fm_im[j][k] = am_im;
    }
    Real az_re[Long], az_im[Long];
    for (int j = 0; j < Long; ++j) {
      az_re[j] = az_im[j] = Real(0.0f);
      for (int i = 0; i < Long; ++i) {
        vz[i][j] += lam.z_re[i][k] * s.z_re[j][k] + lam.z_im[i][k] * s.z_im[j][k];
        az_re[j] += e[i][j] * lam.z_re[i][k];
        az_im[j] += e[i][j] * lam.z_im[i][k];
      }
    }
    for (int j = 0; j < Long; ++j) {
      lam.z_re[j][k] = az_re[j];
      lam.z_im[j][k] = az_im[j];
    }
  }
  for (int p = 0; p < interval_parameter::count; ++p) {
    Real d = tangent_of(evd.rot_re, p) * q_re - tangent_of(evd.rot_im, p) * q_im;
    for (int i = 0; i < Free; ++i)
      for (int j = 0; j < Free; ++j) d += tangent_of(evd.transverse[i][j], p) * w[i][j];
    for (int i = 0; i < Long; ++i) {
      for (int j = 0; j < Long; ++j) d += tangent_of(evd.longitudinal[i][j], p) * vz[i][j];
      d += tangent_of(evd.recovery[i], p) * lz0[i];
    }
    g[p] = d;
  }
}

}  // namespace pooled_reverse

template <class ExecSpace, int K, int Free, int Bound, class Real>
struct PooledAdjointKernel
    : ReverseKernelBase<typename ExecSpace::memory_space, Kokkos::LayoutLeft> {
  using Base = ReverseKernelBase<typename ExecSpace::memory_space, Kokkos::LayoutLeft>;
  static constexpr int Long = Free + Bound;
  LARMOR_REVERSE_KERNEL_MEMBERS(Base);
  using State = PooledState<K, Free, Long, Real>;
  using IntervalNumber = pooled_reverse::IntervalDual<Real>;
  static constexpr int components = State::components;
  static constexpr int parts = part_count_v<Real>;

  KOKKOS_INLINE_FUNCTION void operator()(int v) const {
    using namespace pooled_reverse;
    const FlushDenormalsOnHost flush_denormals;
    const int n = events.orders;
    float u[tissue_direction::count] = {0, 0, 0, 0, 0};
    if constexpr (parts > 1) {
      for (int d = 0; d < tissue_direction::count; ++d) u[d] = directions(v, d);
    }
    const ReverseSeed<Real> seed{{u[0], u[1], u[2], u[3], u[4]}};
    const IntervalSeed<Real> interval_seed{{u[0], u[1], u[2], u[3], u[4]}};
    const auto x = load_pool_tissue<Real, Free, Long>(tissue, v, seed);
    const auto xd = load_pool_tissue<IntervalNumber, Free, Long>(tissue, v, interval_seed);
    PoolIntervalCache<Real, Free, Long> cache;
    PoolIntervalCache<IntervalNumber, Free, Long, SeededDuration> interval_cache;
    const auto no_sample = [](const EventRecord&, const State&) {};
    State s, s1, lam;
    s.reset(x.eq);
    for (int e = 0; e < events.count; ++e) {
      if (e % interval == 0) adjoint_detail::save_state(checkpoints, v, e / interval, s, n);
      apply_pooled_event(s, events, e, tissue, v, x, cache, no_sample);
    }
    lam.clear();
    adjoint_detail::Gradients<Real> g;
    const int stretches = (events.count + interval - 1) / interval;
    for (int c = stretches - 1; c >= 0; --c) {
      const int first = c * interval;
      const int end = first + interval < events.count ? first + interval : events.count;
      adjoint_detail::load_state(checkpoints, v, c, s, n);
      for (int e = first; e < end; ++e) {
        adjoint_detail::save_state(stretch, v, e - first, s, n);
        apply_pooled_event(s, events, e, tissue, v, x, cache, no_sample);
      }
      for (int e = end - 1; e >= first; --e) {
        adjoint_detail::load_state(stretch, v, e - first, s, n);
        const EventRecord rec = events.records(e);
        const auto* evd = rec.duration > 0.0f ? &interval_cache.get(rec.duration, xd) : nullptr;
        reverse_event(v, e, rec, x, evd, s, s1, lam, g);
      }
    }
    adjoint_detail::write_tissue_gradients(out, v, g);
  }

  // Takes the adjoint after event `e` back to its start; `s` holds the state
  // at its start on entry (and is used as scratch).
  KOKKOS_INLINE_FUNCTION void reverse_event(int v, int e, const EventRecord& rec,
                                            const PoolTissue<Real, Free, Long>& x,
                                            const PoolEvolution<IntervalNumber, Free, Long>* evd,
                                            State& s, State& s1, State& lam,
                                            adjoint_detail::Gradients<Real>& g) const {
    using namespace pooled_reverse;
    const int n = events.orders;
    const std::uint32_t act = action_of(rec);
    const int live = live_orders_of(rec);
    const auto kind = kind_of(rec);
    if (act & abi::action::crush_before) s.shift(n);
    s1 = s;  // before the pulse
    RotationCoefficients<Real> rot{};
    PulseAxis axis{};
    float exponent = 0.0f;
    Real kept(1.0f);
    if (kind == abi::EventKind::pulse) {
      axis = pooled_axis(tissue, v, rec);
      rot = pooled_rotation(rec, axis, x);
      s.rotate_free(rot, live);
      if constexpr (Bound > 0) {
        exponent = tissue.pools.saturation(e) * axis.gain * axis.gain;
        if (exponent > 0.0f) {
          kept = bound_kept(exponent, pulse_b1(rec, x.b1));
          s.scale_bound(kept, live);
        }
      }
    }
    if (act & abi::action::crush_after) s.shift(n);
    if (act & abi::action::shift_after) s.shift(n);
    if (act & abi::action::spoil_after) s.spoil(n);
    Real seq_flip(0.0f), seq_phase(0.0f), seq_duration(0.0f);
    if (evd != nullptr) {
      Real gi[interval_parameter::count];
      reverse_evolution(s, lam, *evd, live, gi);
      g.tissue[tissue_direction::t1] += gi[interval_parameter::t1];
      g.tissue[tissue_direction::t2] += gi[interval_parameter::t2];
      g.tissue[tissue_direction::df] += gi[interval_parameter::df];
      seq_duration = gi[interval_parameter::duration];
    }
    if (act & abi::action::spoil_after) lam.spoil(n);
    if (act & abi::action::shift_after) lam.unshift(n);
    if (act & abi::action::crush_after) lam.unshift(n);
    if (kind == abi::EventKind::pulse) {
      if (exponent > 0.0f) {
        // kept = exp(-a B1^2), with a proportional to the power, so to flip^2
        // (and to the array's gain^2): dkept/dB1 = -2 a B1 kept and dkept/dflip
        // = -2 a B1^2 kept / flip.
        Real pairing(0.0f);
        for (int k = 0; k < live; ++k) {
          pairing += lam.z_re[Long - 1][k] * s1.z_re[Long - 1][k] +
                     lam.z_im[Long - 1][k] * s1.z_im[Long - 1][k];
        }
        lam.scale_bound(kept, live);
        // A b1_fixed pulse: B1 = 1 in the exponent, and no share of dL/dB1.
        const Real b1 = pulse_b1(rec, x.b1);
        const Real dkept = pairing * kept * Real(-2.0f * exponent) * b1;
        if (follows_b1(rec)) g.tissue[tissue_direction::b1] += dkept;
        if (rec.flip != 0.0f) seq_flip += dkept * b1 / Real(rec.flip);
      }
      const auto adj = adjoint_rotation(rot);
      Real da(0.0f), dp(0.0f);
      for (int p = 0; p < Free; ++p) {
        for (int k = 0; k < live; ++k) {
          adjoint_detail::rotation_pairings(
              rot, adj, axis, s1.fp_re[p][k], s1.fp_im[p][k], s1.fm_re[p][k], s1.fm_im[p][k],
              s1.z_re[p][k], s1.z_im[p][k], lam.fp_re[p][k], lam.fp_im[p][k], lam.fm_re[p][k],
              lam.fm_im[p][k], lam.z_re[p][k], lam.z_im[p][k], da, dp);
        }
      }
      g.tissue[tissue_direction::b1] += da * adjoint_detail::flip_per_b1(rec, axis.gain);
      seq_flip += da * pulse_b1(rec, x.b1) * axis.gain;
      seq_phase = dp;
    } else if (kind == abi::EventKind::adc) {
      // y = M0 q, q = sum over free pools of F+_0 e^{-i phase} (as in
      // AdjointKernel::reverse_event, with every free pool's F+_0 receiving).
      // A sample weighted over the voxel sums each pool's weighted orders
      // (SampleWeightViews), and seeds them by the transpose.
      const float w_re = cotangents(v, rec.output_index, 0);
      const float w_im = cotangents(v, rec.output_index, 1);
      const float c = rec.cos_phase, sn = rec.sin_phase;
      const int table = sample_weights_of(rec);
      Real f_re(0.0f), f_im(0.0f);
      for (int p = 0; p < Free; ++p) {
        if (table == 0) {
          f_re += s1.fp_re[p][0];
          f_im += s1.fp_im[p][0];
          continue;
        }
        for (int k = 0; k < live; ++k) {
          tissue.weights.add_order(table, 0, k, s1.fp_re[p][k], s1.fp_im[p][k], s1.fm_re[p][k],
                                   s1.fm_im[p][k], f_re, f_im);
        }
      }
      const Real q_re = f_re * c + f_im * sn, q_im = f_im * c - f_re * sn;
      g.tissue[tissue_direction::m0] += q_re * w_re + q_im * w_im;
      seq_phase = x.m0 * (q_im * w_re - q_re * w_im);
      const Real l_re = x.m0 * (w_re * c - w_im * sn), l_im = x.m0 * (w_im * c + w_re * sn);
      for (int p = 0; p < Free; ++p) {
        if (table == 0) {
          lam.fp_re[p][0] += l_re;
          lam.fp_im[p][0] += l_im;
          continue;
        }
        for (int k = 0; k < live; ++k) {
          tissue.weights.seed_order(table, 0, k, l_re, l_im, lam.fp_re[p][k], lam.fp_im[p][k],
                                    lam.fm_re[p][k], lam.fm_im[p][k]);
        }
      }
    }
    if (act & abi::action::crush_before) lam.unshift(n);
    adjoint_detail::add_sequence_gradient(out, e, sequence_gradient::flip, seq_flip);
    adjoint_detail::add_sequence_gradient(out, e, sequence_gradient::phase, seq_phase);
    adjoint_detail::add_sequence_gradient(out, e, sequence_gradient::duration, seq_duration);
  }
};

}  // namespace larmor::epg
