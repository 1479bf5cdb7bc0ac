// The declared terms on one backend: diffusion, flow (phase and washout) and a
// transmit array, against closed forms written out here, against the
// double-precision reference (which models each term from its own signed
// order), in every mode, and absent unless declared.
#pragma once

#include <gtest/gtest.h>

#include "epg/derivatives_support.hpp"
#include "epg/forward_support.hpp"
#include "epg/hessian_support.hpp"
#include "epg/terms_support.hpp"

namespace larmor::test {

TEST(TEST_CATEGORY, diffusion_spin_echo_follows_stejskal_tanner) {
  const double adc = 2.0e-9, moment = 10000.0, q = 2 * M_PI * moment, gap = 0.04;
  for (double lobe : {0.0, 0.004, 0.012}) {
    SCOPED_TRACE("lobe " + std::to_string(lobe));
    const Complex got =
        terms::first_sample(terms::spin_echo(gap, moment, lobe), terms::still_voxel(adc, 0.0));
    const double b = terms::stejskal_tanner_b(q, lobe, gap + lobe);
    ASSERT_GT(adc * b, 0.3);  // a real attenuation, not a rounding
    const Complex want = Complex(0.0, -1.0) * std::exp(-adc * b);
    EXPECT_LT(std::abs(got - want), 2e-6) << got << " against " << want;
  }
}

TEST(TEST_CATEGORY, diffusion_stimulated_echo_attenuates_the_stored_pattern) {
  const double adc = 1.0e-9, moment = 8000.0, q = 2 * M_PI * moment, mixing = 0.15;
  for (double lobe : {0.0, 0.006}) {
    SCOPED_TRACE("lobe " + std::to_string(lobe));
    const Complex got = terms::first_sample(terms::stimulated_echo(mixing, moment, lobe),
                                            terms::still_voxel(adc, 0.0));
    const double b = terms::stejskal_tanner_b(q, lobe, mixing + lobe);
    const Complex want = Complex(0.0, 0.5) * std::exp(-adc * b);
    EXPECT_LT(std::abs(got - want), 2e-6) << got << " against " << want;
  }
}

// A spin at x0 + v t sees the phase q x of each lobe at the lobe's mean
// position; the refocusing pulse negates the first, so the echo keeps
// q v (distance between the lobes' centres) = q v (Delta + tau). A stored
// pattern keeps moving during the mixing time: the same with Delta = TM.
TEST(TEST_CATEGORY, flow_phase_is_the_velocity_times_the_first_moment) {
  const double moment = 400.0, q = 2 * M_PI * moment;
  for (double v : {0.03, -0.11}) {
    for (double lobe : {0.0, 0.003}) {
      SCOPED_TRACE("v " + std::to_string(v) + ", lobe " + std::to_string(lobe));
      const double gap = 0.02, mixing = 0.05;
      const Complex se =
          terms::first_sample(terms::spin_echo(gap, moment, lobe), terms::still_voxel(0.0, v));
      const Complex want_se = Complex(0.0, -1.0) * std::polar(1.0, q * v * (gap + lobe));
      EXPECT_LT(std::abs(se - want_se), 1e-5) << se << " against " << want_se;
      const Complex ste = terms::first_sample(terms::stimulated_echo(mixing, moment, lobe),
                                              terms::still_voxel(0.0, v));
      const Complex want_ste = Complex(0.0, 0.5) * std::polar(1.0, q * v * (mixing + lobe));
      EXPECT_LT(std::abs(ste - want_ste), 1e-5) << ste << " against " << want_ste;
    }
  }
}

// Inversion recovery with through-plane flow: spins leaving the slice at
// |v| / thickness per second are replaced by relaxed ones, so Mz recovers as
// 1 - 2 exp(-(1/T1 + |v|/thickness) TI); the FID after a 90 is -i Mz.
TEST(TEST_CATEGORY, washout_replaces_spins_by_relaxed_ones) {
  const double t1 = 1.1, v = -0.012, thickness = 0.004, ti = 0.35;
  sequence::Description d;
  d.name = "ir";
  d.events = {terms::pulse(180, 0, abi::action::spoil_after, ti), terms::pulse(90, 0),
              terms::readout()};
  d.crusher.slice_thickness_m = thickness;  // no moment: washout alone
  tissue::Tissue t = terms::still_voxel(0.0, v);
  t.t1_s.uniform = float(t1);
  const double mz = 1.0 - 2.0 * std::exp(-(1.0 / t1 + std::abs(v) / thickness) * ti);
  EXPECT_LT(std::abs(terms::first_sample(d, t) - Complex(0.0, -mz)), 2e-6);
  d.crusher.slice_thickness_m = 0.0;  // no slice declared: no washout
  const double still = 1.0 - 2.0 * std::exp(-ti / t1);
  EXPECT_LT(std::abs(terms::first_sample(d, t) - Complex(0.0, -still)), 2e-6);
}

// A transmit array: pulse with shim s drives the voxel with B = sum_c w_sc b_c,
// so a 90 from equilibrium gives F+_0 = -i exp(i (p + arg B)) sin(a b1 |B|).
TEST(TEST_CATEGORY, transmit_array_combines_channels_by_shim_setting) {
  using C = std::complex<double>;
  tissue::Tissue t;
  t.voxels = 3;
  t.transmit_channels = 2;
  const C fields[3][2] = {{std::polar(0.8, 0.3), std::polar(0.5, -0.7)},
                          {std::polar(1.1, -1.2), std::polar(0.2, 2.0)},
                          {std::polar(0.0, 0.0), std::polar(0.9, 0.4)}};
  for (auto& voxel : fields) {
    for (const C& b : voxel) t.transmit.emplace_back(float(b.real()), float(b.imag()));
  }
  t.b1.map = {1.0f, 0.9f, 1.2f};
  sequence::Description d;
  d.name = "shims";
  d.shims.channels = 2;
  d.shims.weights = {C(1.0, 0.0), C(0.0, 0.0), std::polar(0.6, 0.2), std::polar(0.7, -0.4)};
  const double flip = 70.0, phase = 25.0;
  for (int shim : {0, 1, 2}) {
    SCOPED_TRACE("shim " + std::to_string(shim));
    d.events = {terms::pulse(flip, phase, 0, 0.0, shim), terms::readout()};
    const auto got = run_on_backend(d, t, 0);
    for (int v = 0; v < 3; ++v) {
      C b = 1.0;
      if (shim > 0) {
        b = d.shims.weights[std::size_t((shim - 1) * 2)] * fields[v][0] +
            d.shims.weights[std::size_t((shim - 1) * 2 + 1)] * fields[v][1];
      }
      const double a = flip * M_PI / 180.0 * t.b1.map[std::size_t(v)] * std::abs(b);
      const C want = C(0.0, -1.0) * std::polar(std::sin(a), phase * M_PI / 180.0 + std::arg(b));
      EXPECT_LT(std::abs(sample(got, 1, v, 0) - want), 2e-6) << "voxel " << v;
    }
  }
}

TEST(TEST_CATEGORY, declared_terms_match_reference) {
  expect_matches_reference(terms::declared_train(80, 201), terms::declared_tissue(11, 202), 0);
  // Every action bit and kind, with lobes after every kind of shift.
  std::mt19937 rng(203);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  auto d = terms::declared_train(1, 204);
  d.events.clear();
  d.name = "random-declared";
  for (int i = 0; i < 120; ++i) {
    const double k = u(rng);
    sequence::Event e = k < 0.45 ? terms::pulse(200 * u(rng), 2000 * (u(rng) - 0.5))
                                 : (k < 0.8 ? terms::readout(500 * u(rng)) : sequence::Event{});
    e.duration_s = u(rng) < 0.2 ? 0.0 : 0.01 * u(rng);
    if (e.kind == abi::EventKind::pulse) {
      e.shim_index = int(4 * u(rng));
      if (u(rng) < 0.5) e.action |= abi::action::crush_before | abi::action::crush_after;
    } else {
      if (u(rng) < 0.5) e.action |= abi::action::shift_after;
      if (u(rng) < 0.1) e.action |= abi::action::spoil_after;
    }
    d.events.push_back(e);
  }
  for (int orders : {3, 13, 64}) {
    SCOPED_TRACE("orders = " + std::to_string(orders));
    expect_matches_reference(d, terms::declared_tissue(5, 205 + orders), orders);
  }
}

// A term is evaluated only where a model declares it and the tissue gives it:
// otherwise the run is the plain one, bit for bit.
TEST(TEST_CATEGORY, undeclared_terms_change_nothing) {
  auto d = terms::declared_train(40, 211);
  const tissue::Tissue full = terms::declared_tissue(9, 212);
  tissue::Tissue plain = full;
  plain.adc_m2_s = {};
  plain.velocity_m_s = {};
  plain.transmit.clear();
  plain.transmit_channels = 0;
  auto bare = d;
  bare.crusher = {};
  bare.crusher.duration_s = d.crusher.duration_s;  // the lobes keep their time
  bare.shims = {};
  for (auto& e : bare.events) e.shim_index = 0;
  const auto want = run_on_backend(bare, plain, 0);
  // The sequence declares nothing: the tissue's maps are not read.
  EXPECT_EQ(run_on_backend(bare, full, 0), want);
  // The tissue gives nothing (identity values): the sequence's declarations are idle.
  tissue::Tissue identity = plain;
  identity.adc_m2_s.uniform = 0.0f;
  identity.velocity_m_s.uniform = 0.0f;
  auto declared_no_shims = d;
  for (auto& e : declared_no_shims.events) e.shim_index = 0;
  EXPECT_EQ(run_on_backend(declared_no_shims, identity, 0), want);
}

TEST(TEST_CATEGORY, declared_terms_tissue_jvp_matches_central_differences) {
  expect_tissue_jvp_matches_differences(terms::declared_train(40, 221),
                                        terms::declared_tissue(3, 222), 0);
}

TEST(TEST_CATEGORY, declared_terms_vjp_and_jvp_satisfy_the_dot_product_identity) {
  expect_dot_product_identity(terms::declared_train(40, 231), terms::declared_tissue(6, 232));
}

TEST(TEST_CATEGORY, declared_terms_sequence_gradients_match_central_differences) {
  EXPECT_GT(expect_sequence_gradients_match_differences(terms::declared_train(30, 241),
                                                        terms::declared_tissue(3, 242), 24),
            60);
}

TEST(TEST_CATEGORY, declared_terms_sequence_hvp_matches_mixed_central_differences) {
  EXPECT_GT(expect_sequence_hvp_matches_differences(terms::declared_train(30, 251),
                                                    terms::declared_tissue(2, 252), 24),
            60);
}

TEST(TEST_CATEGORY, declared_terms_adjoint_layouts_agree) {
  expect_adjoint_layouts_agree(terms::declared_train(30, 261), terms::declared_tissue(37, 262),
                               {8, 24, 97});
}

TEST(TEST_CATEGORY, bad_declarations_are_refused_by_name) {
  auto d = terms::declared_train(5, 271);
  tissue::Tissue t = terms::declared_tissue(2, 272);
  d.events[1].shim_index = 9;  // past the three settings
  EXPECT_THROW(run_on_backend(d, t, 0), std::invalid_argument);
  d = terms::declared_train(5, 271);
  t.transmit_channels = 2;  // maps of another channel count
  t.transmit.resize(4);
  EXPECT_THROW(run_on_backend(d, t, 0), std::invalid_argument);
  t = terms::declared_tissue(2, 272);
  t.adc_m2_s.map[1] = -1e-9f;
  EXPECT_THROW(run_on_backend(d, t, 0), std::invalid_argument);
}

}  // namespace larmor::test
