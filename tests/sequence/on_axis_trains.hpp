// Random trains whose pulses all lie on one axis modulo a half turn, for the
// real-subspace tests (tests/sequence/test_real_subspace.cpp on the rewrite,
// tests/epg/tstRealPath.hpp on the kernels).
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

#include "sequence/description.hpp"

namespace larmor::test {

// `events` events with random kinds, flips, half turns, actions (every shift
// bit and the spoiler, on pulses too), intervals and receiver phases.
inline sequence::Description on_axis_train(unsigned seed, double axis_rad, int events) {
  using sequence::EventKind;
  namespace action = abi::action;
  constexpr double pi = 3.14159265358979323846;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  sequence::Description d;
  d.name = "on-axis";
  for (int i = 0; i < events; ++i) {
    sequence::Event e;
    const double r = u(rng);
    e.kind = r < 0.4 ? EventKind::pulse : (r < 0.75 ? EventKind::adc : EventKind::wait);
    if (e.kind == EventKind::pulse) {
      e.flip_rad = pi * u(rng);
      e.phase_rad = axis_rad + pi * std::floor(5 * u(rng) - 2);  // -2 .. 2 half turns
    } else if (e.kind == EventKind::adc) {
      e.phase_rad = 2 * pi * u(rng);
    }
    // Crushers belong to pulses (the packer refuses them elsewhere).
    const double bits = u(rng);
    const std::uint32_t crushers = e.kind == EventKind::pulse
                                       ? action::crush_before | action::crush_after
                                       : action::shift_after;
    e.action = bits < 0.2
                   ? crushers
                   : (bits < 0.55 ? action::shift_after : (bits < 0.6 ? action::spoil_after : 0u));
    // Some events without an interval (a spoiler then acts alone).
    e.duration_s = u(rng) < 0.15 ? 0.0 : 5e-3 * u(rng);
    d.events.push_back(e);
  }
  return d;
}

}  // namespace larmor::test
