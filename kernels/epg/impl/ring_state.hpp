// The host state layout: RingOffsets' rings (ring_offsets.hpp) of complex
// F+ and F-, and Z by order. The lane loop is innermost and contiguous, as in
// StateBlock, so it vectorises.
#pragma once

#include "common/kokkos_compat.hpp"
#include "epg/impl/operators.hpp"
#include "epg/impl/ring_offsets.hpp"
#include "epg/impl/state_block.hpp"

namespace larmor::epg {

template <class Real, int Orders, int Lanes>
struct RingStateBlock : RingOffsets<Orders> {
  using real_type = Real;
  static constexpr int opt = Orders;
  static constexpr int lanes = Lanes;
  using Offsets = RingOffsets<Orders>;
  using Offsets::plus_slot, Offsets::minus_slot, Offsets::each_order;
  using Offsets::ring, Offsets::plus_base, Offsets::minus_base;

  alignas(ring_row_alignment) Real fp_re[ring][lanes];
  Real fp_im[ring][lanes];
  Real fm_re[ring][lanes], fm_im[ring][lanes];
  Real z_re[opt][lanes], z_im[opt][lanes];
  unsigned carried = 0;  // as StateBlock::carried

  KOKKOS_INLINE_FUNCTION void reset(int /*thread*/) {
    this->reset_offsets();
    carried = 0;
    for (int j = 0; j < ring; ++j) {
      for (int l = 0; l < lanes; ++l) {
        fp_re[j][l] = fp_im[j][l] = fm_re[j][l] = fm_im[j][l] = Real(0.0f);
      }
    }
    for (int j = 0; j < opt; ++j) {
      for (int l = 0; l < lanes; ++l) {
        z_re[j][l] = Real(j == 0 ? 1.0f : 0.0f);
        z_im[j][l] = Real(0.0f);
      }
    }
  }

  // As StateBlock::load and store (the rings start with base 0 after reset).
  template <class View>
  KOKKOS_INLINE_FUNCTION void load(const View& in, const int (&voxel)[lanes],
                                   const bool (&active)[lanes], int orders) {
    each_order(orders, [&](int k, int p, int m) {
      for (int l = 0; l < lanes; ++l) {
        if (!active[l]) continue;
        const int v = voxel[l];
        fp_re[p][l] = Real(in(v, 0, k)), fp_im[p][l] = Real(in(v, 1, k));
        fm_re[m][l] = Real(in(v, 2, k)), fm_im[m][l] = Real(in(v, 3, k));
        z_re[k][l] = Real(in(v, 4, k)), z_im[k][l] = Real(in(v, 5, k));
      }
    });
  }
  template <class View>
  KOKKOS_INLINE_FUNCTION void store(const View& out, const int (&voxel)[lanes],
                                    const bool (&active)[lanes], int orders) const {
    each_order(orders, [&](int k, int p, int m) {
      for (int l = 0; l < lanes; ++l) {
        if (!active[l]) continue;
        const int v = voxel[l];
        out(v, 0, k) = value_of(fp_re[p][l]), out(v, 1, k) = value_of(fp_im[p][l]);
        out(v, 2, k) = value_of(fm_re[m][l]), out(v, 3, k) = value_of(fm_im[m][l]);
        out(v, 4, k) = value_of(z_re[k][l]), out(v, 5, k) = value_of(z_im[k][l]);
      }
    });
  }

  KOKKOS_FORCEINLINE_FUNCTION const Real& fp0_re(int l) const { return fp_re[plus_base][l]; }
  KOKKOS_FORCEINLINE_FUNCTION const Real& fp0_im(int l) const { return fp_im[plus_base][l]; }

  // As StateBlock::for_each_order.
  template <class F>
  KOKKOS_FORCEINLINE_FUNCTION void for_each_order(int live, const F& f) {
    each_order(live, [&](int k, int p, int m) {
      for (int l = 0; l < lanes; ++l) {
        f(k, l, fp_re[p][l], fp_im[p][l], fm_re[m][l], fm_im[m][l], z_re[k][l], z_im[k][l]);
      }
    });
  }

  KOKKOS_INLINE_FUNCTION void rotate(int live, const LaneRotations<Real, lanes>& rotation) {
    each_order(live, [&](int k, int p, int m) {
      for (int l = 0; l < lanes; ++l) {
        epg::rotate(rotation.get(l), fp_re[p][l], fp_im[p][l], fm_re[m][l], fm_im[m][l], z_re[k][l],
                    z_im[k][l]);
      }
    });
  }

