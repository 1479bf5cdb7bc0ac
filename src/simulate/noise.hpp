// Complex Gaussian noise that does not depend on how voxels are split: each
// value comes from a counter-based generator keyed by (seed, voxel, sample,
// channel), so a rank adding noise to its slice of voxels gives the values
// one rank would give the whole (larmor phantom, PERK training under MPI).
#pragma once

#include <cstdint>
#include <vector>

namespace larmor::simulate {

// Adds noise of `sigma` per channel to signals [voxel][samples][2] of voxels
// first_voxel, first_voxel + 1, ... (sigma <= 0: nothing).
void add_complex_noise(std::vector<float>& signals, int samples, std::int64_t first_voxel,
                       double sigma, std::uint64_t seed);

}  // namespace larmor::simulate
