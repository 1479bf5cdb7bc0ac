// Helpers of the PoolExchange tests (tstPoolExchange.hpp): references, runs on the backend
// TEST_EXECSPACE names, and the checks the tests share.
#pragma once

#include <gtest/gtest.h>
#include <cmath>
#include <vector>

#include "epg/impl/pool_exchange.hpp"

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

}  // namespace larmor::test
