// The launcher of the fused forward kernel: picks the compiled layout for the
// order count (small and large variants, as LAMMPS KOKKOS does by size), sizes
// the event tile from the scratch the backend offers (as ArborX does), checks
// the kernel's limits and launches.
#pragma once

#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "epg/forward.hpp"
#include "epg/impl/event_loop.hpp"
#include "epg/impl/pooled_impl.hpp"

namespace larmor::epg {

namespace detail {

// Host backends: one thread holds every order of a block of voxels, the voxel
// lanes are the SIMD lanes. The order bucket is the smallest compiled one
// holding the orders (callers have checked the limit), with the lanes the
// table gives it.
struct HostBucket {
  int orders_per_thread = 0;
  int lanes = 0;
};
template <class Table>
constexpr HostBucket host_bucket_for(int orders, bool one_lane) {
  HostBucket best;
  for (const StateLayout& l : Table::entries) {
    if (l.orders_per_thread < orders || (one_lane ? l.lanes != 1 : l.axis_only)) continue;
    if (best.orders_per_thread == 0 || l.orders_per_thread < best.orders_per_thread) {
      best = {l.orders_per_thread, l.lanes};
    }
  }
  return best;
}

// Host teams take long tiles; device teams keep theirs short so that team
// scratch does not cap the blocks an SM holds. Halved until the kernel's
// scratch (tile, shift buffers, padding) fits the backend's limit.
template <class Kernel>
int tile_events_for(std::size_t scratch_max, int team_threads, bool host) {
  int tile = host ? 256 : 128;
  while (tile > 0 && Kernel::scratch_bytes(tile, team_threads) > scratch_max) tile /= 2;
  return tile;
}

template <class Kernel, class ExecSpace>
void launch_kernel(const ExecSpace& exec,
                   const EventTable<typename ExecSpace::memory_space>& events,
                   const TissueViews<typename ExecSpace::memory_space>& tissue,
                   const SignalsOf<ExecSpace>& signals, LaunchShape shape,
                   const TangentsOf<ExecSpace>& tangents,
                   const CarriedState<typename ExecSpace::memory_space>& carry) {
  shape.tile_events =
      tile_events_for<Kernel>(Kokkos::TeamPolicy<ExecSpace, ForwardTag>::scratch_size_max(0),
                              shape.team_threads, kx::is_host_space_v<ExecSpace>);
  if (shape.tile_events < 1) {
    throw std::runtime_error(
        std::string(forward_kernel_name) +
        ": team scratch cannot hold one event tile next to the shift buffers of " +
        std::to_string(shape.team_threads) + " threads");
  }
  Kernel kernel;
  kernel.events = events;
  kernel.tissue = tissue;
  kernel.signals = signals;
  kernel.tangents = tangents;
  kernel.state_in = carry.in;
  kernel.state_out = carry.out;
  set_team_counts<ExecSpace>(kernel, shape);
  kernel.tile_events = shape.tile_events;
  typename Kernel::policy policy(exec, shape.league, shape.team_threads, 1);
  policy.set_scratch_size(
      0, Kokkos::PerTeam(Kernel::scratch_bytes(shape.tile_events, shape.team_threads)));
  Kokkos::parallel_for(shape.name.empty() ? std::string(forward_kernel_name) : shape.name, policy,
                       kernel);
}

// The plain kernel with its group size fixed at compile time (WarpExchange),
// for a team of one full warp whose groups have one of `Groups` threads;
// false (nothing launched) otherwise.
template <class ExecSpace, class Real, int OPT, int L, bool OnAxis, int... Groups>
bool launch_warp_groups(const ExecSpace& exec,
                        const EventTable<typename ExecSpace::memory_space>& events,
                        const TissueViews<typename ExecSpace::memory_space>& tissue,
                        const SignalsOf<ExecSpace>& signals, const LaunchShape& shape,
                        const TangentsOf<ExecSpace>& tangents,
                        const CarriedState<typename ExecSpace::memory_space>& carry) {
  if (shape.team_threads != 32) return false;
  bool launched = false;
  const auto launch_if = [&](auto group) {
    if (launched || shape.group_threads != decltype(group)::value) return;
    launch_kernel<ForwardKernel<ExecSpace, Real, OPT, L, false, OnAxis, decltype(group)::value>>(
        exec, events, tissue, signals, shape, tangents, carry);
    launched = true;
  };
  (launch_if(std::integral_constant<int, Groups>{}), ...);
  return launched;
}

template <class ExecSpace, int OPT, int L, class Real = float>
void launch_layout(const ExecSpace& exec,
                   const EventTable<typename ExecSpace::memory_space>& events,
                   const TissueViews<typename ExecSpace::memory_space>& tissue,
                   const SignalsOf<ExecSpace>& signals, LaunchShape shape,
                   const TangentsOf<ExecSpace>& tangents = {},
                   const CarriedState<typename ExecSpace::memory_space>& carry = {}) {
  const bool full = declares_terms(tissue) || carry.in.extent(0) > 0 || carry.out.extent(0) > 0;
  // The real-subspace path: the plain variant on the axis states, for the
  // forward run and forward mode along the tissue directions. A rewritten
  // table is exact for the complex kernels too (the rewrite is a change of
  // frame), so what the axis states do not carry (declared terms, a carried
  // state) runs those instead.
  if constexpr (std::is_same_v<Real, float> || carries_df_v<Real>) {
    if (events.on_axis && !full) {
      launch_kernel<ForwardKernel<ExecSpace, Real, OPT, L, false, true>>(
          exec, events, tissue, signals, shape, tangents, carry);
      return;
    }
  }
  // The default complex layout in a team of one full warp (every launch of
  // more than a few voxels) takes the kernel with its group size fixed at
  // compile time, as the on-axis one does (launch_axis_layout).
  if constexpr (!kx::is_host_space_v<ExecSpace> && std::is_same_v<Real, float> && OPT == 4 &&
                L == 1) {
    if (!full && launch_warp_groups<ExecSpace, Real, OPT, L, false, 8, 16>(
                     exec, events, tissue, signals, shape, tangents, carry)) {
      return;
    }
  }
  if (full) {
    launch_kernel<ForwardKernel<ExecSpace, Real, OPT, L, true>>(exec, events, tissue, signals,
                                                                shape, tangents, carry);
  } else {
    launch_kernel<ForwardKernel<ExecSpace, Real, OPT, L, false>>(exec, events, tissue, signals,
                                                                 shape, tangents, carry);
  }
}

// Whether a forward run takes the on-axis states: an on-axis table, no
// declared terms and no carried state (the axis blocks carry neither).
template <class MemorySpace>
bool runs_on_axis(const EventTable<MemorySpace>& events, const TissueViews<MemorySpace>& tissue,
                  const CarriedState<MemorySpace>& carry) {
  return events.on_axis && !declares_terms(tissue) && carry.in.extent(0) == 0 &&
         carry.out.extent(0) == 0;
}

// A layout compiled for the on-axis states only (the host's one-lane buckets
// of LaunchOptions::real_scalar, the device's forward mode on the axis).
template <class ExecSpace, int OPT, int L, class Real = float>
void launch_axis_layout(const ExecSpace& exec,
                        const EventTable<typename ExecSpace::memory_space>& events,
                        const TissueViews<typename ExecSpace::memory_space>& tissue,
                        const SignalsOf<ExecSpace>& signals, LaunchShape shape,
                        const CarriedState<typename ExecSpace::memory_space>& carry,
                        const TangentsOf<ExecSpace>& tangents = {}) {
  if (!runs_on_axis(events, tissue, carry)) {
    throw std::logic_error(std::string(forward_kernel_name) + ": the layout " +
                           std::to_string(OPT) + "x" + std::to_string(L) +
                           " holds on-axis states only");
  }
  // A device team that is one full warp of groups of 2 or 4 threads (17 to
  // 64 orders) takes the kernel with its group size fixed at compile time
  // (WarpExchange); narrower teams (few voxels), one-thread groups and
  // forward mode keep the run-time counts.
  if constexpr (!kx::is_host_space_v<ExecSpace> && std::is_same_v<Real, float>) {
    if (launch_warp_groups<ExecSpace, Real, OPT, L, true, 2, 4>(exec, events, tissue, signals,
                                                                shape, tangents, carry)) {
      return;
    }
  }
  launch_kernel<ForwardKernel<ExecSpace, Real, OPT, L, false, true>>(exec, events, tissue, signals,
                                                                     shape, tangents, carry);
}

// Threads per voxel group on a device: enough for the orders, rounded up to a
// power of two while the group fits a warp, so that groups tile the warp.
inline int device_group_threads(int orders, int orders_per_thread) {
  const int needed = (orders + orders_per_thread - 1) / orders_per_thread;
  if (needed > 32) return needed;
  int threads = 1;
  while (threads < needed) threads *= 2;
  return threads;
}

// Threads per group, groups per team (32 / G while a group fits a warp, never
// more than there are voxel groups to fill) and team size, for a shape whose
// orders per thread and lanes are set.
inline void set_device_groups(LaunchShape& s, int orders, int voxels) {
  s.group_threads = device_group_threads(orders, s.orders_per_thread);
  s.groups = s.group_threads < 32 ? 32 / s.group_threads : 1;
  const int voxel_groups = (voxels + s.lanes - 1) / s.lanes;
  while (s.groups > 1 && s.groups / 2 >= voxel_groups) s.groups /= 2;
  s.team_threads = s.group_threads * s.groups;
}

// A layout requested in the launch options must be compiled in `Table` and
// hold the orders.
template <class Table>
void check_requested_layout(const LaunchOptions& options, int orders, bool on_axis,
                            const char* what) {
  const int opt = options.orders_per_thread, lanes = options.lanes;
  if (!layouts::compiled<Table>(opt, lanes, on_axis) ||
      (orders + opt - 1) / opt > abi::max_orders) {
    throw std::invalid_argument(
        std::string(forward_kernel_name) + ": LARMOR_EPG_LAYOUT=" + std::to_string(opt) + "x" +
        std::to_string(lanes) + " is not a " + what + " for " + std::to_string(orders) + " orders");
  }
}

// A run with pulses played from their waveforms takes the variant that plays
// them, in one layout per number type: a device thread per order of one
// voxel, a host thread every order (up to the kernels' limit) of one voxel.
template <class ExecSpace, class Real = float>
void launch_waveform_layout(const ExecSpace& exec,
                            const EventTable<typename ExecSpace::memory_space>& events,
                            const TissueViews<typename ExecSpace::memory_space>& tissue,
                            const SignalsOf<ExecSpace>& signals, const std::string& name,
                            const TangentsOf<ExecSpace>& tangents = {},
                            const CarriedState<typename ExecSpace::memory_space>& carry = {}) {
  constexpr int OPT = kx::is_host_space_v<ExecSpace> ? abi::max_orders : 1;
  LaunchShape s;
  s.orders_per_thread = OPT;
  s.lanes = 1;
  if constexpr (kx::is_host_space_v<ExecSpace>) {
    s.group_threads = s.team_threads = 1;
  } else {
    set_device_groups(s, events.orders, tissue.voxels);
  }
  s.league = (tissue.voxels + s.groups - 1) / s.groups;
  s.name = name;
  launch_kernel<ForwardKernel<ExecSpace, Real, OPT, 1, true, false, 0, true>>(
      exec, events, tissue, signals, s, tangents, carry);
}

}  // namespace detail

template <class ExecSpace>
LaunchShape choose_launch_shape(int orders, int voxels, bool on_axis,
                                const LaunchOptions& options) {
  check_order_limit(orders, forward_kernel_name);
  LaunchShape s;
  if constexpr (kx::is_host_space_v<ExecSpace>) {
    // The one-lane on-axis buckets where the options ask for them.
    const auto bucket =
        detail::host_bucket_for<layouts::HostForward>(orders, on_axis && options.real_scalar);
    s.orders_per_thread = bucket.orders_per_thread;
    s.lanes = bucket.lanes;
    s.team_threads = 1;
  } else {
    // Up to 64 orders, a thread holds four orders of one voxel and a warp
    // holds several such groups; beyond, one order per thread. On the axis,
    // sixteen orders of two voxels: the per-event work on each lane (flip,
    // exponentials, decode) is repeated on every thread of a group, so fewer
    // threads per group do less of it (docs/performance.md, "Device kernels").
    s.orders_per_thread = orders <= 64 ? (on_axis ? 16 : 4) : 1;
    s.lanes = orders <= 64 && on_axis ? 2 : 1;
    if (options.layout_requested()) {
      detail::check_requested_layout<layouts::DeviceForward>(options, orders, on_axis,
                                                             "compiled device layout");
      s.orders_per_thread = options.orders_per_thread;
      s.lanes = options.lanes;
    }
    detail::set_device_groups(s, orders, voxels);
  }
  if constexpr (kx::is_host_space_v<ExecSpace>) s.group_threads = 1;
  s.league = (voxels + s.lanes * s.groups - 1) / (s.lanes * s.groups);
  return s;
}

// Whether a forward run takes the train kernel: where it may
// (forward_may_take_train), a table compiled into a train, without declared
// terms, carried state or a requested layout; unless forced on, only a train
// whose shifts it renames (a spin-echo train runs faster in the event loop:
// docs/performance.md, "Forward kernel").
template <class ExecSpace>
bool takes_train(const EventTable<typename ExecSpace::memory_space>& events,
                 const TissueViews<typename ExecSpace::memory_space>& tissue,
                 const CarriedState<typename ExecSpace::memory_space>& carry,
                 const LaunchOptions& options) {
  const bool worth_it = options.train == LaunchOptions::Train::on || train_renames_shifts(events);
  return forward_may_take_train<ExecSpace>(options, events.on_axis) && events.train_steps > 0 &&
         worth_it && !declares_terms(tissue) && carry.in.extent(0) == 0 &&
         carry.out.extent(0) == 0 && !options.layout_requested();
}

template <class ExecSpace>
void simulate_forward(const ExecSpace& exec,
                      const EventTable<typename ExecSpace::memory_space>& events,
                      const TissueViews<typename ExecSpace::memory_space>& tissue,
                      const SignalsOf<ExecSpace>& signals,
                      const CarriedState<typename ExecSpace::memory_space>& carry,
                      const LaunchOptions& options) {
  const std::string name = forward_kernel_name;
  if (tissue.voxels <= 0) return;
  if (signals.extent(0) < std::size_t(tissue.voxels) ||
      signals.extent(1) < std::size_t(events.samples) || signals.extent(2) != 2) {
    throw std::invalid_argument(
        name + ": the signal array is " + std::to_string(signals.extent(0)) + " x " +
        std::to_string(signals.extent(1)) + " x " + std::to_string(signals.extent(2)) +
        ", expected at least " + std::to_string(tissue.voxels) + " x " +
        std::to_string(events.samples) + " x 2");
  }
  check_slice_profiles(events.slice_profiles, tissue.slice.profiles(), tissue.slice.positions, name,
                       tissue.pools.active() ? "a pooled model" : nullptr);
  check_waveforms(events.waveforms, tissue.waveforms.waveforms(), name,
                  tissue.pools.active() ? "a pooled model" : nullptr);
  check_sample_weights(events.sample_weight_tables, tissue.weights.tables(), tissue.weights.orders,
                       tissue.weights.positions(), events.orders, tissue.slice.positions, name);
  if (tissue.pools.active()) {  // a pooled model has layouts of its own
    simulate_pooled<ExecSpace, float>(exec, events, tissue, signals, {}, carry, options);
    return;
  }
  if (tissue.waveforms.active()) {
    check_order_limit(events.orders, name);
    detail::launch_waveform_layout<ExecSpace>(exec, events, tissue, signals,
                                              launch_name(forward_kernel_name, options), {}, carry);
    return;
  }
  if (takes_train<ExecSpace>(events, tissue, carry, options) &&
      simulate_train<ExecSpace>(exec, events, tissue, signals, options)) {
    return;
  }
  LaunchShape shape = choose_launch_shape<ExecSpace>(
      events.orders, tissue.voxels, detail::runs_on_axis(events, tissue, carry), options);
  shape.name = launch_name(forward_kernel_name, options);
  using Table = std::conditional_t<kx::is_host_space_v<ExecSpace>, layouts::HostForward,
                                   layouts::DeviceForward>;
  const auto launch = [&](auto opt, auto lanes, auto axis_only) {
    constexpr int OPT = decltype(opt)::value, L = decltype(lanes)::value;
    if constexpr (decltype(axis_only)::value) {
      detail::launch_axis_layout<ExecSpace, OPT, L>(exec, events, tissue, signals, shape, carry);
    } else {
      detail::launch_layout<ExecSpace, OPT, L>(exec, events, tissue, signals, shape, {}, carry);
    }
  };
  if (layouts::dispatch<Table>(shape.orders_per_thread, shape.lanes, launch)) return;
  throw std::logic_error(name + ": no compiled layout for " +
                         std::to_string(shape.orders_per_thread) + " orders per thread and " +
                         std::to_string(shape.lanes) + " lanes");
}

// Forward mode: one order per thread of one voxel on devices (a dual number
// is six floats, so the state of more would not stay in registers), two on
// the axis (three dual numbers per order instead of six; a requested 1x1
// layout keeps one, for comparison); on the host the order bucket of the forward run
// with a vector's voxel lanes up to 64 orders (layouts::host_vector_floats),
// one beyond.
template <class ExecSpace>
void simulate_tissue_jvp(const ExecSpace& exec,
                         const EventTable<typename ExecSpace::memory_space>& events,
                         const TissueViews<typename ExecSpace::memory_space>& tissue,
                         const SignalsOf<ExecSpace>& signals, const TangentsOf<ExecSpace>& tangents,
                         const LaunchOptions& options) {
  using Real = Dual<float, tissue_tangent_count>;
  const std::string name = forward_kernel_name;
  if (tissue.voxels <= 0) return;
  check_order_limit(events.orders, forward_kernel_name);
  if (signals.extent(0) < std::size_t(tissue.voxels) ||
      signals.extent(1) < std::size_t(events.samples) || signals.extent(2) != 2 ||
      tangents.extent(0) < std::size_t(tissue.voxels) ||
      tangents.extent(1) != std::size_t(tissue_tangent_count) ||
      tangents.extent(2) < std::size_t(events.samples) || tangents.extent(3) != 2) {
    throw std::invalid_argument(name + ": the signal or tangent array is too small for " +
                                std::to_string(tissue.voxels) + " voxels and " +
                                std::to_string(events.samples) + " samples");
  }
  check_slice_profiles(events.slice_profiles, tissue.slice.profiles(), tissue.slice.positions, name,
                       tissue.pools.active() ? "a pooled model" : nullptr);
  check_waveforms(events.waveforms, tissue.waveforms.waveforms(), name,
                  tissue.pools.active() ? "a pooled model" : nullptr);
  check_sample_weights(events.sample_weight_tables, tissue.weights.tables(), tissue.weights.orders,
                       tissue.weights.positions(), events.orders, tissue.slice.positions, name);
  if (tissue.pools.active()) {
    simulate_pooled<ExecSpace, Real>(exec, events, tissue, signals, tangents, {}, options);
    return;
  }
  if (tissue.waveforms.active()) {
    detail::launch_waveform_layout<ExecSpace, Real>(
        exec, events, tissue, signals, launch_name(tissue_jvp_kernel_name, options), tangents);
    return;
  }
  LaunchShape s;
  if constexpr (kx::is_host_space_v<ExecSpace>) {
    const auto bucket = detail::host_bucket_for<layouts::HostJvp>(events.orders, false);
    s.orders_per_thread = bucket.orders_per_thread;
    s.lanes = bucket.lanes;
    s.group_threads = s.team_threads = 1;
  } else {
    const bool on_axis =
        detail::runs_on_axis(events, tissue, CarriedState<typename ExecSpace::memory_space>{});
    s.orders_per_thread = on_axis ? 2 : 1;
    s.lanes = 1;
    if (options.layout_requested()) {
      detail::check_requested_layout<layouts::DeviceJvp>(options, events.orders, on_axis,
                                                         "compiled forward-mode device layout");
      s.orders_per_thread = options.orders_per_thread;
    }
    detail::set_device_groups(s, events.orders, tissue.voxels);
  }
  s.league = (tissue.voxels + s.lanes * s.groups - 1) / (s.lanes * s.groups);
  s.name = launch_name(tissue_jvp_kernel_name, options);
  using Table =
      std::conditional_t<kx::is_host_space_v<ExecSpace>, layouts::HostJvp, layouts::DeviceJvp>;
  const auto launch = [&](auto opt, auto lanes, auto axis_only) {
    constexpr int OPT = decltype(opt)::value, L = decltype(lanes)::value;
    if constexpr (decltype(axis_only)::value) {
      detail::launch_axis_layout<ExecSpace, OPT, L, Real>(exec, events, tissue, signals, s, {},
                                                          tangents);
    } else {
      detail::launch_layout<ExecSpace, OPT, L, Real>(exec, events, tissue, signals, s, tangents);
    }
  };
  if (layouts::dispatch<Table>(s.orders_per_thread, s.lanes, launch)) return;
  throw std::logic_error(name + ": no forward-mode layout for " + std::to_string(events.orders) +
                         " orders");
}

}  // namespace larmor::epg
