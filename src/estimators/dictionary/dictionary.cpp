#include "estimators/dictionary/dictionary.hpp"

#include <KokkosBlas3_gemm.hpp>
#include <algorithm>
#include <cmath>
#include <stdexcept>

#if LARMOR_HAVE_LAPACKE
#include <complex>
#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <lapacke.h>
#endif

#include "common/kokkos_compat.hpp"
#include "simulate/memory_budget.hpp"

namespace larmor::estimators {
namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;
template <class T>
using Matrix = Kokkos::View<T**, Kokkos::LayoutLeft, Mem>;

// Rows of complex vectors [row][n][re, im] as the real matrix [Re | Im]
// (rows x 2n) on the device.
template <class T>
Matrix<T> real_embedding(const float* x, std::int64_t rows, int n, const char* label) {
  Matrix<T> m(std::string(label), rows, 2 * n);
  auto h = Kokkos::create_mirror_view(m);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (int k = 0; k < n; ++k) {
      h(r, k) = T(x[(std::size_t(r) * n + k) * 2]);
      h(r, n + k) = T(x[(std::size_t(r) * n + k) * 2 + 1]);
    }
  }
  Kokkos::deep_copy(m, h);
  return m;
}

// Rows x [D] complex times conj(basis) [D][rank] -> rows x [rank] complex:
// [Re | Im] * [[Vr, -Vi], [Vi, Vr]] = [Re(x conj V) | Im(x conj V)].
std::vector<float> times_conj_basis(const float* x, std::int64_t rows, int d,
                                    const std::vector<float>& basis, int rank) {
  Matrix<float> m("larmor::basis_embedding", 2 * d, 2 * rank);
  auto h = Kokkos::create_mirror_view(m);
  for (int i = 0; i < d; ++i) {
    for (int k = 0; k < rank; ++k) {
      const float vr = basis[(std::size_t(i) * rank + k) * 2];
      const float vi = basis[(std::size_t(i) * rank + k) * 2 + 1];
      h(i, k) = vr;
      h(i, rank + k) = -vi;
      h(d + i, k) = vi;
      h(d + i, rank + k) = vr;
    }
  }
  Kokkos::deep_copy(m, h);
  std::vector<float> out(static_cast<std::size_t>(rows) * rank * 2);
  const std::int64_t block = std::max<std::int64_t>(1, (std::int64_t(1) << 27) / (2 * d));
  for (std::int64_t r0 = 0; r0 < rows; r0 += block) {
    const std::int64_t n = std::min(block, rows - r0);
    const Matrix<float> a =
        real_embedding<float>(x + std::size_t(r0) * d * 2, n, d, "larmor::rows");
    Matrix<float> c("larmor::projected", n, 2 * rank);
    KokkosBlas::gemm("N", "N", 1.0f, a, m, 0.0f, c);
    auto ch = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c);
    for (std::int64_t i = 0; i < n; ++i) {
      for (int k = 0; k < rank; ++k) {
        out[(std::size_t(r0 + i) * rank + k) * 2] = ch(i, k);
        out[(std::size_t(r0 + i) * rank + k) * 2 + 1] = ch(i, rank + k);
      }
    }
  }
  return out;
}

}  // namespace

Dictionary make_dictionary(const std::vector<float>& signals, int samples,
                           const tissue::Tissue& tissue) {
  Dictionary d;
  d.samples = d.original_samples = samples;
  d.atoms = tissue.voxels;
  if (std::int64_t(signals.size()) != d.atoms * samples * 2) {
    throw std::invalid_argument("dictionary: the signals do not match the atom count");
  }
  d.unit_atoms.resize(signals.size());
  d.norms.resize(std::size_t(d.atoms));
  for (std::int64_t a = 0; a < d.atoms; ++a) {
    double sq = 0.0;
    const float* s = signals.data() + std::size_t(a) * samples * 2;
    for (int k = 0; k < 2 * samples; ++k) sq += double(s[k]) * s[k];
    const double norm = std::sqrt(sq);
    if (!(norm > 0.0)) {
      throw std::invalid_argument("dictionary: atom " + std::to_string(a) +
                                  " has zero norm (no signal to match against)");
    }
    d.norms[a] = float(norm);
    for (int k = 0; k < 2 * samples; ++k) {
      d.unit_atoms[std::size_t(a) * samples * 2 + k] = float(s[k] / norm);
    }
  }
  for (tissue::Property p : tissue::all_properties) {
    if (tissue[p].is_map()) d.properties.push_back(p);
  }
  d.values.resize(std::size_t(d.atoms) * d.properties.size());
  for (std::int64_t a = 0; a < d.atoms; ++a) {
    for (std::size_t p = 0; p < d.properties.size(); ++p) {
      d.values[std::size_t(a) * d.properties.size() + p] = tissue[d.properties[p]].at(a);
    }
  }
  return d;
}

