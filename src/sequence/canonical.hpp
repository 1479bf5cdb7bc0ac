// The instant form of a description: its pulses and ADCs ("instants"), each
// followed by a gap (free evolution, a number of one-order shifts, and
// whether transverse states are spoiled somewhere in it).
//
// Without diffusion, shifts commute with relaxation and precession, and a
// shift of spoiled (zero) transverse states does nothing, so where inside a
// gap its shifts and spoiling sit does not change any signal. Two
// descriptions with the same instant form simulate identically; the
// canonical form is the one description of each instant form that the
// Pulseq translation produces, so that builders, files written from them and
// files read back compare event for event (tests/io/test_pulseq_events).
#pragma once

#include <vector>

#include "sequence/description.hpp"

namespace larmor::sequence {

struct Gap {
  double duration_s = 0.0;
  int shifts = 0;
  bool spoil = false;
};

struct Instant {
  Event event;  // a pulse or an adc; its action keeps only echo_centre
  Gap after;
};

struct InstantForm {
  Gap leading;  // before the first instant
  std::vector<Instant> instants;
};

InstantForm instant_form(const Description& d);

// The canonical description of an instant form:
//  - a leading wait when the leading gap is not empty;
//  - a pulse with shifts in the gaps on both sides takes one as crush_before
//    (the crusher pair a refocusing pulse sits between);
//  - the other shifts of a gap go to the instant that opens it: crush_after
//    on a pulse, shift_after on an adc; any left over become
//    zero-length waits with crush_after just before the next instant;
//  - spoiling becomes spoil_after on the instant that opens the gap.
Description assemble(const InstantForm& form, const std::string& name);

Description canonical_form(const Description& d);

}  // namespace larmor::sequence
