// The host state layout: one thread holds every order of `Lanes` voxels, and
// a shift moves two offsets instead of the states.
//
// F+ and F- live in rings of a power-of-two number of slots (at least one more
// than the orders). F+_k sits in slot (plus_base + k) mod R and F-_k in slot
// (minus_base + k) mod R, so a shift is plus_base -= 1, minus_base += 1, the
// new F+_0 taken from conj(F-_0) and the slot that held the old F-_0 (now
// F-_{R-1}) cleared. Z does not move. Slots at orders K and above need no
// clearing: F- only reaches them from above (cleared on wrap), and F+ there
// only moves up until it wraps into F+_0, which a shift overwrites. The lane
// loop is innermost and contiguous, as in StateBlock, so it vectorises.
#pragma once

#include "common/kokkos_compat.hpp"
#include "epg/impl/operators.hpp"
#include "epg/impl/state_block.hpp"

namespace larmor::epg {

template <class Real, int Orders, int Lanes>
struct RingStateBlock {
  using real_type = Real;
  static constexpr int opt = Orders;
  static constexpr int lanes = Lanes;
  static constexpr int ring_slots() {
    int r = 1;
    while (r < Orders + 1) r *= 2;
    return r;
  }
  static constexpr int ring = ring_slots();
  static constexpr int mask = ring - 1;

  Real fp_re[ring][lanes], fp_im[ring][lanes];
  Real fm_re[ring][lanes], fm_im[ring][lanes];
  Real z_re[opt][lanes], z_im[opt][lanes];
  int plus_base = 0;
  int minus_base = 0;
  unsigned carried = 0;  // as StateBlock::carried

  KOKKOS_INLINE_FUNCTION void reset(int /*thread*/) {
    plus_base = minus_base = 0;
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
    const int n = orders < opt ? orders : opt;
    for (int k = 0; k < n; ++k) {
      for (int l = 0; l < lanes; ++l) {
        if (!active[l]) continue;
        const int v = voxel[l];
        fp_re[plus_slot(k)][l] = Real(in(v, 0, k));
        fp_im[plus_slot(k)][l] = Real(in(v, 1, k));
        fm_re[minus_slot(k)][l] = Real(in(v, 2, k));
        fm_im[minus_slot(k)][l] = Real(in(v, 3, k));
        z_re[k][l] = Real(in(v, 4, k));
        z_im[k][l] = Real(in(v, 5, k));
      }
    }
  }
  template <class View>
  KOKKOS_INLINE_FUNCTION void store(const View& out, const int (&voxel)[lanes],
                                    const bool (&active)[lanes], int orders) const {
    const int n = orders < opt ? orders : opt;
    for (int k = 0; k < n; ++k) {
      for (int l = 0; l < lanes; ++l) {
        if (!active[l]) continue;
        const int v = voxel[l];
        out(v, 0, k) = value_of(fp_re[plus_slot(k)][l]);
        out(v, 1, k) = value_of(fp_im[plus_slot(k)][l]);
        out(v, 2, k) = value_of(fm_re[minus_slot(k)][l]);
        out(v, 3, k) = value_of(fm_im[minus_slot(k)][l]);
        out(v, 4, k) = value_of(z_re[k][l]);
        out(v, 5, k) = value_of(z_im[k][l]);
      }
    }
  }

  KOKKOS_FORCEINLINE_FUNCTION int plus_slot(int k) const { return (plus_base + k) & mask; }
  KOKKOS_FORCEINLINE_FUNCTION int minus_slot(int k) const { return (minus_base + k) & mask; }

  KOKKOS_FORCEINLINE_FUNCTION const Real& fp0_re(int l) const { return fp_re[plus_base][l]; }
  KOKKOS_FORCEINLINE_FUNCTION const Real& fp0_im(int l) const { return fp_im[plus_base][l]; }