Dictionary compress(const Dictionary& d, int rank, double energy) {
#if LARMOR_HAVE_LAPACKE
  if (!d.basis.empty()) throw std::invalid_argument("dictionary: already compressed");
  const int n = d.samples;
  // Gram matrix of the unit atoms, A^H A, from the real embedding's blocks.
  const Matrix<double> a = real_embedding<double>(d.unit_atoms.data(), d.atoms, n, "larmor::atoms");
  Matrix<double> g("larmor::gram", 2 * n, 2 * n);
  KokkosBlas::gemm("T", "N", 1.0, a, a, 0.0, g);
  auto gh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g);
  std::vector<lapack_complex_double> h(static_cast<std::size_t>(n) * n);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {  // row-major (i, j) of A^H A
      const double re = gh(i, j) + gh(n + i, n + j);
      const double im = gh(i, n + j) - gh(n + i, j);
      h[std::size_t(i) * n + j] = std::complex<double>(re, im);
    }
  }
  std::vector<double> w(static_cast<std::size_t>(n));
  if (LAPACKE_zheev(LAPACK_ROW_MAJOR, 'V', 'U', n, h.data(), n, w.data()) != 0) {
    throw std::runtime_error("dictionary: the eigen-decomposition of the Gram matrix failed");
  }
  double total = 0.0;
  for (double v : w) total += std::max(v, 0.0);
  if (rank <= 0) {
    double kept = 0.0;
    rank = 0;
    while (rank < n && kept < energy * total) kept += std::max(w[std::size_t(n - 1 - rank++)], 0.0);
  }
  rank = std::min(rank, n);
  Dictionary c = d;
  c.samples = rank;
  c.original_samples = n;
  c.basis.resize(std::size_t(n) * rank * 2);
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < rank; ++k) {  // eigenvalues ascend: the last columns lead
      const auto v = h[std::size_t(i) * n + (n - 1 - k)];
      c.basis[(std::size_t(i) * rank + k) * 2] = float(v.real());
      c.basis[(std::size_t(i) * rank + k) * 2 + 1] = float(v.imag());
    }
  }
  c.unit_atoms = times_conj_basis(d.unit_atoms.data(), d.atoms, n, c.basis, rank);
  return c;
#else
  (void)d, (void)rank, (void)energy;
  throw std::runtime_error("dictionary compression needs LAPACKE (Debian: liblapacke-dev)");
#endif
}

std::vector<float> project(const Dictionary& d, const std::vector<float>& signals,
                           std::int64_t voxels) {
  if (d.basis.empty()) return signals;
  return times_conj_basis(signals.data(), voxels, d.original_samples, d.basis, d.samples);
}

