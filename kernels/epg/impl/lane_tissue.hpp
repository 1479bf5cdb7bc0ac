// What a kernel reads of each voxel before its event loop: the tissue values
// as its number type (dual numbers seeded along the tissue directions), the
// declared terms' rates, and a pulse's axis as the voxel's transmit field
// turns it. The forward event loop (event_loop.hpp) and the reverse sweeps
// (adjoint_tissue.hpp) read them alike.
#pragma once

#include "common/dual.hpp"
#include "epg/event_table.hpp"
#include "epg/impl/transport.hpp"
#include "epg/tissue_views.hpp"

namespace larmor::epg {

// A pulse's axis as the voxel sees it: the event's phase turned by the
// transmit field's (identity without an array), and the field's gain.
struct PulseAxis {
  float gain, cos_phase, sin_phase;
};

KOKKOS_INLINE_FUNCTION PulseAxis pulse_axis(const EventRecord& rec, const TransmitField& f) {
  return {f.gain, rec.cos_phase * f.cos_phase - rec.sin_phase * f.sin_phase,
          rec.sin_phase * f.cos_phase + rec.cos_phase * f.sin_phase};
}

// Per-lane tissue constants, read once per voxel before the event loop.
template <class Real, int Lanes>
struct LaneTissue {
  Real m0[Lanes], r1[Lanes], r2[Lanes], b1[Lanes], df_hz[Lanes];
  TransportRates transport[Lanes];  // diffusion and flow, where declared
  int voxel[Lanes];                 // the kernel's voxel (a tissue voxel at a slice position)
  int tissue_voxel[Lanes];          // whose tissue values it takes (0 for inactive lanes)
  int position[Lanes];              // slice position (slice-selective pulses), else 0
  bool active[Lanes];
  bool precess;  // some lane is off resonance (the same on every thread of a team)

  KOKKOS_FORCEINLINE_FUNCTION int source(int l) const { return tissue_voxel[l]; }
};

// The declared terms' per-voxel constants. Washout (through-plane flow out of
// a slice, replaced by relaxed spins) at the rate |v| / thickness is exactly
// an extra relaxation rate on every state: it returns to equilibrium as T1
// recovery does and decays transverse states as T2 does.
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION float washout_rate(const TissueViews<MemorySpace>& tissue, int voxel) {
  return tissue.washout ? kx::fabs(tissue.velocity.at(voxel)) * tissue.terms.inv_slice_m : 0.0f;
}

template <class MemorySpace>
KOKKOS_INLINE_FUNCTION TransportRates transport_rates(const TissueViews<MemorySpace>& tissue,
                                                      int voxel) {
  TransportRates r;
  const float q = 6.2831853f * tissue.terms.moment_per_m;
  if (tissue.diffusion) r.diffusion = tissue.adc.at(voxel) * q * q;
  if (tissue.flow) r.flow_turns = tissue.terms.moment_per_m * tissue.velocity.at(voxel);
  return r;
}

// A tissue value as the event loop's number type: plain for float; for a dual
// number with one tangent per tissue direction, the independent variable of
// its direction.
template <class Real>
KOKKOS_FORCEINLINE_FUNCTION Real tissue_value(float v, int direction) {
  if constexpr (tangent_count_v<Real> == tissue_direction::count) {
    return Real::variable(v, direction);
  } else {
    (void)direction;
    return Real(v);
  }
}

// A relaxation rate 1/T (zero for T = infinity: no relaxation), with dR/dT =
// -1/T^2 carried through the division for dual numbers.
template <class Real>
KOKKOS_FORCEINLINE_FUNCTION Real relaxation_rate(float t, int direction) {
  if (!(t > 0.0f) || !(t <= 3.4028235e38f)) return Real(0.0f);  // zero or infinite
  return Real(1.0f) / tissue_value<Real>(t, direction);
}

// `Declared`: the full variant, which evaluates declared terms (diffusion,
// flow, washout, a transmit array) and carries state between launches
// (steady state); the plain kernel compiles all of that out.
template <class Real, int Lanes, bool Declared, class MemorySpace>
KOKKOS_INLINE_FUNCTION void load_lane_tissue(const TissueViews<MemorySpace>& tissue,
                                             int first_voxel, LaneTissue<Real, Lanes>& out) {
  // Differentiating along df needs the precession even where df is zero.
  bool precess = tangent_count_v<Real> > 0;
  LARMOR_UNROLL
  for (int l = 0; l < Lanes; ++l) {
    const int v = first_voxel + l;
    out.active[l] = v < tissue.voxels;
    // Inactive lanes simulate a harmless copy of voxel 0 and never write;
    // this keeps the lane loops free of bounds. (Not the group's first voxel:
    // in a launch's last team a whole voxel group can lie past the end.)
    int src = out.active[l] ? v : 0;
    out.voxel[l] = v;
    out.position[l] = 0;
    if constexpr (Declared) {
      if (tissue.slice.positions > 1) {
        out.position[l] = src % tissue.slice.positions;
        src /= tissue.slice.positions;
      }
    }
    out.tissue_voxel[l] = src;
    out.m0[l] = tissue_value<Real>(tissue.m0.at(src), tissue_direction::m0);
    out.r1[l] = relaxation_rate<Real>(tissue.t1_s.at(src), tissue_direction::t1);
    out.r2[l] = relaxation_rate<Real>(tissue.t2_s.at(src), tissue_direction::t2);
    if constexpr (Declared) {
      const float washout = washout_rate(tissue, src);
      out.r1[l] += washout;
      out.r2[l] += washout;
      out.transport[l] = transport_rates(tissue, src);
    }
    out.b1[l] = tissue_value<Real>(tissue.b1.at(src), tissue_direction::b1);
    const float df_hz = tissue.df_hz.at(src);
    out.df_hz[l] = tissue_value<Real>(df_hz, tissue_direction::df);
    precess = precess || df_hz != 0.0f;
  }
  out.precess = precess;
}

}  // namespace larmor::epg
