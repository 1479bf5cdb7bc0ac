// Runs with slice-selective pulses: the tables go to the device once per run,
// each tissue voxel runs once per slice position (the kernel's voxel v is
// tissue voxel v / P at position v % P), and the positions' signals are
// summed, weighted by their widths, into the voxel's.
#pragma once

#include <algorithm>
#include <complex>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "epg/slice_profile.hpp"
#include "epg/tissue_views.hpp"
#include "sequence/slice_profile.hpp"
#include "sequence/voxel_integral.hpp"
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

// A run's voxel weights (sequence/voxel_integral.hpp) on the device; empty
// views where no sample is weighted.
template <class MemorySpace>
epg::SampleWeightViews<MemorySpace> upload_sample_weights(const sequence::VoxelWeightTable& t) {
  epg::SampleWeightViews<MemorySpace> v;
  if (t.tables == 0) return v;
  Kokkos::View<float****, Kokkos::LayoutRight, MemorySpace> weights(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::sample_weights"), t.tables,
      t.positions, 2 * t.orders - 1, 2);
  Kokkos::View<const float****, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged> host(
      t.weights.data(), t.tables, t.positions, 2 * t.orders - 1, 2);
  Kokkos::deep_copy(weights, host);
  v.weights = weights;
  v.orders = t.orders;
  return v;
}

// The largest effective transmit scale a slice-selective pulse sees in
// `tissue`: b1 times the magnitude of the transmit array's field for the
// pulse's shim setting (1 without an array). Names the voxel and the setting
// through `where`.
inline float largest_slice_transmit(const tissue::Tissue& tissue, const sequence::Description& d,
                                    std::string& where) {
  std::vector<int> settings;  // the shim settings slice-selective pulses use (0: none)
  for (const auto& e : d.events) {
    if (e.kind == sequence::EventKind::pulse && e.slice_profile > 0 &&
        std::find(settings.begin(), settings.end(), e.shim_index) == settings.end()) {
      settings.push_back(e.shim_index);
    }
  }
  const bool array = tissue.transmit_channels > 0 && d.shims.channels > 0;
  const int channels = d.shims.channels;
  float top = 0.0f;
  std::int64_t top_voxel = 0;
  int top_setting = 0;
  for (std::int64_t v = 0; v < tissue.voxels; ++v) {
    for (int s : settings) {
      double gain = 1.0;
      if (array && s > 0) {
        std::complex<double> b = 0.0;
        for (int c = 0; c < channels; ++c) {
          b += d.shims.weights[std::size_t((s - 1) * channels + c)] *
               std::complex<double>(tissue.transmit[std::size_t(v * channels + c)]);
        }
        gain = std::abs(b);
      }
      const float scale = float(gain) * tissue.b1.at(v);
      if (scale > top) {
        top = scale;
        top_voxel = v;
        top_setting = array ? s : 0;
      }
    }
  }
  where = "voxel " + std::to_string(top_voxel) +
          (top_setting > 0 ? ", shim setting " + std::to_string(top_setting) : std::string());
  return top;
}

// What a tissue must satisfy to run slice-selective pulses: b1 (times a
// transmit array's field) within the tables' flips.
inline void check_slice_tissue(const sequence::SliceProfileTable& t, const tissue::Tissue& tissue,
                               const sequence::Description& d) {
  if (t.profiles == 0) return;
  std::string where;
  const float top = largest_slice_transmit(tissue, d, where);
  if (top > sequence::slice_profile_max_b1) {
    throw std::invalid_argument(
        "slice-selective pulses: b1 x transmit field " + std::to_string(top) + " at " + where +
        " exceeds the tables' range (<= " + std::to_string(sequence::slice_profile_max_b1) + ")");
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
