// Helpers of the Builders tests (tstBuilders.hpp): references, runs on the backend
// TEST_EXECSPACE names, and the checks the tests share.
#pragma once

#include <gtest/gtest.h>
#include <cmath>
#include <complex>
#include <functional>
#include <stdexcept>
#include <vector>

#include "epg/forward_support.hpp"
#include "sequence/builders/builders.hpp"
#include "sequence/operators.hpp"

namespace larmor::test {

// Longitudinal magnetisation after an RF pulse of real envelope w1(t) at a
// frequency offset df, from equilibrium without relaxation: in the RF's frame
// the field is (w1(t), 0, 2 pi df); integrated here by 20000 exact rotations
// about the field at each step's midpoint (Rodrigues' formula), in double.
// Mz does not depend on the sign conventions of the offset.
inline double mz_after_off_resonant_pulse(const std::function<double(double)>& w1, double tau,
                                          double df) {
  double m[3] = {0.0, 0.0, 1.0};
  const int steps = 20000;
  const double dt = tau / steps, dw = 2 * kx::pi * df;
  for (int k = 0; k < steps; ++k) {
    const double ox = w1((k + 0.5) * dt), oz = dw;
    const double size = std::sqrt(ox * ox + oz * oz), angle = size * dt;
    const double n[3] = {ox / size, 0.0, oz / size};
    const double c = std::cos(angle), s = std::sin(angle);
    const double dot = n[0] * m[0] + n[2] * m[2];
    const double cross[3] = {n[1] * m[2] - n[2] * m[1], n[2] * m[0] - n[0] * m[2],
                             n[0] * m[1] - n[1] * m[0]};
    for (int i = 0; i < 3; ++i) m[i] = m[i] * c + cross[i] * s + n[i] * dot * (1 - c);
  }
  return m[2];
}

// Mz left by a pulse, read by ideal spoiling, a 90 degree pulse at phase 0 and
// a readout: the sample is -i Mz.
inline double kernel_mz_after(const sequence::Description& pulse) {
  sequence::Description d = pulse;
  d << sequence::Spoil{} << sequence::Excitation{90.0, 0.0, 0.0}
    << sequence::Readout{0.0, 0.0, true};
  tissue::Tissue t;
  t.voxels = 1;
  return -sample(run_on_backend(d, t, 0), 1, 0, 0).imag();
}

}  // namespace larmor::test