  // As StateBlock::for_each_order.
  template <class F>
  KOKKOS_FORCEINLINE_FUNCTION void for_each_order(int live, const F& f) {
    const int n = live < opt ? live : opt;
    for (int k = 0; k < n; ++k) {
      const int p = plus_slot(k), m = minus_slot(k);
      for (int l = 0; l < lanes; ++l) {
        f(k, l, fp_re[p][l], fp_im[p][l], fm_re[m][l], fm_im[m][l], z_re[k][l], z_im[k][l]);
      }
    }
  }

  KOKKOS_INLINE_FUNCTION void rotate(int live, const LaneRotations<Real, lanes>& rotation) {
    const int n = live < opt ? live : opt;
    for (int k = 0; k < n; ++k) {
      const int p = plus_slot(k), m = minus_slot(k);
      for (int l = 0; l < lanes; ++l) {
        epg::rotate(rotation.get(l), fp_re[p][l], fp_im[p][l], fm_re[m][l], fm_im[m][l], z_re[k][l],
                    z_im[k][l]);
      }
    }
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
    const int n = live < opt ? live : opt;
    for (int k = 0; k < n; ++k) {
      const int p = plus_slot(k), m = minus_slot(k);
      for (int l = 0; l < lanes; ++l) {
        epg::rotate_general(r.get(l), c2_im[l], fp_re[p][l], fp_im[p][l], fm_re[m][l], fm_im[m][l],
                            z_re[k][l], z_im[k][l]);
      }
    }
  }

  KOKKOS_INLINE_FUNCTION void evolve(int live, const Evolution<Real> (&ev)[lanes], bool precess,
                                     bool spoil, unsigned directions = ~0u) {
    if (precess) {
      evolve_orders<true>(live, ev, spoil, directions);
    } else {
      evolve_orders<false>(live, ev, spoil, directions);
    }
  }

  template <bool Precess>
  KOKKOS_FORCEINLINE_FUNCTION void evolve_orders(int live, const Evolution<Real> (&ev)[lanes],
                                                 bool spoil, unsigned directions) {
    Evolution<Real> applied[lanes];
    for (int l = 0; l < lanes; ++l) {
      applied[l] = ev[l];
      if (spoil) applied[l].e2 = applied[l].rot_re = applied[l].rot_im = Real(0.0f);
    }
    (void)directions;  // forward mode by parts has a block of its own (part_ring_state.hpp)
    const int n = live < opt ? live : opt;
    for (int k = 0; k < n; ++k) {
      const int p = plus_slot(k), m = minus_slot(k);
      for (int l = 0; l < lanes; ++l) {
        if constexpr (Precess) {
          evolve_transverse(applied[l], fp_re[p][l], fp_im[p][l], fm_re[m][l], fm_im[m][l]);
        } else {
          decay_transverse(applied[l], fp_re[p][l], fp_im[p][l], fm_re[m][l], fm_im[m][l]);
        }
        evolve_longitudinal(applied[l], k == 0, z_re[k][l], z_im[k][l]);
      }
    }
  }

  static constexpr int first_order = 0;  // one thread holds every order

  // Diffusion and flow (transport.hpp), as StateBlock::transport. The lane
  // loop applies and advances the walk in one body so that it vectorises.
  template <int Families, bool Complex>
  KOKKOS_INLINE_FUNCTION void transport(int live, LaneWalks<lanes> walk) {
    const int n = live < opt ? live : opt;
    for (int k = 0; k < n; ++k) {
      const int p = plus_slot(k), m = minus_slot(k);
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
    }
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
    const int old_minus_zero = minus_base;
    plus_base = (plus_base - 1) & mask;
    minus_base = (minus_base + 1) & mask;
    for (int l = 0; l < lanes; ++l) {
      fm_re[old_minus_zero][l] = Real(0.0f);
      fm_im[old_minus_zero][l] = Real(0.0f);
      fp_re[plus_base][l] = fm_re[minus_base][l];
      fp_im[plus_base][l] = -fm_im[minus_base][l];
    }
  }
};

}  // namespace larmor::epg
