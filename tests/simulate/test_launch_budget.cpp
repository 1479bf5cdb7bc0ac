// The one rule that sizes every launch (simulate/impl/memory_budget.hpp), against
// the numbers it must give by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "simulate/impl/memory_budget.hpp"

namespace {

using larmor::simulate::voxels_per_launch;

TEST(LaunchBudget, holds_as_many_voxels_as_the_budget) {
  // 1000 bytes at 10 bytes per voxel: 100 voxels; at four slice positions a
  // tissue voxel is four kernel voxels: 25.
  EXPECT_EQ(voxels_per_launch(1000.0, 10.0, 500, 1, 0, false), 100);
  EXPECT_EQ(voxels_per_launch(1000.0, 10.0, 500, 4, 0, false), 25);
  // Never more than the run, never fewer than one.
  EXPECT_EQ(voxels_per_launch(1000.0, 10.0, 30, 1, 0, false), 30);
  EXPECT_EQ(voxels_per_launch(1000.0, 1e6, 30, 1, 0, false), 1);
}

TEST(LaunchBudget, a_requested_size_caps_it) {
  EXPECT_EQ(voxels_per_launch(1000.0, 10.0, 500, 1, 7, false), 7);
  EXPECT_EQ(voxels_per_launch(1000.0, 10.0, 500, 1, 700, false), 100);
}

TEST(LaunchBudget, progress_splits_large_runs_into_sixteen_launches) {
  const std::int64_t voxels = 16 * 32768 * 2 + 5;  // large enough to split
  EXPECT_EQ(voxels_per_launch(1e15, 8.0, voxels, 1, 0, true), (voxels + 15) / 16);
  EXPECT_EQ(voxels_per_launch(1e15, 8.0, voxels, 1, 0, false), voxels);
  // Below 16 launches of 32768 voxels a run stays whole.
  EXPECT_EQ(voxels_per_launch(1e15, 8.0, 16 * 32768 - 1, 1, 0, true), 16 * 32768 - 1);
}

TEST(LaunchBudget, kernel_voxels_stay_within_a_32_bit_index) {
  const std::int64_t voxels = std::int64_t(1) << 33;
  EXPECT_EQ(voxels_per_launch(1e30, 1.0, voxels, 1, 0, false),
            std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ(voxels_per_launch(1e30, 1.0, voxels, 3, 0, false),
            std::numeric_limits<std::int32_t>::max() / 3);
}

}  // namespace
