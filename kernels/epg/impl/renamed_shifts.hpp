// Shifts by renaming registers: the train kernel's common step (one shift,
// then a pulse, then a sample) on a device's StateBlock.
//
// StateBlock::shift moves every F+ row of a thread up one register and every
// F- row down one, so a loop of steps pays a register move per row and shift.
// Renamed, only the two rows that leave the thread change: the F+ row of the
// block's last order sends its value up and takes the incoming one as the
// block's new order 0, and the F- row of order 0 sends its value down and takes
// the incoming one as the new last order. After P such shifts the F+ state of
// the block's slot s lives in row fp_row<Opt, P>(s) and the F- state in
// fm_row<Opt, P>(s); Z never moves. Every index is a compile-time constant
// once a batch of Opt steps is unrolled with P = 0, 1, ..., Opt - 1, and Opt
// shifts bring the rows home, so the general loop resumes where it left off.
#pragma once

#include "epg/impl/state_block.hpp"

namespace larmor::epg::renamed {

template <int Opt, int P>
KOKKOS_FORCEINLINE_FUNCTION constexpr int fp_row(int slot) {
  return ((slot - P) % Opt + Opt) % Opt;
}
template <int Opt, int P>
KOKKOS_FORCEINLINE_FUNCTION constexpr int fm_row(int slot) {
  return (slot + P) % Opt;
}

// StateBlock::shift on a block renamed by P shifts; afterwards it is renamed
// by P + 1.
template <int P, class Block, class Member, class Exchange>
KOKKOS_FORCEINLINE_FUNCTION void shift(Block& b, const Member& team, Exchange& x) {
  using Real = typename Block::real_type;
  constexpr int opt = Block::opt, lanes = Block::lanes;
  constexpr int top = fp_row<opt, P>(opt - 1);    // then the new slot 0
  constexpr int bottom = fm_row<opt, P>(0);       // then the new slot opt - 1
  constexpr int new_fm0 = fm_row<opt, P + 1>(0);  // F- of slot 0 after the shift
  const int thread = b.thread_in_group;
  Real up[2][lanes], down[2][lanes];  // re, im
  LARMOR_UNROLL
  for (int l = 0; l < lanes; ++l) {
    up[0][l] = b.fp_re[top][l];
    up[1][l] = b.fp_im[top][l];
    down[0][l] = b.fm_re[bottom][l];
    down[1][l] = b.fm_im[bottom][l];
  }
  x.trade(team, thread, up, down);
  const bool has_next = thread + 1 < x.threads;
  LARMOR_UNROLL
  for (int l = 0; l < lanes; ++l) {
    b.fm_re[bottom][l] = has_next ? down[0][l] : Real(0.0f);
    b.fm_im[bottom][l] = has_next ? down[1][l] : Real(0.0f);
    if (thread > 0) {
      b.fp_re[top][l] = up[0][l];
      b.fp_im[top][l] = up[1][l];
    } else {
      b.fp_re[top][l] = b.fm_re[new_fm0][l];
      b.fp_im[top][l] = -b.fm_im[new_fm0][l];
    }
  }
}

// StateBlock::rotate_pending on a block renamed by P shifts. `AllLive`: every
// slot of the group is below the live count, so no slot is checked.
template <int P, bool AllLive, bool Precess, class Block, class Pending>
KOKKOS_FORCEINLINE_FUNCTION void rotate_pending(Block& b, int live, const Pending& r) {
  constexpr int opt = Block::opt, lanes = Block::lanes;
  const int here = AllLive ? opt : b.live_here(live);
  LARMOR_UNROLL
  for (int s = 0; s < opt; ++s) {
    if (AllLive || s < here) {
      const int p = fp_row<opt, P>(s), m = fm_row<opt, P>(s);
      LARMOR_UNROLL
      for (int l = 0; l < lanes; ++l) {
        r.template apply<Precess>(l, b.fp_re[p][l], b.fp_im[p][l], b.fm_re[m][l], b.fm_im[m][l],
                                  b.z_re[s][l], b.z_im[s][l]);
      }
    }
  }
  constexpr int p0 = fp_row<opt, P>(0), m0 = fm_row<opt, P>(0);
  const float weight = b.first_order == 0 ? 1.0f : 0.0f;
  LARMOR_UNROLL
  for (int l = 0; l < lanes; ++l) {
    r.recover(l, weight, b.fp_re[p0][l], b.fp_im[p0][l], b.fm_re[m0][l], b.fm_im[m0][l],
              b.z_re[0][l]);
  }
}

}  // namespace larmor::epg::renamed
