// The grouped reverse sweep's steps on a thread's block (adjoint_grouped.hpp)
// that need nothing of the kernel but the block: a pulse's and an interval's
// forward steps on the live orders, and a pulse's transpose with its flip and
// phase pairings. `LaneLoops`: a host thread holding every order of `L`
// voxels, whose steps are loops over its live orders vectorised over the
// lanes; otherwise StateBlock's own steps, unrolled over a device thread's
// register block.
#pragma once

#include "epg/impl/adjoint_block_moves.hpp"
#include "epg/impl/adjoint_impl.hpp"
#include "epg/impl/state_block.hpp"

namespace larmor::epg::adjoint_detail {

template <class Real, int OPT, int L, bool LaneLoops>
struct BlockSteps {
  using Block = StateBlock<Real, OPT, L>;
  using Moves = BlockMoves<Real, OPT, L, LaneLoops>;
  using Rotations = LaneRotations<Real, L>;

  static KOKKOS_FORCEINLINE_FUNCTION void clear(Block& b) {
    LARMOR_UNROLL
    for (int j = 0; j < OPT; ++j) {
      LARMOR_UNROLL
      for (int l = 0; l < L; ++l) {
        b.fp_re[j][l] = b.fp_im[j][l] = b.fm_re[j][l] = b.fm_im[j][l] = Real(0.0f);
        b.z_re[j][l] = b.z_im[j][l] = Real(0.0f);
      }
    }
  }

  static KOKKOS_FORCEINLINE_FUNCTION void rotate(Block& b, int live, const Rotations& r) {
    if constexpr (LaneLoops) {
      Moves::for_live(b.live_here(live), [&](int j, int l) LARMOR_INLINE_LAMBDA {
        epg::rotate(r.get(l), b.fp_re[j][l], b.fp_im[j][l], b.fm_re[j][l], b.fm_im[j][l],
                    b.z_re[j][l], b.z_im[j][l]);
      });
    } else {
      b.rotate(live, r);
    }
  }

  static KOKKOS_FORCEINLINE_FUNCTION void evolve(Block& b, int live, const Evolution<Real> (&ev)[L],
                                                 bool precess, bool spoil) {
    if constexpr (LaneLoops) {
      // Lane arrays (a per-lane struct read inside the loop keeps it scalar).
      Real rot_re[L], rot_im[L], e1[L], recovery[L];
      for (int l = 0; l < L; ++l) {
        rot_re[l] = spoil ? Real(0.0f) : ev[l].rot_re;
        rot_im[l] = spoil ? Real(0.0f) : ev[l].rot_im;
        e1[l] = ev[l].e1;
        recovery[l] = ev[l].recovery;
      }
      (void)precess;  // rot_im is zero where a lane does not precess
      // Dual numbers take Z_0's recovery after the loop: with it inside, GCC
      // leaves their loop scalar (floats vectorise either way, faster inside).
      constexpr bool recovery_after = TangentCount<Real>::value > 0;
      Moves::for_live(b.live_here(live), [&](int j, int l) LARMOR_INLINE_LAMBDA {
        const Real p_re = rot_re[l] * b.fp_re[j][l] - rot_im[l] * b.fp_im[j][l];
        const Real p_im = rot_re[l] * b.fp_im[j][l] + rot_im[l] * b.fp_re[j][l];
        const Real m_re = rot_re[l] * b.fm_re[j][l] + rot_im[l] * b.fm_im[j][l];
        const Real m_im = rot_re[l] * b.fm_im[j][l] - rot_im[l] * b.fm_re[j][l];
        b.fp_re[j][l] = p_re;
        b.fp_im[j][l] = p_im;
        b.fm_re[j][l] = m_re;
        b.fm_im[j][l] = m_im;
        if constexpr (recovery_after) {
          b.z_re[j][l] *= e1[l];
        } else {
          b.z_re[j][l] = e1[l] * b.z_re[j][l] + (j == 0 ? recovery[l] : Real(0.0f));
        }
        b.z_im[j][l] *= e1[l];
      });
      if constexpr (recovery_after) {
        if (b.live_here(live) > 0) {
          for (int l = 0; l < L; ++l) b.z_re[0][l] += recovery[l];
        }
      }
    } else {
      b.evolve(live, ev, precess, spoil);
    }
  }

  // reverse_rotation of adjoint_impl.hpp on a block: the adjoint back through
  // the pulse, and this thread's share of the flip (`da`) and phase (`dp`)
  // sums per lane, paired with the state before the pulse `s`.
  static KOKKOS_INLINE_FUNCTION void reverse_rotation(const Block& s, Block& lam,
                                                      const Rotations& rot, const PulseAxis& axis,
                                                      int here, Real (&da)[L], Real (&dp)[L]) {
    Rotations adj;
    LARMOR_UNROLL
    for (int l = 0; l < L; ++l) {
      adj.set(l, adjoint_rotation(rot.get(l)));
      da[l] = dp[l] = Real(0.0f);
    }
    Moves::for_live(here, [&](int j, int l) LARMOR_INLINE_LAMBDA {
      rotation_pairings(rot.get(l), adj.get(l), axis, s.fp_re[j][l], s.fp_im[j][l], s.fm_re[j][l],
                        s.fm_im[j][l], s.z_re[j][l], s.z_im[j][l], lam.fp_re[j][l], lam.fp_im[j][l],
                        lam.fm_re[j][l], lam.fm_im[j][l], lam.z_re[j][l], lam.z_im[j][l], da[l],
                        dp[l]);
    });
  }
  // The same given the state after the pulse, `after` (a host thread whose
  // pulse moves nothing before its pairings: the block it rotated).
  static KOKKOS_INLINE_FUNCTION void reverse_rotation_after(const Block& s, const Block& after,
                                                            Block& lam, const Rotations& rot,
                                                            const PulseAxis& axis, int here,
                                                            Real (&da)[L], Real (&dp)[L]) {
    Rotations adj;
    for (int l = 0; l < L; ++l) {
      adj.set(l, adjoint_rotation(rot.get(l)));
      da[l] = dp[l] = Real(0.0f);
    }
    const Real c(axis.cos_phase), sn(axis.sin_phase);
    Moves::for_live(here, [&](int j, int l) LARMOR_INLINE_LAMBDA {
      rotation_pairings_after(adj.get(l), c, sn, s.fp_re[j][l], s.fp_im[j][l], s.fm_re[j][l],
                              s.fm_im[j][l], after.fp_re[j][l], after.fp_im[j][l],
                              after.fm_re[j][l], after.fm_im[j][l], after.z_re[j][l],
                              after.z_im[j][l], lam.fp_re[j][l], lam.fp_im[j][l], lam.fm_re[j][l],
                              lam.fm_im[j][l], lam.z_re[j][l], lam.z_im[j][l], da[l], dp[l]);
    });
  }
};

}  // namespace larmor::epg::adjoint_detail
