// Longitudinal relaxation with exchange between pools, for the pooled
// layouts (pooled_impl.hpp: myelin water, two free pools; magnetisation
// transfer, a free and a bound pool; three pools).
//
// N pools with longitudinal magnetisation m (each pool's own M0 at
// equilibrium), relaxation rates R1_i, and exchange rates k_ij (from pool i
// to pool j, per second) obey dm/dt = A m + b with
//   A_ii = -R1_i - sum_j k_ij,  A_ji = k_ij (j != i),  b_i = R1_i M0_i.
// Over an interval dt, m(dt) = E m(0) + c with E = exp(A dt) and
// c = int_0^dt exp(A s) b ds, both read from one exponential of the
// augmented (N+1) x (N+1) matrix [[A dt, b dt], [0, 0]] (no inverse of A
// needed). The exponential is by scaling and squaring of a degree-10 Taylor
// polynomial, written over the number type (float, double, dual numbers),
// so derivatives through exchange come from the same code.
#pragma once

#include "common/kokkos_compat.hpp"
#include "common/sincos.hpp"

namespace larmor::epg {

// exp(a) for a small dense matrix (N <= 4). The scaling brings the largest
// absolute row sum to at most 1/2, where the Taylor remainder of degree 10 is
// below 1e-14 relative.
template <int N, class Real>
KOKKOS_INLINE_FUNCTION void small_expm(const Real (&a)[N][N], Real (&out)[N][N]) {
  double norm = 0.0;
  for (int i = 0; i < N; ++i) {
    double row = 0.0;
    for (int j = 0; j < N; ++j) {
      const double v = double(scalar_value(a[i][j]));
      row += v < 0.0 ? -v : v;
    }
    norm = row > norm ? row : norm;
  }
  int squarings = 0;
  double scale = 1.0;
  while (norm * scale > 0.5 && squarings < 60) {
    scale *= 0.5;
    ++squarings;
  }
  Real x[N][N], term[N][N], next[N][N];
  for (int i = 0; i < N; ++i) {
    for (int j = 0; j < N; ++j) {
      x[i][j] = a[i][j] * Real(scale);
      term[i][j] = Real(i == j ? 1.0 : 0.0);
      out[i][j] = term[i][j];
    }
  }
  for (int k = 1; k <= 10; ++k) {  // term = x^k / k!
    for (int i = 0; i < N; ++i) {
      for (int j = 0; j < N; ++j) {
        Real s = Real(0.0);
        for (int m = 0; m < N; ++m) s = s + term[i][m] * x[m][j];
        next[i][j] = s * Real(1.0 / k);
      }
    }
    for (int i = 0; i < N; ++i) {
      for (int j = 0; j < N; ++j) {
        term[i][j] = next[i][j];
        out[i][j] = out[i][j] + term[i][j];
      }
    }
  }
  for (int s = 0; s < squarings; ++s) {
    for (int i = 0; i < N; ++i) {
      for (int j = 0; j < N; ++j) {
        Real v = Real(0.0);
        for (int m = 0; m < N; ++m) v = v + out[i][m] * out[m][j];
        next[i][j] = v;
      }
    }
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < N; ++j) out[i][j] = next[i][j];
  }
}

// The step of N exchanging pools over dt: m(dt) = e m(0) + c. r1: R1 per
// pool (1/s); m0: each pool's equilibrium magnetisation; k[i][j]: exchange
// rate from pool i to pool j (1/s; the diagonal is ignored). Detailed balance
// (k_ij M0_i = k_ji M0_j) makes M0 the equilibrium; the step does not assume
// it.
template <int N, class Real>
struct PoolStep {
  Real e[N][N];
  Real c[N];
};

template <int N, class Real>
KOKKOS_INLINE_FUNCTION PoolStep<N, Real> pool_longitudinal_step(const Real (&r1)[N],
                                                                const Real (&m0)[N],
                                                                const Real (&k)[N][N],
                                                                const Real& dt) {
  Real aug[N + 1][N + 1], ex[N + 1][N + 1];
  for (int i = 0; i <= N; ++i)
    for (int j = 0; j <= N; ++j) aug[i][j] = Real(0.0);
  for (int i = 0; i < N; ++i) {
    Real out_rate = r1[i];
    for (int j = 0; j < N; ++j) {
      if (j == i) continue;
      out_rate = out_rate + k[i][j];
      aug[j][i] = k[i][j] * dt;  // into j from i
    }
    aug[i][i] = -out_rate * dt;
    aug[i][N] = r1[i] * m0[i] * dt;
  }
  small_expm<N + 1>(aug, ex);
  PoolStep<N, Real> step;
  for (int i = 0; i < N; ++i) {
    for (int j = 0; j < N; ++j) step.e[i][j] = ex[i][j];
    step.c[i] = ex[i][N];
  }
  return step;
}

}  // namespace larmor::epg
