// Dictionary matching for fingerprinting (docs/estimators.md): every atom is a
// simulated signal normalised to unit norm; a voxel takes the atom with the
// largest |<atom, signal>| and M0 = <atom, signal> / |unnormalised atom|. The
// inner products are batched matrix products (KokkosBlas::gemm: cuBLAS on a
// GPU) over blocks of voxels sized from free device memory, followed by an
// argmax per voxel. Optionally the time axis is compressed first: the
// dictionary's leading right singular vectors (from the eigenvectors of its
// Gram matrix, LAPACK) project atoms and signals to `rank` coefficients.
#pragma once

#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "tissue/tissue.hpp"

namespace larmor::estimators::dictionary {

struct Dictionary {
  int samples = 0;  // D (the time axis), or the rank when compressed
  std::int64_t atoms = 0;
  std::vector<float> unit_atoms;             // [atom][D][re, im], unit norm
  std::vector<float> norms;                  // [atom]: norm before normalising
  std::vector<tissue::Property> properties;  // what varies over the atoms
  std::vector<float> values;                 // [atom][property], SI units
  // Compression: the basis [D_original][rank][re, im]; empty when uncompressed.
  std::vector<float> basis;
  int original_samples = 0;
};

// Atoms from simulated signals [atom][D][re, im] of `tissue` (its map
// properties become the dictionary's properties). Atoms of zero norm are
// refused (naming the atom).
Dictionary make_dictionary(const std::vector<float>& signals, int samples,
                           const tissue::Tissue& tissue);

// The dictionary with its time axis reduced to the leading `rank` singular
// directions (rank 0: the fewest that keep `energy` of the atoms' total
// squared norm). Throws without LAPACKE.
Dictionary compress(const Dictionary& d, int rank, double energy = 0.9999);

// Signals projected like the compressed dictionary's atoms (a copy when it is
// not compressed). `exact_order`: each voxel's result computed in a fixed
// order, independent of the other voxels of the call (and so of how voxels
// are split over ranks), instead of by GEMM.
std::vector<float> project(const Dictionary& d, const std::vector<float>& signals,
                           std::int64_t voxels, bool exact_order = false);

struct MatchResult {
  std::vector<std::int32_t> atom;       // [voxel]
  std::vector<std::complex<float>> m0;  // [voxel]
  std::vector<float> correlation;       // [voxel]: |<atom, s>| / |s|
};

// Best atom of every voxel (signals [voxel][D][re, im], D = d.samples, i.e.
// already projected for a compressed dictionary). `memory_bytes` bounds the
// inner-product block (0: half the free device memory, or 1 GiB on the host).
// `exact_order`: a team per voxel forms its inner products in a fixed order
// (no GEMM), so that every voxel's result is the same however the voxels are
// split over ranks (larmor fit does this).
MatchResult match(const Dictionary& d, const std::vector<float>& signals, std::int64_t voxels,
                  double memory_bytes = 0.0, bool exact_order = false);

}  // namespace larmor::estimators::dictionary
