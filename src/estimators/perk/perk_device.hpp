// A PERK model on a memory space, for the kernels of kernels/perk/.
#pragma once

#include <string>

#include "estimators/perk/perk_model.hpp"
#include "perk/perk_apply.hpp"

namespace larmor::estimators {

// The model on a memory space, for the kernels.
template <class MemorySpace>
perk::ModelViews<MemorySpace> upload(const PerkModel& model) {
  auto copy = [](const std::vector<float>& host, const char* label, int rows, int cols) {
    Kokkos::View<float**, Kokkos::LayoutRight, MemorySpace> v(std::string(label), rows, cols);
    Kokkos::View<const float**, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged> h(
        host.data(), rows, cols);
    Kokkos::deep_copy(v, h);
    return v;
  };
  perk::ModelViews<MemorySpace> m;
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

}  // namespace larmor::estimators
