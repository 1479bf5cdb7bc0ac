// Helpers of the Perk tests (tstPerk.hpp): references, runs on the backend
// TEST_EXECSPACE names, and the checks the tests share.
#pragma once

#include <gtest/gtest.h>
#include <cmath>
#include <random>
#include <vector>

#include "perk/perk_apply.hpp"

namespace larmor::test {

struct PerkCase {
  int voxels, inputs, features, outputs;
  std::vector<float> q, f, phi, w, b,
      g;  // inputs, frequencies, phases, weights, offsets, cotangents
};

inline PerkCase make_perk_case(int voxels, int inputs, int features, int outputs, unsigned seed) {
  PerkCase c{voxels, inputs, features, outputs, {}, {}, {}, {}, {}, {}};
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  for (int i = 0; i < voxels * inputs; ++i) c.q.push_back(unit(rng));
  for (int i = 0; i < features * inputs; ++i) {
    c.f.push_back(normal(rng) * 2.0f / std::sqrt(float(inputs)));
  }
  for (int h = 0; h < features; ++h) c.phi.push_back(6.2831853f * unit(rng));
  for (int i = 0; i < outputs * features; ++i) {
    c.w.push_back(normal(rng) * std::sqrt(2.0f / float(features)));
  }
  for (int l = 0; l < outputs; ++l) c.b.push_back(normal(rng));
  for (int i = 0; i < voxels * outputs; ++i) c.g.push_back(normal(rng));
  return c;
}

template <class T>
Kokkos::View<T*, TEST_EXECSPACE::memory_space> upload_flat(const std::vector<float>& host,
                                                           const char* label) {
  Kokkos::View<T*, TEST_EXECSPACE::memory_space> v(std::string(label), host.size());
  Kokkos::View<const float*, Kokkos::HostSpace, kx::Unmanaged> h(host.data(), host.size());
  Kokkos::deep_copy(v, h);
  return v;
}

inline Kokkos::View<float**, Kokkos::LayoutRight, TEST_EXECSPACE::memory_space> upload_matrix(
    const std::vector<float>& host, int rows, int cols, const char* label) {
  Kokkos::View<float**, Kokkos::LayoutRight, TEST_EXECSPACE::memory_space> v(std::string(label),
                                                                             rows, cols);
  Kokkos::View<const float**, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged> h(host.data(),
                                                                                       rows, cols);
  Kokkos::deep_copy(v, h);
  return v;
}

// Runs both kernels and returns the largest errors relative to the scales of
// the double-precision answers (estimates, gradients).
inline std::pair<double, double> perk_errors(const PerkCase& c, bool deterministic) {
  using Mem = TEST_EXECSPACE::memory_space;
  perk::ModelViews<Mem> model;
  model.inputs = c.inputs;
  model.features = c.features;
  model.outputs = c.outputs;
  model.frequencies = upload_matrix(c.f, c.features, c.inputs, "f");
  model.phases = upload_flat<float>(c.phi, "phi");
  model.weights = upload_matrix(c.w, c.outputs, c.features, "w");
  model.offsets = upload_flat<float>(c.b, "b");
  const auto q = upload_matrix(c.q, c.voxels, c.inputs, "q");
  const auto g = upload_matrix(c.g, c.voxels, c.outputs, "g");
  Kokkos::View<float**, Kokkos::LayoutRight, Mem> x("x", c.voxels, c.outputs);
  Kokkos::View<float**, Kokkos::LayoutRight, Mem> dq("dq", c.voxels, c.inputs);
  Kokkos::deep_copy(x, -7.0f);  // every entry must be written
  Kokkos::deep_copy(dq, -7.0f);
  TEST_EXECSPACE exec;
  perk::apply(exec, model, q, x, deterministic);
  perk::adjoint(exec, model, q, g, dq, deterministic);
  exec.fence();
  auto xh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
  auto dqh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dq);
  double x_err = 0, x_scale = 0, g_err = 0, g_scale = 0;
  std::vector<double> grad(std::size_t(c.inputs));
  for (int v = 0; v < c.voxels; ++v) {
    std::vector<double> est(c.b.begin(), c.b.end());
    std::fill(grad.begin(), grad.end(), 0.0);
    for (int h = 0; h < c.features; ++h) {
      double angle = c.phi[h];
      for (int i = 0; i < c.inputs; ++i) {
        angle += double(c.f[std::size_t(h) * c.inputs + i]) * c.q[std::size_t(v) * c.inputs + i];
      }
      double gw = 0.0;
      for (int l = 0; l < c.outputs; ++l) {
        const double wl = c.w[std::size_t(l) * c.features + h];
        est[l] += wl * std::cos(angle);
        gw += double(c.g[std::size_t(v) * c.outputs + l]) * wl;
      }
      for (int i = 0; i < c.inputs; ++i) {
        grad[i] -= gw * std::sin(angle) * c.f[std::size_t(h) * c.inputs + i];
      }
    }
    for (int l = 0; l < c.outputs; ++l) {
      x_err = std::max(x_err, std::fabs(xh(v, l) - est[l]));
      x_scale = std::max(x_scale, std::fabs(est[l]));
    }
    for (int i = 0; i < c.inputs; ++i) {
      g_err = std::max(g_err, std::fabs(dqh(v, i) - grad[i]));
      g_scale = std::max(g_scale, std::fabs(grad[i]));
    }
  }
  return {x_err / x_scale, g_err / g_scale};
}

}  // namespace larmor::test
