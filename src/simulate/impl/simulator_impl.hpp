// The simulator's runs on a backend (definitions). Instantiated once per
// enabled backend by larmor_instantiate() (CMakeLists.txt), through
// LARMOR_SIMULATOR_INSTANTIATE.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "epg/adjoint.hpp"
#include "epg/forward.hpp"
#include "simulate/impl/prepared_run.hpp"
#include "simulate/simulator.hpp"

namespace larmor::simulate {

template <class ExecSpace>
void Simulator::run_into(const tissue::Tissue& tissue, float* signals) const {
  run_forward<ExecSpace>(tissue, signals, false);
}

template <class ExecSpace>
void Simulator::run_into_device(const tissue::Tissue& tissue, float* device_signals) const {
  run_forward<ExecSpace>(tissue, device_signals, true);
}

template <class ExecSpace>
void Simulator::run_forward(const tissue::Tissue& tissue, float* signals, bool on_device) const {
  const kx::ScopedRegion region("larmor::simulate[" + launch_.kernels.label + "]");
  using Mem = typename ExecSpace::memory_space;
  tissue.validate("simulation tissue");
  if (tissue.voxels == 0 || samples() == 0) return;
  if (needs_hard_pulses(tissue)) {
    hard_pulse_twin()->simulator.run_forward<ExecSpace>(tissue, signals, on_device);
    return;
  }
  bool on_axis = false;
  const auto& stream = forward_stream(tissue, &on_axis);
  // A launch holds each kernel voxel's signals.
  PreparedRun<ExecSpace> run(*this, tissue, stream, on_axis, kernel_states_,
                             epg::live_orders_rule<ExecSpace>(launch_.trim_orders),
                             double(samples()) * 8.0, bool(options_.progress),
                             epg::train_steps_rule<ExecSpace>(launch_.kernels, on_axis));
  const int positions = run.positions;
  const std::int64_t chunk = run.chunk;
  Kokkos::View<float***, Kokkos::LayoutRight, Mem> device_signals(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::signals"), run.kernel_rows(),
      samples(), 2);
  Kokkos::View<float***, Kokkos::LayoutRight, Mem> summed;
  if (positions > 1) {
    summed = decltype(summed)(Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::summed"),
                              chunk, samples(), 2);
  }
  for (std::int64_t begin = 0; begin < tissue.voxels; begin += chunk) {
    const std::int64_t count = std::min(chunk, tissue.voxels - begin);
    epg::simulate_forward(run.exec, run.table, run.tissue_views(tissue, begin, count),
                          device_signals, {}, launch_.kernels);
    if (positions > 1) {
      run.sum_positions(device_signals.data(), summed.data(), count, std::int64_t(samples()) * 2);
    }
    run.exec.fence();
    float* destination = signals + begin * std::int64_t(samples()) * 2;
    auto used =
        Kokkos::subview(positions > 1 ? summed : device_signals,
                        std::pair<std::int64_t, std::int64_t>(0, count), Kokkos::ALL, Kokkos::ALL);
    if (on_device) {
      Kokkos::deep_copy(Kokkos::View<float***, Kokkos::LayoutRight, Mem, kx::Unmanaged>(
                            destination, count, samples(), 2),
                        used);
    } else {
      Kokkos::deep_copy(
          Kokkos::View<float***, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged>(
              destination, count, samples(), 2),
          used);
    }
    if (options_.progress) options_.progress(begin + count, tissue.voxels);
  }
}

template <class ExecSpace>
void Simulator::run_tissue_jvp_into(const tissue::Tissue& tissue, float* signals,
                                    float* tangents) const {
  const kx::ScopedRegion region("larmor::simulate_tissue_jvp[" + launch_.kernels.label + "]");
  using Mem = typename ExecSpace::memory_space;
  constexpr int directions = epg::tissue_tangent_count;
  tissue.validate("forward-mode tissue");
  if (tissue.voxels == 0 || samples() == 0) return;
  if (needs_hard_pulses(tissue)) {
    hard_pulse_twin()->simulator.run_tissue_jvp_into<ExecSpace>(tissue, signals, tangents);
    return;
  }
  // On the axis the df tangent is carried off it (kernels/epg/impl/axis_state.hpp).
  bool on_axis = false;
  const auto& stream = forward_stream(tissue, &on_axis);
  // A launch holds each kernel voxel's signals and their tangents.
  PreparedRun<ExecSpace> run(*this, tissue, stream, on_axis, kernel_states_,
                             epg::live_orders_rule<ExecSpace>(launch_.trim_orders),
                             double(samples()) * 8.0 * (directions + 1), bool(options_.progress));
  const int positions = run.positions;
  const std::int64_t chunk = run.chunk;
  const auto signals_of = [&](const char* label, std::int64_t rows) {
    return Kokkos::View<float***, Kokkos::LayoutRight, Mem>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), rows, samples(), 2);
  };
  const auto tangents_of = [&](const char* label, std::int64_t rows) {
    return Kokkos::View<float****, Kokkos::LayoutRight, Mem>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), rows, directions,
        samples(), 2);
  };
  const auto device_signals = signals_of("larmor::signals", run.kernel_rows());
  const auto device_tangents = tangents_of("larmor::tangents", run.kernel_rows());
  const auto summed_signals = signals_of("larmor::summed", positions > 1 ? chunk : 0);
  const auto summed_tangents = tangents_of("larmor::summed_tangents", positions > 1 ? chunk : 0);
  const auto rows = [](std::int64_t count) {
    return std::pair<std::int64_t, std::int64_t>(0, count);
  };
  for (std::int64_t begin = 0; begin < tissue.voxels; begin += chunk) {
    const std::int64_t count = std::min(chunk, tissue.voxels - begin);
    epg::simulate_tissue_jvp(run.exec, run.table, run.tissue_views(tissue, begin, count),
                             device_signals, device_tangents, launch_.kernels);
    if (positions > 1) {
      run.sum_positions(device_signals.data(), summed_signals.data(), count,
                        std::int64_t(samples()) * 2);
      run.sum_positions(device_tangents.data(), summed_tangents.data(), count,
                        std::int64_t(directions) * samples() * 2);
    }
    run.exec.fence();
    Kokkos::View<float***, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged> host_signals(
        signals + begin * std::int64_t(samples()) * 2, count, samples(), 2);
    Kokkos::deep_copy(host_signals, Kokkos::subview(positions > 1 ? summed_signals : device_signals,
                                                    rows(count), Kokkos::ALL, Kokkos::ALL));
    Kokkos::View<float****, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged> host_tangents(
        tangents + begin * directions * std::int64_t(samples()) * 2, count, directions, samples(),
        2);
    Kokkos::deep_copy(host_tangents,
                      Kokkos::subview(positions > 1 ? summed_tangents : device_tangents,
                                      rows(count), Kokkos::ALL, Kokkos::ALL, Kokkos::ALL));
  }
}

