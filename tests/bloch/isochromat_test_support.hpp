// What the isochromat engine's kernel tests share: one voxel played on the
// backend under test (TEST_EXECSPACE), the host Bloch reference at the same
// isochromats, small .seq texts, and the Bloch equations over an interval as
// an exact 4 x 4 exponential in double. Included by the category headers
// tstIsochromats.hpp and tstIsochromatPhysics.hpp (one unit each).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "bloch/isochromats.hpp"
#include "io/pulseq/pulseq_steps.hpp"
#include "reference/pulseq_bloch.hpp"
#include "reference/pulseq_test_text.hpp"
#include "simulate/isochromat_simulator.hpp"
#include "test_paths.hpp"

namespace larmor::test {
namespace {

using IsoMem = TEST_EXECSPACE::memory_space;
using reference::Complex;
using Vec = std::array<double, 3>;

struct IsochromatVoxel {
  std::array<int, 3> counts{1, 1, 1};
  Vec edges_m{1e-3, 1e-3, 1e-3};
  Vec centre_m{0.0, 0.0, 0.0};
};

// The engine's samples (and mean Mz) of voxels of the tissues `ts`, all of
// the same grid and centre, in one launch: raw (the encodes kept, as the
// reference computes them) unless `own_signal`. Indexed [voxel][sample].
std::vector<std::vector<Complex>> play_isochromat_voxels(
    const sequence::StepTable& played, const IsochromatVoxel& voxel,
    const std::vector<reference::Tissue>& ts, std::vector<std::vector<double>>* mz = nullptr,
    bool own_signal = false) {
  sequence::StepTable table = played;
  if (!own_signal) sequence::keep_encodes(table);
  const std::size_t steps = table.steps(), samples = table.samples(), voxels = ts.size();
  bloch::Steps<IsoMem> device_steps;
  {
    Kokkos::View<float * [bloch::step_floats], Kokkos::LayoutRight, IsoMem> copy("steps", steps);
    Kokkos::deep_copy(
        copy,
        Kokkos::View<const float * [bloch::step_floats], Kokkos::LayoutRight, Kokkos::HostSpace>(
            table.records.data(), steps));
    device_steps = copy;
  }
  const auto each = [&](const char* name, double reference::Tissue::*field) {
    Kokkos::View<float*, IsoMem> v(std::string(name), voxels);
    auto host = Kokkos::create_mirror_view(v);
    for (std::size_t i = 0; i < voxels; ++i) host(i) = float(ts[i].*field);
    Kokkos::deep_copy(v, host);
    return v;
  };
  bloch::VoxelTissue<IsoMem> tissue;
  tissue.m0 = each("m0", &reference::Tissue::m0);
  tissue.t1 = each("t1", &reference::Tissue::t1_s);
  tissue.t2 = each("t2", &reference::Tissue::t2_s);
  tissue.b1 = each("b1", &reference::Tissue::b1);
  tissue.df = each("df", &reference::Tissue::df_hz);
  Kokkos::View<float* [3], Kokkos::LayoutRight, IsoMem> centre("centre", voxels);
  auto centre_host = Kokkos::create_mirror_view(centre);
  for (std::size_t i = 0; i < voxels; ++i) {
    for (int a = 0; a < 3; ++a) centre_host(i, a) = float(voxel.centre_m[std::size_t(a)]);
  }
  Kokkos::deep_copy(centre, centre_host);
  tissue.centre_m = centre;
  bloch::IsochromatGrid grid;
  for (int a = 0; a < 3; ++a) {
    grid.counts[a] = voxel.counts[std::size_t(a)];
    grid.edges_m[a] = float(voxel.edges_m[std::size_t(a)]);
  }
  bloch::SampleViews<IsoMem> out;
  out.transverse = decltype(out.transverse)("signals", voxels, samples);
  out.longitudinal = decltype(out.longitudinal)("mz", voxels, samples);
  bloch::simulate_isochromats(TEST_EXECSPACE(), device_steps, grid, tissue, out);
  const auto signals = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out.transverse);
  const auto longitudinal =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out.longitudinal);
  std::vector<std::vector<Complex>> values(voxels);
  if (mz != nullptr) mz->assign(voxels, {});
  for (std::size_t v = 0; v < voxels; ++v) {
    for (std::size_t s = 0; s < samples; ++s) {
      values[v].emplace_back(signals(v, s, 0), signals(v, s, 1));
      if (mz != nullptr) (*mz)[v].push_back(longitudinal(v, s));
    }
  }
  return values;
}

