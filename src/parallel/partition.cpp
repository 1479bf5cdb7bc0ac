#include "parallel/partition.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace larmor::parallel {

Range partition_evenly(std::int64_t count, int ranks, int rank) {
  if (count < 0) {
    throw std::invalid_argument("partition_evenly: count must be >= 0, got " +
                                std::to_string(count));
  }
  if (ranks < 1) {
    throw std::invalid_argument("partition_evenly: ranks must be >= 1, got " +
                                std::to_string(ranks));
  }
  if (rank < 0 || rank >= ranks) {
    throw std::invalid_argument("partition_evenly: rank " + std::to_string(rank) + " outside [0, " +
                                std::to_string(ranks) + ")");
  }
  const std::int64_t base_size = count / ranks;
  const std::int64_t ranks_with_extra = count % ranks;
  // Every rank before this one contributes base_size, plus one if it got an extra.
  const std::int64_t begin = rank * base_size + std::min<std::int64_t>(rank, ranks_with_extra);
  const std::int64_t size = base_size + (rank < ranks_with_extra ? 1 : 0);
  return Range{begin, begin + size};
}

std::vector<std::int64_t> masked_indices(const std::vector<std::uint8_t>& mask) {
  std::vector<std::int64_t> indices;
  for (std::size_t i = 0; i < mask.size(); ++i) {
    if (mask[i] != 0) indices.push_back(static_cast<std::int64_t>(i));
  }
  return indices;
}

}  // namespace larmor::parallel
