// A pulse played from its waveform (abi::EventKind::waveform_pulse) in the
// kernels: each voxel integrates the waveform once, at its own off-resonance
// and relaxation, into one linear map on (F+, F-, Z) plus what recovers into
// order 0, and applies that map to every order. A 3 s saturation is then one
// event, not a hard pulse per sample (src/sequence/waveform_pulses.hpp builds
// the table).
//
// Every step of the integration is real-linear on the magnetisation, so the
// map has the instantaneous pulse's form (operators.hpp, slice_profile.hpp):
//   F+' = a F+ + b F- + c Z,   F-' = conj(b) F+ + conj(a) F- + conj(c) Z,
//   Z'  = d F+ + conj(d) F- + e Z   (e real),
// known from the images of F+ = 1 and of Z = 1. The samples are integrated in
// the frame of the RF frequency, where the axis of a run of equal samples
// stands still and a voxel precesses at df minus that frequency; a run of m
// equal samples is one sample's map raised to the m-th power by squaring.
// The integration runs in double (dual numbers of doubles in forward mode):
// a sample's map differs from the identity by its relaxation and precession
// over a microsecond or so, which float would keep to a few parts in a
// thousand, and a run's power multiplies that error by its length.
#pragma once

#include <cstdint>

#include "common/dual.hpp"
#include "common/kokkos_compat.hpp"
#include "epg/impl/operators.hpp"
#include "epg/slice_profile.hpp"

namespace larmor::epg {

template <class MemorySpace>
struct WaveformViews {
  // Per run of equal samples: [angle at B1 = 1 (rad), cos phase, sin phase,
  // sample duration (s)] and its sample count.
  Kokkos::View<const float* [4], Kokkos::LayoutRight, MemorySpace> runs;
  Kokkos::View<const std::int32_t*, MemorySpace> run_samples;
  // Per waveform: its runs [first, end).
  Kokkos::View<const std::int32_t* [2], Kokkos::LayoutRight, MemorySpace> span;
  // Per waveform: [RF frequency (Hz), cos and sin of the frame's turn over
  // the pulse (the RF frequency's phase at its end), its length (s), the
  // nominal flip its angles are written for (rad; 0: as written)].
  Kokkos::View<const float* [5], Kokkos::LayoutRight, MemorySpace> frame;

