// The steady-state run on a backend (definitions), instantiated once per
// enabled backend by larmor_instantiate() (CMakeLists.txt).
//
// Steady state by fixed-point iteration of the period map: the fused kernel
// runs one period per launch, starting from the state the previous launch
// left (epg::CarriedState), until every voxel's largest state change over a
// period is below the tolerance. Each voxel keeps the samples of the period
// in which it settled, so its result depends only on its own trajectory.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "epg/forward.hpp"
#include "simulate/impl/prepared_run.hpp"
#include "simulate/simulator.hpp"

namespace larmor::simulate {

namespace steady_state_detail {

template <class Mem>
using StateView = Kokkos::View<float***, Kokkos::LayoutRight, Mem>;

// Equilibrium: each pool's Z_0 is its share of M0 (1 for a single pool),
// everything else 0. Components as epg::carried_state_components.
template <class Mem>
struct SetEquilibrium {
  steady_state_detail::StateView<Mem> state;
  epg::PoolViews<Mem> pools;
  KOKKOS_INLINE_FUNCTION void operator()(int v) const {
    for (int c = 0; c < int(state.extent(1)); ++c)
      for (int k = 0; k < int(state.extent(2)); ++k) state(v, c, k) = 0.0f;
    const float second = pools.free > 1 ? pools.fraction.at(v) : 0.0f;
    const float bound = pools.bound > 0 ? pools.bound_fraction.at(v) : 0.0f;
    const int z = 4 * pools.free;  // Z re of pool 0; pool p's is z + 2 p
    state(v, z, 0) = 1.0f - second - bound;
    if (pools.free > 1) state(v, z + 2, 0) = second;
    if (pools.bound > 0) state(v, z + 2 * pools.free, 0) = bound;
  }
};

// After a period: a voxel whose largest state change fell below the
// tolerance settles now, keeping this period's samples; every unsettled voxel
// counts towards `left`. A voxel's result so depends on nothing but its own
// trajectory (not on the rank count or its neighbours' settling).
template <class Mem>
struct SettleVoxels {
  steady_state_detail::StateView<Mem> before, after;
  Kokkos::View<float***, Kokkos::LayoutRight, Mem> signals, kept;
  Kokkos::View<int*, Mem> settled;
  float tolerance;
  int period;
  KOKKOS_INLINE_FUNCTION void operator()(int v, std::int64_t& left) const {
    if (settled(v) >= 0) return;
    float m = 0.0f;
    for (int c = 0; c < int(before.extent(1)); ++c) {
      for (int k = 0; k < int(before.extent(2)); ++k) {
        const float d = kx::fabs(after(v, c, k) - before(v, c, k));
        m = d > m ? d : m;
      }
    }
    if (m < tolerance) {
      settled(v) = period;
      for (int n = 0; n < int(signals.extent(1)); ++n) {
        kept(v, n, 0) = signals(v, n, 0);
        kept(v, n, 1) = signals(v, n, 1);
      }
    } else {
      ++left;
    }
  }
};

// Voxels that never settled keep the last period's samples.
template <class Mem>
struct KeepUnsettled {
  Kokkos::View<float***, Kokkos::LayoutRight, Mem> signals, kept;
  Kokkos::View<int*, Mem> settled;
  KOKKOS_INLINE_FUNCTION void operator()(int v) const {
    if (settled(v) >= 0) return;
    for (int n = 0; n < int(signals.extent(1)); ++n) {
      kept(v, n, 0) = signals(v, n, 0);
      kept(v, n, 1) = signals(v, n, 1);
    }
  }
};

}  // namespace steady_state_detail

template <class ExecSpace>
SteadyStateReport Simulator::run_steady_state_into(const tissue::Tissue& tissue, float* signals,
                                                   const SteadyStateOptions& steady) const {
  const kx::ScopedRegion region("larmor::simulate_steady_state[" + launch_settings().kernels.label +
                                "]");
  using Mem = typename ExecSpace::memory_space;
  tissue.validate("steady-state tissue");
  if (!(steady.tolerance > 0.0) || !std::isfinite(steady.tolerance)) {
    throw std::invalid_argument("steady state: tolerance must be positive and finite, got " +
                                std::to_string(steady.tolerance));
  }
  if (steady.max_repetitions < 1) {
    throw std::invalid_argument("steady state: max_repetitions must be >= 1, got " +
                                std::to_string(steady.max_repetitions));
  }
  if (needs_hard_pulses(tissue)) {
    return hard_pulse_twin()->simulator.run_steady_state_into<ExecSpace>(tissue, signals, steady);
  }
  SteadyStateReport report;
  report.repetitions.assign(std::size_t(tissue.voxels), -1);
  if (tissue.voxels == 0) return report;
  const int components = epg::carried_state_components(tissue.has_second_pool() ? 2 : 1,
                                                       tissue.has_bound_pool() ? 1 : 0);
  // Slice-selective pulses: each voxel runs once per slice position (rows
  // v P .. v P + P - 1), each position carrying and settling its own state;
  // the voxel's samples are the positions' settled samples summed.
  if (slice_table_.profiles > 0 && (tissue.has_second_pool() || tissue.has_bound_pool())) {
    throw std::invalid_argument(
        "steady state: slice-selective pulses are not supported with a pooled model");
  }
  // Two carried states and two sets of samples (the period's, the settled)
  // per row; every period after the first starts with any order filled.
  const double per_row = 2.0 * components * states_ * 4 + samples() * 16.0;
  PreparedRun<ExecSpace> run(*this, tissue, packed_, false, states_, epg::LiveOrders::all, per_row,
                             bool(options_.progress));
  ExecSpace& exec = run.exec;
  const auto& table = run.table;
  const int positions = run.positions;
  const std::int64_t chunk = run.chunk;
  const std::int64_t rows = run.kernel_rows();
  const auto rows_of = [&](const char* label) {
    return Kokkos::View<float***, Kokkos::LayoutRight, Mem>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), rows,
        std::max(samples(), 1), 2);
  };
  auto device_signals = rows_of("larmor::signals");
  auto kept = rows_of("larmor::settled_signals");
  steady_state_detail::StateView<Mem> a(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::state_a"), rows, components,
      states_);
  steady_state_detail::StateView<Mem> b(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::state_b"), rows, components,
      states_);
  Kokkos::View<float***, Kokkos::LayoutRight, Mem> summed(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::summed"), positions > 1 ? chunk : 0,
      std::max(samples(), 1), 2);
  Kokkos::View<int*, Mem> settled("larmor::settled_period", rows);
  auto host_settled = Kokkos::create_mirror_view(settled);
  for (std::int64_t begin = 0; begin < tissue.voxels; begin += chunk) {
    const std::int64_t count = std::min(chunk, tissue.voxels - begin);
    const std::int64_t used = count * positions;
    const epg::TissueViews<Mem> views = run.tissue_views(tissue, begin, count);
    Kokkos::parallel_for("larmor::equilibrium", Kokkos::RangePolicy<ExecSpace>(exec, 0, used),
                         steady_state_detail::SetEquilibrium<Mem>{a, views.pools});
    Kokkos::deep_copy(exec, settled, -1);
    std::int64_t left = used;
    int period = 0;
    steady_state_detail::StateView<Mem> from = a, to = b;
    while (left > 0 && period < steady.max_repetitions) {
      ++period;
      epg::simulate_forward(exec, table, views, device_signals, epg::CarriedState<Mem>{from, to},
                            launch_settings().kernels);
      left = 0;
      Kokkos::parallel_reduce(
          "larmor::settle", Kokkos::RangePolicy<ExecSpace>(exec, 0, used),
          steady_state_detail::SettleVoxels<Mem>{from, to, device_signals, kept, settled,
                                                 float(steady.tolerance), period},
          left);
      std::swap(from, to);
    }
    Kokkos::parallel_for("larmor::keep_unsettled", Kokkos::RangePolicy<ExecSpace>(exec, 0, used),
                         steady_state_detail::KeepUnsettled<Mem>{device_signals, kept, settled});
    if (positions > 1 && samples() > 0) {
      run.sum_positions(kept.data(), summed.data(), count, std::int64_t(samples()) * 2);
    }
    Kokkos::deep_copy(exec, host_settled, settled);
    exec.fence();
    // A voxel settled in the period its last position settled; unsettled if any did not.
    for (std::int64_t v = 0; v < count; ++v) {
      int last = 0;
      for (int j = 0; j < positions; ++j) {
        const int p = host_settled(v * positions + j);
        last = (p < 0 || last < 0) ? -1 : std::max(last, p);
      }
      report.repetitions[std::size_t(begin + v)] = last;
      report.unconverged += last < 0 ? 1 : 0;
    }
    report.periods = std::max(report.periods, period);
    if (samples() > 0) {
      Kokkos::View<float***, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged> host(
          signals + begin * std::int64_t(samples()) * 2, count, samples(), 2);
      Kokkos::deep_copy(host, Kokkos::subview(positions > 1 ? summed : kept,
                                              std::pair<std::int64_t, std::int64_t>(0, count),
                                              Kokkos::ALL, Kokkos::ALL));
    }
    if (options_.progress) options_.progress(begin + count, tissue.voxels);
  }
  return report;
}

}  // namespace larmor::simulate

#define LARMOR_STEADY_STATE_INSTANTIATE(EXEC)                          \
  namespace larmor::simulate {                                         \
  template SteadyStateReport Simulator::run_steady_state_into<EXEC>(   \
      const tissue::Tissue&, float*, const SteadyStateOptions&) const; \
  }
