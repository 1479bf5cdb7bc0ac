// The pooled layouts' reverse sweep (vector-Jacobian and Hessian-vector
// products) on one backend: against their forward mode (the dot-product
// identity), against central differences of the Runge-Kutta pooled reference
// for every event's flip, phase and duration and for the tissue Hessian, and
// for independence of the checkpoint interval. The train's pulses carry a power
// integral and an RF offset, so the bound pool's saturation is differentiated
// along B1 and the flips; and the pooled layouts with a transmit array (forward
// against the reference, and derivatives).
#pragma once

#include <gtest/gtest.h>

#include "epg/derivatives_support.hpp"
#include "epg/hessian_support.hpp"
#include "epg/pooled_reverse_support.hpp"
#include "epg/pools_support.hpp"

namespace larmor::test {

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
