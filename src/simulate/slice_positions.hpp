// Runs with slice-selective pulses: the tables go to the device once per run,
// each tissue voxel runs once per slice position (the kernel's voxel v is
// tissue voxel v / P at position v % P), and the positions' signals are
// summed, weighted by their widths, into the voxel's.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "epg/slice_profile.hpp"
#include "sequence/slice_profile.hpp"
#include "tissue/tissue.hpp"

namespace larmor::simulate {

template <class MemorySpace>
epg::SliceProfileViews<MemorySpace> upload_slice_profiles(const sequence::SliceProfileTable& t) {
  epg::SliceProfileViews<MemorySpace> v;
  if (t.profiles == 0) return v;
  Kokkos::View<float****, Kokkos::LayoutRight, MemorySpace> nodes(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::slice_profiles"), t.profiles,
      t.positions, t.flip_nodes, 8);
  Kokkos::View<const float****, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged> host(
      t.nodes.data(), t.profiles, t.positions, t.flip_nodes, 8);
  Kokkos::deep_copy(nodes, host);
  Kokkos::View<float*, MemorySpace> step("larmor::slice_flip_step", t.profiles);
  auto host_step = Kokkos::create_mirror_view(step);
  for (int p = 0; p < t.profiles; ++p) host_step(p) = float(t.flip_step[std::size_t(p)]);
  Kokkos::deep_copy(step, host_step);
  v.nodes = nodes;
  v.flip_step = step;
  v.positions = t.positions;
  return v;
}

// What a tissue must satisfy to run slice-selective pulses: B1 within the
// tables' flips, and no transmit array (its per-voxel field is not folded
// into the tables' positions yet).
inline void check_slice_tissue(const sequence::SliceProfileTable& t, const tissue::Tissue& tissue,
                               const sequence::Description& d) {
  if (t.profiles == 0) return;
  const auto& b1 = tissue.b1;
  const float top = b1.map.empty() ? b1.uniform : *std::max_element(b1.map.begin(), b1.map.end());
  if (top > sequence::slice_profile_max_b1) {
    throw std::invalid_argument("slice-selective pulses: b1 " + std::to_string(top) +
                                " exceeds the tables' range (b1 <= " +
                                std::to_string(sequence::slice_profile_max_b1) + ")");
  }
  if (tissue.transmit_channels > 0 && d.shims.channels > 0) {
    throw std::invalid_argument(
        "slice-selective pulses do not combine with a transmit array yet: give b1 instead");
  }
  if (std::int64_t(tissue.voxels) * t.positions < 0) {
    throw std::invalid_argument("slice-selective pulses: voxels x positions overflow");
  }
}

// out[v][r] = weight * sum_j in[v * P + j][r] over rows of `row` floats.
template <class MemorySpace>
struct SumSlicePositions {
  const float* in;
  float* out;
  std::int64_t row;
  int positions;
  float weight;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    const std::int64_t v = i / row, r = i - v * row;
    float sum = 0.0f;
    for (int j = 0; j < positions; ++j) sum += in[(v * positions + j) * row + r];
    out[i] = weight * sum;
  }
};

template <class ExecSpace>
void sum_slice_positions(const ExecSpace& exec, const float* in, float* out, std::int64_t voxels,
                         std::int64_t row, const sequence::SliceProfileTable& t) {
  SumSlicePositions<typename ExecSpace::memory_space> f{in, out, row, t.positions,
                                                        float(t.position_weight.front())};
  Kokkos::parallel_for(
      "larmor::sum_slice_positions",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(exec, 0, voxels * row), f);
}

}  // namespace larmor::simulate
