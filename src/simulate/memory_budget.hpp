// How many bytes a launch may allocate for per-voxel scratch on a backend.
#pragma once

#include <algorithm>
#include <type_traits>

#include <Kokkos_Core.hpp>

namespace larmor::simulate {

// Bytes the reverse sweep's checkpoints may take. One thread walks one voxel,
// so a GPU needs a few hundred thousand voxels in flight: half its free
// memory. The host keeps to 1 GiB.
template <class ExecSpace>
double reverse_memory_budget() {
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

}  // namespace larmor::simulate
