// A voxel filled with spins: the reference for samples weighted over the
// voxel (sequence::VoxelIntegral). Spins sit on a grid of cell midpoints over
// the voxel's box; each shift turns the spin at x about z by 2 pi u.x, and a
// sample is the spins' mean of M+ exp(i 2 pi r.x), r its residual moment. No
// EPG orders and no sinc: the mean is a quadrature, exact as the grid is
// refined. With slice profiles the grid runs over the profiles' extent along
// the slice axis, and every spin takes the pulses of the slice position whose
// slab holds it (the kernels' model of a slab per position).
#pragma once

#include <array>
#include <vector>

#include "reference/epg_reference.hpp"
#include "sequence/description.hpp"

namespace larmor::reference {

// `grid`: spins per edge (along the slice axis with slice profiles, a
// multiple of the positions). Every sample of `d` must have voxel weights.
// `mean_mz`, where given, receives the spins' mean Mz at each sample (times
// M0, slabs by their widths).
std::vector<Complex> simulate_voxel_spins(const larmor::sequence::Description& d,
                                          const Tissue& tissue, const std::array<int, 3>& grid,
                                          std::vector<double>* mean_mz = nullptr);

}  // namespace larmor::reference
