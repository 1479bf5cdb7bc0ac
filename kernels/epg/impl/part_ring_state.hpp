// The host's forward-mode state: RingStateBlock's rings and lanes, with each
// dual number's parts (value, then each tangent) in rows of their own.
//
// A host thread steps `Lanes` voxels in SIMD lanes. Held as dual numbers, the
// lanes of one part lie a dual number apart and the loops over them stay
// scalar; held part by part, the lanes of a part are contiguous and the
// by-parts steps of dual_steps.hpp vectorise over them: each part of the
// result is the float step at the coefficients' value applied to that part of
// the state, plus (along the directions the coefficients carry) the step at
// the coefficients' tangent applied to the state's value. The arithmetic is
// dual_steps::sweep's, term for term, so results agree with the dual-number
// blocks'. Slice-selective pulses (rare) take dual-number products one order
// and lane at a time.
#pragma once

#include <type_traits>
#include <utility>

#include "common/dual.hpp"
#include "common/kokkos_compat.hpp"
#include "epg/impl/dual_steps.hpp"
#include "epg/impl/operators.hpp"
#include "epg/impl/ring_offsets.hpp"
#include "epg/impl/state_block.hpp"
#include "epg/impl/transport.hpp"
#include "epg/slice_profile.hpp"

namespace larmor::epg {

template <class Real, int Orders, int Lanes>
struct PartRingStateBlock : RingOffsets<Orders> {
  using real_type = Real;
  static constexpr int opt = Orders;
  static constexpr int lanes = Lanes;
  static constexpr int tangents = tangent_count_v<Real>;
  static constexpr int parts = part_count_v<Real>;
  using Offsets = RingOffsets<Orders>;
  using Offsets::plus_slot, Offsets::minus_slot, Offsets::each_order;
  using Offsets::ring, Offsets::plus_base, Offsets::minus_base;

  // [slot or order][part][lane]: an order's parts side by side, each part's
  // lanes contiguous.
  alignas(ring_row_alignment) float fp_re[ring][parts][lanes];
  float fp_im[ring][parts][lanes];
  float fm_re[ring][parts][lanes], fm_im[ring][parts][lanes];
  float z_re[opt][parts][lanes], z_im[opt][parts][lanes];
  unsigned carried = 0;  // as StateBlock::carried

  KOKKOS_INLINE_FUNCTION void reset(int /*thread*/) {
    this->reset_offsets();
    carried = 0;
    for (int j = 0; j < ring; ++j) {
      for (int p = 0; p < parts; ++p) {
        for (int l = 0; l < lanes; ++l) {
          fp_re[j][p][l] = fp_im[j][p][l] = fm_re[j][p][l] = fm_im[j][p][l] = 0.0f;
        }
      }
    }
    for (int j = 0; j < opt; ++j) {
      for (int p = 0; p < parts; ++p) {
        for (int l = 0; l < lanes; ++l) {
          z_re[j][p][l] = j == 0 && p == 0 ? 1.0f : 0.0f;
          z_im[j][p][l] = 0.0f;
        }
      }
    }
  }

  // As RingStateBlock::load and store: a carried state has zero tangents.
  template <class View>
  KOKKOS_INLINE_FUNCTION void load(const View& in, const int (&voxel)[lanes],
                                   const bool (&active)[lanes], int orders) {
    each_order(orders, [&](int k, int ps, int ms) {
      for (int l = 0; l < lanes; ++l) {
        if (!active[l]) continue;
        const int v = voxel[l];
        for (int p = 0; p < parts; ++p) {
          const bool value = p == 0;
          fp_re[ps][p][l] = value ? in(v, 0, k) : 0.0f;
          fp_im[ps][p][l] = value ? in(v, 1, k) : 0.0f;
          fm_re[ms][p][l] = value ? in(v, 2, k) : 0.0f;
          fm_im[ms][p][l] = value ? in(v, 3, k) : 0.0f;
          z_re[k][p][l] = value ? in(v, 4, k) : 0.0f;
          z_im[k][p][l] = value ? in(v, 5, k) : 0.0f;
        }
      }
    });
  }
  template <class View>
  KOKKOS_INLINE_FUNCTION void store(const View& out, const int (&voxel)[lanes],
                                    const bool (&active)[lanes], int orders) const {
    each_order(orders, [&](int k, int ps, int ms) {
      for (int l = 0; l < lanes; ++l) {
        if (!active[l]) continue;
        const int v = voxel[l];
        out(v, 0, k) = fp_re[ps][0][l], out(v, 1, k) = fp_im[ps][0][l];
        out(v, 2, k) = fm_re[ms][0][l], out(v, 3, k) = fm_im[ms][0][l];
        out(v, 4, k) = z_re[k][0][l], out(v, 5, k) = z_im[k][0][l];
      }
    });
  }

