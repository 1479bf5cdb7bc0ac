#include "design/spg.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <stdexcept>

namespace larmor::design {

namespace {

double clip(double v) { return std::min(1.0, std::max(0.0, v)); }

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// Largest component of P(x - g) - x: zero exactly at a stationary point.
double projected_gradient(const std::vector<double>& x, const std::vector<double>& g) {
  double m = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) m = std::max(m, std::abs(clip(x[i] - g[i]) - x[i]));
  return m;
}

}  // namespace

SpgResult minimise_in_unit_box(
    const BoxObjective& objective, std::vector<double> x0, const SpgOptions& options,
    const std::function<void(const SpgStep&, const std::vector<double>&)>& on_step) {
  const std::size_t n = x0.size();
  if (n == 0) throw std::invalid_argument("minimise_in_unit_box: no variables");
  constexpr double step_min = 1e-10, step_max = 1e10;
  SpgResult r;
  std::vector<double> x(n), g(n), trial(n), trial_g(n), d(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = clip(x0[i]);
  int evaluations = 1;
  double f = objective(x, &g);
  if (!std::isfinite(f))
    throw std::invalid_argument("minimise_in_unit_box: the objective is not finite at the start");
  std::deque<double> recent{f};
  double pg = projected_gradient(x, g);
  const auto record = [&](int iteration) {
    SpgStep s{iteration, f, pg, evaluations};
    r.history.push_back(s);
    if (on_step) on_step(s, x);
  };
  record(0);
  double step = pg > 0.0 ? std::min(step_max, std::max(step_min, 1.0 / pg)) : 1.0;
  r.stopped_because = "iteration limit";
  for (int it = 1; it <= options.max_iterations; ++it) {
    if (pg <= options.tolerance) {
      r.stopped_because = "projected gradient below tolerance";
      break;
    }
    for (std::size_t i = 0; i < n; ++i) d[i] = clip(x[i] - step * g[i]) - x[i];
    const double slope = dot(g, d);  // < 0 unless stationary
    const double reference = *std::max_element(recent.begin(), recent.end());
    double alpha = 1.0, f_trial = 0.0;
    bool accepted = false;
    for (int b = 0; b < options.max_backtracks; ++b) {
      for (std::size_t i = 0; i < n; ++i) trial[i] = x[i] + alpha * d[i];
      f_trial = objective(trial, nullptr);
      ++evaluations;
      if (std::isfinite(f_trial) &&
          f_trial <= reference + options.sufficient_decrease * alpha * slope) {
        accepted = true;
        break;
      }
      // Safeguarded quadratic interpolation, else halve.
      const double curvature = f_trial - f - alpha * slope;
      double next = 0.5 * alpha;
      if (std::isfinite(f_trial) && curvature > 0.0) {
        next = std::clamp(-0.5 * alpha * alpha * slope / curvature, 0.1 * alpha, 0.5 * alpha);
      }
      alpha = next;
    }
    if (!accepted) {
      r.stopped_because = "line search found no decrease";
      break;
    }
    f_trial = objective(trial, &trial_g);
    ++evaluations;
    std::vector<double> s(n), y(n);
    for (std::size_t i = 0; i < n; ++i) {
      s[i] = trial[i] - x[i];
      y[i] = trial_g[i] - g[i];
    }
    const double sy = dot(s, y);
    step = sy > 0.0 ? std::min(step_max, std::max(step_min, dot(s, s) / sy)) : step_max;
    x.swap(trial);
    g.swap(trial_g);
    f = f_trial;
    pg = projected_gradient(x, g);
    recent.push_back(f);
    if (int(recent.size()) > options.memory) recent.pop_front();
    record(it);
  }
  r.x = x;
  r.objective = f;
  return r;
}

}  // namespace larmor::design
