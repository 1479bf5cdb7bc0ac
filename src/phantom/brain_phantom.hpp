// A synthetic brain-like volume for running and checking the estimation
// pipeline without external data (larmor phantom, docs/estimators.md): an
// ellipsoidal head of about the requested number of brain voxels, with
// ventricles, white matter, a folded grey-matter ribbon and an outer CSF rim,
// 3 T relaxation times of each class with a smooth few-percent variation, a
// smooth transmit field, and signals of a sequence with complex Gaussian noise
// that depends only on each voxel's index (so any rank count writes the same
// file).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "tissue/tissue.hpp"

namespace larmor::phantom {

enum class TissueClass : std::uint8_t { background = 0, csf = 1, grey = 2, white = 3 };

struct Volume {
  std::array<std::uint64_t, 3> shape{};  // nz, ny, nx
  std::vector<std::uint8_t> mask;        // C order
  std::vector<std::uint8_t> classes;
  std::vector<std::int64_t> brain;  // linear indices of the masked voxels, ascending
};

// A volume holding about `brain_voxels` masked voxels (at least 1, at most
// 1.8e6 is what the workloads use; larger is allowed up to 2^31 - 1).
Volume make_volume(std::int64_t brain_voxels);

// The tissue of masked voxels [begin, end) (SI units), in `brain` order.
tissue::Tissue tissue_of(const Volume& v, std::int64_t begin, std::int64_t end);

}  // namespace larmor::phantom
