// A trained PERK model as a file: HDF5, a group of datasets and attributes
// (/perk/frequencies, phases, weights, offsets, known, outputs; attributes
// signals, lambda, rho, noise_sigma, holdout_cost, sequence, output_names).
#pragma once

#include <string>

#include "estimators/perk/perk_model.hpp"

namespace larmor::app {

// Rank 0 writes, atomically (temporary file, then rename).
void save_perk_model(const estimators::perk::PerkModel& model, const std::string& path);
estimators::perk::PerkModel load_perk_model(const std::string& path);

}  // namespace larmor::app