  static KOKKOS_FORCEINLINE_FUNCTION Real gather(const float (&x)[parts][lanes], int l) {
    Real r;
    for (int p = 0; p < parts; ++p) part_of(r, p) = x[p][l];
    return r;
  }
  static KOKKOS_FORCEINLINE_FUNCTION void scatter(float (&x)[parts][lanes], int l, const Real& r) {
    for (int p = 0; p < parts; ++p) x[p][l] = part_of(r, p);
  }

  // As StateBlock::for_each_order, on dual numbers gathered from their parts
  // and written back after `f` (slice-selective pulses, tests).
  template <class F>
  KOKKOS_INLINE_FUNCTION void for_each_order(int live, const F& f) {
    each_order(live, [&](int k, int ps, int ms) {
      for (int l = 0; l < lanes; ++l) {
        Real a_re = gather(fp_re[ps], l), a_im = gather(fp_im[ps], l);
        Real b_re = gather(fm_re[ms], l), b_im = gather(fm_im[ms], l);
        Real c_re = gather(z_re[k], l), c_im = gather(z_im[k], l);
        f(k, l, a_re, a_im, b_re, b_im, c_re, c_im);
        scatter(fp_re[ps], l, a_re), scatter(fp_im[ps], l, a_im);
        scatter(fm_re[ms], l, b_re), scatter(fm_im[ms], l, b_im);
        scatter(z_re[k], l, c_re), scatter(z_im[k], l, c_im);
      }
    });
  }

  KOKKOS_FORCEINLINE_FUNCTION Real fp0_re(int l) const { return gather(fp_re[plus_base], l); }
  KOKKOS_FORCEINLINE_FUNCTION Real fp0_im(int l) const { return gather(fp_im[plus_base], l); }

  // The by-parts sweep over the live orders (dual_steps::sweep, with the
  // same `Added` and `Carried`): `coefficients[p]` part p of the lanes'
  // coefficients, `homogeneous` their value without the affine term;
  // `step(coefficients, lane, order, six floats)`. Per order, one lane loop
  // per tangent stepped, then one for the value (which the tangents read
  // before it changes); the tangents are unrolled at compile time so that
  // each lane loop is straight-line code the compiler vectorises.
  template <unsigned Added, unsigned Carried, class Coefficients, class Step>
  KOKKOS_FORCEINLINE_FUNCTION void sweep(int live, const Coefficients (&coefficients)[parts],
                                         const Coefficients& homogeneous, const Step& step) {
    const int n = live < opt ? live : opt;
    for (int k = 0; k < n; ++k) {
      float* const a_re = &fp_re[plus_slot(k)][0][0];
      float* const a_im = &fp_im[plus_slot(k)][0][0];
      float* const b_re = &fm_re[minus_slot(k)][0][0];
      float* const b_im = &fm_im[minus_slot(k)][0][0];
      float* const c_re = &z_re[k][0][0];
      float* const c_im = &z_im[k][0][0];
      const auto read = [&](int p, int l) LARMOR_INLINE_LAMBDA -> dual_steps::Parts {
        const int i = p * lanes + l;
        return {a_re[i], a_im[i], b_re[i], b_im[i], c_re[i], c_im[i]};
      };
      const auto write = [&](int p, int l, const dual_steps::Parts& x) LARMOR_INLINE_LAMBDA {
        const int i = p * lanes + l;
        a_re[i] = x.fp_re, a_im[i] = x.fp_im, b_re[i] = x.fm_re;
        b_im[i] = x.fm_im, c_re[i] = x.z_re, c_im[i] = x.z_im;
      };
      const auto tangent = [&](auto direction) LARMOR_INLINE_LAMBDA {
        constexpr int d = decltype(direction)::value;
        constexpr bool carries = ((Carried >> d) & 1u) != 0, adds = ((Added >> d) & 1u) != 0;
        if constexpr (carries || adds) {
          LARMOR_INDEPENDENT_LANES
          for (int l = 0; l < lanes; ++l) {
            dual_steps::Parts t{};
            if constexpr (carries) {
              t = read(1 + d, l);
              step(homogeneous, l, k, t);
            }
            if constexpr (adds) {
              dual_steps::Parts x = read(0, l);
              step(coefficients[1 + d], l, k, x);
              t.fp_re += x.fp_re, t.fp_im += x.fp_im, t.fm_re += x.fm_re;
              t.fm_im += x.fm_im, t.z_re += x.z_re, t.z_im += x.z_im;
            }
            write(1 + d, l, t);
          }
        }
      };
      each_tangent(tangent, std::make_integer_sequence<int, tangents>{});
      LARMOR_INDEPENDENT_LANES
      for (int l = 0; l < lanes; ++l) {
        dual_steps::Parts x = read(0, l);
        step(coefficients[0], l, k, x);
        write(0, l, x);
      }
    }
  }

