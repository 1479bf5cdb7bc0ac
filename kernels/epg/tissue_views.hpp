// Tissue as the kernels see it: each property is either a per-voxel map or one
// uniform value. A property at its identity value (M0 = 1, B1 = 1, df = 0,
// T1 = T2 = infinity, ADC = velocity = 0) changes nothing, and a uniform one
// costs one register. The declared terms (diffusion, flow, a transmit array)
// are switched on per run only where a map or a non-identity value was given
// and the sequence declares what they need (a crusher moment, shim settings).
#pragma once

#include "common/kokkos_compat.hpp"
#include "epg/slice_profile.hpp"
#include "epg/waveform_pulse.hpp"

namespace larmor::epg {

template <class MemorySpace>
struct TissueProperty {
  Kokkos::View<const float*, MemorySpace> map;  // empty: use `uniform`
  float uniform = 0.0f;

  KOKKOS_FORCEINLINE_FUNCTION float at(int voxel) const {
    return map.extent(0) > 0 ? map(voxel) : uniform;
  }
};

// The complex transmit field of a voxel for one shim setting: the per-channel
// fields combined by the setting's weights. `gain` scales the flip and
// (cos, sin) of `phase` turns the pulse's axis.
struct TransmitField {
  float gain = 1.0f, cos_phase = 1.0f, sin_phase = 0.0f;
};

template <class MemorySpace>
struct TransmitViews {
  Kokkos::View<const float***, Kokkos::LayoutRight, MemorySpace> maps;     // [voxel][channel][2]
  Kokkos::View<const float***, Kokkos::LayoutRight, MemorySpace> weights;  // [setting-1][ch][2]
  int channels = 0;  // 0: no array (every pulse uses the scalar field)

  KOKKOS_INLINE_FUNCTION TransmitField field(int voxel, int shim) const {
    TransmitField f;
    if (channels == 0 || shim <= 0) return f;
    float re = 0.0f, im = 0.0f;
    for (int c = 0; c < channels; ++c) {
      const float wr = weights(shim - 1, c, 0), wi = weights(shim - 1, c, 1);
      const float br = maps(voxel, c, 0), bi = maps(voxel, c, 1);
      re += wr * br - wi * bi;
      im += wr * bi + wi * br;
    }
    const float mag = kx::sqrt(re * re + im * im);
    f.gain = mag;
    if (mag > 0.0f) {
      f.cos_phase = re / mag;
      f.sin_phase = im / mag;
    }
    return f;
  }
};

// Run-wide constants of the declared terms, from the sequence's crusher.
struct TermConstants {
  float moment_per_m = 0.0f;  // crusher moment: one order is 2 pi x this [rad/m]
  float lobe_s = 0.0f;        // crusher lobe duration (0: no lobe factors)
  float inv_slice_m = 0.0f;   // 1 / slice thickness (washout), 0: none
};

// A pooled model's properties (docs/physics.md): a second free pool that
// exchanges with the first (myelin water) and a bound pool for magnetisation
// transfer. `free` and `bound` pick the compiled pooled layout; 1 and 0: the
// single-pool kernels run instead.
template <class MemorySpace>
struct PoolViews {
  int free = 1, bound = 0;
  TissueProperty<MemorySpace> fraction, t1_s, t2_s, exchange_hz;  // the second free pool
  TissueProperty<MemorySpace> bound_fraction, bound_t1_s, bound_exchange_hz;
  // Per event: the bound pool's saturation exponent at B1 = 1, pi g(offset)
  // sum omega1^2 dt (the pool keeps exp(-exponent B1^2) through the pulse).
  Kokkos::View<const float*, MemorySpace> saturation;

  KOKKOS_FORCEINLINE_FUNCTION bool active() const { return free > 1 || bound > 0; }
  int count() const { return free + bound; }
};

// The voxel weights of samples that record the voxel's mean rather than F+_0
// (src/sequence/voxel_integral.hpp builds them on the host): a weighted
// sample is sum_k w_k F_k over signed orders, F_k = F+_k and F_-k =
// conj(F-_k), at the kernel voxel's slice position.
template <class MemorySpace>
struct SampleWeightViews {
  // [table][position][k + orders - 1][re, im]
  Kokkos::View<const float****, Kokkos::LayoutRight, MemorySpace> weights;
  int orders = 0;

