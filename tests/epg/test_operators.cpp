// The per-order operator bodies of kernels/epg/impl/operators.hpp, instantiated at
// double on the host, against the reference's explicit matrices and against
// closed forms; and the one-reduction sincos against the C library.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <random>

#include "epg/impl/adjoint_impl.hpp"
#include "epg/impl/operators.hpp"
#include "reference/epg_reference.hpp"

namespace larmor::epg {
namespace {

using Complex = std::complex<double>;

TEST(Sincos, one_reduction_is_within_two_ulp_of_libm) {
  double worst = 0.0;
  for (int i = -200000; i <= 200000; ++i) {
    const float x = float(i) * 2.5e-4f;  // [-50, 50] rad: every flip angle times B1
    float s, c;
    sincos_reduced(x, s, c);
    worst = std::max({worst, std::abs(double(s) - std::sin(double(x))),
                      std::abs(double(c) - std::cos(double(x)))});
  }
  // Results lie in [-1, 1], where two float ulps are at most 1.2e-7.
  EXPECT_LE(worst, 1.2e-7);
}

// Quarter turns (the PERK kernels' angles): against libm in double at the
// same angle (t pi / 2 exactly), over the range PERK's angles take and out to
// large |t|, where the reduction t - rint(t) stays exact.
TEST(Sincos, quarter_turns_are_within_two_ulp_of_libm) {
  double worst = 0.0;
  for (int i = -400000; i <= 400000; ++i) {
    for (float scale : {1.0f, 1024.0f}) {
      const float t = float(i) * 3.1e-4f * scale;  // [-124, 124] and [-1.3e5, 1.3e5]
      float s, c;
      sincos_quarter_turns(t, s, c);
      const double x = double(t) * (M_PI / 2);
      const double err =
          std::max(std::abs(double(s) - std::sin(x)), std::abs(double(c) - std::cos(x)));
      worst = std::max({worst, err, std::abs(double(cos_quarter_turns(t)) - std::cos(x))});
    }
  }
  EXPECT_LE(worst, 1.2e-7);
}

// sin(r) / r and cos(r) from r^2 (the isochromat engine's small turns):
// against libm in double at the same r^2, relative for the sinc, whose
// value near 1 carries the turn's own precision at the smallest angles.
TEST(Sincos, sinc_and_cosine_of_a_square_are_within_two_ulp_of_libm) {
  double worst = 0.0;
  for (int i = 0; i <= 200000; ++i) {
    for (float scale : {1.0f, 1e-3f, 1e-7f}) {
      const float r2 = float(i) * 3.0842e-6f * scale;  // up to (pi / 4)^2
      float sinc, c;
      sinc_cos_of_square(r2, sinc, c);
      const double r = std::sqrt(double(r2));
      const double exact_sinc = r == 0.0 ? 1.0 : std::sin(r) / r;
      worst = std::max({worst, std::abs(double(sinc) - exact_sinc) / exact_sinc,
                        std::abs(double(c) - std::cos(r))});
    }
  }
  EXPECT_LE(worst, 1.2e-7);
}

TEST(Sincos, turns_keep_the_fractional_phase) {
  for (double turns : {0.0, 0.25, 12.125, -7.75, 1000.5}) {
    double s, c;
    sincos_turns(turns, s, c);
    const double frac = turns - std::nearbyint(turns);
    EXPECT_NEAR(s, std::sin(2 * M_PI * frac), 1e-12) << turns;
    EXPECT_NEAR(c, std::cos(2 * M_PI * frac), 1e-12) << turns;
  }
}

TEST(Rotation, equals_the_reference_matrix_on_random_states) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int trial = 0; trial < 200; ++trial) {
    const double flip = 4.0 * u(rng), phase = 10.0 * u(rng);
    const Complex fp(u(rng), u(rng)), fm(u(rng), u(rng)), z(u(rng), u(rng));
    const auto m = reference::rf_matrix(flip, phase);
    const Complex want[3] = {m[0][0] * fp + m[0][1] * fm + m[0][2] * z,
                             m[1][0] * fp + m[1][1] * fm + m[1][2] * z,
                             m[2][0] * fp + m[2][1] * fm + m[2][2] * z};
    double a = fp.real(), b = fp.imag(), c = fm.real(), d = fm.imag(), e = z.real(), f = z.imag();
    rotate(make_flip(flip), make_phase(std::cos(phase), std::sin(phase)), a, b, c, d, e, f);
    EXPECT_NEAR(std::abs(Complex(a, b) - want[0]), 0.0, 1e-14);
    EXPECT_NEAR(std::abs(Complex(c, d) - want[1]), 0.0, 1e-14);
    EXPECT_NEAR(std::abs(Complex(e, f) - want[2]), 0.0, 1e-14);
  }
}

