// Voxel-wise nonlinear least squares (docs/estimators.md): magnitude fitting
// of M0 and chosen tissue properties within bounds by Levenberg-Marquardt,
// with the Jacobian from the EPG kernels' forward mode (one JVP run of every
// voxel per iteration) and the small damped normal equations of all voxels
// solved by one Kokkos kernel (an inline Cholesky per voxel). Each voxel keeps
// its own damping, accepted point and convergence, so its result does not
// depend on which other voxels share the run (or on the MPI partition).
#pragma once

#include <cstdint>
#include <vector>

#include "estimators/perk/perk_train.hpp"  // perk::Prior
#include "simulate/simulator.hpp"

namespace larmor::estimators::nlls {

struct NllsSpec {
  std::vector<perk::Prior> estimate;  // bounds (SI); the start is their (geometric) middle
  int iterations = 40;
  double step_tolerance = 1e-6;  // relative step below which a voxel has converged
};

struct NllsResult {
  int parameters = 0;                    // P = 1 (M0) + estimate.size()
  std::vector<float> values;             // [voxel][P]: M0, then the estimated properties (SI)
  std::vector<float> cost;               // [voxel]: sum of squared magnitude residuals
  std::vector<std::int32_t> iterations;  // [voxel]: accepted steps
};

// `tissue` holds the voxels' fixed properties (known maps, fixed values);
// the estimated ones and M0 are overwritten during the fit. measured:
// [voxel][samples][re, im]. Throws std::invalid_argument for bad bounds or
// an M0 or duplicate entry among the estimated properties.
NllsResult fit_nlls(const simulate::Simulator& sim, tissue::Tissue tissue,
                    const std::vector<float>& measured, const NllsSpec& spec);

}  // namespace larmor::estimators::nlls