template <class ExecSpace>
void Simulator::run_tissue_vjp_into(const tissue::Tissue& tissue, const float* cotangents,
                                    float* tissue_gradients, float* sequence_gradients,
                                    int checkpoint_interval) const {
  run_reverse<ExecSpace>(tissue, nullptr, cotangents, tissue_gradients, sequence_gradients, nullptr,
                         nullptr, checkpoint_interval);
}

template <class ExecSpace>
void Simulator::run_tissue_hvp_into(const tissue::Tissue& tissue, const float* directions,
                                    const float* cotangents, float* tissue_gradients,
                                    float* sequence_gradients, float* tissue_hvp,
                                    float* sequence_hvp, int checkpoint_interval) const {
  if (directions == nullptr || tissue_hvp == nullptr) {
    throw std::invalid_argument("run_tissue_hvp_into: directions and tissue_hvp are needed");
  }
  if ((sequence_gradients == nullptr) != (sequence_hvp == nullptr)) {
    throw std::invalid_argument(
        "run_tissue_hvp_into: sequence_gradients and sequence_hvp are given together or not at "
        "all");
  }
  run_reverse<ExecSpace>(tissue, directions, cotangents, tissue_gradients, sequence_gradients,
                         tissue_hvp, sequence_hvp, checkpoint_interval);
}

