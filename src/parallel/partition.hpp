// Splitting index ranges across MPI ranks, and turning voxel masks into the
// list of indices a rank works on.
#pragma once

#include <cstdint>
#include <vector>

namespace larmor::parallel {

// Half-open index range [begin, end).
struct Range {
  std::int64_t begin = 0;
  std::int64_t end = 0;

  std::int64_t size() const { return end - begin; }
};

// Contiguous block of [0, count) owned by `rank` out of `ranks`. Block sizes
// differ by at most one; the first count % ranks ranks get the extra element,
// so the blocks are in rank order and tile [0, count) exactly.
// Throws std::invalid_argument for count < 0, ranks < 1 or rank outside
// [0, ranks).
Range partition_evenly(std::int64_t count, int ranks, int rank);

// Linear (C order) indices of the non-zero entries of `mask`, ascending.
std::vector<std::int64_t> masked_indices(const std::vector<std::uint8_t>& mask);

}  // namespace larmor::parallel
