// A PERK model on a memory space, for the kernels of kernels/perk/.
#pragma once

#include <string>
#include <vector>

#include "estimators/perk/perk_model.hpp"
#include "perk/perk_apply.hpp"

namespace larmor::estimators::perk {

// The model on a memory space, for the kernels.
template <class MemorySpace>
larmor::perk::ModelViews<MemorySpace> upload(const PerkModel& model) {
  auto copy = [](const std::vector<float>& host, const char* label, int rows, int cols) {
    Kokkos::View<float**, Kokkos::LayoutRight, MemorySpace> v(std::string(label), rows, cols);
    Kokkos::View<const float**, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged> h(
        host.data(), rows, cols);
    Kokkos::deep_copy(v, h);
    return v;
  };
  larmor::perk::ModelViews<MemorySpace> m;
  m.inputs = model.inputs();
  m.features = model.features;
  m.outputs = int(model.outputs.size());
  m.frequencies = copy(model.frequencies, "larmor::perk_frequencies", m.features, m.inputs);
  m.weights = copy(model.weights, "larmor::perk_weights", m.outputs, m.features);
  m.phases =
      Kokkos::subview(copy(model.phases, "larmor::perk_phases", 1, m.features), 0, Kokkos::ALL);
  m.offsets =
      Kokkos::subview(copy(model.offsets, "larmor::perk_offsets", 1, m.outputs), 0, Kokkos::ALL);
  return m;
}

// perk_inputs on an execution space (the measured volume's share of a rank
// is large; the host loop was the slowest part of estimation): `inputs`
// [voxels][D + N] gets each voxel's D magnitudes over their mean, then its N
// known values; `mean` [voxels] the mean magnitude (M0 is the mean over the
// model's m0 output, the signal level at M0 = 1). signals: host
// [voxels][D][re, im]; known[n]: host, per voxel.
template <class ExecSpace>
void inputs_on(
    const ExecSpace& exec, const float* signals, std::int64_t voxels, int samples,
    const std::vector<const float*>& known,
    const Kokkos::View<float**, Kokkos::LayoutRight, typename ExecSpace::memory_space>& inputs,
    const Kokkos::View<float*, typename ExecSpace::memory_space>& mean) {
  using Mem = typename ExecSpace::memory_space;
  const int n = int(known.size());
  Kokkos::View<float***, Kokkos::LayoutRight, Mem> raw("larmor::perk_raw_signals", voxels, samples,
                                                       2);
  Kokkos::deep_copy(
      exec, raw,
      Kokkos::View<const float***, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged>(
          signals, voxels, samples, 2));
  Kokkos::View<float**, Kokkos::LayoutRight, Mem> known_d("larmor::perk_known", voxels,
                                                          n > 0 ? n : 1);
  if (n > 0) {
    std::vector<float> rows(std::size_t(voxels) * n);
    for (std::int64_t v = 0; v < voxels; ++v)
      for (int k = 0; k < n; ++k) rows[std::size_t(v) * n + k] = known[std::size_t(k)][v];
    Kokkos::deep_copy(
        exec, known_d,
        Kokkos::View<const float**, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged>(
            rows.data(), voxels, n));
    exec.fence();  // `rows` leaves scope
  }
  Kokkos::parallel_for(
      "larmor::perk_inputs", Kokkos::RangePolicy<ExecSpace>(exec, 0, voxels),
      KOKKOS_LAMBDA(std::int64_t v) {
        double total = 0.0;
        for (int d = 0; d < samples; ++d) {
          const float re = raw(v, d, 0), im = raw(v, d, 1);
          const float magnitude = kx::sqrt(re * re + im * im);
          inputs(v, d) = magnitude;
          total += magnitude;
        }
        const double m = total / samples;
        for (int d = 0; d < samples; ++d) {
          inputs(v, d) = m > 0.0 ? float(inputs(v, d) / m) : 0.0f;
        }
        for (int k = 0; k < n; ++k) inputs(v, samples + k) = known_d(v, k);
        mean(v) = float(m);
      });
}

}  // namespace larmor::estimators::perk
