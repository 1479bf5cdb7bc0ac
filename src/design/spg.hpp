// Minimisation over the unit box [0, 1]^n by the spectral projected gradient
// method (Birgin, Martinez and Raydan, SIAM J Optim 10:1196, 2000): steps
// along the projected gradient with Barzilai-Borwein lengths and a
// non-monotone line search. Callers scale their bounds to the unit box.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace larmor::design {

// The objective at x; fills `gradient` (same size as x) when it is not null.
// May return +infinity where the objective is undefined (the search steps
// back from there).
using BoxObjective =
    std::function<double(const std::vector<double>& x, std::vector<double>* gradient)>;

struct SpgOptions {
  int max_iterations = 100;
  // Stop when the largest component of P(x - g) - x falls below this.
  double tolerance = 1e-6;
  int memory = 10;  // objective values the non-monotone test looks back over
  double sufficient_decrease = 1e-4;
  int max_backtracks = 40;
};

struct SpgStep {
  int iteration = 0;
  double objective = 0.0;
  double projected_gradient = 0.0;  // largest component of P(x - g) - x
  int evaluations = 0;              // objective evaluations so far
};

struct SpgResult {
  std::vector<double> x;
  double objective = 0.0;
  std::vector<SpgStep> history;  // the starting point first
  std::string stopped_because;
};

// Starts from x0 (clipped into the box). `on_step` sees every accepted point.
SpgResult minimise_in_unit_box(
    const BoxObjective& objective, std::vector<double> x0, const SpgOptions& options,
    const std::function<void(const SpgStep&, const std::vector<double>&)>& on_step = {});

}  // namespace larmor::design
