// Helpers of the Pools tests (tstPools.hpp): references, runs on the backend
// TEST_EXECSPACE names, and the checks the tests share.
#pragma once

#include <gtest/gtest.h>
#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "epg/forward_support.hpp"
#include "reference/pooled_reference.hpp"

namespace larmor::test {

namespace pools {

// Random pooled tissue: maps of every free-pool property, and of the second
// and bound pools' where asked for.
inline tissue::Tissue pooled_tissue(int voxels, unsigned seed, bool second, bool bound,
                                    bool off_resonance = false) {
  tissue::Tissue t = random_tissue(voxels, seed, off_resonance);
  std::mt19937 rng(seed + 77);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int v = 0; v < voxels; ++v) {
    if (second) {
      t.pool_fraction.map.push_back(float(0.05 + 0.2 * u(rng)));
      t.pool_t1_s.map.push_back(float(0.3 + 0.3 * u(rng)));
      t.pool_t2_s.map.push_back(float(0.008 + 0.02 * u(rng)));
      t.pool_exchange_hz.map.push_back(float(2.0 + 18.0 * u(rng)));
    }
    if (bound) {
      t.bound_fraction.map.push_back(float(0.05 + 0.1 * u(rng)));
      t.bound_exchange_hz.map.push_back(float(1.0 + 4.0 * u(rng)));
    }
  }
  if (bound) t.bound_t1_s.uniform = 1.0f;
  return t;
}

inline reference::PooledTissue pooled_voxel(const tissue::Tissue& t, std::int64_t v) {
  reference::PooledTissue r;
  r.free = voxel_of(t, v);
  r.pool_fraction = t.pool_fraction.at(v);
  r.pool_t1_s = t.pool_t1_s.at(v);
  r.pool_t2_s = t.pool_t2_s.at(v);
  r.pool_exchange_hz = t.pool_exchange_hz.at(v);
  r.bound_fraction = t.bound_fraction.at(v);
  r.bound_t1_s = t.bound_t1_s.at(v);
  r.bound_exchange_hz = t.bound_exchange_hz.at(v);
  r.bound_lineshape = t.bound_lineshape;
  r.bound_t2_s = t.bound_t2_s;
  return r;
}

inline void expect_pooled_matches_reference(const sequence::Description& d, const tissue::Tissue& t,
                                            int orders) {
  expect_matches(d, t, orders, [&](std::int64_t v, int resolved) {
    return reference::simulate_pooled(d, pooled_voxel(t, v), resolved);
  });
}

using Matrix = std::vector<std::vector<double>>;

// Real eigenvalues of a 2x2 or 3x3 matrix with real spectrum (exchange
// matrices under detailed balance are similar to symmetric ones): the
// quadratic formula, or the trigonometric solution of the cubic.
inline std::vector<double> real_eigenvalues(const Matrix& a) {
  if (a.size() == 2) {
    const double tr = a[0][0] + a[1][1], det = a[0][0] * a[1][1] - a[0][1] * a[1][0];
    const double disc = std::sqrt(std::max(0.0, tr * tr / 4 - det));
    return {tr / 2 + disc, tr / 2 - disc};
  }
  // det(lambda I - A) = lambda^3 + b lambda^2 + c lambda + d
  const double b = -(a[0][0] + a[1][1] + a[2][2]);
  const double c = a[0][0] * a[1][1] - a[0][1] * a[1][0] + a[0][0] * a[2][2] - a[0][2] * a[2][0] +
                   a[1][1] * a[2][2] - a[1][2] * a[2][1];
  const double d = -(a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
                     a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
                     a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]));
  const double p = c - b * b / 3, q = 2 * b * b * b / 27 - b * c / 3 + d;
  // Three real roots: p < 0, t_k = 2 sqrt(-p/3) cos(acos(3q/(2p) sqrt(-3/p))/3 - 2 pi k/3).
  const double r = std::sqrt(-p / 3);
  const double phi = std::acos(std::clamp(3 * q / (2 * p) * std::sqrt(-3 / p), -1.0, 1.0));
  std::vector<double> out;
  for (int k = 0; k < 3; ++k) out.push_back(2 * r * std::cos(phi / 3 - 2 * M_PI * k / 3) - b / 3);
  return out;
}

// Sylvester's formula: exp(A t) = sum_i exp(l_i t) prod_{j != i} (A - l_j) / (l_i - l_j).
inline Matrix sylvester_expm(const Matrix& a, double t) {
  const std::size_t n = a.size();
  const auto l = real_eigenvalues(a);
  Matrix out(n, std::vector<double>(n, 0.0));
  for (std::size_t i = 0; i < n; ++i) {
    Matrix term(n, std::vector<double>(n, 0.0));
    for (std::size_t r = 0; r < n; ++r) term[r][r] = 1.0;
    for (std::size_t j = 0; j < n; ++j) {
      if (j == i) continue;
      Matrix next(n, std::vector<double>(n, 0.0));
      for (std::size_t r = 0; r < n; ++r)
        for (std::size_t c = 0; c < n; ++c)
          for (std::size_t m = 0; m < n; ++m)
            next[r][c] += term[r][m] * (a[m][c] - (m == c ? l[j] : 0.0)) / (l[i] - l[j]);
      term = next;
    }
    for (std::size_t r = 0; r < n; ++r)
      for (std::size_t c = 0; c < n; ++c) out[r][c] += std::exp(l[i] * t) * term[r][c];
  }
  return out;
}

// The longitudinal rate matrix of pools with these R1, equilibria and
// forward rates (k[i][j] from i to j, back rates by detailed balance).
inline Matrix rate_matrix(const std::vector<double>& r1, const Matrix& k) {
  const std::size_t n = r1.size();
  Matrix a(n, std::vector<double>(n, 0.0));
  for (std::size_t i = 0; i < n; ++i) {
    a[i][i] = -r1[i];
    for (std::size_t j = 0; j < n; ++j) {
      if (j == i) continue;
      a[i][i] -= k[i][j];
      a[j][i] += k[i][j];
    }
  }
  return a;
}

// Z(t) = exp(A t) (Z(0) - eq) + eq.
inline std::vector<double> relax_towards(const Matrix& a, const std::vector<double>& z0,
                                         const std::vector<double>& eq, double t) {
  const auto e = sylvester_expm(a, t);
  std::vector<double> z(eq);
  for (std::size_t i = 0; i < eq.size(); ++i)
    for (std::size_t j = 0; j < eq.size(); ++j) z[i] += e[i][j] * (z0[j] - eq[j]);
  return z;
}

inline sequence::Event event(abi::EventKind kind, double flip_deg, double duration_s,
                             std::uint32_t act = 0) {
  sequence::Event e;
  e.kind = kind;
  e.flip_rad = flip_deg * M_PI / 180.0;
  e.duration_s = duration_s;
  e.action = act;
  return e;
}

}  // namespace pools

}  // namespace larmor::test
