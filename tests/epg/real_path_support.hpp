// Helpers of the RealPath tests (tstRealPath.hpp): references, runs on the backend
// TEST_EXECSPACE names, and the checks the tests share.
#pragma once

#include <gtest/gtest.h>
#include <cstdlib>
#include <random>
#include <string>

#include "epg/forward_support.hpp"
#include "sequence/on_axis_trains.hpp"

namespace larmor::test {

namespace real_path {

// A fingerprinting train whose RF phases are whole half turns from 37 deg
// (an anti-CPMG-like alternation), on an axis that is not zero.
inline sequence::Description half_turn_train(int repetitions, unsigned seed) {
  sequence::MrfParams mrf;
  mrf.inversion = false;  // its inversion pulse is at phase 0
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int n = 0; n < repetitions; ++n) {
    mrf.schedule.push_back(
        {0.1 + 0.9 * u(rng), 37.0 + 180.0 * (n % 3), 2e-3 * u(rng), 1e-3 * u(rng)});
  }
  return sequence::build_mrf(mrf);
}

// Sets LARMOR_REAL_PATH for one scope.
struct RealPathSetting : ScopedSetting {
  explicit RealPathSetting(const char* value) : ScopedSetting("LARMOR_REAL_PATH", value) {}
};

}  // namespace real_path

}  // namespace larmor::test
