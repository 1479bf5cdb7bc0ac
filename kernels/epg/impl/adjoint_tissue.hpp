// What a reverse sweep reads of each voxel: its tissue values (dual numbers
// seeded with the HVP's direction), the rates its states relax at, and the
// run's declared terms (transmit field, crusher lobes, diffusion and flow).
#pragma once

#include "common/dual.hpp"
#include "epg/event_table.hpp"
#include "epg/impl/lane_tissue.hpp"
#include "epg/impl/operators.hpp"
#include "epg/slice_profile.hpp"
#include "epg/tissue_views.hpp"

namespace larmor::epg::adjoint_detail {

// A kernel voxel of a run with slice-selective pulses is tissue voxel v / P
// at slice position v % P (lane_tissue.hpp's load_lane_tissue); its
// cotangents and directions are its own (the host spreads the tissue
// voxel's over its positions).
struct SliceVoxel {
  int source = 0, position = 0;
};

template <class MemorySpace>
KOKKOS_INLINE_FUNCTION SliceVoxel slice_voxel(const TissueViews<MemorySpace>& t, int v) {
  const int positions = t.slice.positions > 1 ? t.slice.positions : 1;
  return {v / positions, v % positions};
}

// r1 and r2 are the rates the states relax at (washout included); inv_t1 and
// inv_t2 are 1/T1 and 1/T2, whose derivatives give those along T1 and T2.
template <class Real>
struct VoxelTissue {
  Real m0, t1, t2, b1, df, r1, r2, inv_t1, inv_t2;
  TransportRates transport;
  bool precess;
};

// Which declared terms a run evaluates, and their run-wide constants.
template <class MemorySpace>
struct DeclaredTerms {
  TransmitViews<MemorySpace> transmit;
  float lobe_s = 0.0f;
  bool transport = false, lobes = false;
  int voxel = 0;  // the tissue voxel

  KOKKOS_INLINE_FUNCTION TransmitField field(const EventRecord& rec) const {
    return transmit.channels > 0 ? transmit.field(voxel, shim_of(rec)) : TransmitField{};
  }
};

template <class MemorySpace>
KOKKOS_INLINE_FUNCTION DeclaredTerms<MemorySpace> declared_terms(const TissueViews<MemorySpace>& t,
                                                                 int voxel) {
  DeclaredTerms<MemorySpace> d;
  d.transmit = t.transmit;
  d.lobe_s = t.terms.lobe_s;
  d.transport = t.transport();
  d.lobes = t.lobes();
  d.voxel = voxel;
  return d;
}

// A sweep over slice-selective pulses also reads the tables and the kernel
// voxel's slice position (adjoint_pulse.hpp); the other sweeps keep
// DeclaredTerms as it is (its copy is on the stack of some).
template <class MemorySpace>
struct SliceTerms : DeclaredTerms<MemorySpace> {
  SliceProfileViews<MemorySpace> slice;
  int position = 0;
};

// A tissue value; for a dual number, with the tangent of the HVP direction.
template <class Real>
KOKKOS_INLINE_FUNCTION Real seeded(float value, float tangent) {
  Real r(value);
  if constexpr (tangent_count_v < Real >> 0) r.tangent[0] = tangent;
  (void)tangent;
  return r;
}

// 1/T, zero for T = infinity (no relaxation).
template <class Real>
KOKKOS_INLINE_FUNCTION Real rate_of(const Real& t) {
  const float v = scalar_value(t);
  if (!(v > 0.0f) || !(v <= 3.4028235e38f)) return Real(0.0f);
  return Real(1.0f) / t;
}

template <class Real, class MemorySpace>
KOKKOS_INLINE_FUNCTION VoxelTissue<Real> voxel_tissue(
    const TissueViews<MemorySpace>& t,
    const Kokkos::View<const float**, Kokkos::LayoutRight, MemorySpace>& directions, int v,
    int source = -1) {
  float u[tissue_direction::count] = {0, 0, 0, 0, 0};
  if constexpr (tangent_count_v < Real >> 0) {
    for (int d = 0; d < tissue_direction::count; ++d) u[d] = directions(v, d);
  }
  if (source >= 0) v = source;
  VoxelTissue<Real> x;
  x.m0 = seeded<Real>(t.m0.at(v), u[tissue_direction::m0]);
  x.t1 = seeded<Real>(t.t1_s.at(v), u[tissue_direction::t1]);
  x.t2 = seeded<Real>(t.t2_s.at(v), u[tissue_direction::t2]);
  x.b1 = seeded<Real>(t.b1.at(v), u[tissue_direction::b1]);
  x.df = seeded<Real>(t.df_hz.at(v), u[tissue_direction::df]);
  x.inv_t1 = rate_of(x.t1);
  x.inv_t2 = rate_of(x.t2);
  const float washout = washout_rate(t, v);
  x.r1 = x.inv_t1 + Real(washout);
  x.r2 = x.inv_t2 + Real(washout);
  x.transport = transport_rates(t, v);
  // A tangent along df needs the precession even where df is zero.
  x.precess = tangent_count_v<Real> > 0 || scalar_value(x.df) != 0.0f;
  return x;
}

template <class Real>
KOKKOS_INLINE_FUNCTION Evolution<Real> evolution_of(const EventRecord& rec,
                                                    const VoxelTissue<Real>& x) {
  return make_evolution(Real(rec.duration), x.r1, x.r2, x.df, x.precess);
}

}  // namespace larmor::epg::adjoint_detail
