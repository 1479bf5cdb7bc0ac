// Each lane's coefficients of an event as the reverse sweeps take them (the
// grouped and on-axis sweeps: adjoint_grouped.hpp, axis_adjoint.hpp): up to
// three times per event (forward, replay, reverse). Device threads take them
// afresh (registers, no branches); a host thread keeps the last pulse's and
// the last two intervals' (trains repeat them: mese has one refocusing flip
// and two intervals), since their exponentials and sines are a tenth of its
// sweep uncached. `make()` takes them on a miss.
#pragma once

#include <cmath>

#include "common/kokkos_compat.hpp"
#include "epg/event_table.hpp"
#include "epg/impl/operators.hpp"

namespace larmor::epg::adjoint_detail {

// Each lane's evolution over an interval.
template <class Real, int L>
struct LaneEvolutions {
  Evolution<Real> lane[L];
};

// `pulse` gives a pulse's rotations, `interval` an interval's relaxations.
template <class Rotations, class Relaxations, bool Cached>
struct EventCoefficients {
  template <class Make>
  KOKKOS_FORCEINLINE_FUNCTION Rotations pulse(const EventRecord&, Make&& make) {
    return make();
  }
  template <class Make>
  KOKKOS_FORCEINLINE_FUNCTION Relaxations interval(const EventRecord&, Make&& make) {
    return make();
  }
};

// A pulse's coefficients follow from its flip, phase and whether it scales
// with B1 (the run's tissue is the thread's); an interval's from its duration.
template <class Rotations, class Relaxations>
struct EventCoefficients<Rotations, Relaxations, true> {
  float flip = NAN, cos_phase = NAN, sin_phase = NAN;
  bool scaled = true;
  Rotations rotation;
  float duration[2] = {NAN, NAN};
  Relaxations relaxation[2];
  int replace = 0;  // the slot a new interval takes (not the one used last)

  // Host and device functions only because the sweeps' are (host threads
  // alone take this cache).
  template <class Make>
  KOKKOS_INLINE_FUNCTION const Rotations& pulse(const EventRecord& rec, Make&& make) {
    if (rec.flip != flip || rec.cos_phase != cos_phase || rec.sin_phase != sin_phase ||
        follows_b1(rec) != scaled) {
      rotation = make();
      scaled = follows_b1(rec);
      flip = rec.flip;
      cos_phase = rec.cos_phase;
      sin_phase = rec.sin_phase;
    }
    return rotation;
  }
  template <class Make>
  KOKKOS_INLINE_FUNCTION const Relaxations& interval(const EventRecord& rec, Make&& make) {
    for (int i = 0; i < 2; ++i) {
      if (rec.duration == duration[i]) {
        replace = 1 - i;
        return relaxation[i];
      }
    }
    const int i = replace;
    relaxation[i] = make();
    duration[i] = rec.duration;
    replace = 1 - i;
    return relaxation[i];
  }
};

}  // namespace larmor::epg::adjoint_detail
