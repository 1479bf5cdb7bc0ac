// The one rule that sizes every launch (simulate/impl/prepared_run.hpp, the
// dictionary's matcher).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <Kokkos_Core.hpp>

namespace larmor::simulate {

// The budget rule, stated once: a launch's per-voxel device memory (its
// outputs, carried states and checkpoints) stays within
// launch_memory_budget(): 1 GiB on the host, where the caller's arrays hold
// the results as well, and half the free memory on a GPU (at least 1 GiB),
// which a reverse sweep of one thread per voxel needs to keep it busy.
template <class ExecSpace>
double launch_memory_budget() {
  constexpr double host_budget = double(1u << 30);
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {
    std::size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
      return std::max(host_budget, 0.5 * double(free_bytes));
    }
  }
#endif
  return host_budget;
}

// Tissue voxels per launch under the budget, each `positions` kernel voxels
// of `bytes_per_kernel_voxel`; at most `requested` where positive, and within
// the kernels' 32-bit voxel index. A run that reports progress goes in at
// least 16 launches while each keeps 32768 kernel voxels, which still fill a
// GPU (docs/performance.md, "Throughput against voxel count").
inline std::int64_t voxels_per_launch(double budget, double bytes_per_kernel_voxel,
                                      std::int64_t voxels, int positions, std::int64_t requested,
                                      bool reports_progress) {
  const double per_voxel = std::max(1.0, bytes_per_kernel_voxel) * double(positions);
  std::int64_t chunk = std::int64_t(std::min(budget / per_voxel, 9.0e18));
  constexpr std::int64_t min_launches = 16, fills_a_gpu = 32768;
  if (reports_progress && voxels * positions >= min_launches * fills_a_gpu) {
    chunk = std::min(chunk, (voxels + min_launches - 1) / min_launches);
  }
  if (requested > 0) chunk = std::min(chunk, requested);
  chunk =
      std::min<std::int64_t>({chunk, voxels, std::numeric_limits<std::int32_t>::max() / positions});
  return std::max<std::int64_t>(1, chunk);
}

}  // namespace larmor::simulate
