// Longitudinal relaxation with exchange between pools (kernels/epg/
// pool_exchange.hpp) on one backend, in float, against values derived apart
// from it: an RK4 integration in double of dm/dt = A m + b from the unit
// vectors and from zero (the columns of exp(A dt) and the offset), two and
// three pools, rates from myelin-water and bound-pool models; without exchange
// the closed form exp(-R1 dt) and M0 (1 - exp(-R1 dt)); with detailed balance,
// M0 stays M0.
#pragma once

#include <gtest/gtest.h>

#include "epg/pool_exchange_support.hpp"

namespace larmor::test {

TEST(TEST_CATEGORY, pool_exchange_steps_match_the_integrated_rate_equations) {
  const std::vector<PoolCase> cases = pool_cases();
  const int n = int(cases.size());
  Kokkos::View<PoolCase*, Kokkos::HostSpace> host_cases("pool_cases", n);
  for (int i = 0; i < n; ++i) host_cases(i) = cases[i];
  auto device_cases = Kokkos::create_mirror_view_and_copy(TEST_EXECSPACE(), host_cases);
  // LayoutRight: the kernel writes each row through a pointer to its start.
  Kokkos::View<float**, Kokkos::LayoutRight, TEST_EXECSPACE> out("pool_out", n, 12);
  run_pool_steps(device_cases, out, n);
  auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  for (int i = 0; i < n; ++i) {
    const PoolCase& c = cases[i];
    // Columns of E: from unit vectors with no source (M0 = 0 removes b).
    for (int j = 0; j < c.pools; ++j) {
      PoolCase homogeneous = c;
      for (double& v : homogeneous.m0) v = 0.0;
      double m[3] = {0, 0, 0};
      m[j] = 1.0;
      integrate_pools(homogeneous, m);
      for (int r = 0; r < c.pools; ++r) {
        EXPECT_NEAR(got(i, r * 3 + j), m[r], 2e-6) << "case " << i << " E(" << r << "," << j << ")";
      }
    }
    // The offset: from zero magnetisation.
    double m[3] = {0, 0, 0};
    integrate_pools(c, m);
    for (int r = 0; r < c.pools; ++r) {
      EXPECT_NEAR(got(i, 9 + r), m[r], 2e-6 * (1 + std::fabs(c.m0[r])))
          << "case " << i << " c" << r;
    }
  }
  // No exchange: exp(-R1 dt) and M0 (1 - exp(-R1 dt)) (the last case).
  const PoolCase& none = cases.back();
  for (int r = 0; r < 3; ++r) {
    const double e = std::exp(-none.r1[r] * none.dt);
    EXPECT_NEAR(got(n - 1, r * 3 + r), e, 1e-6);
    EXPECT_NEAR(got(n - 1, 9 + r), none.m0[r] * (1 - e), 1e-6);
  }
  // Detailed balance (the myelin-water cases): M0 is the equilibrium.
  for (int i : {0, 1}) {
    for (int r = 0; r < 2; ++r) {
      double next = got(i, 9 + r);
      for (int j = 0; j < 2; ++j) next += got(i, r * 3 + j) * cases[i].m0[j];
      EXPECT_NEAR(next, cases[i].m0[r], 2e-6) << "case " << i << " pool " << r;
    }
  }
}

}  // namespace larmor::test
