// Cramer-Rao lower bounds of tissue parameters for a sequence, over a prior,
// and their derivatives with respect to every event's flip, phase and
// duration: the objective of sequence design (larmor design).
//
// For one tissue point with signal y (T complex samples) and complex Gaussian
// noise of standard deviation sigma in each of the real and imaginary parts,
// the Fisher matrix of the estimated parameters theta is
//   F = Re(J^H J) / sigma^2,  J = dy / dtheta  (forward mode, T x P),
// and the bound on the variance of an unbiased estimate of theta_p is
// (F^-1)_pp. The objective sums, over the prior's points (equal weights) and
// the estimated parameters, weight_p (F^-1)_pp / theta_p^2: squared relative
// standard deviations. Its derivative with respect to a sequence value s is
//   dPhi/ds = -tr(A dF/ds),  A = F^-1 D F^-1,  D = diag(weight_p / theta_p^2)
//           = sum_p d/dtheta_p [ sum_t Re(conj(w_tp) dy_t/ds) ],
//   w_:p = -(2 / sigma^2) (J A)_:p,
// one forward-over-reverse run per estimated parameter (the adjoint's
// sequence gradient with cotangent w_:p, differentiated along theta_p).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sequence/description.hpp"
#include "tissue/tissue.hpp"

namespace larmor::design {

struct CrlbSpec {
  // Tissue directions (epg::tissue_direction: M0, T1, T2, B1, df) the Fisher
  // matrix estimates; the others are known.
  std::vector<int> estimated;
  // Per estimated parameter: the weight of its squared relative bound in the
  // objective (0: a nuisance parameter, estimated but not minimised).
  std::vector<double> weights;
  double noise_sigma = 1.0;
  // Multiply the objective by the scan time: variance x time, the measure
  // that makes a longer train pay for its time.
  bool time_normalised = false;
  int max_order = -1;  // highest EPG order kept (< 0: the description's automatic cap)
  // Prior points over all ranks, when each rank holds a share of the prior
  // (0: the prior passed in is the whole prior). Each rank's objective and
  // gradients are then its share of the sums: add them over the ranks.
  std::int64_t total_points = 0;
};

struct CrlbEvaluation {
  double objective = 0.0;
  double scan_time_s = 0.0;
  // [point][estimated parameter]: sqrt((F^-1)_pp) / theta_p.
  std::vector<double> relative_sd;
  // [event][flip (rad), phase (rad), duration (s)]: d objective / d value;
  // filled when asked for.
  std::vector<double> event_gradients;
  bool finite = true;  // false when a Fisher matrix is singular
};

// Checks the spec against the prior (names the offending parameter).
void validate(const CrlbSpec& spec, const tissue::Tissue& prior);

// The objective on the default Kokkos backend, with its event gradients when
// `with_gradient`.
CrlbEvaluation evaluate_crlb(const sequence::Description& sequence, const tissue::Tissue& prior,
                             const CrlbSpec& spec, bool with_gradient);

// The names of the tissue directions, as decks spell them.
const std::vector<std::string>& tissue_direction_names();

}  // namespace larmor::design
