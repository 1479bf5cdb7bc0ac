// Fit decks (larmor fit DECK.toml): [sequence] as in simulation decks (the
// sequence the data were acquired with), [data] (the measured signals and
// known maps, HDF5), [estimator] (PERK: priors of the estimated properties,
// known inputs with their maps, nuisance properties, training sizes, noise,
// tuning grid, or a trained model to load), [output] path of the maps.
// docs/input-deck.md lists the keys; errors name the file, line and key.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "app/deck.hpp"
#include "estimators/perk/perk_train.hpp"

namespace larmor::app {

struct FitDeck {
  Deck deck;
  std::string data_path;  // resolved against the deck: HDF5, or a 4-D NIfTI of signals
  std::string mask_path;  // NIfTI data: the mask (nonzero voxels are fitted); empty: every
                          // voxel with a nonzero sample
  std::string signals_dataset = "/signals";
  std::string index_dataset = "/voxel_index";
  std::string shape_dataset = "/volume_shape";
  std::vector<std::string> known_datasets;  // per spec.known entry: its volume dataset
  std::string method = "perk";              // "dictionary": the deck's [tissue] grid are the atoms;
                                // "nlls": Levenberg-Marquardt within the estimate bounds
  int nlls_iterations = 40;
  bool nifti_output = false;         // [output] nifti = true: <path stem>_<map>.nii beside the HDF5
  double compress_energy = 0.99999;  // dictionary: SVD rank keeping this energy (0: none)
  // dictionary: this rank's voxels matched so far, of all of its voxels.
  std::function<void(std::int64_t, std::int64_t)> match_progress;
  // dictionary: the compression's passes over the atoms (estimators::dictionary::compress).
  std::function<void(std::int64_t, std::int64_t)> compress_progress;
  estimators::perk::PerkSpec perk;
  std::string model_path;       // load this model instead of training
  std::string save_model_path;  // save the trained model here
};

FitDeck read_fit_deck(const std::string& path);

}  // namespace larmor::app
