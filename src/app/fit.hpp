// The work of `larmor fit` (docs/estimators.md) below its command line: the
// measured signals and known maps of this rank's voxels (HDF5, larmor
// phantom's layout, or a 4-D NIfTI series with a NIfTI mask), the estimate
// of each map by the deck's method (PERK, dictionary matching or NLLS), the
// volume maps gathered and written (HDF5, NIfTI copies when asked), and each
// map's error against a truth map in the data. Every function here is
// collective over `comm` unless it says otherwise.
//
//   /estimates/<property>  float32 [voxels]        in deck units
//   /maps/<property>       float32 [nz][ny][nx]    NaN outside the voxels
//   /voxel_index           int64   [voxels]
//   /volume_shape          int64   [3]
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/fit_deck.hpp"
#include "estimators/perk/perk_train.hpp"
#include "io/hdf5_file.hpp"
#include "parallel/communicator.hpp"
#include "parallel/partition.hpp"

namespace larmor::app {

// One estimated map: this rank's voxels, and the range of truth it is scored in.
struct FitMap {
  std::string name;          // deck name of the map
  std::vector<float> local;  // this rank's voxels, deck units
  bool scored = false;       // compared with a truth map of that name
  double low = 0.0, high = 0.0;
};

// The measured signals of this rank's voxels, the voxel list, the volume
// shape and the known maps at every voxel.
struct Measured {
  std::int64_t voxels = 0;
  int samples = 0;
  parallel::Range mine;
  // [mine][samples][2]; empty when `streamed`: dictionary matching of HDF5
  // data reads this rank's voxels chunk by chunk (read_signals), so that host
  // memory holds one chunk of signals, not the partition.
  std::vector<float> signals;
  bool streamed = false;
  std::string file, signals_dataset;  // where the signals are
  std::vector<std::int64_t> index, shape;
  std::vector<std::vector<float>> known_all;  // per known property, SI, every voxel
  std::unique_ptr<io::H5Reader> hdf5;         // null for NIfTI data

  std::int64_t volume() const;  // the product of shape
  // This rank's voxels [first, first + count) of `mine` into `out`
  // ([count][samples][2]), from memory or from the file. Local.
  void read_signals(std::int64_t first, std::int64_t count, float* out) const;
};

// Reads and checks the data a fit deck names (voxel index inside the volume
// and unique; finite, not all-zero signals, as they are read when streamed;
// known maps of the volume's size).
Measured read_measured(const FitDeck& fd, const std::string& deck_path,
                       const parallel::Communicator& comm);

// Called as each phase of the fit ends: (name, kind), as PhaseTimer::end_phase.
using PhaseEnd = std::function<void(const std::string& name, const std::string& kind)>;

struct FitResult {
  std::vector<FitMap> maps;
  std::string summary;                      // the estimator, in words
  estimators::perk::TrainingReport report;  // PERK's training
  // PERK: training and estimation; dictionary: the atoms' simulation and
  // compression (train_s is their sum) and the matching; NLLS: estimate_s.
  double train_s = 0.0, estimate_s = 0.0;
  double compress_s = 0.0;
};

// Estimates the maps of this rank's voxels by fd.method. PERK: trained by
// every rank together (or loaded by rank 0 and broadcast), saved when the
// deck asks; `talk`: print the training's start. Throws std::invalid_argument
// when the data's sample count is not the deck's sequence's.
FitResult estimate_maps(FitDeck& fd, const std::string& deck_path,
                        const parallel::Communicator& comm, const Measured& data, bool talk,
                        const PhaseEnd& end_phase);

// Per map, the volume (NaN outside the voxels); filled on rank 0 only.
std::vector<std::vector<float>> gather_maps(const std::vector<FitMap>& maps, const Measured& data,
                                            const parallel::Communicator& comm);

// Writes the maps file (collective, atomic) and, when the deck asks, NIfTI
// copies <output stem>_<map>.nii of the volume maps (rank 0).
void write_maps(const std::string& output, const FitDeck& fd, const Measured& data,
                const std::vector<FitMap>& maps, const std::vector<std::vector<float>>& volumes,
                const std::string& summary, const parallel::Communicator& comm);

// A map against the truth map of its name in the data, scored where the
// truth lies inside the map's range (the estimator is not trained beyond it).
struct TruthScore {
  std::size_t scored = 0;          // voxels inside the range with a nonzero truth
  std::int64_t outside = 0;        // voxels outside the range
  double median = 0.0, p90 = 0.0;  // of |relative error|
};
// Rank 0 (reads the data file alone). Empty when the map is not scored, the
// data are not HDF5 or hold no such truth map, or no voxel can be scored.
std::optional<TruthScore> score_against_truth(const FitMap& map, const std::vector<float>& volume,
                                              const Measured& data);

}  // namespace larmor::app
