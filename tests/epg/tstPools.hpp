// The pooled layouts on one backend: two exchanging free pools, a free and a
// bound pool (magnetisation transfer), and three pools, against closed forms
// written out here (exchange through Sylvester's formula for the matrix
// exponential, the lineshape saturation rate), against the Runge-Kutta
// reference (tests/reference/pooled_reference.hpp), and in forward mode against
// central differences.
#pragma once

#include <gtest/gtest.h>

#include "epg/derivatives_support.hpp"
#include "epg/forward_support.hpp"
#include "epg/pools_support.hpp"

namespace larmor::test {

// Without exchange the pools are independent: the pooled signal is the
// fraction-weighted sum of single-pool runs of each pool (by the single-pool
// kernel, a different code path).
TEST(TEST_CATEGORY, pools_without_exchange_are_the_weighted_sum_of_single_pools) {
  sequence::MeseParams mese;
  mese.echoes = 16;
  mese.refocusing_deg = 140.0;
  const auto d = sequence::build_mese(mese);
  tissue::Tissue t = pools::pooled_tissue(7, 301, true, false);
  t.pool_exchange_hz.map.assign(7, 0.0f);
  const auto pooled = run_on_backend(d, t, 0);
  tissue::Tissue a = t, b = t;
  for (auto* x : {&a, &b}) {
    x->pool_fraction = {};
    x->pool_t1_s = {std::numeric_limits<float>::infinity(), {}};
    x->pool_t2_s = {std::numeric_limits<float>::infinity(), {}};
    x->pool_exchange_hz = {};
  }
  b.t1_s.map = t.pool_t1_s.map;
  b.t2_s.map = t.pool_t2_s.map;
  const auto sa = run_on_backend(d, a, 0), sb = run_on_backend(d, b, 0);
  const int samples = d.sample_count();
  for (int v = 0; v < 7; ++v) {
    const double f = t.pool_fraction.map[std::size_t(v)];
    for (int n = 0; n < samples; ++n) {
      const Complex want = (1 - f) * sample(sa, samples, v, n) + f * sample(sb, samples, v, n);
      ASSERT_LT(std::abs(sample(pooled, samples, v, n) - want), 2e-6) << v << ", " << n;
    }
  }
}

// Inversion recovery of exchanging pools: after an ideal 180 (spoiled) the
// free pools start at -eq, the bound pool (no saturation) at eq, and after
// TI a 90 reads -i M0 sum over free pools of Z(TI), Z(TI) from the rate
// matrix's exponential by Sylvester's formula. Two free pools, a free and a
// bound pool, and three pools.
TEST(TEST_CATEGORY, inversion_recovery_of_exchanging_pools_follows_the_matrix_exponential) {
  using pools::Matrix;
  const double ti = 0.4, m0 = 1.3, t1 = 0.9, t2 = 0.08;
  sequence::Description d;
  d.name = "ir";
  d.events = {pools::event(abi::EventKind::pulse, 180, ti, abi::action::spoil_after),
              pools::event(abi::EventKind::pulse, 90, 0.0),
              pools::event(abi::EventKind::adc, 0, 0.0)};
  for (int layout = 0; layout < 3; ++layout) {
    SCOPED_TRACE("layout " + std::to_string(layout));
    const bool second = layout != 1, bound = layout != 0;
    tissue::Tissue t;
    t.voxels = 1;
    t.m0.uniform = float(m0);
    t.t1_s.uniform = float(t1);
    t.t2_s.uniform = float(t2);
    std::vector<double> r1 = {1 / t1}, eq, free_flag = {1};
    double f = 0, fb = 0;
    if (second) {
      f = 0.18;
      t.pool_fraction.uniform = float(f);
      t.pool_t1_s.uniform = 0.45f;
      t.pool_t2_s.uniform = 0.015f;
      t.pool_exchange_hz.uniform = 9.0f;
      r1.push_back(1 / double(t.pool_t1_s.uniform));
      free_flag.push_back(1);
    }
    if (bound) {
      fb = 0.11;
      t.bound_fraction.uniform = float(fb);
      t.bound_t1_s.uniform = 1.0f;
      t.bound_exchange_hz.uniform = 4.3f;
      r1.push_back(1.0);
      free_flag.push_back(0);
    }
    eq.push_back(1 - f - fb);
    if (second) eq.push_back(f);
    if (bound) eq.push_back(fb);
    const std::size_t n = eq.size();
    Matrix k(n, std::vector<double>(n, 0.0));
    if (second) {
      k[0][1] = 9.0;
      k[1][0] = 9.0 * eq[0] / eq[1];
    }
    if (bound) {
      const std::size_t b = n - 1, touch = n - 2;
      k[touch][b] = double(t.bound_exchange_hz.uniform);
      k[b][touch] = k[touch][b] * eq[touch] / eq[b];
    }
    std::vector<double> z0(eq);
    for (std::size_t i = 0; i < n; ++i) z0[i] = free_flag[i] > 0 ? -eq[i] : eq[i];
    const auto z = pools::relax_towards(pools::rate_matrix(r1, k), z0, eq, ti);
    double mz = 0;
    for (std::size_t i = 0; i < n; ++i) mz += free_flag[i] * z[i];
    const auto s = run_on_backend(d, t, 0);
    EXPECT_LT(std::abs(Complex(s[0], s[1]) - Complex(0.0, -m0 * mz)), 3e-6 * m0)
        << "got " << Complex(s[0], s[1]) << ", want " << Complex(0.0, -m0 * mz);
  }
}

// An off-resonance pulse (no rotation of free water) saturates the bound pool
// at the rate pi omega1^2 g(2 pi offset), written out here for Gaussian and
// Lorentzian lineshapes; exchange then carries the saturation to the free
// pool, read by a 90 after the delay.
TEST(TEST_CATEGORY, mt_pulse_saturates_the_bound_pool_at_the_lineshape_rate) {
  const double power = 4.0e4, offset = 1500.0, t2b = 11e-6, delay = 0.05, b1 = 0.9;
  const double fb = 0.12, kf = 4.3, t1 = 0.8, t1b = 1.0;
  for (auto shape : {tissue::Lineshape::gaussian, tissue::Lineshape::lorentzian}) {
    SCOPED_TRACE(tissue::lineshape_name(shape));
    const double w = 2 * M_PI * offset;
    const double g = shape == tissue::Lineshape::gaussian
                         ? t2b / std::sqrt(2 * M_PI) * std::exp(-0.5 * std::pow(w * t2b, 2))
                         : t2b / M_PI / (1 + std::pow(w * t2b, 2));
    const double kept = std::exp(-M_PI * g * power * b1 * b1);
    ASSERT_LT(kept, 0.8);  // a real saturation
    sequence::Description d;
    d.name = "mt";
    auto mt = pools::event(abi::EventKind::pulse, 0.0, delay);
    mt.saturation = float(power);
    mt.rf_frequency_hz = offset;
    d.events = {mt, pools::event(abi::EventKind::pulse, 90, 0.0),
                pools::event(abi::EventKind::adc, 0, 0.0)};
    tissue::Tissue t;
    t.voxels = 1;
    t.t1_s.uniform = float(t1);
    t.t2_s.uniform = 0.07f;
    t.b1.uniform = float(b1);
    t.bound_fraction.uniform = float(fb);
    t.bound_t1_s.uniform = float(t1b);
    t.bound_exchange_hz.uniform = float(kf);
    t.bound_lineshape = shape;
    t.bound_t2_s = t2b;
    const std::vector<double> eq = {1 - fb, fb};
    const pools::Matrix k = {{0, kf}, {kf * (1 - fb) / fb, 0}};
    const auto z = pools::relax_towards(pools::rate_matrix({1 / t1, 1 / t1b}, k),
                                        {1 - fb, fb * kept}, eq, delay);
    // The readout's flip is scaled by B1 too: -i Mz sin(90 B1).
    const double want = -z[0] * std::sin(M_PI / 2 * b1);
    const auto s = run_on_backend(d, t, 0);
    EXPECT_LT(std::abs(Complex(s[0], s[1]) - Complex(0.0, want)), 2e-6)
        << "got " << Complex(s[0], s[1]) << ", want " << want << ", kept " << kept;
  }
}

TEST(TEST_CATEGORY, pooled_layouts_match_reference) {
  sequence::MeseParams mese;
  mese.echoes = 20;
  mese.refocusing_deg = 150.0;
  sequence::MtSpgrParams mt;
  mt.repetitions = 12;
  mt.mt.samples = 32;
  std::mt19937 rng(311);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  sequence::MrfParams mrf;
  for (int n = 0; n < 60; ++n) {
    mrf.schedule.push_back(
        {0.1 + 0.9 * u(rng), n % 3 ? 0.0 : 90.0 * u(rng), 3e-3 * u(rng), 1e-3 * u(rng)});
  }
  const bool layouts[3][2] = {{true, false}, {false, true}, {true, true}};
  for (const auto& l : layouts) {
    SCOPED_TRACE(std::string(l[0] ? "second pool" : "") + (l[1] ? " bound pool" : ""));
    pools::expect_pooled_matches_reference(sequence::build_mese(mese),
                                           pools::pooled_tissue(5, 312, l[0], l[1]), 0);
    pools::expect_pooled_matches_reference(sequence::build_mrf(mrf),
                                           pools::pooled_tissue(4, 313, l[0], l[1]), 24);
    pools::expect_pooled_matches_reference(sequence::build_mt_spgr(mt),
                                           pools::pooled_tissue(3, 314, l[0], l[1]), 0);
  }
}

// Forward mode through the coupled operators (the exponentials at dual
// numbers) against central differences of the Runge-Kutta reference.
TEST(TEST_CATEGORY, pooled_jvp_matches_central_differences) {
  sequence::MrfParams mrf;
  std::mt19937 rng(321);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int n = 0; n < 30; ++n)
    mrf.schedule.push_back({0.1 + 0.9 * u(rng), 0.0, 3e-3 * u(rng), 0.0});
  const auto d = sequence::build_mrf(mrf);
  const tissue::Tissue t = pools::pooled_tissue(2, 322, true, true);
  simulate::Simulator sim(d, simulate::Options{});
  const int samples = sim.samples();
  constexpr int directions = epg::tissue_tangent_count;
  std::vector<float> signals(std::size_t(t.voxels) * samples * 2);
  std::vector<float> tangents(std::size_t(t.voxels) * directions * samples * 2);
  sim.run_tissue_jvp_into<TEST_EXECSPACE>(t, signals.data(), tangents.data());
  const double tol = float_tolerance(std::int64_t(d.events.size()));
  for (int v = 0; v < t.voxels; ++v) {
    for (int k = 0; k < directions; ++k) {
      auto lo = pools::pooled_voxel(t, v), hi = lo;
      double* plo[] = {&lo.free.m0, &lo.free.t1_s, &lo.free.t2_s, &lo.free.b1, &lo.free.df_hz};
      double* phi[] = {&hi.free.m0, &hi.free.t1_s, &hi.free.t2_s, &hi.free.b1, &hi.free.df_hz};
      const double x = *plo[k], h = k == 4 ? 1e-3 : 1e-5 * std::abs(x);
      *plo[k] = x - h;
      *phi[k] = x + h;
      const auto a = reference::simulate_pooled(d, lo, sim.states());
      const auto b = reference::simulate_pooled(d, hi, sim.states());
      double scale = 1e-3;
      for (int n = 0; n < samples; ++n)
        scale = std::max(scale, std::abs(b[std::size_t(n)] - a[std::size_t(n)]) / (2 * h));
      for (int n = 0; n < samples; ++n) {
        const Complex fd = (b[std::size_t(n)] - a[std::size_t(n)]) / (2 * h);
        const std::size_t i = ((std::size_t(v) * directions + std::size_t(k)) * samples + n) * 2;
        ASSERT_LE(std::abs(Complex(tangents[i], tangents[i + 1]) - fd), tol * scale)
            << "voxel " << v << ", direction " << k << ", sample " << n;
      }
    }
  }
}