  // As StateBlock::rotate_pending (order 0 is always this thread's).
  template <class Pending>
  KOKKOS_INLINE_FUNCTION void rotate_pending(int live, const Pending& r, bool precess) {
    rotate_live_orders_pending(*this, live, r, precess);
    const int p = plus_slot(0), m = minus_slot(0);
    for (int l = 0; l < lanes; ++l) {
      r.recover(l, 1.0f, fp_re[p][l], fp_im[p][l], fm_re[m][l], fm_im[m][l], z_re[0][l]);
    }
  }

  // The lanes' coefficients go to lane arrays first, as rotate's do: read
  // from the lanes' structs inside the order loop, g++ left the loop scalar
  // (perf annotate); `omp simd` here also kept it scalar (the per-lane
  // temporary became an array the vectoriser could not analyse).
  KOKKOS_INLINE_FUNCTION void rotate_general(int live,
                                             const GeneralRotation<Real> (&rotation)[lanes]) {
    carried = ~0u;  // dual products: whatever directions its coefficients carry
    LaneRotations<Real, lanes> r;
    Real c2_im[lanes];
    for (int l = 0; l < lanes; ++l) {
      r.set(l, rotation[l].r);
      c2_im[l] = rotation[l].c2_im;
    }
    each_order(live, [&](int k, int p, int m) {
      for (int l = 0; l < lanes; ++l) {
        epg::rotate_general(r.get(l), c2_im[l], fp_re[p][l], fp_im[p][l], fm_re[m][l], fm_im[m][l],
                            z_re[k][l], z_im[k][l]);
      }
    });
  }

  KOKKOS_INLINE_FUNCTION void evolve(int live, const Evolution<Real> (&ev)[lanes], bool precess,
                                     bool spoil, unsigned directions = ~0u) {
    with_precession(precess, [&](auto precess_flag) {
      this->template evolve_orders<decltype(precess_flag)::value>(live, ev, spoil, directions);
    });
  }

  template <bool Precess>
  KOKKOS_FORCEINLINE_FUNCTION void evolve_orders(int live, const Evolution<Real> (&ev)[lanes],
                                                 bool spoil, unsigned directions) {
    Evolution<Real> applied[lanes];
    for (int l = 0; l < lanes; ++l) applied[l] = spoiled_if(ev[l], spoil);
    (void)directions;  // forward mode by parts has a block of its own (part_ring_state.hpp)
    each_order(live, [&](int k, int p, int m) {
      for (int l = 0; l < lanes; ++l) {
        if constexpr (Precess) {
          evolve_transverse(applied[l], fp_re[p][l], fp_im[p][l], fm_re[m][l], fm_im[m][l]);
        } else {
          decay_transverse(applied[l], fp_re[p][l], fp_im[p][l], fm_re[m][l], fm_im[m][l]);
        }
        evolve_longitudinal(applied[l], k == 0, z_re[k][l], z_im[k][l]);
      }
    });
  }

  // Diffusion and flow (transport.hpp), as StateBlock::transport. The lane
  // loop applies and advances the walk in one body so that it vectorises.
  template <int Families, bool Complex>
  KOKKOS_INLINE_FUNCTION void transport(int live, LaneWalks<lanes> walk) {
    each_order(live, [&](int k, int p, int m) {
#pragma omp simd
      for (int l = 0; l < lanes; ++l) {
        if constexpr ((Families & transport_families::plus) != 0)
          walk.template apply<Complex>(l, fp_re[p][l], fp_im[p][l]);
        if constexpr ((Families & transport_families::minus) != 0)
          walk.template apply<Complex>(l, fm_re[m][l], fm_im[m][l]);
        if constexpr ((Families & transport_families::z) != 0)
          walk.template apply<Complex>(l, z_re[k][l], z_im[k][l]);
        walk.template advance_lane<Complex>(l);
      }
    });
  }

  KOKKOS_INLINE_FUNCTION void spoil() {
    for (int j = 0; j < ring; ++j) {
      for (int l = 0; l < lanes; ++l) {
        fp_re[j][l] = fp_im[j][l] = fm_re[j][l] = fm_im[j][l] = Real(0.0f);
      }
    }
  }

  template <class Member>
  KOKKOS_INLINE_FUNCTION void shift(const Member&, EdgeExchange<Real, lanes>&) {
    const int old_minus_zero = this->advance();
    for (int l = 0; l < lanes; ++l) {
      fm_re[old_minus_zero][l] = Real(0.0f);
      fm_im[old_minus_zero][l] = Real(0.0f);
      fp_re[plus_base][l] = fm_re[minus_base][l];
      fp_im[plus_base][l] = -fm_im[minus_base][l];
    }
  }
};

}  // namespace larmor::epg
