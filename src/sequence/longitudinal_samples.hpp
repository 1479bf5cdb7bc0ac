// Longitudinal samples: the voxel's mean Mz at every sample, recorded through
// the same kernels as the transverse signal. At each sample the description
// gains, in no time, a 90 degree turn about x that B1 does not scale, a
// sample, and the turn back. The turn takes (Mx, My, Mz) to (Mx, -Mz, My) at
// every point of the voxel, so the turned sample is mean(Mx) - i mean(Mz):
// minus its imaginary part is the mean Mz (in units of M0). Rotations are
// orthogonal, so the turn back restores the state (to float round-off) and
// the transverse samples are unchanged. Every mode, pool model and slice
// profile takes it as it takes any pulse and sample.
#pragma once

#include <vector>

#include "sequence/description.hpp"

namespace larmor::sequence {

struct LongitudinalSamples {
  // Sample numbers in the extended description: the original samples in
  // order, and each one's longitudinal sample.
  std::vector<int> transverse, longitudinal;
};

// Extends `d` in place (its samples keep their order among themselves).
LongitudinalSamples add_longitudinal_samples(Description& d);

}  // namespace larmor::sequence
