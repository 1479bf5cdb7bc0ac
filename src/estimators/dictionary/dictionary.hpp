// Dictionary matching for fingerprinting (docs/estimators.md): every atom is a
// simulated signal normalised to unit norm; a voxel takes the atom with the
// largest |<atom, signal>| and M0 = <atom, signal> / |unnormalised atom|.
//
// The dictionary lives in device memory from its simulation on: normalised
// there, optionally compressed there (the time axis reduced to the leading
// right singular vectors: the Gram matrix A^H A by Kokkos Kernels' GEMM on
// the device, its leading eigenvectors by LAPACK on the host, an n x n
// problem), and matched there by the fused kernels of kernels/match/ (no
// voxel x atom matrix is formed). Voxels reach the device in chunks through a
// staging buffer, so that host memory holds one chunk of signals, not the
// volume; each voxel's result does not depend on the chunk or on the other
// voxels (nor, so, on the MPI rank count).
#pragma once

#include <complex>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tissue/tissue.hpp"

namespace larmor::simulate {
class Simulator;
}

namespace larmor::estimators::dictionary {

// The atoms (and basis) in device memory: device_atoms.hpp.
struct DeviceAtoms;

struct Dictionary {
  std::int64_t atoms = 0;
  int samples = 0;                           // coefficients per atom: the rank when compressed
  int original_samples = 0;                  // samples per signal
  std::vector<float> norms;                  // [atom]: norm before normalising
  std::vector<tissue::Property> properties;  // what varies over the atoms
  std::vector<float> values;                 // [atom][property], SI units
  // In device memory: the atoms [atom][samples][re, im] (unit norm before
  // compression) and, when compressed, the basis vectors [rank][original
  // samples][re, im] (a signal's coordinates are its inner products with
  // them). Shared by copies; never changed once made.
  std::shared_ptr<const DeviceAtoms> device;
  bool compressed = false;
  double energy_kept = 1.0;  // the fraction of the atoms' squared norm the basis keeps

  std::vector<float> host_basis() const;  // [rank][original_samples][re, im]
};

// Atoms from simulated signals [atom][samples][re, im] in host memory, of
// `tissue` (its map properties become the dictionary's properties). Atoms of
// zero or non-finite norm are refused (naming the atom and its parameters).
Dictionary make_dictionary(const std::vector<float>& signals, int samples,
                           const tissue::Tissue& tissue);

// The atoms of `grid` simulated straight into device memory.
Dictionary simulate_dictionary(const simulate::Simulator& sim, const tissue::Tissue& grid);

// The dictionary with its time axis reduced to the leading `rank` singular
// directions (rank 0: the fewest that keep `energy` of the atoms' total
// squared norm). Throws without LAPACKE. `progress(done, total)`, when set,
// counts atoms through its two passes over them (the Gram matrix, then the
// projection onto the basis): total is twice the atoms.
Dictionary compress(const Dictionary& d, int rank, double energy = 0.9999,
                    const std::function<void(std::int64_t, std::int64_t)>& progress = {});

struct MatchResult {
  std::vector<std::int32_t> atom;       // [voxel]
  std::vector<std::complex<float>> m0;  // [voxel]
  std::vector<float> correlation;  // [voxel]: |<atom, s>| / |s| (compressed: of s's coordinates)
  void resize(std::int64_t voxels);
};

// Seconds spent per phase (each phase fenced: a timed matcher).
struct MatchTimings {
  double transfer_s = 0.0, project_s = 0.0, match_s = 0.0;
};

// overlapped: a chunk's transfer, projection and match run while the caller
// stages the next; timed: each phase is waited for and timed (benchmarks).
enum class MatchPhases { overlapped, timed };

// Matches voxels chunk by chunk: fill staging() with up to chunk_voxels()
// voxels [voxel][original_samples][re, im], then match_staged(); repeat;
// then finish(). The staging buffers (two, used in turn, so that the caller
// fills one while the device matches the other) are page-locked host memory
// where the device has its own, so that they reach it at full speed.
class Matcher {
 public:
  // chunk_voxels 0: as many as a quarter of the free device memory holds.
  explicit Matcher(const Dictionary& d, std::int64_t chunk_voxels = 0,
                   MatchPhases phases = MatchPhases::overlapped);
  ~Matcher();
  Matcher(const Matcher&) = delete;
  Matcher& operator=(const Matcher&) = delete;

  std::int64_t chunk_voxels() const;
  // The buffer to fill next (it changes with every match_staged).
  float* staging();
  // Starts matching the first `count` staged voxels as voxels [offset,
  // offset + count) of `out` (already sized, alive until their results are
  // written): written by the next match_staged or finish(), not before.
  void match_staged(std::int64_t count, MatchResult& out, std::int64_t offset);
  // Waits for the chunk in flight and writes its results.
  void finish();
  // Voxels from caller memory, any count (staged chunk by chunk); complete
  // on return.
  void match(const float* signals, std::int64_t count, MatchResult& out, std::int64_t offset);
  // Throws std::logic_error unless the matcher is timed.
  const MatchTimings& timings() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Every voxel of `signals` [voxel][original_samples][re, im].
MatchResult match(const Dictionary& d, const std::vector<float>& signals, std::int64_t voxels,
                  std::int64_t chunk_voxels = 0);

}  // namespace larmor::estimators::dictionary
