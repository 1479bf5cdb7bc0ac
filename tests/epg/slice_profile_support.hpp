// Helpers of the SliceProfile tests (tstSliceProfile.hpp): references, runs on the backend
// TEST_EXECSPACE names, and the checks the tests share.
#pragma once

#include <gtest/gtest.h>
#include <complex>
#include <random>
#include <stdexcept>
#include <string>

#include "epg/derivatives_support.hpp"
#include "reference/slice_reference.hpp"

namespace larmor::test {

namespace slice_profile {

// Excitation (rephased) and three echoes of a thicker refocusing pulse, with
// crushers around it or without (then the unrefocused share of each pulse,
// which crushers dephase, reaches the samples); every pulse at its own phase.
inline sequence::Description spin_echo_train(int positions, bool crushers = true) {
  sequence::Description d;
  d.name = "slice-selective spin echo";
  sequence::SliceProfileSpec excitation, refocusing;
  excitation.name = "excitation";
  excitation.positions = positions;
  refocusing.name = "refocusing";
  refocusing.positions = positions;
  refocusing.thickness = 1.5;
  refocusing.rephase = 0.0;
  refocusing.time_bandwidth = 3.0;
  d.slice_profiles = {excitation, refocusing};
  const double esp = 0.012;
  sequence::Event e;
  e.kind = sequence::EventKind::pulse;
  e.flip_rad = 1.5707963267948966;
  e.phase_rad = 1.5707963267948966;
  e.slice_profile = 1;
  e.duration_s = esp / 2;
  d.events.push_back(e);
  for (int echo = 0; echo < 3; ++echo) {
    sequence::Event r;
    r.kind = sequence::EventKind::pulse;
    r.flip_rad = 2.6;
    r.phase_rad = 0.3 * echo;
    r.slice_profile = 2;
    r.action = crushers ? sequence::action::crush_before | sequence::action::crush_after : 0u;
    r.duration_s = esp / 2;
    d.events.push_back(r);
    sequence::Event adc;
    adc.kind = sequence::EventKind::adc;
    adc.action = sequence::action::echo_centre;
    adc.duration_s = esp / 2;
    d.events.push_back(adc);
  }
  return d;
}

}  // namespace slice_profile

// The isochromat run across the slice as the derivative helpers' reference
// (tstDerivatives.hpp, tstHessian.hpp).
inline VoxelReference across_slice_reference() {
  return [](const sequence::Description& d, const reference::Tissue& x, std::int64_t, int) {
    return reference::simulate_across_slice(d, x, 64);
  };
}

}  // namespace larmor::test
