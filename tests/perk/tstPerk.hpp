// The PERK kernels on one backend against a plain double-precision
// implementation written here (x = b + W cos(F q + phi), and its adjoint -sum_h
// (sum_l g_l W_lh) sin(F_h q + phi_h) F_hq), at sizes that cross every tile
// edge (voxels past a team's block, inputs not a multiple of 4, features past a
// staged block, outputs at each compiled bound); the largest error relative to
// the answer's scale must stay below 2e-6.
#pragma once

#include <gtest/gtest.h>

#include "perk/perk_support.hpp"

namespace larmor::test {

TEST(TEST_CATEGORY, perk_kernels_match_double_precision_across_tile_edges) {
  const int sizes[][4] = {
      {300, 37, 45, 17}, {1, 24, 256, 2},  {513, 64, 70, 8}, {1000, 5, 1000, 3},
      {33, 1, 7, 1},     {2, 24, 256, 32}, {70, 100, 90, 5}};  // inputs beyond the register
                                                               // variants
  unsigned seed = 11;
  for (const auto& s : sizes) {
    const PerkCase c = make_perk_case(s[0], s[1], s[2], s[3], seed++);
    for (bool deterministic : {true, false}) {
      const auto [x_err, g_err] = perk_errors(c, deterministic);
      EXPECT_LT(x_err, 2e-6) << s[0] << "x" << s[1] << "x" << s[2] << "x" << s[3]
                             << (deterministic ? " deterministic" : " split");
      EXPECT_LT(g_err, 2e-6) << s[0] << "x" << s[1] << "x" << s[2] << "x" << s[3]
                             << (deterministic ? " deterministic" : " split");
    }
  }
}

TEST(TEST_CATEGORY, perk_kernels_refuse_sizes_past_their_limits) {
  const PerkCase c = make_perk_case(4, 3, 5, 33, 3);
  try {
    perk_errors(c, true);
    FAIL() << "33 outputs were accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("larmor::perk::apply: 33 outputs"), std::string::npos)
        << e.what();
  }
}

}  // namespace larmor::test