// The reverse sweep's transposes, through <lambda, A s> = <A^T lambda, s> with
// the real inner product over real and imaginary parts.
TEST(Adjoint, rotation_and_evolution_transposes_satisfy_the_dot_product_identity) {
  std::mt19937 rng(12);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int trial = 0; trial < 100; ++trial) {
    double s[6], l[6];
    for (int i = 0; i < 6; ++i) {
      s[i] = u(rng);
      l[i] = u(rng);
    }
    const double phase = 10.0 * u(rng);
    const auto r =
        make_rotation(make_flip(4.0 * u(rng)), make_phase(std::cos(phase), std::sin(phase)));
    double as[6] = {s[0], s[1], s[2], s[3], s[4], s[5]};
    rotate(r, as[0], as[1], as[2], as[3], as[4], as[5]);
    double al[6] = {l[0], l[1], l[2], l[3], l[4], l[5]};
    rotate(adjoint_rotation(r), al[0], al[1], al[2], al[3], al[4], al[5]);
    double lhs = 0.0, rhs = 0.0;
    for (int i = 0; i < 6; ++i) {
      lhs += l[i] * as[i];
      rhs += al[i] * s[i];
    }
    EXPECT_NEAR(lhs, rhs, 1e-14);
    // Evolution: the transverse part's transpose is the conjugate factor.
    const auto ev = make_evolution(0.01 * (1.0 + u(rng)), 1.5, 20.0, 40.0 * u(rng));
    double es[4] = {s[0], s[1], s[2], s[3]}, el[4] = {l[0], l[1], l[2], l[3]};
    evolve_transverse(ev, es[0], es[1], es[2], es[3]);
    auto conj_ev = ev;
    conj_ev.rot_im = -ev.rot_im;
    evolve_transverse(conj_ev, el[0], el[1], el[2], el[3]);
    lhs = rhs = 0.0;
    for (int i = 0; i < 4; ++i) {
      lhs += l[i] * es[i];
      rhs += el[i] * s[i];
    }
    EXPECT_NEAR(lhs, rhs, 1e-14);
  }
}

// The shift moves and conjugates, so its transpose is exact in float too.
TEST(Adjoint, unshift_is_the_transpose_of_shift) {
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int n : {1, 2, 5, 8}) {
    adjoint_detail::PlainState<8, float> s{}, l{};
    for (int c = 0; c < 6; ++c) {
      for (int k = 0; k < n; ++k) {
        s.component(c)[k] = u(rng);
        l.component(c)[k] = u(rng);
      }
    }
    auto shifted = s;
    shifted.shift(n);
    auto unshifted = l;
    unshifted.unshift(n);
    double lhs = 0.0, rhs = 0.0;
    for (int c = 0; c < 6; ++c) {
      for (int k = 0; k < n; ++k) {
        lhs += double(l.component(c)[k]) * shifted.component(c)[k];
        rhs += double(unshifted.component(c)[k]) * s.component(c)[k];
      }
    }
    EXPECT_DOUBLE_EQ(lhs, rhs) << "orders " << n;
  }
}

TEST(Rotation, a_90_degree_pulse_tips_equilibrium_to_minus_i_e_ip) {
  const double phase = 0.7;
  double a = 0, b = 0, c = 0, d = 0, e = 1, f = 0;
  rotate(make_flip(M_PI / 2), make_phase(std::cos(phase), std::sin(phase)), a, b, c, d, e, f);
  const Complex want = Complex(0, -1) * std::exp(Complex(0, phase));
  EXPECT_NEAR(std::abs(Complex(a, b) - want), 0.0, 1e-15);
  EXPECT_NEAR(std::abs(Complex(c, d) - std::conj(want)), 0.0, 1e-15);
  EXPECT_NEAR(std::abs(Complex(e, f)), 0.0, 1e-15);
}

TEST(Evolution, relaxes_recovers_and_precesses) {
  const double t = 0.013, t1 = 0.8, t2 = 0.07, df = 23.0;
  const auto ev = make_evolution(t, 1.0 / t1, 1.0 / t2, df);
  double a = 0.3, b = -0.2, c = 0.3, d = 0.2, z0 = 0.25, z0i = 0.0, z1 = 0.5, z1i = 0.1;
  evolve_transverse(ev, a, b, c, d);
  evolve_longitudinal(ev, true, z0, z0i);
  evolve_longitudinal(ev, false, z1, z1i);
  const double e1 = std::exp(-t / t1), e2 = std::exp(-t / t2);
  const Complex turn = std::exp(Complex(0, 2 * M_PI * df * t));
  EXPECT_NEAR(std::abs(Complex(a, b) - e2 * turn * Complex(0.3, -0.2)), 0.0, 1e-15);
  EXPECT_NEAR(std::abs(Complex(c, d) - e2 * std::conj(turn) * Complex(0.3, 0.2)), 0.0, 1e-15);
  EXPECT_NEAR(z0, 0.25 * e1 + 1 - e1, 1e-15);
  EXPECT_NEAR(z1, 0.5 * e1, 1e-15);
  EXPECT_NEAR(z1i, 0.1 * e1, 1e-15);
}

TEST(Receiver, demodulates_by_the_adc_phase) {
  double re, im;
  demodulate(2.0, 0.0, 1.0, std::cos(0.5), std::sin(0.5), re, im);
  const Complex want = 2.0 * Complex(0, 1) * std::exp(Complex(0, -0.5));
  EXPECT_NEAR(re, want.real(), 1e-15);
  EXPECT_NEAR(im, want.imag(), 1e-15);
}

}  // namespace
}  // namespace larmor::epg
