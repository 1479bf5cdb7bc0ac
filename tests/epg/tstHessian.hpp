// Forward over reverse on one backend: Hessian-vector products of the loss
// L = sum over voxels and samples of Re(conj(w) y), along tissue directions,
// against mixed central differences of the double-precision reference, and
// the symmetry of the Hessian. Included after tstDerivatives.hpp (whose
// helpers it uses) by tests/backends/forward_<backend>.cpp.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "epg/adjoint.hpp"

namespace larmor::test {

struct HvpResult {
  std::vector<float> tissue, sequence, tissue_hvp, sequence_hvp;
};

inline HvpResult run_hvp(const sequence::Description& d, const tissue::Tissue& t, int orders,
                         const std::vector<float>& w, const std::vector<float>& directions) {
  simulate::Options o;
  o.max_order = orders - 1;  // `orders` counts states (0..orders-1)
  simulate::Simulator sim(d, o);
  HvpResult r;
  r.tissue.assign(std::size_t(t.voxels) * epg::tissue_tangent_count, NAN);
  r.tissue_hvp = r.tissue;
  r.sequence.assign(std::size_t(sim.events()) * epg::sequence_gradient::count, NAN);
  r.sequence_hvp = r.sequence;
  sim.run_tissue_hvp_into<TEST_EXECSPACE>(t, directions.data(), w.data(), r.tissue.data(),
                                          r.sequence.data(), r.tissue_hvp.data(),
                                          r.sequence_hvp.data());
  return r;
}

// Random directions in each voxel's own units: a few per cent of M0, T1, T2
// and B1, a few Hz of df.
inline std::vector<float> random_directions(const tissue::Tissue& t, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<float> out;
  for (int v = 0; v < t.voxels; ++v) {
    const auto x = voxel_of(t, v);
    for (double scale : {0.05 * x.m0, 0.05 * x.t1_s, 0.05 * x.t2_s, 0.05, 3.0}) {
      out.push_back(float(scale * u(rng)));
    }
  }
  return out;
}

// One voxel's share of L in double precision, from a reference simulator.
inline double reference_loss(const sequence::Description& d, const reference::Tissue& x, int orders,
                             const std::vector<float>& w, int voxel,
                             const VoxelReference& simulate_voxel) {
  const auto y = simulate_voxel(d, x, voxel, orders);
  double l = 0.0;
  for (std::size_t n = 0; n < y.size(); ++n) {
    const std::size_t i = (std::size_t(voxel) * y.size() + n) * 2;
    l += w[i] * y[n].real() + w[i + 1] * y[n].imag();
  }
  return l;
}

inline double* tissue_slot(reference::Tissue& x, int direction) {
  double* slots[] = {&x.m0, &x.t1_s, &x.t2_s, &x.b1, &x.df_hz};
  return slots[direction];
}

// x + a u, with u the voxel's direction.
inline reference::Tissue along(reference::Tissue x, const std::vector<float>& u, int voxel,
                               double a) {
  for (int k = 0; k < epg::tissue_tangent_count; ++k) {
    *tissue_slot(x, k) += a * u[std::size_t(voxel) * epg::tissue_tangent_count + k];
  }
  return x;
}

inline void expect_hvp_values_are_the_vjp(const sequence::Description& d, const tissue::Tissue& t) {
  const auto w = random_cotangents(std::size_t(t.voxels) * d.sample_count() * 2, 112);
  const auto vjp = run_vjp(d, t, 0, w);
  const auto hvp = run_hvp(d, t, 0, w, random_directions(t, 113));
  // The dual run always takes the precessing branch, so not bit for bit.
  const double tol = float_tolerance(std::int64_t(d.events.size()));
  for (std::size_t i = 0; i < vjp.tissue.size(); ++i) {
    ASSERT_NEAR(hvp.tissue[i], vjp.tissue[i], tol * (1.0 + std::abs(vjp.tissue[i]))) << i;
  }
  for (std::size_t i = 0; i < vjp.sequence.size(); ++i) {
    ASSERT_NEAR(hvp.sequence[i], vjp.sequence[i], tol * (1.0 + std::abs(vjp.sequence[i]))) << i;
  }
}

TEST(TEST_CATEGORY, hvp_values_are_the_vjp) {
  expect_hvp_values_are_the_vjp(vjp_test_train(), random_tissue(5, 111));
}

// d/du of dL/d(tissue value j): [L(+h,+k) - L(+h,-k) - L(-h,+k) + L(-h,-k)] / 4hk
// with h along u and k along j, in double precision. The truncation error is
// O(h^2 + k^2) relative and the cancellation error about 1e-16 / (h k).
inline void expect_tissue_hvp_matches_differences(
    const sequence::Description& d, const tissue::Tissue& t, int orders,
    const VoxelReference& simulate_voxel = single_pool_reference(), double tolerance = 0.0) {
  const auto w = random_cotangents(std::size_t(t.voxels) * d.sample_count() * 2, 122);
  const auto u = random_directions(t, 123);
  const auto hvp = run_hvp(d, t, orders, w, u);
  const int resolved = sequence::resolve_state_count(d, orders - 1);
  const double tol = tolerance > 0.0 ? tolerance : float_tolerance(std::int64_t(d.events.size()));
  const double h = 1e-3;
  for (int v = 0; v < t.voxels; ++v) {
    const reference::Tissue base = voxel_of(t, v);
    std::vector<double> fd(epg::tissue_tangent_count);
    double scale = 0.0;
    for (int j = 0; j < epg::tissue_tangent_count; ++j) {
      reference::Tissue x0 = base;
      const double k = j == 4 ? 1e-2 : 1e-4 * std::abs(*tissue_slot(x0, j));
      const auto loss = [&](double a, double b) {
        reference::Tissue x = along(base, u, v, a);
        *tissue_slot(x, j) += b;
        return reference_loss(d, x, resolved, w, v, simulate_voxel);
      };
      fd[std::size_t(j)] = (loss(h, k) - loss(h, -k) - loss(-h, k) + loss(-h, -k)) / (4 * h * k);
      scale = std::max(scale, std::abs(fd[std::size_t(j)]));
    }
    for (int j = 0; j < epg::tissue_tangent_count; ++j) {
      const float got = hvp.tissue_hvp[std::size_t(v) * epg::tissue_tangent_count + j];
      ASSERT_NEAR(got, fd[std::size_t(j)], tol * std::max(scale, 1e-3))
          << "voxel " << v << ", value " << j;
    }
  }
}

TEST(TEST_CATEGORY, tissue_hvp_matches_mixed_central_differences) {
  expect_tissue_hvp_matches_differences(vjp_test_train(), random_tissue(3, 121), 24);
}

// The mixed derivatives d/du dL/d(event value), summed over voxels, against
// the same mixed differences with every voxel moved along its direction.
// Returns how many were checked.
inline int expect_sequence_hvp_matches_differences(
    const sequence::Description& d, const tissue::Tissue& t, int orders,
    const VoxelReference& simulate_voxel = single_pool_reference(), double tolerance = 0.0) {
  const auto w = random_cotangents(std::size_t(t.voxels) * d.sample_count() * 2, 132);
  const auto u = random_directions(t, 133);
  const auto hvp = run_hvp(d, t, orders, w, u);
  const int resolved = sequence::resolve_state_count(d, orders - 1);
  const auto loss = [&](const sequence::Description& dd, double a) {
    double l = 0.0;
    for (int v = 0; v < t.voxels; ++v)
      l += reference_loss(dd, along(voxel_of(t, v), u, v, a), resolved, w, v, simulate_voxel);
    return l;
  };
  const double tol = tolerance > 0.0 ? tolerance : float_tolerance(std::int64_t(d.events.size()));
  double scale = 0.0;
  for (float g : hvp.sequence_hvp) scale = std::max(scale, double(std::abs(g)));
  const double h = 1e-3;
  int checked = 0;
  for (std::size_t i = 0; i < d.events.size(); ++i) {
    const auto& e = d.events[i];
    const bool pulse = e.kind == abi::EventKind::pulse, adc = e.kind == abi::EventKind::adc;
    for (int c = 0; c < epg::sequence_gradient::count; ++c) {
      if ((c == 0 && !pulse) || (c == 1 && !pulse && !adc) || (c == 2 && e.duration_s <= 0)) {
        EXPECT_EQ(hvp.sequence_hvp[i * 3 + c], 0.0f) << "event " << i << ", value " << c;
        continue;
      }
      const double k = event_step(e, c, 1e-4);
      const auto moved = [&](double b) {
        auto dd = d;
        move_event_value(dd, i, c, b);
        return dd;
      };
      const auto hi = moved(k), lo = moved(-k);
      const double fd = (loss(hi, h) - loss(lo, h) - loss(hi, -h) + loss(lo, -h)) / (4 * h * k);
      EXPECT_NEAR(hvp.sequence_hvp[i * 3 + c], fd, tol * std::max(scale, 1e-3))
          << "event " << i << ", value " << c;
      ++checked;
    }
  }
  return checked;
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

// The two reverse-sweep layouts (plain: one thread per voxel; grouped: a
// voxel's orders over a group of threads, 4 or 16 per voxel on a GPU) give
// the same gradients and Hessian-vector products, at order counts that take
// each group size and the plain fallback above 64 orders.
inline void expect_adjoint_layouts_agree(const sequence::Description& d, const tissue::Tissue& t,
                                         std::initializer_list<int> order_counts) {
  const double tol = float_tolerance(std::int64_t(d.events.size()));
  const EveryOrder every_order;
  for (int orders : order_counts) {
    SCOPED_TRACE("orders " + std::to_string(orders));
    simulate::Options o;
    o.max_order = orders - 1;  // `orders` counts states (0..orders-1)
    simulate::Simulator sim(d, o);
    const auto w = random_cotangents(std::size_t(t.voxels) * sim.samples() * 2, 162);
    const auto u = random_directions(t, 163);
    HvpResult r[2];
    const char* layouts[] = {"plain", "grouped"};
    for (int i = 0; i < 2; ++i) {
      ::setenv("LARMOR_ADJOINT_LAYOUT", layouts[i], 1);
      r[i] = run_hvp(d, t, orders, w, u);
      // The float sweep too, into the same buffers' sizes.
      auto plain_vjp = run_vjp(d, t, orders, w);
      for (std::size_t k = 0; k < plain_vjp.tissue.size(); ++k) {
        ASSERT_NEAR(plain_vjp.tissue[k], r[i].tissue[k], tol * (1.0 + std::abs(r[i].tissue[k])))
            << layouts[i] << " vjp against its hvp values, " << k;
      }
    }
    ::unsetenv("LARMOR_ADJOINT_LAYOUT");
    const std::vector<float>* pairs[][2] = {{&r[0].tissue, &r[1].tissue},
                                            {&r[0].sequence, &r[1].sequence},
                                            {&r[0].tissue_hvp, &r[1].tissue_hvp},
                                            {&r[0].sequence_hvp, &r[1].sequence_hvp}};
    for (auto& pair : pairs) {
      const auto& a = *pair[0];
      const auto& b = *pair[1];
      double scale = 0.0;
      for (float x : a) scale = std::max(scale, double(std::abs(x)));
      for (std::size_t k = 0; k < a.size(); ++k) {
        ASSERT_NEAR(b[k], a[k], tol * std::max(scale, 1e-3)) << k;
      }
    }
  }
}

TEST(TEST_CATEGORY, adjoint_layouts_agree) {
  expect_adjoint_layouts_agree(vjp_test_train(), random_tissue(37, 161), {8, 16, 24, 64, 97});
}

#if defined(KOKKOS_ENABLE_SERIAL)
// Every mode on this backend against the same mode on Serial (the plain
// one-voxel-at-a-time host path), to float round-off: the two backends run
// different layouts, so the agreement is not by construction.
TEST(TEST_CATEGORY, every_mode_agrees_with_the_serial_backend) {
  if (std::is_same_v<TEST_EXECSPACE, Kokkos::Serial>) GTEST_SKIP() << "this is the Serial backend";
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
}
#endif

}  // namespace larmor::test
