// Longitudinal relaxation with exchange between pools (kernels/epg/
// pool_exchange.hpp) on one backend, in float, against values derived apart
// from it: an RK4 integration in double of dm/dt = A m + b from the unit
// vectors and from zero (the columns of exp(A dt) and the offset), two and
// three pools, rates from myelin-water and bound-pool models; without
// exchange the closed form exp(-R1 dt) and M0 (1 - exp(-R1 dt)); with
// detailed balance, M0 stays M0. Included by tests/backends/forward_<backend>.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "epg/pool_exchange.hpp"

namespace larmor::test {

struct PoolCase {
  int pools;
  double r1[3], m0[3], k[3][3], dt;
};

// dm/dt = A m + b in double by RK4 (fine steps), from m.
inline void integrate_pools(const PoolCase& c, double m[3]) {
  const int n = c.pools, steps = 20000;
  const double h = c.dt / steps;
  auto rhs = [&](const double* y, double* out) {
    for (int i = 0; i < n; ++i) {
      double d = c.r1[i] * (c.m0[i] - y[i]);
      for (int j = 0; j < n; ++j) {
        if (j == i) continue;
        d += c.k[j][i] * y[j] - c.k[i][j] * y[i];
      }
      out[i] = d;
    }
  };
  for (int s = 0; s < steps; ++s) {
    double k1[3], k2[3], k3[3], k4[3], y[3];
    rhs(m, k1);
    for (int i = 0; i < n; ++i) y[i] = m[i] + 0.5 * h * k1[i];
    rhs(y, k2);
    for (int i = 0; i < n; ++i) y[i] = m[i] + 0.5 * h * k2[i];
    rhs(y, k3);
    for (int i = 0; i < n; ++i) y[i] = m[i] + h * k3[i];
    rhs(y, k4);
    for (int i = 0; i < n; ++i) m[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
  }
}

inline std::vector<PoolCase> pool_cases() {
  std::vector<PoolCase> cases;
  // Myelin water (two free pools): T1 0.5 / 1.0 s, M0 0.15 / 0.85, exchange
  // 10 / s from myelin to intra/extra-cellular water, balanced back.
  PoolCase mw{
      2, {2.0, 1.0, 0}, {0.15, 0.85, 0}, {{0, 10.0, 0}, {10.0 * 0.15 / 0.85, 0, 0}, {}}, 0.005};
  cases.push_back(mw);
  mw.dt = 0.8;  // long against every rate: near equilibrium
  cases.push_back(mw);
  // Free and bound pool (MT): R1 1 / s both, pool-size ratio 0.15, kf 4 / s.
  PoolCase mt{2, {1.0, 1.0, 0}, {1.0, 0.15, 0}, {{0, 4.0, 0}, {4.0 / 0.15, 0, 0}, {}}, 0.01};
  cases.push_back(mt);
  // Three pools (two free, one bound), not balanced (the step must not assume it).
  PoolCase three{
      3, {2.0, 0.9, 1.0}, {0.12, 0.75, 0.13}, {{0, 8.0, 3.0}, {1.5, 0, 2.5}, {20.0, 9.0, 0}}, 0.02};
  cases.push_back(three);
  // No exchange: single-pool recovery per pool.
  PoolCase none{3, {1.0, 3.0, 10.0}, {1.0, 0.5, 0.2}, {}, 0.05};
  cases.push_back(none);
  return cases;
}

template <int N>
KOKKOS_INLINE_FUNCTION void pool_step_on_device(const PoolCase& c, float* out) {
  float r1[N], m0[N], k[N][N];
  for (int i = 0; i < N; ++i) {
    r1[i] = float(c.r1[i]);
    m0[i] = float(c.m0[i]);
    for (int j = 0; j < N; ++j) k[i][j] = float(c.k[i][j]);
  }
  const auto step = epg::pool_longitudinal_step<N>(r1, m0, k, float(c.dt));
  for (int i = 0; i < N; ++i) {
    for (int j = 0; j < N; ++j) out[i * 3 + j] = step.e[i][j];
    out[9 + i] = step.c[i];
  }
}

// The steps on the backend (outside the TEST body: nvcc's extended lambdas
// cannot live in a private member function).
template <class Cases, class Out>
void run_pool_steps(const Cases& device_cases, const Out& out, int n) {
  Kokkos::parallel_for(
      "pool_steps", Kokkos::RangePolicy<TEST_EXECSPACE>(0, n), KOKKOS_LAMBDA(int i) {
        float* o = &out(i, 0);
        if (device_cases(i).pools == 2) {
          pool_step_on_device<2>(device_cases(i), o);
        } else {
          pool_step_on_device<3>(device_cases(i), o);
        }
      });
}

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
