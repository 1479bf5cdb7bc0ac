// Samples weighted over the voxel (sequence::VoxelIntegral) on one backend:
// crushers of a fraction of a turn, residual moments and an off-centre box.
// The kernels against the double-precision EPG reference's voxel mean, which
// against spins filling the voxel (tests/reference/voxel_reference.hpp, no
// orders, no sinc); forward mode, reverse mode and forward over reverse
// against central differences of the reference; pooled models; slice
// profiles, each position with its own weights.
#pragma once

#include <gtest/gtest.h>

#include "epg/derivatives_support.hpp"
#include "epg/forward_support.hpp"
#include "epg/hessian_support.hpp"
#include "epg/pooled_reverse_support.hpp"
#include "epg/pools_support.hpp"
#include "epg/voxel_integral_support.hpp"
#include "reference/voxel_reference.hpp"
#include "sequence/longitudinal_samples.hpp"

namespace larmor::test {

TEST(TEST_CATEGORY, weighted_samples_are_the_voxel_mean_of_every_order) {
  for (const auto& d :
       {voxel_integral::partial_crusher_gre(14), voxel_integral::partial_crusher_cpmg(7)}) {
    SCOPED_TRACE(d.name);
    const tissue::Tissue t = random_tissue(37, 811);
    const int orders = d.declared_winding() + 1;  // none truncated
    for_each_device_layout([&] { expect_matches_reference(d, t, orders); });
    // The spins filling the voxel give the same mean (the reference's own
    // check, at the grid's quadrature error).
    const auto spins = reference::simulate_voxel_spins(d, voxel_of(t, 0), {4, 16, 400});
    const auto epg = reference::simulate(d, voxel_of(t, 0), orders);
    for (std::size_t n = 0; n < spins.size(); ++n) {
      EXPECT_LT(std::abs(spins[n] - epg[n]), 2e-4) << "sample " << n;
    }
    // Weighing matters far beyond the tolerance: F+_0 alone is another signal.
    sequence::Description unweighted = d;
    for (auto& e : unweighted.events) e.voxel_weights = 0;
    unweighted.voxel = {};
    const auto weighted = run_on_backend(d, t, orders),
               plain = run_on_backend(unweighted, t, orders);
    double change = 0.0;
    for (std::size_t i = 0; i < plain.size(); ++i) {
      change = std::max(change, double(std::abs(weighted[i] - plain[i])));
    }
    EXPECT_GT(change, 0.02);
  }
}

// The automatic order count keeps every order a weighted sample reads.
TEST(TEST_CATEGORY, weighted_samples_keep_every_order_they_read) {
  const auto d = voxel_integral::partial_crusher_gre(20);
  const tissue::Tissue t = random_tissue(3, 815);
  expect_matches(d, t, 0, [&](std::int64_t v, int) {
    return reference::simulate(d, voxel_of(t, v), d.declared_winding() + 1);
  });
}

TEST(TEST_CATEGORY, weighted_samples_in_forward_mode_match_central_differences) {
  expect_tissue_jvp_matches_differences(voxel_integral::partial_crusher_cpmg(5),
                                        random_tissue(3, 821), 11);
  expect_tissue_jvp_matches_differences(voxel_integral::partial_crusher_gre(8),
                                        random_tissue(3, 822), 9);
}

TEST(TEST_CATEGORY, weighted_samples_in_reverse_mode_match_central_differences) {
  const auto d = voxel_integral::partial_crusher_cpmg(5);
  const tissue::Tissue t = random_tissue(3, 831);
  expect_dot_product_identity(d, t);
  expect_vjp_independent_of_the_interval(d, t);
  EXPECT_GT(expect_sequence_gradients_match_differences(d, t, 11), 20);
  expect_tissue_hvp_matches_differences(voxel_integral::partial_crusher_gre(8),
                                        random_tissue(2, 832), 9);
}

TEST(TEST_CATEGORY, weighted_samples_of_pooled_models_sum_every_pools_voxel_mean) {
  const auto d = voxel_integral::partial_crusher_cpmg(6);
  for (const auto& [second, bound] : {std::pair{true, false}, {false, true}}) {
    SCOPED_TRACE(pooled_reverse::layout_name(second, bound));
    const tissue::Tissue t = pools::pooled_tissue(4, 841, second, bound, true);
    pools::expect_pooled_matches_reference(d, t, 13);
    expect_dot_product_identity(d, t);
  }
  const tissue::Tissue t = pools::pooled_tissue(2, 842, true, true, true);
  EXPECT_GT(expect_sequence_gradients_match_differences(voxel_integral::partial_crusher_cpmg(4), t,
                                                        9, pooled_reverse::pooled_reference(t)),
            10);
}

// With slice profiles each position weighs its own slab of the voxel.
TEST(TEST_CATEGORY, weighted_samples_with_slice_profiles_weigh_each_position_slab) {
  auto d = voxel_integral::partial_crusher_cpmg(4);
  sequence::SliceProfileSpec excitation, refocusing;
  excitation.name = "excitation";
  refocusing.name = "refocusing";
  excitation.positions = refocusing.positions = 6;
  refocusing.rephase = 0.0;
  d.slice_profiles = {excitation, refocusing};
  bool first = true;
  for (auto& e : d.events) {
    if (e.kind != sequence::EventKind::pulse) continue;
    e.slice_profile = first ? 1 : 2;
    first = false;
  }
  const tissue::Tissue t = random_tissue(5, 851, false);
  const auto got = run_on_backend(d, t, 0);
  const int samples = d.sample_count();
  for (std::int64_t v = 0; v < t.voxels; ++v) {
    const auto want = reference::simulate_voxel_spins(d, voxel_of(t, v), {4, 64, 600});
    for (int n = 0; n < samples; ++n) {
      EXPECT_LT(std::abs(sample(got, samples, v, n) - want[std::size_t(n)]), 3e-4)
          << "voxel " << v << ", sample " << n;
    }
  }
  // Forward and reverse mode agree through the positions' sum.
  expect_dot_product_identity(d, t);
}

// Longitudinal samples (sequence/longitudinal_samples.hpp) on the backend:
// the transverse samples of the extended description are the plain run's,
// and minus each turned sample's imaginary part is the mean Mz of spins
// filling the voxel; also for a pooled model, against its reference.
TEST(TEST_CATEGORY, longitudinal_samples_are_the_mean_mz_of_the_voxel) {
  const auto d = voxel_integral::partial_crusher_gre(12);
  auto extended = d;
  const auto columns = sequence::add_longitudinal_samples(extended);
  const tissue::Tissue t = random_tissue(6, 861);
  const auto plain = run_on_backend(d, t, 0);
  const auto got = run_on_backend(extended, t, 0);
  const int samples = d.sample_count(), all = extended.sample_count();
  const double tol = float_tolerance(std::int64_t(extended.events.size()));
  for (std::int64_t v = 0; v < t.voxels; ++v) {
    std::vector<double> mz;
    reference::simulate_voxel_spins(d, voxel_of(t, v), {4, 16, 400}, &mz);
    for (int n = 0; n < samples; ++n) {
      const Complex transverse = sample(got, all, v, columns.transverse[std::size_t(n)]);
      EXPECT_LT(std::abs(transverse - sample(plain, samples, v, n)), tol) << v << ", " << n;
      const double longitudinal = -sample(got, all, v, columns.longitudinal[std::size_t(n)]).imag();
      EXPECT_NEAR(longitudinal, mz[std::size_t(n)], 2e-4) << "voxel " << v << ", sample " << n;
    }
  }
  const tissue::Tissue pooled = pools::pooled_tissue(3, 862, true, true, true);
  pools::expect_pooled_matches_reference(extended, pooled, 0);
}

}  // namespace larmor::test
