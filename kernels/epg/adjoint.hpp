// Entry point of the adjoint (vector-Jacobian product) of the forward EPG
// simulation (declarations; adjoint_impl.hpp is instantiated per backend in
// kernels/epg/backends/).
#pragma once

#include <cmath>

#include "epg/event_table.hpp"
#include "epg/launch_options.hpp"
#include "epg/tissue_views.hpp"

namespace larmor::epg {

inline constexpr const char* adjoint_kernel_name = "larmor::epg::adjoint";
inline constexpr const char* adjoint_hvp_kernel_name = "larmor::epg::adjoint_hvp";

// Columns of the per-event sequence gradients.
namespace sequence_gradient {
inline constexpr int flip = 0, phase = 1, duration = 2, count = 3;
}

// Where a reverse sweep writes. The *_hvp views are used at dual numbers only.
// Without sequence derivatives (sequence_gradients with no rows: a fit needs
// only the tissue's) a sweep skips their per-event sums over the voxels.
template <class MemorySpace>
struct ReverseOutputs {
  using Matrix = Kokkos::View<float**, Kokkos::LayoutRight, MemorySpace>;
  Matrix tissue_gradients, sequence_gradients, tissue_hvp, sequence_hvp;
  KOKKOS_INLINE_FUNCTION bool wants_sequence() const { return sequence_gradients.extent(0) > 0; }
};

// Per-voxel or per-event matrices, directions and cotangents(voxel, sample,
// {re, im}) on a backend's memory.
template <class ExecSpace>
using MatrixOf = Kokkos::View<float**, Kokkos::LayoutRight, typename ExecSpace::memory_space>;
template <class ExecSpace>
using ConstMatrixOf =
    Kokkos::View<const float**, Kokkos::LayoutRight, typename ExecSpace::memory_space>;
template <class ExecSpace>
using CotangentsOf =
    Kokkos::View<const float***, Kokkos::LayoutRight, typename ExecSpace::memory_space>;

// Orders a reverse sweep's checkpoint rows hold: the grouped layout pads to
// 16, 32 or 64 (its blocks), the plain one keeps the run's count.
inline int padded_reverse_orders(int orders) {
  if (orders > 64) return orders;
  return orders <= 16 ? 16 : (orders <= 32 ? 32 : 64);
}

// Threads per voxel of a device's grouped reverse sweep (4 orders each): the
// fewest that hold the run's orders, so that no thread of a warp carries
// orders the run never reaches.
inline int reverse_group_threads(int orders) { return padded_reverse_orders(orders) / 4; }

// Floats of one state a reverse sweep stores (per part of a dual number):
// six components of the padded orders, or for a pooled model (one voxel per
// thread, rows of the run's orders) each free pool's F+ and F- and each
// pool's Z.
inline double reverse_state_floats(int orders, int free_pools = 1, int bound_pools = 0) {
  if (free_pools == 1 && bound_pools == 0) return 6.0 * padded_reverse_orders(orders);
  return double(4 * free_pools + 2 * (free_pools + bound_pools)) * orders;
}

// The checkpoint interval: sqrt(E) minimises checkpoints plus one stretch.
// An interval of the whole stream keeps every state and the grouped kernel
// then skips the replay, but on a device storing every state puts its writes
// on the first sweep's critical path: slower for the VJP, faster for the HVP
// (docs/performance.md, "Reverse sweeps"; `larmor-bench -m vjp|hvp`), so it
// is left to the caller there (host workers: host_stretch_interval).
inline int default_checkpoint_interval(int events) {
  return events <= 1 ? 1 : int(std::ceil(std::sqrt(double(events))));
}

// A host worker thread keeps its checkpoints and stretch in a store row of its
// own, which stays in its caches. Where every state of the stream fits in
// this many bytes of that row, the automatic interval becomes the whole
// stream: the sweep skips the replay, and each event runs forward once.
inline constexpr double host_whole_stream_bytes = 4.0 * 1024 * 1024;
inline int host_stretch_interval(int events, int state_floats, int interval) {
  return double(events) * state_floats * 4.0 <= host_whole_stream_bytes ? events : interval;
}

// A device's grouped complex sweep keeps its stretch in team scratch, up to
// this many states (fewer where the card's shared memory cannot hold them for
// the kernel's blocks per multiprocessor): each reverse event then reads its
// state back from shared memory, not global memory.
inline constexpr int reverse_scratch_slots = 4;

// The interval at which a sweep with `slots` states of team scratch keeps its
// stretch there, or 0 where it keeps the stretch in global memory. An interval
// the caller gives is kept: in scratch if it fits. The automatic one becomes
// the slots while the checkpoints that takes are at most twice the states of
// the default interval (checkpoints and stretch), so that a long stream does
// not trade its stretch for a multitude of checkpoints.
inline int scratch_stretch_interval(int events, int checkpoint_interval, int slots) {
  if (slots <= 0 || events <= 0) return 0;
  if (checkpoint_interval > 0) {
    const int c = checkpoint_interval < events ? checkpoint_interval : events;
    return c <= slots ? c : 0;
  }
  const int c = default_checkpoint_interval(events);
  const int s = slots < events ? slots : events;
  const int default_states = (events + c - 1) / c + c;
  return (events + s - 1) / s <= 2 * default_states ? s : 0;
}

// For the loss L = sum over voxels and samples of Re(conj(w) y), with w the
// cotangents(voxel, sample, {re, im}) and y the simulated signals: writes
// tissue_gradients(voxel, d) = dL/d(M0, T1 [s], T2 [s], B1, df [Hz]) and ADDS
// to sequence_gradients(event, {flip [rad], phase [rad], duration [s]}) the
// derivative of L summed over the voxels (zero it first; a view with no rows
// skips them, which a fit of the tissue alone does not need). Keeps a checkpoint
// every `checkpoint_interval` events (0: sqrt of the event count).
template <class ExecSpace>
void simulate_tissue_vjp(const ExecSpace& exec,
                         const EventTable<typename ExecSpace::memory_space>& events,
                         const TissueViews<typename ExecSpace::memory_space>& tissue,
                         const CotangentsOf<ExecSpace>& cotangents,
                         const MatrixOf<ExecSpace>& tissue_gradients,
                         const MatrixOf<ExecSpace>& sequence_gradients, int checkpoint_interval,
                         const LaunchOptions& options = {});

// Forward over reverse: the adjoint run at dual numbers whose tangent is the
// tissue direction u = directions(voxel, {M0, T1, T2, B1, df}). Writes what
// simulate_tissue_vjp writes (the gradients of L) and their derivatives along
// u: tissue_hvp(voxel, d) = sum_e d2L / d(d) d(e) u_e (the Hessian of L in the
// tissue times u) and ADDS to sequence_hvp(event, {flip, phase, duration}) the
// mixed second derivatives d2L / d(sequence value) du, summed over voxels
// (both sequence views with no rows skip them).
template <class ExecSpace>
void simulate_tissue_hvp(
    const ExecSpace& exec, const EventTable<typename ExecSpace::memory_space>& events,
    const TissueViews<typename ExecSpace::memory_space>& tissue,
    const ConstMatrixOf<ExecSpace>& directions, const CotangentsOf<ExecSpace>& cotangents,
    const MatrixOf<ExecSpace>& tissue_gradients, const MatrixOf<ExecSpace>& sequence_gradients,
    const MatrixOf<ExecSpace>& tissue_hvp, const MatrixOf<ExecSpace>& sequence_hvp,
    int checkpoint_interval, const LaunchOptions& options = {});

}  // namespace larmor::epg