  template <class F, int... D>
  static KOKKOS_FORCEINLINE_FUNCTION void each_tangent(const F& f,
                                                       std::integer_sequence<int, D...>) {
    (f(std::integral_constant<int, D>{}), ...);
  }

  KOKKOS_INLINE_FUNCTION void rotate(int live, const LaneRotations<Real, lanes>& rotation) {
    using Expected = dual_steps::ExpectedDirections<tangents>;
    LaneRotations<float, lanes> part[parts];
    for (int p = 0; p < parts; ++p) {
      for (int l = 0; l < lanes; ++l) {
        part[p].c2[l] = part_of(rotation.c2[l], p);
        part[p].ca[l] = part_of(rotation.ca[l], p);
        part[p].u_re[l] = part_of(rotation.u_re[l], p);
        part[p].u_im[l] = part_of(rotation.u_im[l], p);
        part[p].v_re[l] = part_of(rotation.v_re[l], p);
        part[p].v_im[l] = part_of(rotation.v_im[l], p);
        part[p].h_re[l] = part_of(rotation.h_re[l], p);
        part[p].h_im[l] = part_of(rotation.h_im[l], p);
      }
    }
    const auto step = [](const LaneRotations<float, lanes>& r, int l, int,
                         dual_steps::Parts& x) LARMOR_INLINE_LAMBDA {
      epg::rotate(r.get(l), x.fp_re, x.fp_im, x.fm_re, x.fm_im, x.z_re, x.z_im);
    };
    constexpr unsigned expected_carried = dual_steps::expected_carried_v<tangents>;
    if ((rotation.directions & ~Expected::rotation) == 0 && (carried & ~expected_carried) == 0) {
      sweep<Expected::rotation, expected_carried>(live, part, part[0], step);
    } else {
      sweep<Expected::all, Expected::all>(live, part, part[0], step);
    }
    carried |= rotation.directions;
  }

  // One part of the lanes' free-evolution factors, lane-contiguous.
  struct LaneEvolution {
    float e1[lanes], e2[lanes], rot_re[lanes], rot_im[lanes], recovery[lanes];
    KOKKOS_FORCEINLINE_FUNCTION Evolution<float> get(int l) const {
      return {e1[l], e2[l], rot_re[l], rot_im[l], recovery[l]};
    }
  };

  KOKKOS_INLINE_FUNCTION void evolve(int live, const Evolution<Real> (&ev)[lanes], bool precess,
                                     bool spoil, unsigned directions = ~0u) {
    with_precession(precess, [&](auto precess_flag) {
      this->template evolve_orders<decltype(precess_flag)::value>(live, ev, spoil, directions);
    });
  }

