// A trained PERK estimator (parameter estimation via regression with
// kernels; docs/estimators.md) and what turns measured signals into its
// inputs. The estimate of a voxel is x = b + W cos(F q + phi), evaluated by
// the fused kernels of kernels/perk/ (F, phi, W and b as float).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tissue/tissue.hpp"

namespace larmor::estimators::perk {

struct PerkModel {
  int signals = 0;                        // D: signal magnitudes per voxel
  std::vector<tissue::Property> known;    // N known inputs after the signals
  std::vector<tissue::Property> outputs;  // L estimated properties (SI units); m0, when
                                          // present, is the signal level at M0 = 1
  int features = 0;                       // H
  std::vector<float> frequencies;         // [H][Q], radians per input unit
  std::vector<float> phases;              // [H], radians
  std::vector<float> weights;             // [L][H]
  std::vector<float> offsets;             // [L]
  double lambda = 0.0, rho = 0.0;         // the chosen bandwidth scale and regularisation
  double noise_sigma = 0.0;               // training noise, relative to M0
  double holdout_cost = 0.0;              // RMS relative error on held-out samples
  std::string sequence;                   // name of the sequence it was trained for

  int inputs() const { return signals + int(known.size()); }

  // Byte image (for MPI broadcast) and back; from_bytes throws on a bad image.
  std::string to_bytes() const;
  static PerkModel from_bytes(const std::string& bytes);
};

// The estimator's inputs for `voxels` voxels: the signal magnitudes divided by
// their mean over the D samples (which removes M0), then the known
// properties in SI units. signals: [voxel][D][re, im]; known[n]: the n-th
// known property per voxel. Returns [voxel][Q].
std::vector<float> perk_inputs(const float* signals, std::int64_t voxels, int samples,
                               const std::vector<const float*>& known);

// The mean magnitude of one voxel's D samples ([D][re, im]).
double mean_magnitude(const float* signals, int samples);

// M0 of one voxel from its mean magnitude and the model's m0 output (the
// signal level at M0 = 1): the one over the other (0 for a level <= 0).
float m0_from_level(double mean_magnitude, float level);

// Throws std::runtime_error naming `where` when the model's arrays do not
// match its sizes or hold a non-finite coefficient. (Saving and loading the
// model as HDF5: app/perk_model_file.hpp.)
void check_perk_model(const PerkModel& model, const std::string& where);

}  // namespace larmor::estimators::perk