MatchResult match(const Dictionary& d, const std::vector<float>& signals, std::int64_t voxels,
                  double memory_bytes) {
  const int n = d.samples;
  if (std::int64_t(signals.size()) != voxels * n * 2) {
    throw std::invalid_argument("dictionary matching: the signals do not have " +
                                std::to_string(n) + " samples per voxel");
  }
  if (d.atoms > 2147483647ll) {
    throw std::invalid_argument("dictionary matching: more atoms than a 32-bit index holds");
  }
  if (memory_bytes <= 0.0) memory_bytes = simulate::reverse_memory_budget<Exec>();
  // The inner products of a block: atoms x (2 x block voxels) floats.
  const std::int64_t block = std::clamp<std::int64_t>(
      std::int64_t(memory_bytes / (8.0 * double(d.atoms))), 1, std::max<std::int64_t>(voxels, 1));
  const Matrix<float> atoms =
      real_embedding<float>(d.unit_atoms.data(), d.atoms, n, "larmor::atoms");
  Kokkos::View<float*, Mem> norms("larmor::atom_norms", d.atoms);
  Kokkos::deep_copy(
      norms, Kokkos::View<const float*, Kokkos::HostSpace, kx::Unmanaged>(d.norms.data(), d.atoms));
  MatchResult out;
  out.atom.resize(std::size_t(voxels));
  out.m0.resize(std::size_t(voxels));
  out.correlation.resize(std::size_t(voxels));
  Matrix<float> b("larmor::match_signals", 2 * n, 2 * block);
  Matrix<float> p("larmor::inner_products", d.atoms, 2 * block);
  Kokkos::View<float* [4], Mem> best("larmor::match_best", block);  // index, re, im, |s|
  auto bh = Kokkos::create_mirror_view(b);
  const int atom_count = int(d.atoms);
  for (std::int64_t v0 = 0; v0 < voxels; v0 += block) {
    const int count = int(std::min(block, voxels - v0));
    Kokkos::deep_copy(bh, 0.0f);
    for (int v = 0; v < count; ++v) {
      const float* s = signals.data() + std::size_t(v0 + v) * n * 2;
      for (int k = 0; k < n; ++k) {  // columns [sr; si] and [si; -sr]
        bh(k, v) = s[2 * k];
        bh(n + k, v) = s[2 * k + 1];
        bh(k, block + v) = s[2 * k + 1];
        bh(n + k, block + v) = -s[2 * k];
      }
    }
    Kokkos::deep_copy(b, bh);
    KokkosBlas::gemm("N", "N", 1.0f, atoms, b, 0.0f, p);
    const int stride = int(block);
    using Policy = Kokkos::TeamPolicy<Exec>;
    Kokkos::parallel_for(
        "larmor::dictionary_argmax", Policy(count, Kokkos::AUTO),
        KOKKOS_LAMBDA(const Policy::member_type& m) {
          const int v = m.league_rank();
          using Reducer = Kokkos::MaxLoc<float, int>;
          typename Reducer::value_type result;
          Kokkos::parallel_reduce(
              Kokkos::TeamThreadRange(m, atom_count),
              [&](int a, typename Reducer::value_type& r) {
                const float re = p(a, v), im = p(a, stride + v);
                const float power = re * re + im * im;
                // Ties within a thread go to the lower index (across threads,
                // to the reducer's join).
                if (power > r.val || (power == r.val && a < r.loc)) {
                  r.val = power;
                  r.loc = a;
                }
              },
              Reducer(result));
          float norm = 0.0f;
          Kokkos::parallel_reduce(
              Kokkos::TeamThreadRange(m, n),
              [&](int k, float& sum) { sum += b(k, v) * b(k, v) + b(n + k, v) * b(n + k, v); },
              norm);
          Kokkos::single(Kokkos::PerTeam(m), [&]() {
            best(v, 0) = float(result.loc);
            best(v, 1) = p(result.loc, v);
            best(v, 2) = p(result.loc, stride + v);
            best(v, 3) = kx::sqrt(norm);
          });
        });
    auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), best);
    for (int v = 0; v < count; ++v) {
      const int a = int(hb(v, 0));
      const std::size_t i = std::size_t(v0 + v);
      out.atom[i] = a;
      out.m0[i] = std::complex<float>(hb(v, 1), hb(v, 2)) / d.norms[std::size_t(a)];
      out.correlation[i] = hb(v, 3) > 0 ? std::hypot(hb(v, 1), hb(v, 2)) / hb(v, 3) : 0.0f;
    }
  }
  (void)norms;
  return out;
}

}  // namespace larmor::estimators
