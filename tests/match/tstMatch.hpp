// The fused matching kernels (kernels/match/) on one backend against a brute
// force written here in double precision: every row's inner products with
// every atom, the arg-max taken over all of them. Sizes cross every tile edge
// (atoms past a tile of 16, coefficients past a chunk of 32 and below it, rows
// past a team's block). A row's chosen atom must be the reference's wherever
// the runner-up trails by more than float rounding can bridge, and never worse
// than the best by more than that; its product and norm to float rounding.
// The result of a row must not depend on the other rows of the launch.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <random>
#include <vector>

#include "match/inner_products.hpp"

namespace larmor::test {
namespace {

using MatchMem = TEST_EXECSPACE::memory_space;
using HostRowsView = Kokkos::View<float***, Kokkos::LayoutRight, Kokkos::HostSpace>;

// Random complex rows [count][n], standard normal parts.
std::vector<float> random_rows(int count, int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(std::size_t(count) * n * 2);
  for (float& v : x) v = normal(rng);
  return x;
}

match::Rows<MatchMem> to_device(const std::vector<float>& x, int count, int n) {
  match::Rows<MatchMem> d("rows", count, n, 2);
  Kokkos::deep_copy(d, HostRowsView(const_cast<float*>(x.data()), count, n, 2));
  return d;
}

std::complex<double> inner(const std::vector<float>& atoms, int a, const std::vector<float>& rows,
                           int r, int n) {
  std::complex<double> sum = 0.0;
  for (int k = 0; k < n; ++k) {
    const std::size_t ia = (std::size_t(a) * n + k) * 2, ir = (std::size_t(r) * n + k) * 2;
    sum += std::conj(std::complex<double>(atoms[ia], atoms[ia + 1])) *
           std::complex<double>(rows[ir], rows[ir + 1]);
  }
  return sum;
}

struct BestOnHost {
  std::vector<int> atom;
  std::vector<float> product;  // [row][3]
};

BestOnHost best_on_backend(const std::vector<float>& atoms, int atom_count,
                           const std::vector<float>& rows, int row_count, int n) {
  match::BestAtoms<MatchMem> best{
      Kokkos::View<int*, MatchMem>("atom", row_count),
      Kokkos::View<float* [3], Kokkos::LayoutRight, MatchMem>("product", row_count)};
  match::best_atoms(TEST_EXECSPACE(), to_device(atoms, atom_count, n),
                    to_device(rows, row_count, n), best);
  BestOnHost out{std::vector<int>(std::size_t(row_count)),
                 std::vector<float>(std::size_t(row_count) * 3)};
  Kokkos::deep_copy(Kokkos::View<int*, Kokkos::HostSpace>(out.atom.data(), row_count), best.atom);
  Kokkos::deep_copy(Kokkos::View<float* [3], Kokkos::LayoutRight, Kokkos::HostSpace>(
                        out.product.data(), row_count),
                    best.product);
  return out;
}

TEST(TEST_CATEGORY, fused_match_agrees_with_brute_force_across_tile_edges) {
  // {atoms, rows, coefficients}: one chunk (compressed ranks) and several.
  const int sizes[][3] = {{1, 5, 3}, {17, 129, 31}, {40, 300, 32}, {33, 70, 33}, {100, 41, 70}};
  unsigned seed = 21;
  for (const auto& s : sizes) {
    const int atom_count = s[0], row_count = s[1], n = s[2];
    const std::vector<float> atoms = random_rows(atom_count, n, seed++);
    std::vector<float> rows = random_rows(row_count, n, seed++);
    // Every third row is an atom times a complex factor plus a little noise:
    // a clear winner, whose product is known.
    for (int r = 0; r < row_count; r += 3) {
      const int a = (r * 7) % atom_count;
      const std::complex<float> f = std::polar(1.5f, 0.4f * float(r));
      for (int k = 0; k < n; ++k) {
        const std::size_t ia = (std::size_t(a) * n + k) * 2, ir = (std::size_t(r) * n + k) * 2;
        const std::complex<float> z = f * std::complex<float>(atoms[ia], atoms[ia + 1]);
        rows[ir] = z.real() + 0.01f * rows[ir];
        rows[ir + 1] = z.imag() + 0.01f * rows[ir + 1];
      }
    }
    const BestOnHost got = best_on_backend(atoms, atom_count, rows, row_count, n);
    for (int r = 0; r < row_count; ++r) {
      double best = -1.0, second = -1.0, norm = 0.0;
      int arg = -1;
      for (int a = 0; a < atom_count; ++a) {
        const double p = std::norm(inner(atoms, a, rows, r, n));
        if (p > best)
          second = best, best = p, arg = a;
        else if (p > second)
          second = p;
      }
      for (int k = 0; k < 2 * n; ++k)
        norm += double(rows[std::size_t(r) * n * 2 + k]) * rows[std::size_t(r) * n * 2 + k];
      const int chosen = got.atom[std::size_t(r)];
      ASSERT_GE(chosen, 0) << r;
      ASSERT_LT(chosen, atom_count) << r;
      // Float sums of n products of unit-scale terms: relative rounding about
      // n * 6e-8 of |atom| |row|, squared into the power.
      double atom_norm = 0.0;
      for (int k = 0; k < 2 * n; ++k)
        atom_norm +=
            double(atoms[std::size_t(chosen) * n * 2 + k]) * atoms[std::size_t(chosen) * n * 2 + k];
      const double slack = 4.0 * n * 6e-8 * std::sqrt(atom_norm * norm) * std::sqrt(best);
      if (best - second > 2.0 * slack) EXPECT_EQ(chosen, arg) << "row " << r;
      const std::complex<double> ip = inner(atoms, chosen, rows, r, n);
      EXPECT_GE(std::norm(ip), best - 2.0 * slack) << "row " << r;
      const float* p = got.product.data() + 3 * r;
      EXPECT_NEAR(p[0], ip.real(), slack / std::sqrt(best) + 1e-6) << "row " << r;
      EXPECT_NEAR(p[1], ip.imag(), slack / std::sqrt(best) + 1e-6) << "row " << r;
      EXPECT_NEAR(p[2], std::sqrt(norm), 1e-6 * n * std::sqrt(norm)) << "row " << r;
      if (r % 3 == 0) EXPECT_EQ(chosen, (r * 7) % atom_count) << "row " << r;
    }
  }
}

TEST(TEST_CATEGORY, fused_match_of_a_row_does_not_depend_on_the_other_rows) {
  const int atom_count = 45, row_count = 300, n = 40;
  const std::vector<float> atoms = random_rows(atom_count, n, 3);
  const std::vector<float> rows = random_rows(row_count, n, 4);
  const BestOnHost whole = best_on_backend(atoms, atom_count, rows, row_count, n);
  const int head = 131;  // not a multiple of any block
  const std::vector<float> tail_rows(rows.begin() + std::size_t(head) * n * 2, rows.end());
  const BestOnHost tail = best_on_backend(atoms, atom_count, tail_rows, row_count - head, n);
  for (int r = head; r < row_count; ++r) {
    EXPECT_EQ(whole.atom[std::size_t(r)], tail.atom[std::size_t(r - head)]) << r;
    for (int j = 0; j < 3; ++j) {  // bit for bit
      EXPECT_EQ(whole.product[std::size_t(r) * 3 + j], tail.product[std::size_t(r - head) * 3 + j])
          << r;
    }
  }
}

TEST(TEST_CATEGORY, projection_and_normalisation_agree_with_double_precision) {
  const int basis_count = 19, row_count = 150, n = 75;
  const std::vector<float> basis = random_rows(basis_count, n, 5);
  std::vector<float> rows = random_rows(row_count, n, 6);
  match::Rows<MatchMem> coordinates("coordinates", row_count, basis_count, 2);
  match::project(TEST_EXECSPACE(), to_device(basis, basis_count, n), to_device(rows, row_count, n),
                 coordinates);
  auto c = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), coordinates);
  for (int r = 0; r < row_count; ++r) {
    for (int b = 0; b < basis_count; ++b) {
      const std::complex<double> ip = inner(basis, b, rows, r, n);
      const double scale = 2.0 * n * 6e-8 * 2.0 * n;  // |basis| |row| ~ 2n
      EXPECT_NEAR(c(r, b, 0), ip.real(), scale) << r << " " << b;
      EXPECT_NEAR(c(r, b, 1), ip.imag(), scale) << r << " " << b;
    }
  }
  // Rows to unit norm, their norms returned; a zero row is reported.
  for (int k = 0; k < 2 * n; ++k) rows[std::size_t(7) * n * 2 + k] = 0.0f;
  match::Rows<MatchMem> d = to_device(rows, row_count, n);
  Kokkos::View<float*, MatchMem> norms("norms", row_count);
  EXPECT_EQ(match::normalise(TEST_EXECSPACE(), d, norms), 7);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d);
  auto hn = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), norms);
  for (int r = 0; r < row_count; ++r) {
    double sq = 0.0, unit = 0.0;
    for (int k = 0; k < 2 * n; ++k) {
      sq += double(rows[std::size_t(r) * n * 2 + k]) * rows[std::size_t(r) * n * 2 + k];
      unit += double(h(r, k / 2, k % 2)) * h(r, k / 2, k % 2);
    }
    EXPECT_NEAR(hn(r), std::sqrt(sq), 1e-6 * std::sqrt(sq)) << r;
    EXPECT_NEAR(unit, r == 7 ? 0.0 : 1.0, 1e-6) << r;
  }
}

TEST(TEST_CATEGORY, fused_match_refuses_mismatched_shapes) {
  const std::vector<float> atoms = random_rows(4, 8, 1), rows = random_rows(3, 9, 2);
  try {
    best_on_backend(atoms, 4, rows, 3, 8);  // fine
    match::BestAtoms<MatchMem> best{
        Kokkos::View<int*, MatchMem>("atom", 3),
        Kokkos::View<float* [3], Kokkos::LayoutRight, MatchMem>("product", 3)};
    match::best_atoms(TEST_EXECSPACE(), to_device(atoms, 4, 8), to_device(rows, 3, 9), best);
    FAIL() << "rows of 9 coefficients matched against atoms of 8";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(
        std::string(e.what()).find("larmor::match::best_atoms: the atoms have 8 coefficients"),
        std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace larmor::test
