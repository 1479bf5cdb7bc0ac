// IsochromatSimulator::run_into on one backend, instantiated per backend by
// larmor_instantiate() (CMakeLists.txt) with LARMOR_ISOCHROMAT_SIMULATOR_INSTANTIATE.
#pragma once

#include <algorithm>
#include <cstddef>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

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
  // With a frequency spread a voxel is played as one launch voxel per
  // offset (`copies` of them), summed with the spread's weights in double.
  // Launch voxels run in order: (voxel, offset) pairs, voxel by voxel.
  const std::int64_t most_copies = most_frequency_offsets(tissue);
  const bool spread = most_copies > 1;
  // A voxel's copies run consecutively: one spread at a time.
  const FrequencySpread none;
  FrequencySpread current;
  std::int64_t current_voxel = -1;
  const double bytes_per_copy = double(samples) * sizeof(float) * (mz != nullptr ? 3 : 2);
  const std::int64_t chunk = voxels_per_launch(launch_memory_budget<ExecSpace>(), bytes_per_copy,
                                               voxels * most_copies, 1, 0, false);
  constexpr double two_pi = 6.283185307179586;
  const float scale = float(table_.sample_scale);
  // Voxels whose copies are not all summed yet: rows from `open_first` on.
  std::vector<double> open_signals, open_mz;
  std::int64_t open_first = 0;
  std::vector<float> copy_signals, copy_mz;
  std::vector<std::int64_t> copy_voxel;
  std::vector<double> copy_weight;
  std::int64_t next_voxel = 0;
  std::size_t next_offset = 0;
  while (next_voxel < voxels) {
    // This launch's (voxel, offset) pairs.
    const std::int64_t first_voxel = next_voxel;
    copy_voxel.clear();
    copy_weight.clear();
    std::vector<float> copy_df;
    while (next_voxel < voxels && std::int64_t(copy_voxel.size()) < chunk) {
      if (spread && next_voxel != current_voxel) {
        current = frequency_spread(tissue.t2_s.at(next_voxel), tissue.t2_prime_s.at(next_voxel));
        current_voxel = next_voxel;
      }
      const FrequencySpread& s = spread ? current : none;
      const double t2_prime = tissue.t2_prime_s.at(next_voxel);
      copy_voxel.push_back(next_voxel);
      copy_weight.push_back(s.weights[next_offset]);
      copy_df.push_back(float(double(tissue.df_hz.at(next_voxel)) +
                              (s.size() > 1 ? s.offsets[next_offset] / (two_pi * t2_prime) : 0.0)));
      if (++next_offset == s.size()) {
        next_offset = 0;
        ++next_voxel;
      }
    }
    const auto n = std::int64_t(copy_voxel.size());
    using HostValues = Kokkos::View<float*, Kokkos::HostSpace>;
    HostValues m0("m0", std::size_t(n)), t1("t1", std::size_t(n)), t2("t2", std::size_t(n)),
        b1("b1", std::size_t(n)), df("df", std::size_t(n));
    Kokkos::View<float* [3], Kokkos::LayoutRight, Kokkos::HostSpace> centre("centre",
                                                                            std::size_t(n));
    for (std::int64_t c = 0; c < n; ++c) {
      const std::int64_t voxel = copy_voxel[std::size_t(c)];
      const auto i = std::size_t(c);
      m0(i) = tissue.m0.at(voxel);
      t1(i) = tissue.t1_s.at(voxel);
      t2(i) = tissue.t2_s.at(voxel);
      b1(i) = tissue.b1.at(voxel);
      df(i) = copy_df[i];
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
    // Without a spread the launch's voxels go straight to the caller's rows.
    float* signal_rows = signals + std::size_t(first_voxel) * samples * 2;
    float* mz_rows = mz != nullptr ? mz + std::size_t(first_voxel) * samples : nullptr;
    if (spread) {
      copy_signals.resize(std::size_t(n) * samples * 2);
      signal_rows = copy_signals.data();
      if (mz != nullptr) {
        copy_mz.resize(std::size_t(n) * samples);
        mz_rows = copy_mz.data();
      }
    }
    Kokkos::View<float** [2], Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged> host_signals(
        signal_rows, n, samples);
    Kokkos::deep_copy(exec, host_signals, outputs.transverse);
    if (mz != nullptr) {
      Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged> host_mz(
          mz_rows, n, samples);
      Kokkos::deep_copy(exec, host_mz, outputs.longitudinal);
    }
    exec.fence();
    if (!spread) {
      if (scale != 1.0f) {
        const std::size_t values = std::size_t(n) * samples;
        for (std::size_t i = 0; i < 2 * values; ++i) signal_rows[i] *= scale;
        for (std::size_t i = 0; mz_rows != nullptr && i < values; ++i) mz_rows[i] *= scale;
      }
      continue;
    }
    // Add each copy to its voxel's row, then hand the completed voxels over.
    const std::int64_t last_voxel = copy_voxel.back();
    open_signals.resize(std::size_t(last_voxel - open_first + 1) * samples * 2, 0.0);
    if (mz != nullptr) open_mz.resize(std::size_t(last_voxel - open_first + 1) * samples, 0.0);
    for (std::int64_t c = 0; c < n; ++c) {
      const auto row = std::size_t(copy_voxel[std::size_t(c)] - open_first);
      const double w = copy_weight[std::size_t(c)];
      const float* from = copy_signals.data() + std::size_t(c) * samples * 2;
      double* to = open_signals.data() + row * samples * 2;
      for (std::size_t i = 0; i < samples * 2; ++i) to[i] += w * double(from[i]);
      for (std::size_t i = 0; mz != nullptr && i < samples; ++i) {
        open_mz[row * samples + i] += w * double(copy_mz[std::size_t(c) * samples + i]);
      }
    }
    const std::int64_t complete = next_voxel;  // voxels [open_first, complete) are summed
    for (std::int64_t v = open_first; v < complete; ++v) {
      const auto row = std::size_t(v - open_first);
      for (std::size_t i = 0; i < samples * 2; ++i) {
        signals[std::size_t(v) * samples * 2 + i] =
            float(open_signals[row * samples * 2 + i]) * scale;
      }
      for (std::size_t i = 0; mz != nullptr && i < samples; ++i) {
        mz[std::size_t(v) * samples + i] = float(open_mz[row * samples + i]) * scale;
      }
    }
    const auto done = std::size_t(complete - open_first);
    open_signals.erase(open_signals.begin(),
                       open_signals.begin() + std::ptrdiff_t(done * samples * 2));
    if (mz != nullptr)
      open_mz.erase(open_mz.begin(), open_mz.begin() + std::ptrdiff_t(done * samples));
    open_first = complete;
  }
}

}  // namespace larmor::simulate

#define LARMOR_ISOCHROMAT_SIMULATOR_INSTANTIATE(EXEC)                                      \
  namespace larmor::simulate {                                                             \
  template void IsochromatSimulator::run_into<EXEC>(const tissue::Tissue&, float*, float*, \
                                                    const double*) const;                  \
  }
