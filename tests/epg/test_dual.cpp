// Dual numbers and the operator bodies instantiated at them: every tangent
// against a central finite difference of the same operator in double. This
// is the forward-mode foundation the derivative kernels build on.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <functional>
#include <random>

#include "common/dual.hpp"
#include "epg/impl/operators.hpp"
#include "epg/impl/pool_exchange.hpp"
#include "simulate/closed_form.hpp"

namespace larmor::epg {
namespace {

constexpr double kStep = 1e-6;
// Central differences err by O(h^2 f''') ~ 1e-12 here; rounding in f(x+h) -
// f(x-h) adds ~1e-16 / h = 1e-10.
constexpr double kTolerance = 1e-8;

template <int N>
using D = Dual<double, N>;

// Central difference of every output of f with respect to input k.
template <std::size_t In, std::size_t Out>
std::array<double, Out> central_difference(
    const std::function<std::array<double, Out>(const std::array<double, In>&)>& f,
    std::array<double, In> x, std::size_t k) {
  std::array<double, In> up = x, down = x;
  up[k] += kStep;
  down[k] -= kStep;
  const auto a = f(up), b = f(down);
  std::array<double, Out> d{};
  for (std::size_t i = 0; i < Out; ++i) d[i] = (a[i] - b[i]) / (2 * kStep);
  return d;
}

TEST(Dual, arithmetic_follows_the_chain_rule) {
  // f(x, y) = x y + x / y - exp(x) - 3, at (0.7, 1.9)
  const double x = 0.7, y = 1.9;
  const auto dx = D<2>::variable(x, 0), dy = D<2>::variable(y, 1);
  const auto f = dx * dy + dx / dy - exp(dx) - 3.0;
  EXPECT_NEAR(f.value, x * y + x / y - std::exp(x) - 3.0, 1e-15);
  EXPECT_NEAR(f.tangent[0], y + 1 / y - std::exp(x), 1e-14);
  EXPECT_NEAR(f.tangent[1], x - x / (y * y), 1e-14);
  D<1> s, c;
  sincos_reduced(D<1>::variable(0.3, 0) * 2.0, s, c);
  EXPECT_NEAR(s.tangent[0], 2 * std::cos(0.6), 1e-15);
  EXPECT_NEAR(c.tangent[0], -2 * std::sin(0.6), 1e-15);
}

// The RF rotation as a function of (flip, phase, six state components).
std::array<double, 6> rotate_double(const std::array<double, 8>& in) {
  double s[6] = {in[2], in[3], in[4], in[5], in[6], in[7]};
  rotate(make_flip(in[0]), make_phase(std::cos(in[1]), std::sin(in[1])), s[0], s[1], s[2], s[3],
         s[4], s[5]);
  return {s[0], s[1], s[2], s[3], s[4], s[5]};
}

TEST(Dual, rotation_tangents_match_finite_differences) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int trial = 0; trial < 20; ++trial) {
    std::array<double, 8> x;
    for (auto& v : x) v = u(rng);
    x[0] *= 3.0;  // flip
    x[1] *= 6.0;  // phase
    // All eight inputs at once.
    std::array<D<8>, 8> dx;
    for (int k = 0; k < 8; ++k) dx[std::size_t(k)] = D<8>::variable(x[std::size_t(k)], k);
    D<8> cp, sp;
    sincos_reduced(dx[1], sp, cp);
    D<8> s[6] = {dx[2], dx[3], dx[4], dx[5], dx[6], dx[7]};
    rotate(make_flip(dx[0]), make_phase(cp, sp), s[0], s[1], s[2], s[3], s[4], s[5]);
    const auto want_value = rotate_double(x);
    for (std::size_t k = 0; k < 8; ++k) {
      const auto fd = central_difference<8, 6>(rotate_double, x, k);
      for (std::size_t i = 0; i < 6; ++i) {
        EXPECT_NEAR(s[i].value, want_value[i], 1e-15);
        EXPECT_NEAR(s[i].tangent[k], fd[i], kTolerance) << "output " << i << ", input " << k;
      }
    }
  }
}

// Free evolution as a function of (t, r1, r2, df, F+, F-, Z of an order > 0
// and Z_0).
std::array<double, 8> evolve_double(const std::array<double, 10>& in) {
  const auto ev = make_evolution(in[0], in[1], in[2], in[3]);
  double fp_re = in[4], fp_im = in[5], fm_re = in[6], fm_im = in[7], z = in[8], zi = 0.0,
         z0 = in[9], z0i = 0.0;
  evolve_transverse(ev, fp_re, fp_im, fm_re, fm_im);
  evolve_longitudinal(ev, false, z, zi);
  evolve_longitudinal(ev, true, z0, z0i);
  return {fp_re, fp_im, fm_re, fm_im, z, z0, ev.e1, ev.e2};
}

