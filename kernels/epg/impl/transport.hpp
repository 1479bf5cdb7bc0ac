// Diffusion and flow: where their physics lives. Both act on EPG order k as
// one complex factor per order, the same for F+_k, F-_k and Z_k, and are
// evaluated only when a run declares them (tissue_views.hpp).
//
// With q the dephasing of one order (2 pi x the declared crusher moment),
// D the voxel's ADC and v its velocity along the crusher's axis:
//  * an interval t (no gradient) multiplies order k by
//      exp(-D (k q)^2 t) exp(-i k q v t),
//    the b-value k^2 q^2 t of a static dephasing, and the phase of spins that
//    move by v t through a pattern of k q (Weigel et al., J Magn Reson 205:276,
//    2010, for diffusion; the flow phase follows from M(x, t + dt) = M(x - v dt, t));
//  * a crusher lobe of duration tau, moving signed order n to n + 1 linearly,
//    multiplies the state by
//      exp(-D q^2 tau ((n + 1/2)^2 + 1/12)) exp(-i q v tau (n + 1/2)),
//    the b-value and first moment of a constant-gradient lobe. After the shift
//    F+_m came from n = m - 1 and F-_m (signed order -m) from n = -m - 1; Z
//    does not move and takes the interval factor for tau.
// In every case the factor of order k has the form
//   exp(-beta (k^2 + sigma k + rho)) exp(-i 2 pi gamma (k + sigma / 2)),
// which a walk over consecutive orders produces with two complex multiplies
// per order instead of an exponential and a sine.
#pragma once

#include "common/kokkos_compat.hpp"
#include "common/sincos.hpp"

namespace larmor::epg {

// The factor of consecutive orders: `value` at the current order, times
// `step` to the next; the step itself shrinks by `decay` each order.
struct OrderWalk {
  float re = 1.0f, im = 0.0f;
  float step_re = 1.0f, step_im = 0.0f;
  float decay = 1.0f;

  KOKKOS_FORCEINLINE_FUNCTION void advance() {
    const float r = re * step_re - im * step_im;
    im = re * step_im + im * step_re;
    re = r;
    step_re *= decay;
    step_im *= decay;
  }
  // The adjoint's factor (the transpose of a complex multiply).
  KOKKOS_FORCEINLINE_FUNCTION OrderWalk conjugate() const {
    OrderWalk w = *this;
    w.im = -im;
    w.step_im = -step_im;
    return w;
  }
  template <class Real>
  KOKKOS_FORCEINLINE_FUNCTION void apply(Real& x_re, Real& x_im) const {
    const Real r = re * x_re - im * x_im;
    x_im = re * x_im + im * x_re;
    x_re = r;
  }
};

// Starts a walk at order `first` for exp(-beta (k^2 + sigma k + rho))
// exp(-i 2 pi gamma_turns (k + sigma / 2)), sigma in {-1, 0, 1}.
KOKKOS_INLINE_FUNCTION OrderWalk order_walk(float beta, float gamma_turns, float sigma, float rho,
                                            int first) {
  using kx::exp;
  const float k = float(first);
  OrderWalk w;
  const float magnitude = exp(-beta * (k * k + sigma * k + rho));
  float s, c;
  sincos_turns(-gamma_turns * (k + 0.5f * sigma), s, c);
  w.re = magnitude * c;
  w.im = magnitude * s;
  const float step = exp(-beta * (2.0f * k + 1.0f + sigma));
  sincos_turns(-gamma_turns, s, c);
  w.step_re = step * c;
  w.step_im = step * s;
  w.decay = exp(-2.0f * beta);
  return w;
}

// The same from order 0 (every walk on the host, and the first thread's on a
// device) from a = exp(-beta), exp(-beta rho) and h = exp(-i pi gamma): the
// step is a^(1 + sigma) h^2, the value exp(-beta rho) h^sigma, the decay a^2.
KOKKOS_INLINE_FUNCTION OrderWalk walk_from_zero(float a, float a_rho, float h_re, float h_im,
                                                int sigma) {
  OrderWalk w;
  const float u_re = h_re * h_re - h_im * h_im, u_im = 2.0f * h_re * h_im;  // h^2
  const float step = sigma < 0 ? 1.0f : (sigma == 0 ? a : a * a);
  w.re = sigma == 0 ? a_rho : a_rho * h_re;
  w.im = sigma == 0 ? 0.0f : a_rho * (sigma > 0 ? h_im : -h_im);
  w.step_re = step * u_re;
  w.step_im = step * u_im;
  w.decay = a * a;
  return w;
}

// Which state families a walk scales: an interval scales all three with one
// walk; a lobe gives each family its own.
namespace transport_families {
inline constexpr int plus = 1, minus = 2, z = 4, all = 7;
}

// A voxel's rates of the two terms: beta per second (D q^2) and the flow
// phase per order per second in turns (moment x v).
struct TransportRates {
  float diffusion = 0.0f;   // D q^2 [1/s]
  float flow_turns = 0.0f;  // crusher moment [1/m] x velocity [m/s]
};

// The three walks of one lane: F+, F- and Z. An interval uses one walk for all
// three (`shared`).
struct TransportWalks {
  OrderWalk fp, fm, z;
};

// The walks of `Lanes` voxels stored lane-contiguous (the host's lane loop is
// the SIMD loop and must not gather from structs).
template <int Lanes>
struct LaneWalks {
  float re[Lanes], im[Lanes], step_re[Lanes], step_im[Lanes], decay[Lanes];

