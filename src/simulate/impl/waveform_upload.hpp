// A run's pulse waveforms (sequence/waveform_pulses.hpp) on the device.
#pragma once

#include <cstdint>

#include "common/kokkos_compat.hpp"
#include "epg/waveform_pulse.hpp"
#include "sequence/waveform_pulses.hpp"

namespace larmor::simulate {

template <class MemorySpace>
epg::WaveformViews<MemorySpace> upload_waveforms(const sequence::WaveformTable& t) {
  epg::WaveformViews<MemorySpace> v;
  const int waveforms = t.waveforms();
  if (waveforms == 0) return v;
  const std::size_t runs = t.run_samples.size();
  Kokkos::View<float* [4], Kokkos::LayoutRight, MemorySpace> run_views(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::waveform_runs"), runs);
  Kokkos::deep_copy(
      run_views,
      Kokkos::View<const float* [4], Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged>(
          t.runs.data(), runs));
  Kokkos::View<std::int32_t*, MemorySpace> samples(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::waveform_samples"), runs);
  Kokkos::deep_copy(samples, Kokkos::View<const std::int32_t*, Kokkos::HostSpace, kx::Unmanaged>(
                                 t.run_samples.data(), runs));
  Kokkos::View<std::int32_t* [2], Kokkos::LayoutRight, MemorySpace> span(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::waveform_span"), waveforms);
  Kokkos::deep_copy(
      span,
      Kokkos::View<const std::int32_t* [2], Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged>(
          t.span.data(), waveforms));
  Kokkos::View<float* [5], Kokkos::LayoutRight, MemorySpace> frame(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::waveform_frame"), waveforms);
  Kokkos::deep_copy(
      frame, Kokkos::View<const float* [5], Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged>(
                 t.frame.data(), waveforms));
  v.runs = run_views;
  v.run_samples = samples;
  v.span = span;
  v.frame = frame;
  return v;
}

}  // namespace larmor::simulate