  KOKKOS_FORCEINLINE_FUNCTION bool active() const { return weights.extent(0) > 0; }
  int tables() const { return int(weights.extent(0)); }
  int positions() const { return int(weights.extent(1)); }
  // w_k of table `table` (1-based) at `position` for signed order k.
  KOKKOS_FORCEINLINE_FUNCTION float re(int table, int position, int k) const {
    return weights(table - 1, position, k + orders - 1, 0);
  }
  KOKKOS_FORCEINLINE_FUNCTION float im(int table, int position, int k) const {
    return weights(table - 1, position, k + orders - 1, 1);
  }
  // Adds order k's share to (re, im): w_k F+_k, and w_-k conj(F-_k) for k > 0
  // (F-_0 is conj(F+_0), counted once).
  template <class Real>
  KOKKOS_FORCEINLINE_FUNCTION void add_order(int table, int position, int k, const Real& fp_re,
                                             const Real& fp_im, const Real& fm_re,
                                             const Real& fm_im, Real& sum_re, Real& sum_im) const {
    const Real a(re(table, position, k)), b(im(table, position, k));
    sum_re += a * fp_re - b * fp_im;
    sum_im += a * fp_im + b * fp_re;
    if (k == 0) return;
    const Real c(re(table, position, -k)), d(im(table, position, -k));
    sum_re += c * fm_re + d * fm_im;
    sum_im += d * fm_re - c * fm_im;
  }
  // Its transpose: given the adjoint (l_re, l_im) of the sum, F+_k's adjoint
  // gains conj(w_k) l and F-_k's gains w_-k conj(l) (k > 0).
  template <class Real>
  KOKKOS_FORCEINLINE_FUNCTION void seed_order(int table, int position, int k, const Real& l_re,
                                              const Real& l_im, Real& fp_re, Real& fp_im,
                                              Real& fm_re, Real& fm_im) const {
    const Real a(re(table, position, k)), b(im(table, position, k));
    fp_re += a * l_re + b * l_im;
    fp_im += a * l_im - b * l_re;
    if (k == 0) return;
    const Real c(re(table, position, -k)), d(im(table, position, -k));
    fm_re += c * l_re + d * l_im;
    fm_im += d * l_re - c * l_im;
  }
};

// T1 and T2 in seconds (infinity allowed), off-resonance in Hz, ADC in m^2/s,
// velocity in m/s.
template <class MemorySpace>
struct TissueViews {
  TissueProperty<MemorySpace> m0, t1_s, t2_s, b1, df_hz, adc, velocity;
  TransmitViews<MemorySpace> transmit;
  TermConstants terms;
  PoolViews<MemorySpace> pools;
  // Slice-selective pulses: the kernel's voxel v is tissue voxel v / positions
  // at slice position v % positions.
  SliceProfileViews<MemorySpace> slice;
  // Samples weighted over the voxel (at the slice position above).
  SampleWeightViews<MemorySpace> weights;
  // Pulses played from their waveforms.
  WaveformViews<MemorySpace> waveforms;
  int voxels = 0;
  // Which declared terms this run evaluates (set on the host, uniform).
  bool diffusion = false, flow = false, washout = false;

  KOKKOS_FORCEINLINE_FUNCTION bool transport() const { return diffusion || flow; }
  KOKKOS_FORCEINLINE_FUNCTION bool lobes() const { return transport() && terms.lobe_s > 0.0f; }
};

// Whether a run evaluates any declared term (the kernel variants with them;
// the on-axis states carry none).
template <class MemorySpace>
bool declares_terms(const TissueViews<MemorySpace>& t) {
  return t.transport() || t.washout || t.transmit.channels > 0 || t.slice.active() ||
         t.weights.active() || t.waveforms.active();
}

// The tissue directions of derivatives, in this order everywhere.
namespace tissue_direction {
inline constexpr int m0 = 0, t1 = 1, t2 = 2, b1 = 3, df = 4, count = 5;
}

}  // namespace larmor::epg
