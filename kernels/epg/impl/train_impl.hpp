// The launcher of the train kernel (train_loop.hpp): the forward run's layout
// (choose_launch_shape), its batch of staged steps sized to the backend's
// scratch, and the compiled variant for the shape.
#pragma once

#include <stdexcept>
#include <string>

#include "epg/forward.hpp"
#include "epg/impl/train_loop.hpp"

namespace larmor::epg {

namespace detail {

template <class Kernel, class ExecSpace>
void launch_train_kernel(const ExecSpace& exec,
                         const EventTable<typename ExecSpace::memory_space>& events,
                         const TissueViews<typename ExecSpace::memory_space>& tissue,
                         const SignalsOf<ExecSpace>& signals, const LaunchShape& shape) {
  Kernel kernel;
  kernel.events = events;
  kernel.tissue = tissue;
  kernel.signals = signals;
  set_team_counts<ExecSpace>(kernel, shape);
  // Two steps per thread of a device group; a host thread stages a longer
  // batch for its lanes. Halved until the team's scratch holds it.
  int batch = kx::is_host_space_v<ExecSpace> ? 64 : 2 * shape.group_threads;
  const std::size_t scratch_max = Kokkos::TeamPolicy<ExecSpace, TrainTag>::scratch_size_max(0);
  while (batch > 1 &&
         Kernel::scratch_bytes(batch, shape.team_threads, shape.groups) > scratch_max) {
    batch /= 2;
  }
  if (Kernel::scratch_bytes(batch, shape.team_threads, shape.groups) > scratch_max) {
    throw std::runtime_error(std::string(train_kernel_name) +
                             ": team scratch cannot hold one step's factors next to the shift "
                             "buffers of " +
                             std::to_string(shape.team_threads) + " threads");
  }
  kernel.batch = batch;
  // Where few steps have that shape, checking each step for a run would cost
  // more than it saves.
  kernel.rename = train_renames_shifts(events);
  typename Kernel::policy policy(exec, shape.league, shape.team_threads, 1);
  policy.set_scratch_size(
      0, Kokkos::PerTeam(Kernel::scratch_bytes(batch, shape.team_threads, shape.groups)));
  Kokkos::parallel_for(shape.name, policy, kernel);
}

// The compiled layouts: the device's default ones (four orders of one voxel
// per thread up to 64 orders, in a full warp of groups of 8 or 16 threads or
// a narrower team; one order per thread beyond) and every host bucket.
template <class ExecSpace>
bool launch_train_layout(const ExecSpace& exec,
                         const EventTable<typename ExecSpace::memory_space>& events,
                         const TissueViews<typename ExecSpace::memory_space>& tissue,
                         const SignalsOf<ExecSpace>& signals, const LaunchShape& s) {
  bool launched = false;
  if constexpr (kx::is_host_space_v<ExecSpace>) {
    const auto try_bucket = [&](auto opt, auto lanes) {
      constexpr int OPT = decltype(opt)::value, L = decltype(lanes)::value;
      if (launched || s.orders_per_thread != OPT || s.lanes != L) return;
      launch_train_kernel<TrainKernel<ExecSpace, OPT, L>>(exec, events, tissue, signals, s);
      launched = true;
    };
    layouts::dispatch<layouts::HostForward>(s.orders_per_thread, s.lanes,
                                            [&](auto opt, auto lanes, auto axis_only) {
                                              if constexpr (!decltype(axis_only)::value)
                                                try_bucket(opt, lanes);
                                            });
  } else {
    if (s.orders_per_thread == 4 && s.lanes == 1) {
      if (s.team_threads == 32 && s.group_threads == 16) {
        launch_train_kernel<TrainKernel<ExecSpace, 4, 1, 16>>(exec, events, tissue, signals, s);
      } else if (s.team_threads == 32 && s.group_threads == 8) {
        launch_train_kernel<TrainKernel<ExecSpace, 4, 1, 8>>(exec, events, tissue, signals, s);
      } else {
        launch_train_kernel<TrainKernel<ExecSpace, 4, 1>>(exec, events, tissue, signals, s);
      }
      launched = true;
    } else if (s.orders_per_thread == 1 && s.lanes == 1) {
      launch_train_kernel<TrainKernel<ExecSpace, 1, 1>>(exec, events, tissue, signals, s);
      launched = true;
    }
  }
  return launched;
}

}  // namespace detail

template <class ExecSpace>
bool simulate_train(const ExecSpace& exec,
                    const EventTable<typename ExecSpace::memory_space>& events,
                    const TissueViews<typename ExecSpace::memory_space>& tissue,
                    const SignalsOf<ExecSpace>& signals, const LaunchOptions& options) {
  LaunchShape shape = choose_launch_shape<ExecSpace>(events.orders, tissue.voxels, false, options);
  shape.name = launch_name(train_kernel_name, options);
  return detail::launch_train_layout<ExecSpace>(exec, events, tissue, signals, shape);
}

}  // namespace larmor::epg

#define LARMOR_EPG_INSTANTIATE_TRAIN(EXEC)                                               \
  namespace larmor::epg {                                                                \
  template bool simulate_train<EXEC>(const EXEC&, const EventTable<EXEC::memory_space>&, \
                                     const TissueViews<EXEC::memory_space>&,             \
                                     const SignalsOf<EXEC>&, const LaunchOptions&);      \
  }
