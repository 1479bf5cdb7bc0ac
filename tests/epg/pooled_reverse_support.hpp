// Helpers of the PooledReverse tests (tstPooledReverse.hpp): references, runs on the backend
// TEST_EXECSPACE names, and the checks the tests share.
#pragma once

#include <gtest/gtest.h>
#include <random>
#include <string>
#include <utility>

#include "epg/derivatives_support.hpp"
#include "epg/pools_support.hpp"
#include "epg/terms_support.hpp"
#include "reference/pooled_reference.hpp"

namespace larmor::test {

namespace pooled_reverse {

// Every pulse a 1 ms hard pulse 1.5 kHz off the bound pool's resonance:
// power integral flip^2 / 1 ms.
inline sequence::Description saturate(sequence::Description d) {
  for (auto& e : d.events) {
    if (e.kind != abi::EventKind::pulse) continue;
    e.saturation = float(e.flip_rad * e.flip_rad / 1e-3);
    e.rf_frequency_hz = 1500.0;
  }
  return d;
}

// A train like vjp_test_train (random flips, phases on every third pulse,
// random TE and TR) of `repetitions` saturating pulses.
inline sequence::Description saturating_train(int repetitions) {
  sequence::MrfParams mrf;
  std::mt19937 rng(401);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int n = 0; n < repetitions; ++n) {
    mrf.schedule.push_back(
        {0.1 + 0.9 * u(rng), n % 3 ? 0.0 : 90.0 * u(rng), 2e-3 * u(rng), 1e-3 * u(rng)});
  }
  return saturate(sequence::build_mrf(mrf));
}

// The declared-terms train's three shim settings cycling pulse by pulse
// (dynamic shimming), without its crusher, saturating.
inline sequence::Description shimmed_train(int repetitions) {
  auto d = terms::declared_train(repetitions, 471);
  d.crusher = {};
  return saturate(d);
}

// A three-channel transmit array with random fields per voxel.
inline tissue::Tissue with_transmit(tissue::Tissue t, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  t.transmit_channels = 3;
  for (int v = 0; v < 3 * t.voxels; ++v) {
    t.transmit.push_back(std::polar(float(0.5 + 0.5 * u(rng)), float(6.0 * u(rng))));
  }
  return t;
}

// The pooled reference with the voxel's free-pool values replaced.
inline VoxelReference pooled_reference(const tissue::Tissue& t) {
  return [t](const sequence::Description& d, const reference::Tissue& free, std::int64_t v,
             int orders) {
    auto x = pools::pooled_voxel(t, v);
    x.free = free;
    return reference::simulate_pooled(d, x, orders);
  };
}

inline std::string layout_name(bool second, bool bound) {
  return second && bound ? "three pools" : (second ? "two free pools" : "free and bound pools");
}

}  // namespace pooled_reverse

}  // namespace larmor::test
