// The pooled layouts' forward kernel: one thread holds one voxel's every
// order of every pool (the orders x pools of a voxel do not fit a register
// block). The physics of the pooled models and their steps are in
// pooled_state.hpp; the reverse sweep is pooled_adjoint.hpp.
#pragma once

#include <array>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "common/denormals.hpp"
#include "epg/forward.hpp"
#include "epg/impl/pooled_state.hpp"

namespace larmor::epg {

inline constexpr const char* pooled_kernel_name = "larmor::epg::pooled";

template <class ExecSpace, class Real, int K, int Free, int Bound>
struct PooledKernel {
  static constexpr int Long = Free + Bound;
  using memory_space = typename ExecSpace::memory_space;
  using State = PooledState<K, Free, Long, Real>;
  EventTable<memory_space> events;
  TissueViews<memory_space> tissue;
  Kokkos::View<float***, Kokkos::LayoutRight, memory_space> signals;
  Kokkos::View<float****, Kokkos::LayoutRight, memory_space> tangents;  // dual runs only
  // [voxel][component][order], components as PooledState's (float runs only)
  CarriedState<memory_space> carry;

  KOKKOS_INLINE_FUNCTION void operator()(int v) const {
    const FlushDenormalsOnHost flush_denormals;
    const auto x = load_pool_tissue<Real, Free, Long>(tissue, v, ForwardSeed<Real>{});
    const int n = events.orders;
    State s;
    if (carry.in.extent(0) > 0) {
      for (int c = 0; c < State::components; ++c) {
        Real* component = s.component(c);
        for (int k = 0; k < K; ++k) component[k] = Real(k < n ? carry.in(v, c, k) : 0.0f);
      }
    } else {
      s.reset(x.eq);
    }
    PoolIntervalCache<Real, Free, Long> cache;
    const auto sample = [&](const EventRecord& rec, const State& state) {
      record(v, rec, x, state);
    };
    for (int e = 0; e < events.count; ++e) {
      apply_pooled_event(s, events, e, tissue, v, x, cache, sample);
    }
    if (carry.out.extent(0) > 0) {
      for (int c = 0; c < State::components; ++c) {
        Real* component = s.component(c);
        for (int k = 0; k < n; ++k) carry.out(v, c, k) = value_of(component[k]);
      }
    }
  }

  // s = M0 sum over free pools of F+_0 (or of their voxel means), demodulated.
  KOKKOS_INLINE_FUNCTION void record(int v, const EventRecord& rec,
                                     const PoolTissue<Real, Free, Long>& x,
                                     const PooledState<K, Free, Long, Real>& s) const {
    Real f_re(0.0f), f_im(0.0f);
    const int table = sample_weights_of(rec);
    for (int p = 0; p < Free; ++p) {
      if (table == 0) {
        f_re += s.fp_re[p][0];
        f_im += s.fp_im[p][0];
        continue;
      }
      for (int k = 0; k < live_orders_of(rec); ++k) {
        tissue.weights.add_order(table, 0, k, s.fp_re[p][k], s.fp_im[p][k], s.fm_re[p][k],
                                 s.fm_im[p][k], f_re, f_im);
      }
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

// What a pooled launch computes: the order bucket it may use depends on it.
enum class pooled_mode { forward, forward_mode, reverse };

// Orders x pools above one tile's 1024 threads are refused (the limit every
// EPG kernel keeps), and orders above the largest bucket compiled for the
// mode: 512 for a forward run, 64 for forward mode (dual numbers) and for the
// reverse sweep (its checkpoint rows and three states per thread).
inline void check_pooled_orders(int orders, int pools, pooled_mode mode) {
  const int limit = mode == pooled_mode::forward ? 512 : 64;
  const char* what = mode == pooled_mode::forward        ? "a forward run"
                     : mode == pooled_mode::forward_mode ? "forward mode"
                                                         : "the reverse sweep";
  if (orders * pools > abi::max_orders || orders > limit) {
    throw std::invalid_argument(
        std::string(pooled_kernel_name) + ": " + std::to_string(orders) + " orders x " +
        std::to_string(pools) +
        " pools exceed the kernel's limit (orders x pools <= " + std::to_string(abi::max_orders) +
        ", and at most " + std::to_string(limit) + " orders for " + what + ")");
  }
}

template <class ExecSpace, class Real, int Free, int Bound>
void launch_pooled_layout(
    const ExecSpace& exec, const EventTable<typename ExecSpace::memory_space>& events,
    const TissueViews<typename ExecSpace::memory_space>& tissue,
    const Kokkos::View<float***, Kokkos::LayoutRight, typename ExecSpace::memory_space>& signals,
    const Kokkos::View<float****, Kokkos::LayoutRight, typename ExecSpace::memory_space>& tangents,
    const CarriedState<typename ExecSpace::memory_space>& carry, const std::string& name) {
  const auto run = [&](auto bucket) {
    PooledKernel<ExecSpace, Real, decltype(bucket)::value, Free, Bound> kernel;
    kernel.events = events;
    kernel.tissue = tissue;
    kernel.signals = signals;
    kernel.tangents = tangents;
    kernel.carry = carry;
    Kokkos::parallel_for(name, Kokkos::RangePolicy<ExecSpace>(exec, 0, tissue.voxels), kernel);
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
    const Kokkos::View<float****, Kokkos::LayoutRight, typename ExecSpace::memory_space>& tangents,
    const CarriedState<typename ExecSpace::memory_space>& carry, const LaunchOptions& options) {
  const std::string name = launch_name(pooled_kernel_name, options);
  const auto& p = tissue.pools;
  check_pooled_orders(events.orders, p.count(),
                      tangent_count_v<Real> > 0 ? pooled_mode::forward_mode : pooled_mode::forward);
  const int components = carried_state_components(p.free, p.bound);
  for (const auto extents : {std::array<std::size_t, 2>{carry.in.extent(0), carry.in.extent(1)},
                             {carry.out.extent(0), carry.out.extent(1)}}) {
    if (extents[0] > 0 &&
        (extents[0] < std::size_t(tissue.voxels) || extents[1] != std::size_t(components))) {
      throw std::invalid_argument(std::string(pooled_kernel_name) +
                                  ": a carried state must hold every voxel's " +
                                  std::to_string(components) + " components");
    }
  }
  if (p.free == 2 && p.bound == 0) {
    launch_pooled_layout<ExecSpace, Real, 2, 0>(exec, events, tissue, signals, tangents, carry,
                                                name);
  } else if (p.free == 1 && p.bound == 1) {
    launch_pooled_layout<ExecSpace, Real, 1, 1>(exec, events, tissue, signals, tangents, carry,
                                                name);
  } else if (p.free == 2 && p.bound == 1) {
    launch_pooled_layout<ExecSpace, Real, 2, 1>(exec, events, tissue, signals, tangents, carry,
                                                name);
  } else {
    throw std::invalid_argument(std::string(pooled_kernel_name) + ": no layout for " +
                                std::to_string(p.free) + " free and " + std::to_string(p.bound) +
                                " bound pools");
  }
}

}  // namespace larmor::epg
