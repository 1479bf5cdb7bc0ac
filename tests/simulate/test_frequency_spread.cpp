// The Lorentzian spread's grid (simulate/frequency_spread.hpp) against the
// closed form it samples: the sum of its weights times cos(x s) is the
// Lorentzian line's exp(-|s|) within the accuracy, for dephasings up to the
// longest it was built for.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "simulate/frequency_spread.hpp"

namespace {

using larmor::simulate::lorentzian_spread;
using larmor::simulate::lorentzian_spread_size;

TEST(FrequencySpread, sums_to_the_lorentzian_lines_decay) {
  for (double accuracy : {1e-2, 1e-3}) {
    for (double longest : {0.0, 1.0, 5.0, 20.0}) {
      const auto spread = lorentzian_spread(longest, accuracy);
      ASSERT_EQ(spread.size(), lorentzian_spread_size(longest, accuracy));
      EXPECT_NEAR(std::accumulate(spread.weights.begin(), spread.weights.end(), 0.0), 1.0, 1e-12);
      double worst = 0.0;
      const double range = longest;  // what it was built for
      for (int i = 0; i <= 4000; ++i) {
        const double s = range * i / 4000.0;
        double sum = 0.0;
        for (std::size_t k = 0; k < spread.size(); ++k) {
          sum += spread.weights[k] * std::cos(spread.offsets[k] * s);
        }
        worst = std::max(worst, std::abs(sum - std::exp(-s)));
      }
      EXPECT_LT(worst, accuracy) << "accuracy " << accuracy << ", dephasing " << longest;
    }
  }
}

TEST(FrequencySpread, is_symmetric_and_grows_as_one_over_the_accuracy) {
  const auto spread = lorentzian_spread(3.0, 1e-3);
  const std::size_t n = spread.size();
  ASSERT_EQ(n % 2, 1u);
  for (std::size_t k = 0; k < n; ++k) {
    EXPECT_DOUBLE_EQ(spread.offsets[k], -spread.offsets[n - 1 - k]);
    EXPECT_DOUBLE_EQ(spread.weights[k], spread.weights[n - 1 - k]);
  }
  // The widest offset leaves out a tail of accuracy / 2 (4 / (pi accuracy)).
  EXPECT_GE(spread.offsets.back(), 4.0 / (M_PI * 1e-3));
  const double ratio =
      double(lorentzian_spread_size(3.0, 1e-3)) / lorentzian_spread_size(3.0, 1e-2);
  EXPECT_GT(ratio, 8.0);
  EXPECT_LT(ratio, 14.0);
}

}  // namespace
