// The rings of the host layouts (RingStateBlock, PartRingStateBlock and the
// on-axis AxisRingStateBlock): one thread holds every order of `Lanes` voxels,
// and a shift moves two offsets instead of the states.
//
// F+ and F- live in rings of a power-of-two number of slots (at least one more
// than the orders). F+_k sits in slot (plus_base + k) mod R and F-_k in slot
// (minus_base + k) mod R, so a shift is plus_base -= 1, minus_base += 1, the
// new F+_0 taken from conj(F-_0) and the slot that held the old F-_0 (now
// F-_{R-1}) cleared. Z does not move. Slots at orders K and above need no
// clearing: F- only reaches them from above (cleared on wrap), and F+ there
// only moves up until it wraps into F+_0, which a shift overwrites.
//
// The blocks derive from RingOffsets and start their state arrays on a cache
// line (`ring_row_alignment`), so that the offsets in front of them do not
// move the lanes' rows off the vector alignment.
#pragma once

#include "common/kokkos_compat.hpp"

namespace larmor::epg {

// The slots of a ring holding `orders` orders and one more.
constexpr int ring_slots(int orders) {
  int r = 1;
  while (r < orders + 1) r *= 2;
  return r;
}

// The alignment of a ring block's first state array.
inline constexpr int ring_row_alignment = 64;

template <int Orders>
struct RingOffsets {
  static constexpr int ring = ring_slots(Orders);
  static constexpr int mask = ring - 1;
  static constexpr int first_order = 0;  // one thread holds every order
  int plus_base = 0, minus_base = 0;

  KOKKOS_FORCEINLINE_FUNCTION void reset_offsets() { plus_base = minus_base = 0; }
  KOKKOS_FORCEINLINE_FUNCTION int plus_slot(int k) const { return (plus_base + k) & mask; }
  KOKKOS_FORCEINLINE_FUNCTION int minus_slot(int k) const { return (minus_base + k) & mask; }

  // f(order, plus slot, minus slot) for the orders below min(live, Orders).
  template <class F>
  KOKKOS_FORCEINLINE_FUNCTION void each_order(int live, const F& f) const {
    const int n = live < Orders ? live : Orders;
    for (int k = 0; k < n; ++k) f(k, plus_slot(k), minus_slot(k));
  }

  // A shift: F+ moves up and F- down. Returns the slot that held F-_0 (now
  // F-_{R-1}, which the caller clears); the caller then fills F+_0, now at
  // plus_base, from F-_0 at minus_base.
  KOKKOS_FORCEINLINE_FUNCTION int advance() {
    const int old_minus_zero = minus_base;
    plus_base = (plus_base - 1) & mask;
    minus_base = (minus_base + 1) & mask;
    return old_minus_zero;
  }
};

}  // namespace larmor::epg
