// The pieces of the on-axis adjoint sweep (axis_adjoint.hpp) that hold its
// lanes: a channel's block of orders x lanes, each lane's event coefficients
// as lane arrays, and the steps of one order of one lane on the axis.
#pragma once

#include "epg/impl/adjoint_impl.hpp"
#include "epg/impl/event_coefficients.hpp"
#include "epg/impl/state_block.hpp"

namespace larmor::epg {

namespace axis_adjoint_detail {

// One thread's block of orders in one real channel, each order's lanes side
// by side.
template <int OPT, int L>
struct Channel {
  float a[OPT][L], b[OPT][L], c[OPT][L];

  KOKKOS_FORCEINLINE_FUNCTION void clear() {
    LARMOR_UNROLL
    for (int j = 0; j < OPT; ++j) {
      LARMOR_UNROLL
      for (int l = 0; l < L; ++l) a[j][l] = b[j][l] = c[j][l] = 0.0f;
    }
  }
  KOKKOS_FORCEINLINE_FUNCTION void spoil() {
    LARMOR_UNROLL
    for (int j = 0; j < OPT; ++j) {
      LARMOR_UNROLL
      for (int l = 0; l < L; ++l) a[j][l] = b[j][l] = 0.0f;
    }
  }

  // `f(offset, value)` for each value of a device thread's one voxel, the
  // offsets `stride` apart: a team's threads interleaved in team scratch, so
  // that a warp's accesses fill consecutive banks.
  template <class F>
  KOKKOS_FORCEINLINE_FUNCTION void for_column(int stride, F&& f) {
    static_assert(L == 1, "a device thread holds one voxel");
    LARMOR_UNROLL
    for (int j = 0; j < OPT; ++j) {
      f(j * stride, a[j][0]);
      f((OPT + j) * stride, b[j][0]);
      f((2 * OPT + j) * stride, c[j][0]);
    }
  }
};

// A pulse at phase 0 by the signed flip f (rotate_on_axis's coefficients:
// c2 = cos^2(f/2), u = sin^2(f/2), v = sin f, h = v / 2).
struct AxisRotation {
  float c2, ca, u, v, h;
};

// Each lane's rotation, as lane arrays (state_block.hpp's LaneRotations: the
// host's lane loops load them as vectors), read on the axis: the real parts.
template <int L>
using LaneAxisRotations = LaneRotations<float, L>;

template <int L>
KOKKOS_FORCEINLINE_FUNCTION AxisRotation axis_rotation(const LaneAxisRotations<L>& r, int l) {
  return {r.c2[l], r.ca[l], r.u_re[l], r.v_re[l], r.h_re[l]};
}

// Each lane's relaxation over an interval (at df = 0: no precession).
template <int L>
struct LaneRelaxations {
  float e1[L], e2[L], recovery[L];

  KOKKOS_FORCEINLINE_FUNCTION void set(int l, const Evolution<float>& ev) {
    e1[l] = ev.e1;
    e2[l] = ev.e2;
    recovery[l] = ev.recovery;
  }
};

template <int L>
KOKKOS_INLINE_FUNCTION LaneAxisRotations<L> lane_rotations(
    const EventRecord& rec, const adjoint_detail::VoxelTissue<float> (&tissue)[L]) {
  LaneAxisRotations<L> r;
  const PulseAxis axis = pulse_axis(rec, TransmitField{});
  LARMOR_UNROLL
  for (int l = 0; l < L; ++l) r.set(l, adjoint_detail::rotation_of(rec, axis, tissue[l]));
  return r;
}

template <int L>
KOKKOS_INLINE_FUNCTION LaneRelaxations<L> lane_relaxations(
    const EventRecord& rec, const adjoint_detail::VoxelTissue<float> (&tissue)[L]) {
  LaneRelaxations<L> r;
  LARMOR_UNROLL
  for (int l = 0; l < L; ++l) r.set(l, adjoint_detail::evolution_of(rec, tissue[l]));
  return r;
}

// Each lane's coefficients of an event, kept on a host thread
// (event_coefficients.hpp).
template <int L, bool Cached>
using LaneCoefficients =
    adjoint_detail::EventCoefficients<LaneAxisRotations<L>, LaneRelaxations<L>, Cached>;

// The forward step on the axis.
KOKKOS_FORCEINLINE_FUNCTION void rotate(const AxisRotation& r, float& a, float& b, float& c) {
  const float na = r.c2 * a + r.u * b - r.v * c;
  const float nb = r.u * a + r.c2 * b + r.v * c;
  c = r.ca * c + r.h * (a - b);
  a = na;
  b = nb;
}

// The transposes of the step on the axis (l) and off it (m, sines negated).
KOKKOS_FORCEINLINE_FUNCTION void rotate_transposed_on_axis(const AxisRotation& r, float& a,
                                                           float& b, float& c) {
  const float na = r.c2 * a + r.u * b + r.h * c;
  const float nb = r.u * a + r.c2 * b - r.h * c;
  c = r.v * (b - a) + r.ca * c;
  a = na;
  b = nb;
}
KOKKOS_FORCEINLINE_FUNCTION void rotate_transposed_off_axis(const AxisRotation& r, float& p,
                                                            float& q, float& s) {
  const float np = r.c2 * p + r.u * q - r.h * s;
  const float nq = r.u * p + r.c2 * q + r.h * s;
  s = r.v * (p - q) + r.ca * s;
  p = np;
  q = nq;
}

}  // namespace axis_adjoint_detail

}  // namespace larmor::epg
