// The order cap against the double-precision reference (tests/reference)
// truncated at the same highest order: max_order = N keeps orders 0..N, so the
// reference carries N + 1 states. An unspoiled gradient-echo train with one
// shift per repetition and changing flips pulses every order it fills and
// brings states from above order 3 back to the echo, so caps of 2 and 3 change
// the samples: they must match the reference at the same cap and differ from
// it one order either side, which catches an off-by-one in either direction.
// (A Carr-Purcell train with a crusher either side of each pulse would not:
// it pulses odd orders only, so caps 2k - 1 and 2k give the same echoes.)
#include <gtest/gtest.h>

#include <complex>
#include <vector>

#include "reference/epg_reference.hpp"
#include "sequence/operators.hpp"
#include "simulate/simulator.hpp"

namespace larmor {
namespace {

using Complex = std::complex<double>;

sequence::Description unspoiled_gradient_echo(int repetitions) {
  sequence::Description d;
  d.name = "unspoiled gradient echo";
  for (int n = 0; n < repetitions; ++n) {
    d << sequence::Excitation{40.0 + 7.0 * n, 0.0, 0.002}
      << sequence::Readout{0.0, 0.006, true, sequence::AfterReadout::shift};
  }
  return d;
}

double largest_difference(const std::vector<Complex>& a, const std::vector<Complex>& b) {
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

TEST(OrderCap, max_order_n_equals_the_reference_truncated_at_order_n) {
  const sequence::Description d = unspoiled_gradient_echo(12);
  reference::Tissue x;
  x.t1_s = 1.0;
  x.t2_s = 0.1;
  tissue::Tissue t;
  t.voxels = 1;
  t.t1_s.uniform = float(x.t1_s);
  t.t2_s.uniform = float(x.t2_s);
  // Float round-off over the train's 24 events, against differences of 1e-3 and more.
  const double round_off = 2e-6;
  const auto untruncated = reference::simulate(d, x, 64);
  for (int cap : {2, 3}) {
    SCOPED_TRACE("max_order = " + std::to_string(cap));
    const auto want = reference::simulate(d, x, cap + 1);  // orders 0..cap
    const auto fewer = reference::simulate(d, x, cap);
    const auto more = reference::simulate(d, x, cap + 2);
    // The cap matters here, one order either way.
    ASSERT_GT(largest_difference(want, untruncated), 1e-2);
    ASSERT_GT(largest_difference(want, fewer), 1e-2);
    ASSERT_GT(largest_difference(want, more), 1e-3);

    simulate::Options o;
    o.max_order = cap;
    const simulate::Simulator sim(d, o);
    EXPECT_EQ(sim.max_order(), cap);
    EXPECT_EQ(sim.states(), cap + 1);
    const std::vector<float> got = sim.run(t);
    ASSERT_EQ(got.size(), 2 * want.size());
    for (std::size_t n = 0; n < want.size(); ++n) {
      const Complex g(got[2 * n], got[2 * n + 1]);
      EXPECT_LT(std::abs(g - want[n]), round_off)
          << "echo " << n << ": got " << g << ", want " << want[n];
    }
  }
}

}  // namespace
}  // namespace larmor
