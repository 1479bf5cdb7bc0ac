// Turns a deck's tissue section into this rank's share of the voxels.
//
// Grid mode: the voxels are every combination of the listed values (the last
// property varies fastest), partitioned evenly over the ranks. Maps mode: the
// voxels are the masked voxels of the volume, in C order, partitioned evenly
// over the ranks; each rank reads the mask and keeps its own slice of every
// map (volumes up to ~1e8 voxels fit each rank's memory comfortably).
#pragma once

#include <cstdint>
#include <vector>

#include "app/deck.hpp"
#include "parallel/communicator.hpp"
#include "parallel/partition.hpp"
#include "tissue/tissue.hpp"

namespace larmor::app {

struct LocalVoxels {
  std::int64_t total = 0;                   // over all ranks
  parallel::Range range;                    // this rank's rows of the output
  std::vector<std::int64_t> voxel_index;    // per local voxel: linear index in the volume
                                            // (maps) or grid position (grid)
  std::vector<std::uint64_t> volume_shape;  // maps: the volume; grid: the value counts
  tissue::Tissue tissue;                    // this rank's voxels, SI units
};

// The voxels a grid deck asks for (every combination of its values), known
// before anything is allocated; -1 for maps (the file decides). Throws when
// the count is past what an int64 holds.
std::int64_t grid_voxel_count(const TissueSpec& spec, const std::string& deck_path);

LocalVoxels load_local_tissue(const TissueSpec& spec, const parallel::Communicator& comm,
                              const std::string& deck_path);

}  // namespace larmor::app
