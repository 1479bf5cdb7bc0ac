// Copies a slice of a host tissue to a memory space as the kernels' views.
#pragma once

#include <limits>
#include <stdexcept>
#include <string>

#include "epg/tissue_views.hpp"
#include "sequence/description.hpp"
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

// A transmit array's channel maps of voxels [begin, begin + count) and the
// sequence's shim weights, as [voxel][channel][re, im] and [setting][channel]
// [re, im]. The term is declared only when both are given.
template <class MemorySpace>
epg::TransmitViews<MemorySpace> upload_transmit(const tissue::Tissue& t,
                                                const sequence::TransmitShims& shims,
                                                std::int64_t begin, std::int64_t count) {
  epg::TransmitViews<MemorySpace> out;
  if (t.transmit_channels == 0 || shims.channels == 0) return out;
  if (t.transmit_channels != shims.channels) {
    throw std::invalid_argument("transmit array: the tissue has " +
                                std::to_string(t.transmit_channels) +
                                " channel maps but the sequence's shim settings drive " +
                                std::to_string(shims.channels) + " channels");
  }
  const int channels = shims.channels, settings = shims.settings();
  Kokkos::View<float***, Kokkos::LayoutRight, MemorySpace> maps("larmor::transmit_maps", count,
                                                                channels, 2);
  Kokkos::View<float***, Kokkos::LayoutRight, MemorySpace> weights("larmor::shim_weights", settings,
                                                                   channels, 2);
  auto host_maps = Kokkos::create_mirror_view(maps);
  auto host_weights = Kokkos::create_mirror_view(weights);
  for (std::int64_t v = 0; v < count; ++v) {
    for (int c = 0; c < channels; ++c) {
      const auto b = t.transmit[std::size_t((begin + v) * channels + c)];
      host_maps(v, c, 0) = b.real();
      host_maps(v, c, 1) = b.imag();
    }
  }
  for (int s = 0; s < settings; ++s) {
    for (int c = 0; c < channels; ++c) {
      const auto w = shims.weights[std::size_t(s * channels + c)];
      host_weights(s, c, 0) = float(w.real());
      host_weights(s, c, 1) = float(w.imag());
    }
  }
  Kokkos::deep_copy(maps, host_maps);
  Kokkos::deep_copy(weights, host_weights);
  out.maps = maps;
  out.weights = weights;
  out.channels = channels;
  return out;
}

// A pooled model's properties, and per event the bound pool's saturation
// exponent at B1 = 1 (pi g(offset) x the pulse's power integral).
template <class MemorySpace>
void upload_pools(const tissue::Tissue& t, const sequence::Description& d, std::int64_t begin,
                  std::int64_t count, epg::TissueViews<MemorySpace>& v) {
  auto& p = v.pools;
  p.free = t.has_second_pool() ? 2 : 1;
  p.bound = t.has_bound_pool() ? 1 : 0;
  if (!p.active()) return;
  if (v.diffusion || v.flow || v.washout) {
    throw std::invalid_argument(
        "larmor::epg::pooled: pooled models do not combine with diffusion, flow or washout (one "
        "ADC and velocity per voxel do not describe pools of different mobility, and a bound pool "
        "has no transverse states to move); give those terms to a single-pool tissue");
  }
  p.fraction = upload_property<MemorySpace>(t.pool_fraction, begin, count);
  p.t1_s = upload_property<MemorySpace>(t.pool_t1_s, begin, count);
  p.t2_s = upload_property<MemorySpace>(t.pool_t2_s, begin, count);
  p.exchange_hz = upload_property<MemorySpace>(t.pool_exchange_hz, begin, count);
  p.bound_fraction = upload_property<MemorySpace>(t.bound_fraction, begin, count);
  p.bound_t1_s = upload_property<MemorySpace>(t.bound_t1_s, begin, count);
  p.bound_exchange_hz = upload_property<MemorySpace>(t.bound_exchange_hz, begin, count);
  Kokkos::View<float*, MemorySpace> saturation("larmor::bound_saturation",
                                               p.bound > 0 ? d.events.size() : 0);
  if (p.bound > 0) {
    auto host = Kokkos::create_mirror_view(saturation);
    constexpr double pi = 3.14159265358979323846;
    for (std::size_t e = 0; e < d.events.size(); ++e) {
      const auto& ev = d.events[e];
      host(e) = ev.kind == sequence::EventKind::pulse && ev.saturation > 0.0f
                    ? float(pi *
                            tissue::absorption_lineshape(t.bound_lineshape, ev.rf_frequency_hz,
                                                         t.bound_t2_s) *
                            double(ev.saturation))
                    : 0.0f;
    }
    Kokkos::deep_copy(saturation, host);
  }
  p.saturation = saturation;
}

// Voxels [begin, begin + count) of `t`, with the terms the sequence `d`
// declares. The kernels index voxels with 32-bit integers: a larger slice is
// refused here, where the fact is known.
template <class MemorySpace>
epg::TissueViews<MemorySpace> upload_tissue(const tissue::Tissue& t, std::int64_t begin,
                                            std::int64_t count, const sequence::Description& d) {
  if (count > std::numeric_limits<std::int32_t>::max()) {
    throw std::invalid_argument("larmor::epg::forward: " + std::to_string(count) +
                                " voxels in one launch exceed the kernels' 32-bit voxel index");
  }
  // Every EPG run passes here: a spread EPG would leave out must not be
  // dropped silently.
  if (t.has_frequency_spread()) {
    throw std::invalid_argument(
        "t2_prime_ms (an intra-voxel frequency spread) is not modelled by EPG; the isochromat "
        "engine plays it from a Pulseq file (a deck's engine = \"auto\" or \"isochromat\"; "
        "larmor.isochromat_simulator in Python)");
  }
  epg::TissueViews<MemorySpace> v;
  v.voxels = static_cast<int>(count);
  v.m0 = upload_property<MemorySpace>(t.m0, begin, count);
  v.t1_s = upload_property<MemorySpace>(t.t1_s, begin, count);
  v.t2_s = upload_property<MemorySpace>(t.t2_s, begin, count);
  v.b1 = upload_property<MemorySpace>(t.b1, begin, count);
  v.df_hz = upload_property<MemorySpace>(t.df_hz, begin, count);
  // Diffusion and flow need the crusher's moment; flow out of a slice, its
  // thickness. A term left at its identity is not evaluated at all.
  const auto& g = d.crusher;
  v.diffusion = g.declared() && !t.adc_m2_s.is_identity_in(0.0f);
  v.flow = g.declared() && !t.velocity_m_s.is_identity_in(0.0f);
  v.washout = g.slice_thickness_m > 0.0 && !t.velocity_m_s.is_identity_in(0.0f);
  if (v.diffusion) v.adc = upload_property<MemorySpace>(t.adc_m2_s, begin, count);
  if (v.flow || v.washout) v.velocity = upload_property<MemorySpace>(t.velocity_m_s, begin, count);
  v.terms.moment_per_m = float(g.moment_per_m);
  v.terms.lobe_s = float(g.duration_s);
  v.terms.inv_slice_m = g.slice_thickness_m > 0.0 ? float(1.0 / g.slice_thickness_m) : 0.0f;
  v.transmit = upload_transmit<MemorySpace>(t, d.shims, begin, count);
  upload_pools(t, d, begin, count, v);
  return v;
}

}  // namespace larmor::simulate
