// Copies a slice of a host tissue to a memory space as the kernels' views.
#pragma once

#include <limits>
#include <stdexcept>
#include <string>

#include "epg/tissue_views.hpp"
#include "tissue/tissue.hpp"

namespace larmor::simulate {

template <class MemorySpace>
epg::TissueProperty<MemorySpace> upload_property(const tissue::PropertyValues& values,
                                                 std::int64_t begin, std::int64_t count) {
  epg::TissueProperty<MemorySpace> out;
  out.uniform = values.uniform;
  if (values.is_map()) {
    Kokkos::View<float*, MemorySpace> map(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::tissue_map"), count);
    Kokkos::View<const float*, Kokkos::HostSpace, kx::Unmanaged> host(values.map.data() + begin,
                                                                      count);
    Kokkos::deep_copy(map, host);
    out.map = map;
  }
  return out;
}

// Voxels [begin, begin + count) of `t`. The kernels index voxels with 32-bit
// integers: a larger slice is refused here, where the fact is known.
template <class MemorySpace>
epg::TissueViews<MemorySpace> upload_tissue(const tissue::Tissue& t, std::int64_t begin,
                                            std::int64_t count) {
  if (count > std::numeric_limits<std::int32_t>::max()) {
    throw std::invalid_argument("larmor::epg::forward: " + std::to_string(count) +
                                " voxels in one launch exceed the kernels' 32-bit voxel index");
  }
  epg::TissueViews<MemorySpace> v;
  v.voxels = static_cast<int>(count);
  v.m0 = upload_property<MemorySpace>(t.m0, begin, count);
  v.t1_s = upload_property<MemorySpace>(t.t1_s, begin, count);
  v.t2_s = upload_property<MemorySpace>(t.t2_s, begin, count);
  v.b1 = upload_property<MemorySpace>(t.b1, begin, count);
  v.df_hz = upload_property<MemorySpace>(t.df_hz, begin, count);
  return v;
}

}  // namespace larmor::simulate
