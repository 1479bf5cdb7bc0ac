// A voxel's Lorentzian spread of frequencies (T2', the reversible part of
// T2*), as the isochromat engine plays it: every isochromat of the voxel is
// repeated at a grid of frequency offsets, and the repeats are summed with
// the Lorentzian's weights.
#pragma once

#include <cstddef>
#include <vector>

namespace larmor::simulate {

struct FrequencySpread {
  // Offsets in units of the voxel's 1 / T2' (an offset x is x / (2 pi T2')
  // Hz) and their weights, which sum to 1. One offset of weight 1: no spread.
  std::vector<double> offsets{0.0};
  std::vector<double> weights{1.0};
  std::size_t size() const { return offsets.size(); }
};

// Offsets x_k = k h (|k| <= K) with weights proportional to h / (pi (1 +
// x_k^2)). By Poisson's summation the grid's sum of w_k exp(i x_k s) is the
// Lorentzian's exp(-|s|) plus images of it at s + 2 pi m / h (m != 0), less
// the tail beyond x_K: h puts the nearest image ln(4 / accuracy) beyond the
// longest dephasing `longest_dephasing` (a time over T2'), and K leaves out
// a tail of accuracy / 2, so that for |s| up to it the sum is exp(-|s|)
// within the accuracy.
FrequencySpread lorentzian_spread(double longest_dephasing, double accuracy);

// How many offsets lorentzian_spread gives (2 K + 1), without building them.
std::size_t lorentzian_spread_size(double longest_dephasing, double accuracy);

}  // namespace larmor::simulate