  KOKKOS_FORCEINLINE_FUNCTION bool active() const { return span.extent(0) > 0; }
  int waveforms() const { return int(span.extent(0)); }
  KOKKOS_FORCEINLINE_FUNCTION float length_s(int index) const { return frame(index, 3); }
  // What an event of nominal flip `flip` scales the angles by.
  KOKKOS_FORCEINLINE_FUNCTION float flip_scale(int index, float flip) const {
    const float written = frame(index, 4);
    return written > 0.0f ? flip / written : 1.0f;
  }
};

// (F+, F-, Z) of one order, each complex.
template <class Real>
struct StateTriple {
  Real p_re, p_im, m_re, m_im, z_re, z_im;
};

// The map: images of F+ = 1 and of Z = 1 (the linear part), and of the zero
// state (what recovers into order 0 as the pulse plays).
template <class Real>
struct WaveformMap {
  StateTriple<Real> plus, z, offset;
};

namespace waveform_detail {

// The integration's number type for the kernels' `Real`, and the conversions.
template <class Real>
struct Wide {
  using type = double;
};
template <class T, int N>
struct Wide<Dual<T, N>> {
  using type = Dual<typename Wide<T>::type, N>;
};
template <class Real>
using wide_t = typename Wide<Real>::type;

KOKKOS_FORCEINLINE_FUNCTION double widen(float x) { return double(x); }
template <class T, int N>
KOKKOS_FORCEINLINE_FUNCTION auto widen(const Dual<T, N>& x) {
  Dual<decltype(widen(x.value)), N> w(widen(x.value));
  for (int i = 0; i < N; ++i) w.tangent[i] = widen(x.tangent[i]);
  return w;
}

KOKKOS_FORCEINLINE_FUNCTION void narrow(double x, float& out) { out = float(x); }
template <class T, class U, int N>
KOKKOS_FORCEINLINE_FUNCTION void narrow(const Dual<T, N>& x, Dual<U, N>& out) {
  narrow(x.value, out.value);
  for (int i = 0; i < N; ++i) narrow(x.tangent[i], out.tangent[i]);
}

template <class Real>
KOKKOS_FORCEINLINE_FUNCTION StateTriple<Real> triple(float p, float z) {
  return {Real(p), Real(0.0f), Real(0.0f), Real(0.0f), Real(z), Real(0.0f)};
}

template <class Real>
KOKKOS_FORCEINLINE_FUNCTION WaveformMap<Real> identity_map() {
  return {triple<Real>(1.0f, 0.0f), triple<Real>(0.0f, 1.0f), triple<Real>(0.0f, 0.0f)};
}

// The linear part of `m` on `t`.
template <class Real>
KOKKOS_FORCEINLINE_FUNCTION StateTriple<Real> linear(const WaveformMap<Real>& m,
                                                     const StateTriple<Real>& t) {
  // a = plus.p, b = conj(plus.m), c = z.p, d = plus.z, e = z.z.
  const Real a_re = m.plus.p_re, a_im = m.plus.p_im;
  const Real b_re = m.plus.m_re, b_im = -m.plus.m_im;
  const Real c_re = m.z.p_re, c_im = m.z.p_im;
  const Real d_re = m.plus.z_re, d_im = m.plus.z_im;
  const Real e = m.z.z_re;
  StateTriple<Real> o;
  o.p_re =
      a_re * t.p_re - a_im * t.p_im + b_re * t.m_re - b_im * t.m_im + c_re * t.z_re - c_im * t.z_im;
  o.p_im =
      a_re * t.p_im + a_im * t.p_re + b_re * t.m_im + b_im * t.m_re + c_re * t.z_im + c_im * t.z_re;
  o.m_re =
      b_re * t.p_re + b_im * t.p_im + a_re * t.m_re + a_im * t.m_im + c_re * t.z_re + c_im * t.z_im;
  o.m_im =
      b_re * t.p_im - b_im * t.p_re + a_re * t.m_im - a_im * t.m_re + c_re * t.z_im - c_im * t.z_re;
  o.z_re = d_re * t.p_re - d_im * t.p_im + d_re * t.m_re + d_im * t.m_im + e * t.z_re;
  o.z_im = d_re * t.p_im + d_im * t.p_re + d_re * t.m_im - d_im * t.m_re + e * t.z_im;
  return o;
}

// `second` after `first`.
template <class Real>
KOKKOS_FORCEINLINE_FUNCTION WaveformMap<Real> compose(const WaveformMap<Real>& second,
                                                      const WaveformMap<Real>& first) {
  WaveformMap<Real> out;
  out.plus = linear(second, first.plus);
  out.z = linear(second, first.z);
  out.offset = linear(second, first.offset);
  out.offset.p_re += second.offset.p_re, out.offset.p_im += second.offset.p_im;
  out.offset.m_re += second.offset.m_re, out.offset.m_im += second.offset.m_im;
  out.offset.z_re += second.offset.z_re, out.offset.z_im += second.offset.z_im;
  return out;
}

template <class Real>
KOKKOS_FORCEINLINE_FUNCTION void evolve_triple(const Evolution<Real>& ev, bool recovers,
                                               StateTriple<Real>& t) {
  evolve_transverse(ev, t.p_re, t.p_im, t.m_re, t.m_im);
  evolve_longitudinal(ev, recovers, t.z_re, t.z_im);
}

// One sample at its centre: half its free evolution, the turn, the other half.
template <class Real>
KOKKOS_FORCEINLINE_FUNCTION WaveformMap<Real> sample_map(const Evolution<Real>& half,
                                                         const RotationCoefficients<Real>& turn) {
  WaveformMap<Real> m = identity_map<Real>();
  StateTriple<Real>* t[3] = {&m.plus, &m.z, &m.offset};
  for (int k = 0; k < 3; ++k) {
    StateTriple<Real>& s = *t[k];
    evolve_triple(half, k == 2, s);
    rotate(turn, s.p_re, s.p_im, s.m_re, s.m_im, s.z_re, s.z_im);
    evolve_triple(half, k == 2, s);
  }
  return m;
}

}  // namespace waveform_detail

// The map of waveform `index` (0-based) for one voxel: `gain` scales its
// angles (B1 x a transmit field's gain x the event's flip over the
// waveform's), the axis turns by the event's phase (`cos_p`, `sin_p`), and
// the voxel relaxes at rates r1, r2 [1/s] and precesses at df_hz.
template <class Real, class MemorySpace>
KOKKOS_INLINE_FUNCTION WaveformMap<Real> integrate_waveform(const WaveformViews<MemorySpace>& w,
                                                            int index, const Real& gain,
                                                            float cos_p, float sin_p,
                                                            const Real& r1, const Real& r2,
                                                            const Real& df_hz) {
  using namespace waveform_detail;
  using W = wide_t<Real>;
  const W wide_gain = widen(gain), wide_r1 = widen(r1), wide_r2 = widen(r2);
  const W offset_hz = widen(df_hz) - W(double(w.frame(index, 0)));
  WaveformMap<W> total = identity_map<W>();
  float half_dt = -1.0f;
  Evolution<W> half{};
  for (int run = w.span(index, 0); run < w.span(index, 1); ++run) {
    const float dt = w.runs(run, 3);
    if (0.5f * dt != half_dt) {
      half_dt = 0.5f * dt;
      half = make_evolution(W(double(half_dt)), wide_r1, wide_r2, offset_hz, true);
    }
    const double c = double(w.runs(run, 1)) * cos_p - double(w.runs(run, 2)) * sin_p;
    const double s = double(w.runs(run, 2)) * cos_p + double(w.runs(run, 1)) * sin_p;
    const RotationCoefficients<W> turn =
        make_rotation(make_flip(W(double(w.runs(run, 0))) * wide_gain), make_phase(W(c), W(s)));
    WaveformMap<W> base = sample_map(half, turn);
    // The run's power of the sample's map, by squaring.
    std::int32_t left = w.run_samples(run);
    WaveformMap<W> power = identity_map<W>();
    bool first = true;
    while (left > 0) {
      if ((left & 1) != 0) {
        power = first ? base : compose(base, power);
        first = false;
      }
      left >>= 1;
      if (left > 0) base = compose(base, base);
    }
    total = compose(power, total);
  }
  // Back from the RF frequency's frame: F+ turns by its phase at the end.
  const double fc = w.frame(index, 1), fs = w.frame(index, 2);
  WaveformMap<Real> out;
  StateTriple<W>* from[3] = {&total.plus, &total.z, &total.offset};
  StateTriple<Real>* to[3] = {&out.plus, &out.z, &out.offset};
  for (int k = 0; k < 3; ++k) {
    const StateTriple<W>& x = *from[k];
    StateTriple<Real>& y = *to[k];
    narrow(W(fc) * x.p_re - W(fs) * x.p_im, y.p_re);
    narrow(W(fc) * x.p_im + W(fs) * x.p_re, y.p_im);
    narrow(W(fc) * x.m_re + W(fs) * x.m_im, y.m_re);
    narrow(W(fc) * x.m_im - W(fs) * x.m_re, y.m_im);
    narrow(x.z_re, y.z_re);
    narrow(x.z_im, y.z_im);
  }
  return out;
}

// The map's linear part in GeneralRotation's form (rotate_general applies it).
template <class Real>
KOKKOS_FORCEINLINE_FUNCTION GeneralRotation<Real> linear_part(const WaveformMap<Real>& m) {
  GeneralRotation<Real> g;
  g.r.c2 = m.plus.p_re;  // a
  g.c2_im = m.plus.p_im;
  g.r.u_re = m.plus.m_re;  // b = conj(image of F+ in F-)
  g.r.u_im = -m.plus.m_im;
  g.r.v_re = -m.z.p_im;  // v = i c
  g.r.v_im = m.z.p_re;
  g.r.h_re = -m.plus.z_im;  // h = -i conj(d)
  g.r.h_im = -m.plus.z_re;
  g.r.ca = m.z.z_re;  // e
  return g;
}

}  // namespace larmor::epg
