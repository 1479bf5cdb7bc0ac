// Tissue as the kernels see it: each property is either a per-voxel map or one
// uniform value. A property at its identity value (M0 = 1, B1 = 1, df = 0,
// T1 = T2 = infinity) changes nothing, and a uniform one costs one register.
#pragma once

#include "common/kokkos_compat.hpp"

namespace larmor::epg {

template <class MemorySpace>
struct TissueProperty {
  Kokkos::View<const float*, MemorySpace> map;  // empty: use `uniform`
  float uniform = 0.0f;

  KOKKOS_FORCEINLINE_FUNCTION float at(int voxel) const {
    return map.extent(0) > 0 ? map(voxel) : uniform;
  }
};

// T1 and T2 in seconds (infinity allowed), off-resonance in Hz.
template <class MemorySpace>
struct TissueViews {
  TissueProperty<MemorySpace> m0, t1_s, t2_s, b1, df_hz;
  int voxels = 0;
};

// The tissue directions of derivatives, in this order everywhere.
namespace tissue_direction {
inline constexpr int m0 = 0, t1 = 1, t2 = 2, b1 = 3, df = 4, count = 5;
}

}  // namespace larmor::epg