TEST(TEST_CATEGORY, pooled_limits_are_refused_by_name) {
  sequence::MeseParams mese;
  mese.echoes = 4;
  const auto d = sequence::build_mese(mese);
  const tissue::Tissue t = pools::pooled_tissue(2, 331, true, true);
  const auto message = [&](auto&& call) -> std::string {
    try {
      call();
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  // 400 orders x 3 pools pass the 1024 of a tile (where every order runs:
  // of this short train's, only 4 reach a sample).
  const EveryOrder every_order;
  EXPECT_NE(message([&] { run_on_backend(d, t, 400); }).find("larmor::epg::pooled"),
            std::string::npos);
  const auto w = random_cotangents(std::size_t(t.voxels) * d.sample_count() * 2, 332);
  // The reverse sweep's largest bucket is 64 orders.
  EXPECT_NE(message([&] { run_vjp(d, t, 100, w); }).find("orders for the reverse sweep"),
            std::string::npos);
  tissue::Tissue diffusing = t;
  diffusing.adc_m2_s.uniform = 1e-9f;
  auto crushed = d;
  crushed.crusher.moment_per_m = 1000.0;
  EXPECT_NE(message([&] { run_on_backend(crushed, diffusing, 0); }).find("do not combine"),
            std::string::npos);
  tissue::Tissue missing = t;
  missing.pool_t2_s = {std::numeric_limits<float>::infinity(), {}};
  EXPECT_NE(message([&] { run_on_backend(d, missing, 0); }).find("pool_t2_ms"), std::string::npos);
}

}  // namespace larmor::test
