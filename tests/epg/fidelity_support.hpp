// Helpers of the Fidelity tests (tstFidelity.hpp): references, runs on the backend
// TEST_EXECSPACE names, and the checks the tests share.
#pragma once

#include <gtest/gtest.h>
#include <cmath>
#include <complex>
#include <vector>

#include "sequence/builders/builders.hpp"
#include "sequence/operators.hpp"

namespace larmor::test {

namespace fidelity {

// A CPMG train written with the operators as a user would: each then_s is
// the free time after the instant's lobes, so with lobes of tau the echo
// spacing is 2 (then_s + tau) and echo n comes at n ESP.
inline sequence::Description cpmg_with_lobes(int echoes, double esp_s, double lobe_s,
                                             double moment_per_m) {
  using namespace sequence;
  Description d;
  d.name = "cpmg-lobes";
  const double free_s = 0.5 * esp_s - lobe_s;
  d << Excitation{90.0, 0.0, free_s};
  for (int n = 0; n < echoes; ++n) {
    d << Refocusing{180.0, 90.0, free_s} << Readout{0.0, free_s};
  }
  d.crusher.moment_per_m = moment_per_m;
  d.crusher.duration_s = lobe_s;
  return d;
}

}  // namespace fidelity

namespace fidelity {

// An inversion-prepared, ideally spoiled gradient-echo train whose inversion
// B1 does not scale, for voxels at several B1.
inline sequence::MprageParams unscaled_inversion_train() {
  sequence::MprageParams p;
  p.inversion_b1_scaled = false;
  p.ti_s = 0.3;
  p.readouts = 24;
  p.flip_deg = 25.0;
  p.tr_s = 0.01;
  p.te_s = 0.004;
  p.recovery_s = 0.0;
  p.shots = 1;
  p.spoiler = sequence::Spoiler::ideal;
  return p;
}

// Readout n of that train: y_n = -i M0 sin(a) Mz_n E2(TE), a = B1 x flip,
// with Mz_0 = 1 - 2 E1(TI) after an ideal inversion (scaled: cos(pi B1) E1(TI)
// + 1 - E1(TI)) and Mz_{n+1} = Mz_n cos(a) E1(TR) + 1 - E1(TR).
inline std::vector<double> longitudinal_recurrence(const sequence::MprageParams& p, double t1,
                                                   double t2, double b1, bool inversion_scaled) {
  const double a = b1 * p.flip_deg * M_PI / 180.0;
  const double e_ti = std::exp(-p.ti_s / t1), e_tr = std::exp(-p.tr_s / t1);
  const double inversion = inversion_scaled ? std::cos(M_PI * b1) : -1.0;
  double mz = inversion * e_ti + 1.0 - e_ti;
  std::vector<double> s;
  for (int n = 0; n < p.readouts; ++n) {
    s.push_back(std::sin(a) * mz * std::exp(-p.te_s / t2));
    mz = mz * std::cos(a) * e_tr + 1.0 - e_tr;
  }
  return s;
}

}  // namespace fidelity

}  // namespace larmor::test
