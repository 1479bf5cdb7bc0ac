// Training a PERK estimator (docs/estimators.md): latent tissue properties
// drawn from priors, known ones from a kernel density estimate of measured
// maps (or priors), signals simulated with larmor's own kernels, complex
// Gaussian noise, magnitudes; random Fourier features; centred kernel ridge
// regression with the H x H covariance formed by KokkosBlas::gemm (cuBLAS on
// a GPU) and solved by a Cholesky factorisation (LAPACK); the bandwidth scale
// and the regularisation tuned on held-out samples over a grid.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "estimators/perk/perk_model.hpp"
#include "parallel/communicator.hpp"
#include "sequence/description.hpp"

namespace larmor::estimators::perk {

struct Prior {
  tissue::Property property = tissue::Property::t2;
  double low = 0.0, high = 0.0;  // SI units
  bool log_uniform = false;
};

struct PerkSpec {
  std::vector<Prior> latent;  // the estimated properties (not M0: inputs are normalised)
  std::vector<Prior> known;   // known inputs: their range (and prior without a map)
  // Drawn but neither input nor output: marginalised (a prior with low ==
  // high fixes the property, e.g. T1 for a T2 fit).
  std::vector<Prior> nuisance;
  // Measured values of each known property (SI), for the kernel density
  // estimate; an empty vector draws from the prior instead.
  std::vector<std::vector<float>> known_samples;
  int samples = 100000;       // K
  int features = 1000;        // H
  double noise_sigma = 0.01;  // per channel, relative to M0 = 1
  double holdout_fraction = 0.2;
  std::vector<double> lambdas;  // bandwidth scales; empty: 2^{-0.5, 0, 0.5, 1, 1.5}
  std::vector<double> rhos;     // regularisations; empty: 2^{-40, -34, -28, -22, -16}
  std::uint64_t seed = 1;
  int max_order = -1;  // highest EPG order kept (< 0: the automatic cap)
  // Also regress the signal level (the mean magnitude at M0 = 1) on the
  // normalised inputs, as a last output named m0: M0 is then the measured
  // mean magnitude over it (m0_from_level), the nuisance marginalised.
  bool m0 = true;
  // Called as the training samples are simulated: (done, total) of this
  // rank's share.
  std::function<void(std::int64_t, std::int64_t)> progress;
  // Called as the tuning grid's points of this rank are trained and scored:
  // (done, total) of this rank's points.
  std::function<void(std::int64_t, std::int64_t)> tuning_progress;
};

struct TrainingReport {
  double simulate_s = 0.0, features_s = 0.0, solve_s = 0.0, total_s = 0.0;
  struct Point {
    double lambda, rho, cost;
  };
  std::vector<Point> grid;  // every (lambda, rho) tried, with its holdout cost
};

// Throws std::invalid_argument naming the setting for a bad spec (an empty
// or non-positive prior range, M0 as a latent property, sizes past the
// kernels' limits) and std::runtime_error without LAPACK.
//
// With a communicator (collective: every rank calls it with the same spec)
// the work is shared: each rank simulates a slice of the training samples
// (the slices are gathered everywhere) and takes a share of the (lambda, rho)
// grid; the rank holding the best point broadcasts its model. Every grid
// point is computed exactly as one rank would compute it, so the model is the
// same bit for bit for any rank count. Every rank returns the model; the
// report's times are rank 0's.
PerkModel train_perk(const sequence::Description& sequence, const PerkSpec& spec,
                     TrainingReport* report = nullptr,
                     const parallel::Communicator* comm = nullptr);

}  // namespace larmor::estimators::perk
