// A sample's mean over its voxel (Description::voxel, docs/physics.md "The
// voxel's own signal"): the weights of the EPG orders, ahead of time on the
// host. A weighted sample records sum_k w_k F_k over signed orders k in
// [-(K-1), K-1] (F_k = F+_k, F_-k = conj(F-_k)); kernels read the table
// (kernels/epg/tissue_views.hpp, SampleWeightViews).
#pragma once

#include <array>
#include <complex>
#include <vector>

#include "sequence/description.hpp"
#include "sequence/slice_profile.hpp"

namespace larmor::sequence {

// The mean of exp(i 2 pi m.x) over the voxel's box, or over the slab of one
// slice position (`position` and `width` in slice thicknesses along the
// voxel's slice axis; width <= 0: the whole box).
std::complex<double> voxel_transform(const VoxelIntegral& voxel, const std::array<double, 3>& m,
                                     double position = 0.0, double width = 0.0);

// Refuses a voxel that cannot weigh samples (edges, moments and residuals
// finite, edges positive, a slice axis 0..2), naming the sequence.
void validate_voxel_integral(const Description& d);

struct VoxelWeightTable {
  int tables = 0;     // 0: no weighted sample
  int positions = 1;  // slice positions (the slice profiles'), else 1
  int orders = 0;     // K
  // [table][position][k + K - 1][re, im]
  std::vector<float> weights;
};

// The weights of every weighted sample of `d` for runs of `orders` orders, at
// the positions of `slices` (none: one). Empty where no sample is weighted.
VoxelWeightTable build_voxel_weight_table(const Description& d, int orders,
                                          const SliceProfileTable& slices);

}  // namespace larmor::sequence