  template <bool Precess>
  KOKKOS_FORCEINLINE_FUNCTION void evolve_orders(int live, const Evolution<Real> (&ev)[lanes],
                                                 bool spoil, unsigned directions) {
    using Expected = dual_steps::ExpectedDirections<tangents>;
    LaneEvolution part[parts], homogeneous;
    for (int p = 0; p < parts; ++p) {
      for (int l = 0; l < lanes; ++l) {
        part[p].e1[l] = part_of(ev[l].e1, p);
        part[p].e2[l] = spoil ? 0.0f : part_of(ev[l].e2, p);
        part[p].rot_re[l] = spoil ? 0.0f : part_of(ev[l].rot_re, p);
        part[p].rot_im[l] = spoil ? 0.0f : part_of(ev[l].rot_im, p);
        part[p].recovery[l] = part_of(ev[l].recovery, p);
      }
    }
    homogeneous = part[0];
    for (int l = 0; l < lanes; ++l) homogeneous.recovery[l] = 0.0f;
    const auto step =
        [](const LaneEvolution& e, int l, int order, dual_steps::Parts& x)
            LARMOR_INLINE_LAMBDA { dual_steps::EvolutionStep<Precess>{}(e.get(l), order, x); };
    constexpr unsigned expected_carried = dual_steps::expected_carried_v<tangents>;
    if ((directions & ~Expected::evolution) == 0 && (carried & ~expected_carried) == 0) {
      sweep<Expected::evolution, expected_carried>(live, part, homogeneous, step);
    } else {
      sweep<Expected::all, Expected::all>(live, part, homogeneous, step);
    }
    carried |= directions;
  }

  // A slice-selective pulse: dual-number products, one order and lane at a
  // time (as RingStateBlock::rotate_general, whatever its coefficients carry).
  KOKKOS_INLINE_FUNCTION void rotate_general(int live,
                                             const GeneralRotation<Real> (&rotation)[lanes]) {
    carried = ~0u;
    for_each_order(live, [&](int, int l, Real& a_re, Real& a_im, Real& b_re, Real& b_im, Real& c_re,
                             Real& c_im) {
      epg::rotate_general(rotation[l].r, rotation[l].c2_im, a_re, a_im, b_re, b_im, c_re, c_im);
    });
  }

  // Diffusion and flow (transport.hpp): the factors are floats, so every part
  // takes the same product.
  template <int Families, bool Complex>
  KOKKOS_INLINE_FUNCTION void transport(int live, LaneWalks<lanes> walk) {
    each_order(live, [&](int k, int ps, int ms) {
#pragma omp simd
      for (int l = 0; l < lanes; ++l) {
        LARMOR_UNROLL
        for (int p = 0; p < parts; ++p) {
          if constexpr ((Families & transport_families::plus) != 0)
            walk.template apply<Complex>(l, fp_re[ps][p][l], fp_im[ps][p][l]);
          if constexpr ((Families & transport_families::minus) != 0)
            walk.template apply<Complex>(l, fm_re[ms][p][l], fm_im[ms][p][l]);
          if constexpr ((Families & transport_families::z) != 0)
            walk.template apply<Complex>(l, z_re[k][p][l], z_im[k][p][l]);
        }
        walk.template advance_lane<Complex>(l);
      }
    });
  }

  KOKKOS_INLINE_FUNCTION void spoil() {
    for (int j = 0; j < ring; ++j) {
      for (int p = 0; p < parts; ++p) {
        for (int l = 0; l < lanes; ++l) {
          fp_re[j][p][l] = fp_im[j][p][l] = fm_re[j][p][l] = fm_im[j][p][l] = 0.0f;
        }
      }
    }
  }

  // As RingStateBlock::shift, on every part.
  template <class Member, class Exchange>
  KOKKOS_INLINE_FUNCTION void shift(const Member&, Exchange&) {
    const int old_minus_zero = this->advance();
    for (int p = 0; p < parts; ++p) {
      for (int l = 0; l < lanes; ++l) {
        fm_re[old_minus_zero][p][l] = 0.0f;
        fm_im[old_minus_zero][p][l] = 0.0f;
        fp_re[plus_base][p][l] = fm_re[minus_base][p][l];
        fp_im[plus_base][p][l] = -fm_im[minus_base][p][l];
      }
    }
  }
};

}  // namespace larmor::epg