template <class ExecSpace>
void Simulator::run_reverse(const tissue::Tissue& tissue, const float* directions,
                            const float* cotangents, float* tissue_gradients,
                            float* sequence_gradients, float* tissue_hvp, float* sequence_hvp,
                            int checkpoint_interval) const {
  const kx::ScopedRegion region("larmor::simulate_reverse[" + launch_.kernels.label + "]");
  using Mem = typename ExecSpace::memory_space;
  using Matrix = Kokkos::View<float**, Kokkos::LayoutRight, Mem>;
  using HostMatrix = Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged>;
  constexpr int tissue_columns = epg::tissue_tangent_count;
  constexpr int sequence_columns = epg::sequence_gradient::count;
  const bool second_order = directions != nullptr;
  tissue.validate(second_order ? "forward-over-reverse tissue" : "reverse-mode tissue");
  const std::int64_t events = this->events();
  const bool sequence = sequence_gradients != nullptr;
  if (sequence) {
    std::fill(sequence_gradients, sequence_gradients + events * sequence_columns, 0.0f);
    if (second_order) std::fill(sequence_hvp, sequence_hvp + events * sequence_columns, 0.0f);
  }
  if (tissue.voxels == 0 || events == 0) return;
  if (const HardPulseTwin* twin = hard_pulse_twin()) {
    // The reverse sweeps take no waveform pulses: the twin's, folded back.
    const std::size_t rows =
        sequence ? std::size_t(twin->simulator.events()) * sequence_columns : 0;
    std::vector<float> twin_gradients(rows), twin_hvp(second_order ? rows : 0);
    twin->simulator.run_reverse<ExecSpace>(tissue, directions, cotangents, tissue_gradients,
                                           sequence ? twin_gradients.data() : nullptr, tissue_hvp,
                                           second_order && sequence ? twin_hvp.data() : nullptr,
                                           checkpoint_interval);
    if (sequence) fold_twin_rows(*twin, twin_gradients, sequence_gradients);
    if (sequence && second_order) fold_twin_rows(*twin, twin_hvp, sequence_hvp);
    return;
  }
  // The reverse sweep takes the rewrite as a forward run does (at float: the
  // HVP's dual numbers run the complex kernels, on the original stream).
  const bool on_axis = !second_order && reverse_real_path_refusal(tissue).empty();
  const double per_voxel = reverse_bytes_per_voxel(tissue, checkpoint_interval, second_order);
  // Slice-selective pulses: each tissue voxel runs once per slice position,
  // as in run_into. The forward sum y = w_p sum_j y_j spreads the cotangent
  // w_p w to every position, and the positions' tissue gradients add up.
  // No split for progress: one thread walks one voxel, and a GPU needs many.
  PreparedRun<ExecSpace> run(*this, tissue, on_axis ? axis_packed_ : packed_, on_axis,
                             kernel_states_, epg::live_orders_rule<ExecSpace>(launch_.trim_orders),
                             per_voxel, false);
  ExecSpace& exec = run.exec;
  const auto& table = run.table;
  const int positions = run.positions;
  const std::int64_t chunk = run.chunk;
  const float position_weight = positions > 1 ? float(slice_table_.position_weight.front()) : 1.0f;
  const std::int64_t kernel_chunk = chunk * positions;  // kernel voxels per launch
  Kokkos::View<float***, Kokkos::LayoutRight, Mem> device_cotangents(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::cotangents"), kernel_chunk,
      samples(), 2);
  const auto per_voxel_matrix = [&](const char* label, bool used) {
    return used ? Matrix(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)),
                         kernel_chunk, tissue_columns)
                : Matrix();
  };
  const auto per_event_matrix = [&](const char* label, bool used) {
    return used ? Matrix(std::string(label), events, sequence_columns) : Matrix();
  };
  epg::ReverseOutputs<Mem> out{per_voxel_matrix("larmor::tissue_gradients", true),
                               per_event_matrix("larmor::sequence_gradients", sequence),
                               per_voxel_matrix("larmor::tissue_hvp", second_order),
                               per_event_matrix("larmor::sequence_hvp", second_order && sequence)};
  Matrix device_directions = per_voxel_matrix("larmor::directions", second_order);
  const auto rows = [](std::int64_t count) {
    return std::pair<std::int64_t, std::int64_t>(0, count);
  };
  // Per tissue voxel rows of `width` floats, spread over the positions
  // (scaled) on the way in and summed over them on the way out.
  std::vector<float> spread;
  const auto spread_rows = [&](const float* from, std::int64_t count, std::int64_t width,
                               float scale) {
    if (positions == 1) return from;
    spread.resize(std::size_t(count * positions * width));
    for (std::int64_t v = 0; v < count; ++v) {
      for (int j = 0; j < positions; ++j) {
        for (std::int64_t r = 0; r < width; ++r) {
          spread[std::size_t((v * positions + j) * width + r)] = scale * from[v * width + r];
        }
      }
    }
    return static_cast<const float*>(spread.data());
  };
  const auto download = [&](const Matrix& from, float* to, std::int64_t begin, std::int64_t count) {
    if (positions == 1) {
      HostMatrix host(to + begin * tissue_columns, count, tissue_columns);
      Kokkos::deep_copy(host, Kokkos::subview(from, rows(count), Kokkos::ALL));
      return;
    }
    std::vector<float> all(std::size_t(count * positions * tissue_columns));
    Kokkos::deep_copy(HostMatrix(all.data(), count * positions, tissue_columns),
                      Kokkos::subview(from, rows(count * positions), Kokkos::ALL));
    for (std::int64_t v = 0; v < count; ++v) {
      for (int k = 0; k < tissue_columns; ++k) {
        float sum = 0.0f;
        for (int j = 0; j < positions; ++j) {
          sum += all[std::size_t((v * positions + j) * tissue_columns + k)];
        }
        to[(begin + v) * tissue_columns + k] = sum;
      }
    }
  };
  for (std::int64_t begin = 0; begin < tissue.voxels; begin += chunk) {
    const std::int64_t count = std::min(chunk, tissue.voxels - begin);
    const std::int64_t kernel_count = count * positions;
    const epg::TissueViews<Mem> views = run.tissue_views(tissue, begin, count);
    const std::int64_t row = std::int64_t(samples()) * 2;
    Kokkos::View<const float***, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged> host_w(
        spread_rows(cotangents + begin * row, count, row, position_weight), kernel_count, samples(),
        2);
    Kokkos::deep_copy(
        Kokkos::subview(device_cotangents, rows(kernel_count), Kokkos::ALL, Kokkos::ALL), host_w);
    if (second_order) {
      Kokkos::View<const float**, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged> host_u(
          spread_rows(directions + begin * tissue_columns, count, tissue_columns, 1.0f),
          kernel_count, tissue_columns);
      Kokkos::deep_copy(Kokkos::subview(device_directions, rows(kernel_count), Kokkos::ALL),
                        host_u);
      epg::simulate_tissue_hvp<ExecSpace>(exec, table, views, device_directions, device_cotangents,
                                          out.tissue_gradients, out.sequence_gradients,
                                          out.tissue_hvp, out.sequence_hvp, checkpoint_interval,
                                          launch_.kernels);
    } else {
      epg::simulate_tissue_vjp<ExecSpace>(exec, table, views, device_cotangents,
                                          out.tissue_gradients, out.sequence_gradients,
                                          checkpoint_interval, launch_.kernels);
    }
    exec.fence();
    download(out.tissue_gradients, tissue_gradients, begin, count);
    if (second_order) download(out.tissue_hvp, tissue_hvp, begin, count);
  }
  if (!sequence) return;
  Kokkos::deep_copy(HostMatrix(sequence_gradients, events, sequence_columns),
                    out.sequence_gradients);
  if (on_axis) {  // the rewrite's flip is the original's times its sign
    for (std::int64_t e = 0; e < events; ++e) {
      sequence_gradients[e * sequence_columns + epg::sequence_gradient::flip] *=
          float(axis_plan_.flip_sign[std::size_t(e)]);
    }
  }
  if (second_order) {
    Kokkos::deep_copy(HostMatrix(sequence_hvp, events, sequence_columns), out.sequence_hvp);
  }
}

}  // namespace larmor::simulate

#define LARMOR_SIMULATOR_INSTANTIATE(EXEC)                                                         \
  namespace larmor::simulate {                                                                     \
  template void Simulator::run_into<EXEC>(const tissue::Tissue&, float*) const;                    \
  template void Simulator::run_into_device<EXEC>(const tissue::Tissue&, float*) const;             \
  template void Simulator::run_tissue_jvp_into<EXEC>(const tissue::Tissue&, float*, float*) const; \
  template void Simulator::run_tissue_vjp_into<EXEC>(const tissue::Tissue&, const float*, float*,  \
                                                     float*, int) const;                           \
  template void Simulator::run_tissue_hvp_into<EXEC>(const tissue::Tissue&, const float*,          \
                                                     const float*, float*, float*, float*, float*, \
                                                     int) const;                                   \
  }
