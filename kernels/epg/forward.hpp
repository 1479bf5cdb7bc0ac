// Entry point of the fused forward EPG simulation (declarations).
//
// The implementation (forward_impl.hpp) is instantiated once per enabled
// backend in kernels/epg/backends/, so a translation unit that only launches
// the kernel compiles quickly and the layouts are compiled exactly once.
#pragma once

#include "epg/event_table.hpp"
#include "epg/launch_options.hpp"
#include "epg/state_layouts.hpp"
#include "epg/tissue_views.hpp"

namespace larmor::epg {

inline constexpr const char* forward_kernel_name = "larmor::epg::forward";
inline constexpr const char* tissue_jvp_kernel_name = "larmor::epg::tissue_jvp";
inline constexpr const char* train_kernel_name = "larmor::epg::train";

// What is compiled for a launch: orders per thread, voxels per group and groups
// per team (the state layout), and the team size and event-tile length chosen
// at run time.
struct LaunchShape {
  int orders_per_thread = 0;
  int lanes = 0;
  int groups = 1;         // voxel groups per team
  int group_threads = 0;  // threads per group
  int team_threads = 0;
  int tile_events = 0;
  int league = 0;
  std::string name;  // the launch's name (launch_name); empty: forward_kernel_name
};

namespace detail {
// A launch shape's team counts on a kernel. Shuffles need the team to be one
// warp cut into power-of-two groups.
template <class ExecSpace, class Kernel>
void set_team_counts(Kernel& kernel, const LaunchShape& shape) {
  kernel.team_threads = shape.team_threads;
  kernel.groups = shape.groups;
  kernel.group_threads = shape.group_threads;
  kernel.warp_shuffle = !kx::is_host_space_v<ExecSpace> && shape.team_threads <= 32 &&
                        (shape.group_threads & (shape.group_threads - 1)) == 0;
}
}  // namespace detail

// `on_axis`: the real-subspace states (half the registers of the complex
// ones), which hold more orders and voxels per thread. The layout is an
// entry of layouts::HostForward or layouts::DeviceForward.
template <class ExecSpace>
LaunchShape choose_launch_shape(int orders, int voxels, bool on_axis = false,
                                const LaunchOptions& options = {});

// signals(voxel, sample, {re, im}) and tangents(voxel, direction, sample,
// {re, im}) on a backend's memory.
template <class ExecSpace>
using SignalsOf = Kokkos::View<float***, Kokkos::LayoutRight, typename ExecSpace::memory_space>;
template <class ExecSpace>
using TangentsOf = Kokkos::View<float****, Kokkos::LayoutRight, typename ExecSpace::memory_space>;

// The state carried between periods of a steady-state iteration,
// [voxel][component][order] with components F+ re, im, F- re, im, Z re, im;
// for a pooled model, those of each free pool's F+ and F-, then each pool's
// Z (PooledState in pooled_state.hpp).
inline int carried_state_components(int free_pools, int bound_pools) {
  return 4 * free_pools + 2 * (free_pools + bound_pools);
}

template <class MemorySpace>
struct CarriedState {
  Kokkos::View<const float***, Kokkos::LayoutRight, MemorySpace> in;  // empty: equilibrium
  Kokkos::View<float***, Kokkos::LayoutRight, MemorySpace> out;       // empty: not kept
};

// Simulates every voxel of `tissue` through `events`, writing the complex
// signal of every recorded sample: signals(voxel, sample, {re, im}); from
// and to a carried state where given (components: carried_state_components).
template <class ExecSpace>
void simulate_forward(const ExecSpace& exec,
                      const EventTable<typename ExecSpace::memory_space>& events,
                      const TissueViews<typename ExecSpace::memory_space>& tissue,
                      const SignalsOf<ExecSpace>& signals,
                      const CarriedState<typename ExecSpace::memory_space>& carry = {},
                      const LaunchOptions& options = {});

// The forward run of a table compiled into a train of steps
// (EventTable::train; impl/train_loop.hpp), on the complex states without
// declared terms or a carried state: the same signals as simulate_forward
// up to float rounding. False (nothing launched) where no layout of it is
// compiled for the run's shape. simulate_forward takes it where
// takes_train() says.
template <class ExecSpace>
bool simulate_train(const ExecSpace& exec,
                    const EventTable<typename ExecSpace::memory_space>& events,
                    const TissueViews<typename ExecSpace::memory_space>& tissue,
                    const SignalsOf<ExecSpace>& signals, const LaunchOptions& options = {});

// Whether a forward run on `ExecSpace` under `options` may take the train
// kernel: automatically on devices, where each thread of a group would
// otherwise repeat its voxel's per-event scalars (on the host the general
// loop measured faster: its lanes vectorise them and its tables trim the
// orders no sample reads; docs/kernels.md, "The train kernel"), anywhere
// when forced on, never on the real-subspace rewrite (`on_axis`), which has
// its own kernel. Tables for other runs skip the step list.
template <class ExecSpace>
bool forward_may_take_train(const LaunchOptions& options, bool on_axis) {
  if (options.train == LaunchOptions::Train::off || on_axis) return false;
  return options.train == LaunchOptions::Train::on || !kx::is_host_space_v<ExecSpace>;
}
template <class ExecSpace>
TrainSteps train_steps_rule(const LaunchOptions& options, bool on_axis) {
  return forward_may_take_train<ExecSpace>(options, on_axis) ? TrainSteps::compile
                                                             : TrainSteps::skip;
}

// Forward mode along the five tissue directions (M0, T1, T2, B1, df; the order
// of tissue_direction in tissue_views.hpp): the same event loop at a dual
// number. Writes the signals as simulate_forward does and their derivatives:
// tangents(voxel, direction, sample, {re, im}) = d signal / d parameter, with
// T1 and T2 in seconds and df in Hz.
inline constexpr int tissue_tangent_count = 5;

template <class ExecSpace>
void simulate_tissue_jvp(const ExecSpace& exec,
                         const EventTable<typename ExecSpace::memory_space>& events,
                         const TissueViews<typename ExecSpace::memory_space>& tissue,
                         const SignalsOf<ExecSpace>& signals, const TangentsOf<ExecSpace>& tangents,
                         const LaunchOptions& options = {});

}  // namespace larmor::epg
