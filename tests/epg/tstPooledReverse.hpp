// The pooled layouts' reverse sweep (vector-Jacobian and Hessian-vector
// products) on one backend: against their forward mode (the dot-product
// identity), against central differences of the Runge-Kutta pooled reference
// for every event's flip, phase and duration and for the tissue Hessian, and
// for independence of the checkpoint interval. The train's pulses carry a
// power integral and an RF offset, so the bound pool's saturation is
// differentiated along B1 and the flips; and the pooled layouts with a
// transmit array (forward against the reference, and derivatives). Included
// after tstTerms.hpp, tstPools.hpp and tstHessian.hpp by
// tests/backends/forward_<backend>.cpp.
#pragma once

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>

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

TEST(TEST_CATEGORY, pooled_vjp_and_jvp_satisfy_the_dot_product_identity) {
  const auto d = pooled_reverse::saturating_train(30);
  for (const auto& [second, bound] : {std::pair{true, false}, {false, true}, {true, true}}) {
    SCOPED_TRACE(pooled_reverse::layout_name(second, bound));
    expect_dot_product_identity(d, pools::pooled_tissue(6, 411, second, bound, true));
  }
}

TEST(TEST_CATEGORY, pooled_vjp_does_not_depend_on_the_checkpoint_interval) {
  expect_vjp_independent_of_the_interval(pooled_reverse::saturating_train(30),
                                         pools::pooled_tissue(3, 415, true, true, true));
}

// The reference integrates every interval by Runge-Kutta, so the differences
// take a short train; three pools run every step of the other two layouts.
TEST(TEST_CATEGORY, pooled_vjp_sequence_gradients_match_central_differences) {
  const auto d = pooled_reverse::saturating_train(12);
  const tissue::Tissue t = pools::pooled_tissue(2, 421, true, true, true);
  EXPECT_GT(
      expect_sequence_gradients_match_differences(d, t, 24, pooled_reverse::pooled_reference(t)),
      40);
}

TEST(TEST_CATEGORY, pooled_hvp_values_are_the_vjp) {
  expect_hvp_values_are_the_vjp(pooled_reverse::saturating_train(30),
                                pools::pooled_tissue(5, 431, true, true, true));
}

TEST(TEST_CATEGORY, pooled_tissue_hvp_matches_mixed_central_differences) {
  const auto d = pooled_reverse::saturating_train(30);
  const tissue::Tissue t = pools::pooled_tissue(2, 441, true, true, true);
  expect_tissue_hvp_matches_differences(d, t, 24, pooled_reverse::pooled_reference(t));
}

TEST(TEST_CATEGORY, pooled_sequence_hvp_matches_mixed_central_differences) {
  const auto d = pooled_reverse::saturating_train(12);
  const tissue::Tissue t = pools::pooled_tissue(2, 451, true, true, true);
  EXPECT_GT(expect_sequence_hvp_matches_differences(d, t, 24, pooled_reverse::pooled_reference(t)),
            40);
}

// A transmit array reaches every pool: the free pools' rotations and the
// bound pool's saturation (power times the field's gain squared), with the
// shim setting changing from pulse to pulse.
TEST(TEST_CATEGORY, pooled_layouts_with_a_transmit_array_match_reference) {
  const auto d = pooled_reverse::shimmed_train(30);
  for (const auto& [second, bound] : {std::pair{true, false}, {false, true}, {true, true}}) {
    SCOPED_TRACE(pooled_reverse::layout_name(second, bound));
    const auto t =
        pooled_reverse::with_transmit(pools::pooled_tissue(5, 481, second, bound, true), 482);
    pools::expect_pooled_matches_reference(d, t, 24);
  }
}

TEST(TEST_CATEGORY, pooled_derivatives_with_a_transmit_array) {
  const auto t = pooled_reverse::with_transmit(pools::pooled_tissue(4, 491, true, true, true), 492);
  expect_dot_product_identity(pooled_reverse::shimmed_train(30), t);
  const auto d = pooled_reverse::shimmed_train(12);
  const auto two =
      pooled_reverse::with_transmit(pools::pooled_tissue(2, 493, true, true, true), 494);
  EXPECT_GT(expect_sequence_gradients_match_differences(d, two, 24,
                                                        pooled_reverse::pooled_reference(two)),
            40);
}

}  // namespace larmor::test
