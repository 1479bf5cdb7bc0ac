// Launching a reverse sweep: shape checks, the checkpoint interval, and the
// choice of layout: the pooled sweep (pooled_adjoint.hpp) for a pooled model; the grouped kernel
// (adjoint_grouped.hpp: a voxel's orders over a group of one warp's threads in registers on a
// device, all of them on one host thread) for up to 64 orders, the plain one-voxel-per-thread
// kernel (adjoint_impl.hpp) above and for slice-selective pulses; an on-axis table at float takes
// the grouped layout on the axis states (axis_adjoint.hpp), eight voxels in SIMD lanes per host
// thread (one under LaunchOptions::real_scalar). LaunchOptions::plain_adjoint selects the plain
// kernel for any order count (the tests compare the two everywhere). A device's grouped complex
// sweep compiles the declared terms only into the variant that runs them.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "epg/impl/adjoint_grouped.hpp"
#include "epg/impl/adjoint_impl.hpp"
#include "epg/impl/axis_adjoint.hpp"
#include "epg/impl/pooled_adjoint.hpp"
#include "epg/impl/pooled_impl.hpp"

namespace larmor::epg {

namespace adjoint_detail {

struct ReverseLaunch {
  int interval = 1;
  int padded_orders = 0;  // values of a store row: orders (x lanes)
  int groups = 1, group_threads = 1;
  int lanes = 1;                    // voxels per store row
  bool stretch_in_scratch = false;  // no global stretch store
};

// The stretch states a team of `team_threads` can keep in its scratch: up to
// reverse_scratch_slots, as many as the backend's scratch limit and the
// kernel's blocks per multiprocessor (its launch bounds) leave room for.
template <class Kernel, class ExecSpace>
int stretch_scratch_slots(const ExecSpace& exec, int team_threads) {
  using Policy = Kokkos::TeamPolicy<ExecSpace, typename Kernel::launch_bounds>;
  for (int slots = reverse_scratch_slots; slots > 0; --slots) {
    const std::size_t bytes = Kernel::stretch_scratch_bytes(slots, team_threads);
    if (bytes > Policy::scratch_size_max(0)) continue;
    Policy policy(exec, 1, team_threads);
    policy.set_scratch_size(0, Kokkos::PerTeam(bytes));
    if (policy.team_size_max(Kernel{}, Kokkos::ParallelForTag{}) >= team_threads) return slots;
  }
  return 0;
}

// The fields every reverse kernel shares, and its checkpoint stores.
template <class Kernel, class ExecSpace>
Kernel configure(const EventTable<typename ExecSpace::memory_space>& events,
                 const TissueViews<typename ExecSpace::memory_space>& tissue,
                 const ConstMatrixOf<ExecSpace>& directions,
                 const CotangentsOf<ExecSpace>& cotangents,
                 const ReverseOutputs<typename ExecSpace::memory_space>& out,
                 const ReverseLaunch& launch) {
  Kernel kernel;
  kernel.events = events;
  kernel.tissue = tissue;
  kernel.directions = directions;
  kernel.cotangents = cotangents;
  kernel.out = out;
  kernel.interval = launch.interval;
  const int stretches = (events.count + launch.interval - 1) / launch.interval;
  const int components = Kernel::components * Kernel::parts;
  int rows = (tissue.voxels + launch.lanes - 1) / launch.lanes;
  if constexpr (Kernel::stores_per_worker) rows = kernel.workers.size();
  kernel.checkpoints = typename Kernel::Store(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::adjoint_checkpoints"), rows,
      stretches, components, launch.padded_orders);
  kernel.stretch = typename Kernel::Store(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::adjoint_stretch"),
      launch.stretch_in_scratch ? 0 : rows, launch.interval, components, launch.padded_orders);
  return kernel;
}

// Checks the shapes, picks the interval, the layout and the order bucket, and
// launches.
template <class ExecSpace, class Real>
void simulate_reverse(const ExecSpace& exec,
                      const EventTable<typename ExecSpace::memory_space>& events,
                      const TissueViews<typename ExecSpace::memory_space>& tissue,
                      const ConstMatrixOf<ExecSpace>& directions,
                      const CotangentsOf<ExecSpace>& cotangents,
                      const ReverseOutputs<typename ExecSpace::memory_space>& out,
                      int checkpoint_interval, const LaunchOptions& options) {
  const std::string name = adjoint_kernel_name;
  if (tissue.voxels <= 0 || events.count == 0) return;
  check_order_limit(events.orders, adjoint_kernel_name);
  const auto voxels = std::size_t(tissue.voxels);
  const auto wrong = [&](const auto& m, std::size_t rows, int columns) {
    return m.extent(0) < rows || m.extent(1) != std::size_t(columns);
  };
  // Sequence views with no rows: their derivatives are not wanted.
  const std::size_t sequence_rows = out.wants_sequence() ? std::size_t(events.count) : 0;
  bool bad =
      cotangents.extent(0) < voxels || cotangents.extent(1) < std::size_t(events.samples) ||
      cotangents.extent(2) != 2 || wrong(out.tissue_gradients, voxels, tissue_direction::count) ||
      (sequence_rows > 0 && wrong(out.sequence_gradients, sequence_rows, sequence_gradient::count));
  if constexpr (tangent_count_v < Real >> 0) {
    bad = bad || wrong(directions, voxels, tissue_direction::count) ||
          wrong(out.tissue_hvp, voxels, tissue_direction::count) ||
          (sequence_rows > 0 ? wrong(out.sequence_hvp, sequence_rows, sequence_gradient::count)
                             : out.sequence_hvp.extent(0) > 0);
  }
  if (bad) {
    throw std::invalid_argument(
        name + ": a direction, cotangent or gradient array has the wrong shape for " +
        std::to_string(tissue.voxels) + " voxels, " + std::to_string(events.samples) +
        " samples and " + std::to_string(events.count) + " events");
  }
  check_slice_profiles(events.slice_profiles, tissue.slice.profiles(), tissue.slice.positions, name,
                       tissue.pools.active() ? "a pooled model" : nullptr);
  check_waveforms(events.waveforms, tissue.waveforms.waveforms(), name, "the reverse sweeps");
  check_sample_weights(events.sample_weight_tables, tissue.weights.tables(), tissue.weights.orders,
                       tissue.weights.positions(), events.orders, tissue.slice.positions, name);
  if (checkpoint_interval < 0) {
    throw std::invalid_argument(name + ": checkpoint_interval must be >= 1 (0: automatic), got " +
                                std::to_string(checkpoint_interval));
  }
  ReverseLaunch launch;
  launch.interval = checkpoint_interval > 0 ? std::min(checkpoint_interval, events.count)
                                            : default_checkpoint_interval(events.count);
  const std::string launched_as = launch_name(
      tangent_count_v<Real> > 0 ? adjoint_hvp_kernel_name : adjoint_kernel_name, options);
  const auto run = [&](auto kernel, const auto& policy) {
    Kokkos::parallel_for(launched_as, policy, kernel);
  };
  if (tissue.pools.active()) {
    // One voxel per thread, every order of every pool (pooled_adjoint.hpp).
    const auto& p = tissue.pools;
    check_pooled_orders(events.orders, p.count(), pooled_mode::reverse);
    launch.padded_orders = events.orders;
    const auto pooled = [&](auto k_constant, auto free_constant, auto bound_constant) {
      using Kernel = PooledAdjointKernel<ExecSpace, decltype(k_constant)::value,
                                         decltype(free_constant)::value,
                                         decltype(bound_constant)::value, Real>;
      run(configure<Kernel, ExecSpace>(events, tissue, directions, cotangents, out, launch),
          Kokkos::RangePolicy<ExecSpace>(exec, 0, tissue.voxels));
    };
    const auto layout = [&](auto k_constant) {
      using I = std::integral_constant<int, 1>;
      using II = std::integral_constant<int, 2>;
      using O = std::integral_constant<int, 0>;
      if (p.free == 2 && p.bound == 0) return pooled(k_constant, II{}, O{});
      if (p.free == 1 && p.bound == 1) return pooled(k_constant, I{}, I{});
      if (p.free == 2 && p.bound == 1) return pooled(k_constant, II{}, I{});
      throw std::invalid_argument(name + ": no pooled layout for " + std::to_string(p.free) +
                                  " free and " + std::to_string(p.bound) + " bound pools");
    };
    if (events.orders <= 16) return layout(std::integral_constant<int, 16>{});
    return layout(std::integral_constant<int, 64>{});
  }
  // Slice-selective pulses and samples weighted over the voxel take the
  // plain kernel: its general rotations compiled into the grouped one would
  // slow every grouped run, where every pulse is instantaneous
  // (docs/performance.md, "Reverse sweeps"; LARMOR_REAL_PATH=off larmor-bench
  // -m vjp -w mrf).
  if (events.orders <= 64 && !options.plain_adjoint && events.slice_profiles == 0 &&
      events.sample_weight_tables == 0) {
    // Devices: 4 orders per thread, 4, 8 or 16 threads per voxel (the fewest
    // that hold the orders, reverse_group_threads), one warp per team. Host: a
    // team of one thread holding every order (of eight voxels in SIMD lanes
    // on the axis). An on-axis table (at float) runs the axis states
    // (axis_adjoint.hpp), else the complex ones (exact on a rewritten table
    // too: the rewrite is a change of frame).
    constexpr bool host = kx::is_host_space_v<ExecSpace>;
    using One = std::integral_constant<int, 1>;
    const auto launch_grouped = [&](auto kernel_type, int opt, int group_threads, int lanes) {
      using Kernel = typename decltype(kernel_type)::type;
      launch.lanes = lanes;
      launch.padded_orders = opt * group_threads * launch.lanes;
      launch.group_threads = group_threads;
      launch.groups = host ? 1 : 32 / group_threads;
      const int team_threads = launch.groups * group_threads;
      using Policy = Kokkos::TeamPolicy<ExecSpace, typename Kernel::launch_bounds>;
      int scratch_interval = 0;
      if constexpr (Kernel::scratch_stretch) {
        // Fewer slots never turn a global stretch into scratch: ask the
        // backend only where the full count would keep it there.
        if (scratch_stretch_interval(events.count, checkpoint_interval, reverse_scratch_slots) >
            0) {
          scratch_interval = scratch_stretch_interval(
              events.count, checkpoint_interval, stretch_scratch_slots<Kernel>(exec, team_threads));
        }
        if (scratch_interval > 0) launch.interval = scratch_interval;
      }
      launch.stretch_in_scratch = scratch_interval > 0;
      if constexpr (Kernel::stores_per_worker) {
        if (checkpoint_interval == 0) {
          launch.interval = host_stretch_interval(
              events.count, Kernel::components * Kernel::parts * launch.padded_orders,
              launch.interval);
        }
      }
      auto kernel =
          configure<Kernel, ExecSpace>(events, tissue, directions, cotangents, out, launch);
      kernel.groups = launch.groups;
      kernel.group_threads = group_threads;
      const int per_team = launch.groups * launch.lanes;
      const int league = (tissue.voxels + per_team - 1) / per_team;
      Policy policy(exec, league, team_threads);
      if constexpr (Kernel::scratch_stretch) {
        if (launch.stretch_in_scratch) {
          kernel.stretch_in_scratch = true;
          policy.set_scratch_size(
              0, Kokkos::PerTeam(Kernel::stretch_scratch_bytes(launch.interval, team_threads)));
        }
      }
      run(kernel, policy);
    };
    if constexpr (std::is_same_v<Real, float>) {
      if (events.on_axis && !declares_terms(tissue)) {
        const auto axis = [&](auto opt_constant, auto lanes_constant, int group_threads) {
          constexpr int opt = decltype(opt_constant)::value;
          using Axis = AxisAdjointKernel<ExecSpace, opt, decltype(lanes_constant)::value>;
          launch_grouped(std::common_type<Axis>{}, opt, group_threads, Axis::lanes);
        };
        if constexpr (host) {
          // Checkpoints save whole blocks (shifts and stretches touch only
          // the live rows): blocks of 16, 32 or 64 orders keep them no
          // larger than the run.
          const auto host_axis = [&](auto lanes_constant) {
            if (events.orders <= 16)
              return axis(std::integral_constant<int, 16>{}, lanes_constant, 1);
            if (events.orders <= 32)
              return axis(std::integral_constant<int, 32>{}, lanes_constant, 1);
            return axis(std::integral_constant<int, 64>{}, lanes_constant, 1);
          };
          if (options.real_scalar) return host_axis(One{});
          return host_axis(std::integral_constant<int, 8>{});
        } else {
          return axis(std::integral_constant<int, 4>{}, One{},
                      reverse_group_threads(events.orders));
        }
      }
    }
    const auto grouped = [&](auto opt_constant, auto declared_constant, int group_threads,
                             auto lanes_constant) {
      constexpr int opt = decltype(opt_constant)::value;
      using Complex = GroupedAdjointKernel<ExecSpace, Real, opt, decltype(declared_constant)::value,
                                           decltype(lanes_constant)::value>;
      return launch_grouped(std::common_type<Complex>{}, opt, group_threads, Complex::lanes);
    };
    if constexpr (host) {
      // The smallest block of 16, 32 or 64 orders that holds the run's: its
      // steps, shifts and saves cover the whole block. A sweep without
      // declared terms holds eight voxels in SIMD lanes.
      const auto host_block = [&](auto declared_constant, auto lanes_constant) {
        if (events.orders <= 16)
          return grouped(std::integral_constant<int, 16>{}, declared_constant, 1, lanes_constant);
        if (events.orders <= 32)
          return grouped(std::integral_constant<int, 32>{}, declared_constant, 1, lanes_constant);
        return grouped(std::integral_constant<int, 64>{}, declared_constant, 1, lanes_constant);
      };
      if (!declares_terms(tissue))
        return host_block(std::false_type{}, std::integral_constant<int, 8>{});
      return host_block(std::true_type{}, One{});
    } else {
      const int group_threads = reverse_group_threads(events.orders);
      if (declares_terms(tissue)) {
        return grouped(std::integral_constant<int, 4>{}, std::true_type{}, group_threads, One{});
      }
      return grouped(std::integral_constant<int, 4>{}, std::false_type{}, group_threads, One{});
    }
  }
  launch.padded_orders = events.orders;
  const auto plain = [&](auto k_constant, auto shaped_constant) {
    using Kernel = AdjointKernel<ExecSpace, decltype(k_constant)::value, Real,
                                 decltype(shaped_constant)::value>;
    run(configure<Kernel, ExecSpace>(events, tissue, directions, cotangents, out, launch),
        Kokkos::RangePolicy<ExecSpace>(exec, 0, tissue.voxels));
  };
  if (events.slice_profiles > 0) {  // two buckets: slice-selective runs are rare
    if (events.orders <= 64) return plain(std::integral_constant<int, 64>{}, std::true_type{});
    return plain(std::integral_constant<int, 1024>{}, std::true_type{});
  }
  if (events.orders <= 16) return plain(std::integral_constant<int, 16>{}, std::false_type{});
  if (events.orders <= 64) return plain(std::integral_constant<int, 64>{}, std::false_type{});
  if (events.orders <= 256) return plain(std::integral_constant<int, 256>{}, std::false_type{});
  return plain(std::integral_constant<int, 1024>{}, std::false_type{});
}

}  // namespace adjoint_detail

template <class ExecSpace>
void simulate_tissue_vjp(const ExecSpace& exec,
                         const EventTable<typename ExecSpace::memory_space>& events,
                         const TissueViews<typename ExecSpace::memory_space>& tissue,
                         const CotangentsOf<ExecSpace>& cotangents,
                         const MatrixOf<ExecSpace>& tissue_gradients,
                         const MatrixOf<ExecSpace>& sequence_gradients, int checkpoint_interval,
                         const LaunchOptions& options) {
  ReverseOutputs<typename ExecSpace::memory_space> out;
  out.tissue_gradients = tissue_gradients;
  out.sequence_gradients = sequence_gradients;
  adjoint_detail::simulate_reverse<ExecSpace, float>(exec, events, tissue, {}, cotangents, out,
                                                     checkpoint_interval, options);
}

template <class ExecSpace>
void simulate_tissue_hvp(
    const ExecSpace& exec, const EventTable<typename ExecSpace::memory_space>& events,
    const TissueViews<typename ExecSpace::memory_space>& tissue,
    const ConstMatrixOf<ExecSpace>& directions, const CotangentsOf<ExecSpace>& cotangents,
    const MatrixOf<ExecSpace>& tissue_gradients, const MatrixOf<ExecSpace>& sequence_gradients,
    const MatrixOf<ExecSpace>& tissue_hvp, const MatrixOf<ExecSpace>& sequence_hvp,
    int checkpoint_interval, const LaunchOptions& options) {
  ReverseOutputs<typename ExecSpace::memory_space> out{tissue_gradients, sequence_gradients,
                                                       tissue_hvp, sequence_hvp};
  adjoint_detail::simulate_reverse<ExecSpace, Dual<float, 1>>(
      exec, events, tissue, directions, cotangents, out, checkpoint_interval, options);
}

}  // namespace larmor::epg
