// Bound-pool lineshapes (src/tissue/lineshape.hpp) against values derived
// apart from the library: the Gaussian and Lorentzian against their closed
// forms and their normalisation over angular frequency (numerically
// integrated); the super-Lorentzian against the same integral taken over the
// polar angle theta by a plain midpoint rule (the library integrates over
// u = cos theta with graded Simpson nodes); and the saturation of a
// Lorentzian pool against the Bloch equations of a spin with that T2 under a
// weak continuous-wave pulse, integrated by RK4, whose Mz decays at
// W = omega1^2 T2 / (1 + (dw T2)^2) = pi omega1^2 g.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "reference/constants.hpp"
#include "tissue/lineshape.hpp"

namespace larmor::tissue {
namespace {

using larmor::test::kPi;
constexpr double kT2b = 12e-6;  // a typical bound-pool T2 (s)

TEST(Lineshape, GaussianAndLorentzianClosedFormsAndNormalisation) {
  EXPECT_NEAR(absorption_lineshape(Lineshape::lorentzian, 0.0, kT2b), kT2b / kPi, 1e-18);
  EXPECT_NEAR(absorption_lineshape(Lineshape::gaussian, 0.0, kT2b), kT2b / std::sqrt(2 * kPi),
              1e-18);
  // Half maximum of the Lorentzian at w T2 = 1.
  EXPECT_NEAR(absorption_lineshape(Lineshape::lorentzian, 1.0 / (2 * kPi * kT2b), kT2b),
              0.5 * kT2b / kPi, 1e-15);
  // Normalisation: the Gaussian over +-12 standard deviations (trapezoid in
  // offset, g per rad/s); the Lorentzian over +-W, against (2/pi) atan(W T2).
  const double sigma_hz = 1.0 / (2 * kPi * kT2b);
  double gauss = 0.0, lorentz = 0.0;
  const int n = 200000;
  const double span_hz = 12 * sigma_hz, step_hz = 2 * span_hz / n;
  for (int i = 0; i <= n; ++i) {
    const double f = -span_hz + i * step_hz;
    const double w = (i == 0 || i == n) ? 0.5 : 1.0;
    gauss += w * absorption_lineshape(Lineshape::gaussian, f, kT2b) * 2 * kPi * step_hz;
    lorentz += w * absorption_lineshape(Lineshape::lorentzian, f, kT2b) * 2 * kPi * step_hz;
  }
  EXPECT_NEAR(gauss, 1.0, 1e-9);
  EXPECT_NEAR(lorentz, 2 / kPi * std::atan(2 * kPi * span_hz * kT2b), 1e-9);
}

// The super-Lorentzian as an integral over theta in [0, pi/2] by the
// midpoint rule (the magic angle is not a node).
double super_lorentzian_over_theta(double offset_hz, double t2) {
  const double w = 2 * kPi * offset_hz;
  const int n = 400000;
  double sum = 0.0;
  for (int i = 0; i < n; ++i) {
    const double theta = (i + 0.5) * (kPi / 2) / n;
    const double c = std::cos(theta);
    const double a = std::fabs(3 * c * c - 1);
    sum += std::sin(theta) * t2 / a * std::exp(-2 * std::pow(w * t2 / a, 2));
  }
  return std::sqrt(2 / kPi) * sum * (kPi / 2) / n;
}

TEST(Lineshape, SuperLorentzianAgreesWithAnIntegralOverTheAngle) {
  for (double offset : {1000.0, 2000.0, 5000.0, 10000.0, -5000.0, 40000.0}) {
    const double expected = super_lorentzian_over_theta(offset, kT2b);
    EXPECT_NEAR(absorption_lineshape(Lineshape::super_lorentzian, offset, kT2b) / expected, 1.0,
                1e-6)
        << offset << " Hz";
  }
  // Held at the cutoff's value below it (it diverges on resonance).
  EXPECT_EQ(absorption_lineshape(Lineshape::super_lorentzian, 0.0, kT2b),
            absorption_lineshape(Lineshape::super_lorentzian, super_lorentzian_cutoff_hz, kT2b));
}

// dM/dt of a spin (no T1) in the frame rotating with the pulse: precession
// about (omega1, 0, dw), transverse decay 1/T2.
void bloch(double omega1, double dw, double t2, const double m[3], double out[3]) {
  out[0] = dw * m[1] - m[0] / t2;
  out[1] = -dw * m[0] + omega1 * m[2] - m[1] / t2;
  out[2] = -omega1 * m[1];
}

TEST(Lineshape, LorentzianSaturationMatchesTheBlochEquations) {
  const double omega1 = 2 * kPi * 100.0, offset = 2000.0, dw = 2 * kPi * offset;
  const double dt = 1e-7;
  const int steps = 100000, early = 10000;  // 10 ms; the rate is read from 1 ms on
  double m[3] = {0, 0, 1}, mz_early = 0.0;
  for (int step = 0; step < steps; ++step) {
    if (step == early) mz_early = m[2];
    double k1[3], k2[3], k3[3], k4[3], y[3];
    bloch(omega1, dw, kT2b, m, k1);
    for (int j = 0; j < 3; ++j) y[j] = m[j] + 0.5 * dt * k1[j];
    bloch(omega1, dw, kT2b, y, k2);
    for (int j = 0; j < 3; ++j) y[j] = m[j] + 0.5 * dt * k2[j];
    bloch(omega1, dw, kT2b, y, k3);
    for (int j = 0; j < 3; ++j) y[j] = m[j] + dt * k3[j];
    bloch(omega1, dw, kT2b, y, k4);
    for (int j = 0; j < 3; ++j) m[j] += dt / 6 * (k1[j] + 2 * k2[j] + 2 * k3[j] + k4[j]);
  }
  // The decay rate once the transverse magnetisation has reached its steady
  // state (a few T2 = 12 us: the first millisecond is left out), against the
  // rate behind bound_pool_saturation: -ln(kept) / duration for a CW pulse.
  const double span = (steps - early) * dt;
  const double bloch_rate = std::log(mz_early / m[2]) / span;
  const double kept =
      bound_pool_saturation(Lineshape::lorentzian, offset, kT2b, omega1 * omega1 * span);
  const double rate = -std::log(kept) / span;
  // Exact to order (omega1 T2)^2 ~ 6e-5 relative.
  EXPECT_NEAR(bloch_rate / rate, 1.0, 1.5e-4);
  EXPECT_GT(rate, 4.0);  // a visible saturation (W = 4.6 / s)
}

TEST(Lineshape, BadValuesRefusedByName) {
  EXPECT_THROW(absorption_lineshape(Lineshape::gaussian, 0.0, 0.0), std::invalid_argument);
  EXPECT_THROW(absorption_lineshape(Lineshape::lorentzian, NAN, kT2b), std::invalid_argument);
  EXPECT_THROW(bound_pool_saturation(Lineshape::gaussian, 0.0, kT2b, -1.0), std::invalid_argument);
  try {
    lineshape_named("voigt");
    FAIL() << "an unknown lineshape was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'voigt'"), std::string::npos);
  }
  EXPECT_EQ(lineshape_named("super_lorentzian"), Lineshape::super_lorentzian);
}

}  // namespace
}  // namespace larmor::tissue
