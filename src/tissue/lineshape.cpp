#include "tissue/lineshape.hpp"

#include <cmath>
#include <stdexcept>

namespace larmor::tissue {
namespace {

constexpr double kPi = 3.14159265358979323846;

// The super-Lorentzian's integral over u = cos(theta) in [0, 1], split at the
// magic angle u0 = 1/sqrt(3) where 3u^2 - 1 vanishes: near it the integrand
// falls to zero (for w != 0) like exp(-c / (u - u0)^2), so composite Simpson
// on each side with the intervals graded towards u0 resolves it.
double super_lorentzian(double w, double t2) {
  const double u0 = 1.0 / std::sqrt(3.0);
  auto integrand = [&](double u) {
    const double a = 3.0 * u * u - 1.0;
    if (a == 0.0) return 0.0;
    const double x = w * t2 / a;
    return t2 / std::fabs(a) * std::exp(-2.0 * x * x);
  };
  // Simpson on [lo, hi] in a variable s with u = lo + (hi - lo) s^2 (or its
  // mirror): the nodes crowd towards the magic angle.
  auto graded = [&](double from, double to) {
    const int n = 2000;  // even
    double sum = 0.0;
    for (int i = 0; i <= n; ++i) {
      const double s = double(i) / n;
      const double u = to + (from - to) * (1.0 - s) * (1.0 - s);  // s = 1 at `to`
      const double du_ds = std::fabs(2.0 * (from - to) * (1.0 - s));
      const double weight = (i == 0 || i == n) ? 1.0 : (i % 2 ? 4.0 : 2.0);
      sum += weight * integrand(u) * du_ds;
    }
    return sum / (3.0 * n);
  };
  return std::sqrt(2.0 / kPi) * (graded(0.0, u0) + graded(1.0, u0));
}

}  // namespace

Lineshape lineshape_named(const std::string& name) {
  if (name == "gaussian") return Lineshape::gaussian;
  if (name == "lorentzian") return Lineshape::lorentzian;
  if (name == "super_lorentzian") return Lineshape::super_lorentzian;
  throw std::invalid_argument("lineshape '" + name +
                              "' is not one of gaussian, lorentzian, super_lorentzian");
}

const char* lineshape_name(Lineshape shape) {
  switch (shape) {
    case Lineshape::gaussian:
      return "gaussian";
    case Lineshape::lorentzian:
      return "lorentzian";
    case Lineshape::super_lorentzian:
      return "super_lorentzian";
  }
  return "?";
}

double absorption_lineshape(Lineshape shape, double offset_hz, double t2_s) {
  if (!(t2_s > 0.0) || !std::isfinite(t2_s) || !std::isfinite(offset_hz)) {
    throw std::invalid_argument(std::string(lineshape_name(shape)) +
                                " lineshape: T2 must be positive and finite and the offset "
                                "finite (T2 " +
                                std::to_string(t2_s) + " s, offset " + std::to_string(offset_hz) +
                                " Hz)");
  }
  const double w = 2.0 * kPi * offset_hz;
  switch (shape) {
    case Lineshape::gaussian:
      return t2_s / std::sqrt(2.0 * kPi) * std::exp(-0.5 * (w * t2_s) * (w * t2_s));
    case Lineshape::lorentzian:
      return t2_s / kPi / (1.0 + (w * t2_s) * (w * t2_s));
    case Lineshape::super_lorentzian: {
      const double cutoff = 2.0 * kPi * super_lorentzian_cutoff_hz;
      return super_lorentzian(std::fabs(w) < cutoff ? cutoff : w, t2_s);
    }
  }
  return 0.0;
}

double bound_pool_saturation(Lineshape shape, double offset_hz, double t2_s,
                             double omega1_squared_dt) {
  if (!(omega1_squared_dt >= 0.0) || !std::isfinite(omega1_squared_dt)) {
    throw std::invalid_argument(
        "bound-pool saturation: the pulse power integral must be finite "
        "and non-negative");
  }
  return std::exp(-kPi * absorption_lineshape(shape, offset_hz, t2_s) * omega1_squared_dt);
}

}  // namespace larmor::tissue
