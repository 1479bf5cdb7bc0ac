// Forward over reverse on one backend: Hessian-vector products of the loss L =
// sum over voxels and samples of Re(conj(w) y), along tissue directions,
// against mixed central differences of the double-precision reference, and the
// symmetry of the Hessian.
#pragma once

#include <gtest/gtest.h>

#include "epg/derivatives_support.hpp"
#include "epg/forward_support.hpp"
#include "epg/hessian_support.hpp"

namespace larmor::test {

TEST(TEST_CATEGORY, hvp_values_are_the_vjp) {
  expect_hvp_values_are_the_vjp(vjp_test_train(), random_tissue(5, 111));
}

TEST(TEST_CATEGORY, tissue_hvp_matches_mixed_central_differences) {
  expect_tissue_hvp_matches_differences(vjp_test_train(), random_tissue(3, 121), 24);
}

TEST(TEST_CATEGORY, tissue_hvp_without_sequence_derivatives_matches_mixed_central_differences) {
  expect_tissue_hvp_matches_differences(vjp_test_train(), random_tissue(3, 125), 24,
                                        single_pool_reference(), 0.0, false);
}

TEST(TEST_CATEGORY, sequence_hvp_matches_mixed_central_differences) {
  EXPECT_GT(expect_sequence_hvp_matches_differences(vjp_test_train(), random_tissue(2, 131), 24),
            60);
}

// <u2, H u1> = <u1, H u2> in every voxel.
TEST(TEST_CATEGORY, tissue_hessian_is_symmetric) {
  const auto d = vjp_test_train();
  const tissue::Tissue t = random_tissue(6, 141);
  const auto w = random_cotangents(std::size_t(t.voxels) * d.sample_count() * 2, 142);
  const auto u1 = random_directions(t, 143), u2 = random_directions(t, 144);
  const auto h1 = run_hvp(d, t, 0, w, u1), h2 = run_hvp(d, t, 0, w, u2);
  const double tol = float_tolerance(std::int64_t(d.events.size()));
  for (int v = 0; v < t.voxels; ++v) {
    double a = 0.0, b = 0.0, scale = 0.0;
    for (int j = 0; j < epg::tissue_tangent_count; ++j) {
      const std::size_t i = std::size_t(v) * epg::tissue_tangent_count + j;
      a += double(u2[i]) * h1.tissue_hvp[i];
      b += double(u1[i]) * h2.tissue_hvp[i];
      scale += std::abs(u2[i] * h1.tissue_hvp[i]) + std::abs(u1[i] * h2.tissue_hvp[i]);
    }
    EXPECT_NEAR(a, b, tol * scale) << "voxel " << v;
  }
}

TEST(TEST_CATEGORY, adjoint_layouts_agree) {
  expect_adjoint_layouts_agree(vjp_test_train(), random_tissue(37, 161), {8, 16, 24, 64, 97});
}

// Every mode on this backend against the same mode on Serial (the plain
// one-voxel-at-a-time host path), to float round-off: the two backends run
// different layouts, so the agreement is not by construction.
TEST(TEST_CATEGORY, every_mode_agrees_with_the_serial_backend) {
  if (std::is_same_v<TEST_EXECSPACE, Kokkos::Serial>) GTEST_SKIP() << "this is the Serial backend";
#if !LARMOR_TEST_HOST_KERNELS
  GTEST_SKIP() << "this device build instantiates no host-backend kernels "
                  "(configure with -DLARMOR_DEVICE_BUILD_HOST_KERNELS=ON, as lab/gpu-check does)";
#else
  const auto d = vjp_test_train();
  const tissue::Tissue t = random_tissue(37, 151);  // part-empty teams and lanes
  simulate::Simulator sim(d, simulate::Options{});
  const std::size_t n = std::size_t(t.voxels) * sim.samples() * 2;
  const auto w = random_cotangents(n, 152);
  const auto u = random_directions(t, 153);
  const double tol = float_tolerance(std::int64_t(d.events.size()));
  const auto close = [&](const std::vector<float>& a, const std::vector<float>& b,
                         const char* what) {
    ASSERT_EQ(a.size(), b.size()) << what;
    double scale = 0.0;
    for (float x : b) scale = std::max(scale, double(std::abs(x)));
    for (std::size_t i = 0; i < a.size(); ++i) {
      ASSERT_NEAR(a[i], b[i], tol * std::max(scale, 1e-3)) << what << " " << i;
    }
  };
  std::vector<float> sig(n), sig_serial(n), tan(n * epg::tissue_tangent_count),
      tan_serial(tan.size());
  sim.run_into<TEST_EXECSPACE>(t, sig.data());
  sim.run_into<Kokkos::Serial>(t, sig_serial.data());
  close(sig, sig_serial, "forward");
  sim.run_tissue_jvp_into<TEST_EXECSPACE>(t, sig.data(), tan.data());
  sim.run_tissue_jvp_into<Kokkos::Serial>(t, sig_serial.data(), tan_serial.data());
  close(tan, tan_serial, "jvp");
  const std::size_t tn = std::size_t(t.voxels) * epg::tissue_tangent_count;
  const std::size_t sn = std::size_t(sim.events()) * epg::sequence_gradient::count;
  std::vector<float> tg(tn), tg_s(tn), th(tn), th_s(tn), sg(sn), sg_s(sn), sh(sn), sh_s(sn);
  sim.run_tissue_vjp_into<TEST_EXECSPACE>(t, w.data(), tg.data(), sg.data());
  sim.run_tissue_vjp_into<Kokkos::Serial>(t, w.data(), tg_s.data(), sg_s.data());
  close(tg, tg_s, "vjp tissue");
  close(sg, sg_s, "vjp sequence");
  sim.run_tissue_hvp_into<TEST_EXECSPACE>(t, u.data(), w.data(), tg.data(), sg.data(), th.data(),
                                          sh.data());
  sim.run_tissue_hvp_into<Kokkos::Serial>(t, u.data(), w.data(), tg_s.data(), sg_s.data(),
                                          th_s.data(), sh_s.data());
  close(tg, tg_s, "hvp values, tissue");
  close(sg, sg_s, "hvp values, sequence");
  close(th, th_s, "hvp tissue");
  close(sh, sh_s, "hvp sequence");
#endif
}

}  // namespace larmor::test
