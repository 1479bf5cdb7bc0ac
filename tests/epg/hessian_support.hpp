// Helpers of the Hessian tests (tstHessian.hpp): references, runs on the backend
// TEST_EXECSPACE names, and the checks the tests share.
#pragma once

#include <gtest/gtest.h>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "epg/adjoint.hpp"
#include "epg/derivatives_support.hpp"
#include "epg/forward_support.hpp"

namespace larmor::test {

struct HvpResult {
  std::vector<float> tissue, sequence, tissue_hvp, sequence_hvp;
};

// Without `sequence` the run skips the sequence derivatives (both stay empty).
inline HvpResult run_hvp(const sequence::Description& d, const tissue::Tissue& t, int orders,
                         const std::vector<float>& w, const std::vector<float>& directions,
                         bool sequence = true) {
  simulate::Options o;
  o.max_order = orders - 1;  // `orders` counts states (0..orders-1)
  simulate::Simulator sim(d, o);
  HvpResult r;
  r.tissue.assign(std::size_t(t.voxels) * epg::tissue_tangent_count, NAN);
  r.tissue_hvp = r.tissue;
  if (sequence) r.sequence.assign(std::size_t(sim.events()) * epg::sequence_gradient::count, NAN);
  r.sequence_hvp = r.sequence;
  sim.run_tissue_hvp_into<TEST_EXECSPACE>(
      t, directions.data(), w.data(), r.tissue.data(), sequence ? r.sequence.data() : nullptr,
      r.tissue_hvp.data(), sequence ? r.sequence_hvp.data() : nullptr);
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

// d/du of dL/d(tissue value j): [L(+h,+k) - L(+h,-k) - L(-h,+k) + L(-h,-k)] / 4hk
// with h along u and k along j, in double precision. The truncation error is
// O(h^2 + k^2) relative and the cancellation error about 1e-16 / (h k).
inline void expect_tissue_hvp_matches_differences(
    const sequence::Description& d, const tissue::Tissue& t, int orders,
    const VoxelReference& simulate_voxel = single_pool_reference(), double tolerance = 0.0,
    bool sequence = true) {
  const auto w = random_cotangents(std::size_t(t.voxels) * d.sample_count() * 2, 122);
  const auto u = random_directions(t, 123);
  const auto hvp = run_hvp(d, t, orders, w, u, sequence);
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

// The two reverse-sweep layouts (plain: one thread per voxel; grouped: a
// voxel's orders over a group of threads, 4 or 16 per voxel on a GPU) give
// the same gradients and Hessian-vector products, at order counts that take
// each group size and the plain fallback above 64 orders. On the host the
// grouped float sweep without declared terms holds eight voxels in SIMD
// lanes, and the Hessian sweep one: their gradients agree too.
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
      double scale = 1e-3;
      for (float x : r[i].sequence) scale = std::max(scale, double(std::abs(x)));
      for (std::size_t k = 0; k < plain_vjp.sequence.size(); ++k) {
        ASSERT_NEAR(plain_vjp.sequence[k], r[i].sequence[k], tol * scale)
            << layouts[i] << " vjp's sequence gradients against its hvp values, " << k;
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

#if defined(KOKKOS_ENABLE_SERIAL)
#endif

}  // namespace larmor::test
