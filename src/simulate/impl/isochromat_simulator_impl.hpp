// IsochromatSimulator::run_into on one backend, instantiated per backend by
// larmor_instantiate() (CMakeLists.txt) with LARMOR_ISOCHROMAT_SIMULATOR_INSTANTIATE.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>

#include "bloch/isochromats.hpp"
#include "simulate/impl/memory_budget.hpp"
#include "simulate/isochromat_simulator.hpp"

namespace larmor::simulate {

template <class ExecSpace>
void IsochromatSimulator::run_into(const tissue::Tissue& tissue, float* signals, float* mz,
                                   const double* centres_m) const {
  using Mem = typename ExecSpace::memory_space;
  const std::string refusal = isochromat_tissue_refusal(tissue);
  if (!refusal.empty()) throw std::invalid_argument("the isochromat engine: " + refusal);
  const std::int64_t voxels = tissue.voxels;
  const std::size_t samples = table_.samples();
  if (voxels <= 0 || samples == 0) return;
  ExecSpace exec;
  const std::size_t steps = table_.steps();
  Kokkos::View<float * [bloch::step_floats], Kokkos::LayoutRight, Mem> device_steps(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::bloch::steps"), steps);
  Kokkos::View<const float * [bloch::step_floats], Kokkos::LayoutRight, Kokkos::HostSpace,
               kx::Unmanaged>
      host_steps(table_.records.data(), steps);
  Kokkos::deep_copy(exec, device_steps, host_steps);

  bloch::IsochromatGrid grid;
  for (int a = 0; a < 3; ++a) {
    grid.counts[a] = plan_.counts[std::size_t(a)];
    grid.edges_m[a] = float(settings_.voxel_size_m[std::size_t(a)]);
  }
  const double bytes_per_voxel = double(samples) * sizeof(float) * (mz != nullptr ? 3 : 2);
  const std::int64_t chunk =
      voxels_per_launch(launch_memory_budget<ExecSpace>(), bytes_per_voxel, voxels, 1, 0, false);
  for (std::int64_t first = 0; first < voxels; first += chunk) {
    const std::int64_t n = std::min(chunk, voxels - first);
    using HostValues = Kokkos::View<float*, Kokkos::HostSpace>;
    HostValues m0("m0", std::size_t(n)), t1("t1", std::size_t(n)), t2("t2", std::size_t(n)),
        b1("b1", std::size_t(n)), df("df", std::size_t(n));
    Kokkos::View<float* [3], Kokkos::LayoutRight, Kokkos::HostSpace> centre("centre",
                                                                            std::size_t(n));
    for (std::int64_t v = 0; v < n; ++v) {
      const std::int64_t voxel = first + v;
      const auto i = std::size_t(v);
      m0(i) = tissue.m0.at(voxel);
      t1(i) = tissue.t1_s.at(voxel);
      t2(i) = tissue.t2_s.at(voxel);
      b1(i) = tissue.b1.at(voxel);
      df(i) = tissue.df_hz.at(voxel);
      for (int a = 0; a < 3; ++a) {
        centre(i, a) =
            float(centres_m != nullptr ? centres_m[std::size_t(voxel) * 3 + std::size_t(a)]
                                       : settings_.centre_m[std::size_t(a)]);
      }
    }
    bloch::VoxelTissue<Mem> views;
    views.m0 = Kokkos::create_mirror_view_and_copy(Mem(), m0);
    views.t1 = Kokkos::create_mirror_view_and_copy(Mem(), t1);
    views.t2 = Kokkos::create_mirror_view_and_copy(Mem(), t2);
    views.b1 = Kokkos::create_mirror_view_and_copy(Mem(), b1);
    views.df = Kokkos::create_mirror_view_and_copy(Mem(), df);
    views.centre_m = Kokkos::create_mirror_view_and_copy(Mem(), centre);

    bloch::SampleViews<Mem> outputs;
    outputs.transverse = decltype(outputs.transverse)(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::bloch::signals"), n, samples);
    if (mz != nullptr) {
      outputs.longitudinal = decltype(outputs.longitudinal)(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::bloch::mz"), n, samples);
    }
    bloch::simulate_isochromats(exec, device_steps, grid, views, outputs);
    Kokkos::View<float** [2], Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged> host_signals(
        signals + std::size_t(first) * samples * 2, n, samples);
    Kokkos::deep_copy(exec, host_signals, outputs.transverse);
    if (mz != nullptr) {
      Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged> host_mz(
          mz + std::size_t(first) * samples, n, samples);
      Kokkos::deep_copy(exec, host_mz, outputs.longitudinal);
    }
    exec.fence();
    const float scale = float(table_.sample_scale);
    if (scale != 1.0f) {
      const std::size_t values = std::size_t(n) * samples;
      for (std::size_t i = 0; i < 2 * values; ++i)
        signals[std::size_t(first) * samples * 2 + i] *= scale;
      for (std::size_t i = 0; mz != nullptr && i < values; ++i)
        mz[std::size_t(first) * samples + i] *= scale;
    }
  }
}

}  // namespace larmor::simulate

#define LARMOR_ISOCHROMAT_SIMULATOR_INSTANTIATE(EXEC)                                      \
  namespace larmor::simulate {                                                             \
  template void IsochromatSimulator::run_into<EXEC>(const tissue::Tissue&, float*, float*, \
                                                    const double*) const;                  \
  }