// The same for one voxel of `t`.
std::vector<Complex> play_isochromats(const sequence::StepTable& played,
                                      const IsochromatVoxel& voxel, const reference::Tissue& t,
                                      std::vector<double>* mz = nullptr, bool own_signal = false) {
  std::vector<std::vector<double>> mzs;
  auto values =
      play_isochromat_voxels(played, voxel, {t}, mz != nullptr ? &mzs : nullptr, own_signal);
  if (mz != nullptr) mz->insert(mz->end(), mzs[0].begin(), mzs[0].end());
  return values[0];
}

// The reference at the engine's isochromats.
std::vector<reference::BlochSample> reference_at(const io::pulseq::PulseqFile& file,
                                                 const IsochromatVoxel& voxel,
                                                 const reference::Tissue& t,
                                                 double end_time_s = 1e30) {
  reference::BlochOptions options;
  options.positions_m = reference::box_positions(voxel.edges_m, voxel.centre_m, voxel.counts);
  options.end_time_s = end_time_s;
  return reference::simulate_pulseq_bloch(file, t, options);
}

// The largest difference between the engine and the reference over the
// samples both have, relative to the reference's largest sample.
double relative_difference(const std::vector<Complex>& ours,
                           const std::vector<reference::BlochSample>& ref) {
  EXPECT_GE(ref.size(), ours.size());
  double largest = 0.0, worst = 0.0;
  for (std::size_t i = 0; i < std::min(ours.size(), ref.size()); ++i) {
    largest = std::max(largest, std::abs(ref[i].value));
    worst = std::max(worst, std::abs(ours[i] - ref[i].value));
  }
  EXPECT_GT(largest, 1e-3) << "the reference's signal vanishes: nothing is compared";
  return worst / largest;
}

using namespace reference::pulseq_test_text;

std::string seq_header() {
  return "[VERSION]\nmajor 1\nminor 4\nrevision 0\n\n[DEFINITIONS]\nAdcRasterTime 1e-07\n"
         "BlockDurationRaster 1e-06\nGradientRasterTime 1e-05\nRadiofrequencyRasterTime 1e-06\n\n";
}
// 90 (phase 0) at 5 us, a crusher of `amplitude` x 90 us along z with a
// sample 4.5 us after it, 180 (phase pi/2) at 125 us, the same crusher, and a
// sample at the echo, 245 us. Blocks in us.
std::string crushed_echo(double amplitude_hz_per_m) {
  return seq_header() +
         "[BLOCKS]\n1 10 1 0 0 0 0 0\n2 110 0 0 0 1 1 0\n3 10 2 0 0 0 0 0\n"
         "4 110 0 0 0 1 0 0\n5 20 0 0 0 0 2 0\n\n"
         "[RF]\n1 25000 1 0 0 0 0 0\n2 50000 1 0 0 0 0 1.5707963267948966\n\n"
         "[TRAP]\n1 " +
         num(amplitude_hz_per_m) +
         " 10 80 10 0\n\n"
         "[ADC]\n1 1 1000 104 0 0\n2 1 10000 0 0 0\n\n[SHAPES]\n" +
         shape(1, std::vector<double>(10, 1.0));
}

// The Bloch equations over an interval of constant field w (rad/s, right-
// handed turns: dM/dt = w x M) with relaxation, as the exponential of their
// 4 x 4 affine generator (scaling and squaring of a Taylor series, double).
using Affine = std::array<std::array<double, 4>, 4>;

Affine multiply(const Affine& a, const Affine& b) {
  Affine c{};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 4; ++k) c[i][j] += a[i][k] * b[k][j];
  return c;
}

Affine bloch_interval(const Vec& w, double r1, double r2, double m0, double t) {
  Affine g{};
  g[0] = {-r2, -w[2], w[1], 0.0};
  g[1] = {w[2], -r2, -w[0], 0.0};
  g[2] = {-w[1], w[0], -r1, r1 * m0};
  int squarings = 0;
  double norm = 0.0;
  for (const auto& row : g)
    for (double x : row) norm = std::max(norm, std::abs(x) * t);
  while (norm > 0.1) {
    norm /= 2.0;
    ++squarings;
  }
  const double h = t / std::pow(2.0, squarings);
  Affine sum{}, term{};
  for (int i = 0; i < 4; ++i) sum[i][i] = term[i][i] = 1.0;
  for (int n = 1; n <= 14; ++n) {
    Affine scaled = g;
    for (auto& row : scaled)
      for (double& x : row) x *= h / n;
    term = multiply(term, scaled);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) sum[i][j] += term[i][j];
  }
  for (int i = 0; i < squarings; ++i) sum = multiply(sum, sum);
  return sum;
}
}  // namespace
}  // namespace larmor::test
