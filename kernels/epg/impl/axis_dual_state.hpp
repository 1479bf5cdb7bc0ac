// The host's on-axis block for forward mode: AxisRingStateBlock at
// Dual<float, 5> with the dual numbers' parts stored apart.
//
// Stored as Dual structs (value and five tangents side by side), the host's
// lane loops do not vectorise: g++ leaves them scalar (docs/performance.md,
// "Host kernels"; `larmor-bench -m jvp -w mrf` on one core measures the
// difference). Here each part of each order is a lane-contiguous row, part 0 the
// value and part 1 + d the tangent along tissue direction d, so every step is
// a loop over lanes on plain floats. The steps are those of axis_state.hpp written out
// per part: a dual product x y has tangent x.v y.t + x.t y.v, and along df
// (the off-axis eigenspace) the rotation's sine terms change sign and the
// relaxation feeds the tangent from the axis state.
#pragma once

#include "common/dual.hpp"
#include "common/kokkos_compat.hpp"
#include "epg/impl/axis_state.hpp"

namespace larmor::epg {

template <int Orders, int Lanes>
struct AxisRingStateBlock<Dual<float, tissue_direction::count>, Orders, Lanes>
    : RingOffsets<Orders> {
  using Real = Dual<float, tissue_direction::count>;
  static constexpr int opt = Orders;
  static constexpr int lanes = Lanes;
  static constexpr int parts = 1 + tissue_direction::count;
  static constexpr int df_part = 1 + tissue_direction::df;
  using Offsets = RingOffsets<Orders>;
  using Offsets::plus_slot, Offsets::minus_slot, Offsets::each_order;
  using Offsets::ring, Offsets::plus_base, Offsets::minus_base;

  alignas(ring_row_alignment) float a[ring][parts][lanes];
  float b[ring][parts][lanes], c[opt][parts][lanes];

  KOKKOS_INLINE_FUNCTION void reset(int, int) {
    this->reset_offsets();
    for (int j = 0; j < ring; ++j)
      for (int p = 0; p < parts; ++p)
        for (int l = 0; l < lanes; ++l) a[j][p][l] = b[j][p][l] = 0.0f;
    for (int j = 0; j < opt; ++j)
      for (int p = 0; p < parts; ++p)
        for (int l = 0; l < lanes; ++l) c[j][p][l] = j == 0 && p == 0 ? 1.0f : 0.0f;
  }

  // A carried state, or declared terms, never reach the on-axis kernels
  // (runs_on_axis: they run the complex ones); the event loop compiles the
  // calls only.
  template <class View>
  KOKKOS_INLINE_FUNCTION void load(const View&, const int (&)[lanes], const bool (&)[lanes], int) {
    Kokkos::abort("larmor: a carried state reached the on-axis forward-mode block");
  }
  template <class View>
  KOKKOS_INLINE_FUNCTION void store(const View&, const int (&)[lanes], const bool (&)[lanes],
                                    int) const {
    Kokkos::abort("larmor: a carried state reached the on-axis forward-mode block");
  }
  template <int Families, bool Complex>
  KOKKOS_INLINE_FUNCTION void transport(int, LaneWalks<lanes>) {
    Kokkos::abort("larmor: declared terms reached the on-axis forward-mode block");
  }

  // F+_0 = p_0 + i a_0 (sample_re, sample_im of axis_state.hpp).
  KOKKOS_INLINE_FUNCTION Real fp0_re(int l) const {
    Real x(0.0f);
    x.tangent[tissue_direction::df] = a[plus_base][df_part][l];
    return x;
  }
  KOKKOS_INLINE_FUNCTION Real fp0_im(int l) const {
    Real x(a[plus_base][0][l]);
    for (int d = 0; d < tissue_direction::count; ++d) {
      if (d != tissue_direction::df) x.tangent[d] = a[plus_base][1 + d][l];
    }
    return x;
  }

  // rotate_on_axis per part.
  KOKKOS_INLINE_FUNCTION void rotate(int live, const LaneRotations<Real, lanes>& r) {
    float c2[parts][lanes], u[parts][lanes], v[parts][lanes], h[parts][lanes], ca[parts][lanes];
    for (int l = 0; l < lanes; ++l) {
      split(r.c2[l], c2, l);
      split(r.u_re[l], u, l);
      split(r.v_re[l], v, l);
      split(r.h_re[l], h, l);
      split(r.ca[l], ca, l);
    }
    const int n = live < opt ? live : opt;
    for (int k = 0; k < n; ++k) {
      float(&x)[parts][lanes] = a[plus_slot(k)];
      float(&y)[parts][lanes] = b[minus_slot(k)];
      float(&z)[parts][lanes] = c[k];
      float x0[lanes], y0[lanes], z0[lanes];
#pragma omp simd
      for (int l = 0; l < lanes; ++l) {
        x0[l] = x[0][l], y0[l] = y[0][l], z0[l] = z[0][l];
        x[0][l] = c2[0][l] * x0[l] + u[0][l] * y0[l] - v[0][l] * z0[l];
        y[0][l] = u[0][l] * x0[l] + c2[0][l] * y0[l] + v[0][l] * z0[l];
        z[0][l] = ca[0][l] * z0[l] + h[0][l] * (x0[l] - y0[l]);
      }
      for (int p = 1; p < parts; ++p) {
        // Along df the sine terms (v, h) change sign, and the coefficients'
        // df tangents are zero (they depend on B1 only).
        const float sine = p == df_part ? -1.0f : 1.0f;
        const float on_axis = p == df_part ? 0.0f : 1.0f;
#pragma omp simd
        for (int l = 0; l < lanes; ++l) {
          const float xt = x[p][l], yt = y[p][l], zt = z[p][l];
          const float vs = sine * v[0][l], hs = sine * h[0][l];
          x[p][l] = c2[0][l] * xt + u[0][l] * yt - vs * zt +
                    on_axis * (c2[p][l] * x0[l] + u[p][l] * y0[l] - v[p][l] * z0[l]);
          y[p][l] = u[0][l] * xt + c2[0][l] * yt + vs * zt +
                    on_axis * (u[p][l] * x0[l] + c2[p][l] * y0[l] + v[p][l] * z0[l]);
          z[p][l] = ca[0][l] * zt + hs * (xt - yt) +
                    on_axis * (ca[p][l] * z0[l] + h[p][l] * (x0[l] - y0[l]));
        }
      }
    }
  }

  // relax_on_axis per part (a spoiler zeroes E2 and its turn, as evolve()
  // of the other blocks does).
  KOKKOS_INLINE_FUNCTION void evolve(int live, const Evolution<Real> (&ev)[lanes], bool, bool spoil,
                                     unsigned = ~0u) {
    const int n = live < opt ? live : opt;
    if (n <= 0) return;
    float e1[parts][lanes], e2[parts][lanes], recovery[parts][lanes], turn[lanes];
    for (int l = 0; l < lanes; ++l) {
      split(spoil ? Real(0.0f) : ev[l].e2, e2, l);
      split(ev[l].e1, e1, l);
      split(ev[l].recovery, recovery, l);
      // ev.rot_im = E2 sin(2 pi df t): its df part is E2 2 pi t.
      turn[l] = spoil ? 0.0f : ev[l].rot_im.tangent[tissue_direction::df];
    }
    for (int k = 0; k < n; ++k) {
      float(&x)[parts][lanes] = a[plus_slot(k)];
      float(&y)[parts][lanes] = b[minus_slot(k)];
      float(&z)[parts][lanes] = c[k];
      const float order_zero = k == 0 ? 1.0f : 0.0f;
      float x0[lanes], y0[lanes], z0[lanes];
#pragma omp simd
      for (int l = 0; l < lanes; ++l) {
        x0[l] = x[0][l], y0[l] = y[0][l], z0[l] = z[0][l];
        x[0][l] = e2[0][l] * x0[l];
        y[0][l] = e2[0][l] * y0[l];
        z[0][l] = e1[0][l] * z0[l] + order_zero * recovery[0][l];
      }
      for (int p = 1; p < parts; ++p) {
#pragma omp simd
        for (int l = 0; l < lanes; ++l) {
          // Along df: p' = E2 (p - 2 pi t a), q' = E2 (q + 2 pi t b).
          const float feed_x = p == df_part ? -turn[l] : e2[p][l];
          const float feed_y = p == df_part ? turn[l] : e2[p][l];
          x[p][l] = e2[0][l] * x[p][l] + feed_x * x0[l];
          y[p][l] = e2[0][l] * y[p][l] + feed_y * y0[l];
          z[p][l] = e1[0][l] * z[p][l] + e1[p][l] * z0[l] + order_zero * recovery[p][l];
        }
      }
    }
  }

  KOKKOS_INLINE_FUNCTION void spoil() {
    for (int j = 0; j < ring; ++j)
      for (int p = 0; p < parts; ++p)
        for (int l = 0; l < lanes; ++l) a[j][p][l] = b[j][p][l] = 0.0f;
  }

  // F+_0 = conj(F-_0): a_0 = -b_0 on the axis, p_0 = q_0 off it.
  template <class Member>
  KOKKOS_INLINE_FUNCTION void shift(const Member&, EdgeExchange<Real, lanes>&) {
    const int old_minus_zero = this->advance();
    for (int p = 0; p < parts; ++p) {
      const float sign = p == df_part ? 1.0f : -1.0f;
#pragma omp simd
      for (int l = 0; l < lanes; ++l) {
        b[old_minus_zero][p][l] = 0.0f;
        a[plus_base][p][l] = sign * b[minus_base][p][l];
      }
    }
  }

 private:
  // A dual number's parts into lane `l` of part rows.
  static KOKKOS_FORCEINLINE_FUNCTION void split(const Real& x, float (&rows)[parts][lanes], int l) {
    rows[0][l] = x.value;
    for (int d = 0; d < tissue_direction::count; ++d) rows[1 + d][l] = x.tangent[d];
  }
};

}  // namespace larmor::epg
