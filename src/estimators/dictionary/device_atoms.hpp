// A dictionary's device memory (dictionary.hpp): private to the estimator.
#pragma once

#include <Kokkos_Core.hpp>

#include "estimators/dictionary/dictionary.hpp"

namespace larmor::estimators::dictionary {

using Exec = Kokkos::DefaultExecutionSpace;
using DeviceRows = Kokkos::View<float***, Kokkos::LayoutRight, Exec::memory_space>;

struct DeviceAtoms {
  DeviceRows unit_atoms;  // [atom][samples][re, im]
  DeviceRows basis;       // [rank][original samples][re, im]; empty when uncompressed
};

}  // namespace larmor::estimators::dictionary
