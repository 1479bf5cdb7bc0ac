#include "simulate/frequency_spread.hpp"

#include <cmath>
#include <stdexcept>

namespace larmor::simulate {
namespace {

constexpr double kPi = 3.14159265358979323846;

struct Grid {
  double step;
  long half;  // K
};

Grid grid_for(double longest_dephasing, double accuracy) {
  if (!(accuracy > 0.0 && accuracy < 1.0) || !(longest_dephasing >= 0.0) ||
      !std::isfinite(longest_dephasing)) {
    throw std::invalid_argument(
        "lorentzian_spread: needs a finite dephasing and an accuracy in (0, 1)");
  }
  const double step = 2.0 * kPi / (longest_dephasing + std::log(4.0 / accuracy));
  // The tail beyond x is 2 atan(1 / x) / pi < 2 / (pi x): at most accuracy / 2.
  const double widest = 4.0 / (kPi * accuracy);
  return {step, static_cast<long>(std::ceil(widest / step))};
}

}  // namespace

std::size_t lorentzian_spread_size(double longest_dephasing, double accuracy) {
  return std::size_t(2 * grid_for(longest_dephasing, accuracy).half + 1);
}

FrequencySpread lorentzian_spread(double longest_dephasing, double accuracy) {
  const Grid grid = grid_for(longest_dephasing, accuracy);
  FrequencySpread spread;
  spread.offsets.clear();
  spread.weights.clear();
  double total = 0.0;
  for (long k = -grid.half; k <= grid.half; ++k) {
    const double x = double(k) * grid.step;
    spread.offsets.push_back(x);
    spread.weights.push_back(1.0 / (1.0 + x * x));
    total += spread.weights.back();
  }
  // Normalised: an untouched magnetisation keeps its M0 exactly.
  for (double& w : spread.weights) w /= total;
  return spread;
}

}  // namespace larmor::simulate