TEST(Dual, evolution_tangents_match_finite_differences) {
  const std::array<double, 10> x = {0.013, 1.0 / 0.9, 1.0 / 0.07, 31.0, 0.3,
                                    -0.2,  0.1,       0.4,        0.25, -0.6};
  std::array<D<10>, 10> dx;
  for (int k = 0; k < 10; ++k) dx[std::size_t(k)] = D<10>::variable(x[std::size_t(k)], k);
  const auto ev = make_evolution(dx[0], dx[1], dx[2], dx[3]);
  D<10> fp_re = dx[4], fp_im = dx[5], fm_re = dx[6], fm_im = dx[7], z = dx[8], zi(0.0), z0 = dx[9],
        z0i(0.0);
  evolve_transverse(ev, fp_re, fp_im, fm_re, fm_im);
  evolve_longitudinal(ev, false, z, zi);
  evolve_longitudinal(ev, true, z0, z0i);
  const D<10> out[8] = {fp_re, fp_im, fm_re, fm_im, z, z0, ev.e1, ev.e2};
  for (std::size_t k = 0; k < 10; ++k) {
    const auto fd = central_difference<10, 8>(evolve_double, x, k);
    for (std::size_t i = 0; i < 8; ++i) {
      EXPECT_NEAR(out[i].tangent[k], fd[i], kTolerance * std::max(1.0, std::abs(fd[i])))
          << "output " << i << ", input " << k;
    }
  }
}

TEST(Dual, receiver_tangents_are_exact) {
  // s = M0 F+ e^{-i phase}: ds/dM0 = F+ e^{-i phase}, ds/dphase = -i s.
  const double m0 = 1.3, phase = 0.4, fre = 0.2, fim = -0.5;
  const auto dm0 = D<2>::variable(m0, 0), dphase = D<2>::variable(phase, 1);
  D<2> sp, cp;
  sincos_reduced(dphase, sp, cp);
  D<2> re, im;
  demodulate(dm0, D<2>(fre), D<2>(fim), cp, sp, re, im);
  EXPECT_NEAR(re.tangent[0], re.value / m0, 1e-15);
  EXPECT_NEAR(im.tangent[0], im.value / m0, 1e-15);
  EXPECT_NEAR(re.tangent[1], im.value, 1e-15);   // Re(-i s) = Im s
  EXPECT_NEAR(im.tangent[1], -re.value, 1e-15);  // Im(-i s) = -Re s
}

// The Ernst signal differentiated by dual numbers against its derivatives
// written out by hand: with S = M0 sin a (1 - E1) / (1 - E1 cos a) E2,
//   dS/da  = M0 E2 (1 - E1)(cos a - E1) / (1 - E1 cos a)^2
//   dS/dT1 = M0 E2 sin a (cos a - 1) / (1 - E1 cos a)^2 * E1 TR / T1^2
//   dS/dT2 = S TE / T2^2,   dS/dM0 = S / M0.
TEST(Dual, ernst_signal_derivatives_match_their_closed_forms) {
  const double a = 0.35, tr = 0.008, t1 = 0.9, t2 = 0.06, te = 0.003, m0 = 1.7;
  const auto s = simulate::ernst_expression(D<4>::variable(a, 0), D<4>(tr), D<4>::variable(t1, 1),
                                            D<4>::variable(t2, 2), D<4>(te), D<4>::variable(m0, 3));
  const double e1 = std::exp(-tr / t1), e2 = std::exp(-te / t2);
  const double q = 1 - e1 * std::cos(a);
  EXPECT_NEAR(s.value, simulate::ernst_signal(a, tr, t1, t2, te, m0), 1e-15);
  EXPECT_NEAR(s.tangent[0], m0 * e2 * (1 - e1) * (std::cos(a) - e1) / (q * q), 1e-13);
  EXPECT_NEAR(s.tangent[1],
              m0 * e2 * std::sin(a) * (std::cos(a) - 1) / (q * q) * e1 * tr / (t1 * t1), 1e-13);
  EXPECT_NEAR(s.tangent[2], s.value * te / (t2 * t2), 1e-13);
  EXPECT_NEAR(s.tangent[3], s.value / m0, 1e-15);
}

// The pool-exchange step over dual numbers: tangents along the exchange rate
// k_ab, R1 of pool b and the interval against central differences of the
// double-precision step (two pools, M0 0.15 / 0.85).
TEST(Dual, pool_exchange_tangents_match_finite_differences) {
  using F = std::function<std::array<double, 6>(const std::array<double, 3>&)>;
  auto step_of = [](const auto& kab, const auto& r1b, const auto& dt) {
    using R = std::decay_t<decltype(kab)>;
    const R r1[2] = {R(2.0), r1b}, m0[2] = {R(0.15), R(0.85)};
    const R k[2][2] = {{R(0.0), kab}, {kab * R(0.15 / 0.85), R(0.0)}};
    return pool_longitudinal_step<2>(r1, m0, k, dt);
  };
  const F f = [&](const std::array<double, 3>& x) {
    const auto s = step_of(x[0], x[1], x[2]);
    return std::array<double, 6>{s.e[0][0], s.e[0][1], s.e[1][0], s.e[1][1], s.c[0], s.c[1]};
  };
  const std::array<double, 3> x = {12.0, 1.1, 0.03};
  const auto s = step_of(D<3>::variable(x[0], 0), D<3>::variable(x[1], 1), D<3>::variable(x[2], 2));
  const D<3> got[6] = {s.e[0][0], s.e[0][1], s.e[1][0], s.e[1][1], s.c[0], s.c[1]};
  const auto value = f(x);
  for (std::size_t k = 0; k < 3; ++k) {
    const auto fd = central_difference<3, 6>(f, x, k);
    for (std::size_t i = 0; i < 6; ++i) {
      EXPECT_NEAR(got[i].value, value[i], 1e-15);
      EXPECT_NEAR(got[i].tangent[k], fd[i], kTolerance) << "output " << i << " direction " << k;
    }
  }
}

}  // namespace
}  // namespace larmor::epg