  KOKKOS_FORCEINLINE_FUNCTION void set(int l, const OrderWalk& w) {
    re[l] = w.re;
    im[l] = w.im;
    step_re[l] = w.step_re;
    step_im[l] = w.step_im;
    decay[l] = w.decay;
  }
  // Complex = false: a run without flow, whose factors are real (half the
  // work of a complex multiply).
  template <bool Complex = true, class Real>
  KOKKOS_FORCEINLINE_FUNCTION void apply(int l, Real& x_re, Real& x_im) const {
    if constexpr (Complex) {
      const Real r = re[l] * x_re - im[l] * x_im;
      x_im = re[l] * x_im + im[l] * x_re;
      x_re = r;
    } else {
      x_re = re[l] * x_re;
      x_im = re[l] * x_im;
    }
  }
  template <bool Complex = true>
  KOKKOS_FORCEINLINE_FUNCTION void advance_lane(int l) {
    if constexpr (Complex) {
      const float r = re[l] * step_re[l] - im[l] * step_im[l];
      im[l] = re[l] * step_im[l] + im[l] * step_re[l];
      re[l] = r;
      step_im[l] *= decay[l];
    } else {
      re[l] *= step_re[l];
    }
    step_re[l] *= decay[l];
  }
  template <bool Complex = true>
  KOKKOS_FORCEINLINE_FUNCTION void advance() {
    LARMOR_UNROLL
    for (int l = 0; l < Lanes; ++l) advance_lane<Complex>(l);
  }
};

KOKKOS_INLINE_FUNCTION OrderWalk interval_walk(const TransportRates& r, float t, int first) {
  if (first != 0) return order_walk(r.diffusion * t, r.flow_turns * t, 0.0f, 0.0f, first);
  using kx::exp;
  float h_re, h_im;
  sincos_turns(-0.5f * r.flow_turns * t, h_im, h_re);
  return walk_from_zero(exp(-r.diffusion * t), 1.0f, h_re, h_im, 0);
}

// One family's lobe walk (F+: sigma = -1, F-: sigma = +1, Z: the interval
// factor for tau).
template <int Family>
KOKKOS_INLINE_FUNCTION OrderWalk lobe_walk(const TransportRates& r, float tau, int first) {
  const float beta = r.diffusion * tau, gamma = r.flow_turns * tau;
  constexpr float third = 1.0f / 3.0f;  // 1/4 + 1/12
  constexpr int sigma = Family == transport_families::plus    ? -1
                        : Family == transport_families::minus ? 1
                                                              : 0;
  constexpr float rho = sigma == 0 ? 0.0f : third;
  if (first != 0) return order_walk(beta, gamma, float(sigma), rho, first);
  using kx::exp;
  float h_re, h_im;
  sincos_turns(-0.5f * gamma, h_im, h_re);
  return walk_from_zero(exp(-beta), sigma == 0 ? 1.0f : exp(-third * beta), h_re, h_im, sigma);
}

KOKKOS_INLINE_FUNCTION TransportWalks lobe_walks(const TransportRates& r, float tau, int first) {
  return {lobe_walk<transport_families::plus>(r, tau, first),
          lobe_walk<transport_families::minus>(r, tau, first),
          lobe_walk<transport_families::z>(r, tau, first)};
}

}  // namespace larmor::epg
