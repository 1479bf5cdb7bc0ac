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
#include "estimators/one_blas_thread.hpp"
#include "simulate/memory_budget.hpp"

namespace larmor::estimators::dictionary {
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
// Rows x [D] complex times conj(basis) [D][rank] -> rows x [rank] complex.
// `exact_order`: one thread per output in a fixed summation order (each row's
// result then does not depend on which other rows share the call, i.e. on the
// MPI partition); otherwise as a GEMM of the real embeddings:
// [Re | Im] * [[Vr, -Vi], [Vi, Vr]] = [Re(x conj V) | Im(x conj V)].
std::vector<float> times_conj_basis(const float* x, std::int64_t rows, int d,
                                    const std::vector<float>& basis, int rank,
                                    bool exact_order = false) {
  std::vector<float> out(static_cast<std::size_t>(rows) * rank * 2);
  const std::int64_t block = std::max<std::int64_t>(1, (std::int64_t(1) << 27) / (2 * d));
  if (exact_order) {
    Kokkos::View<float***, Kokkos::LayoutRight, Mem> v("larmor::basis", d, rank, 2);
    Kokkos::deep_copy(
        v, Kokkos::View<const float***, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged>(
               basis.data(), d, rank, 2));
    for (std::int64_t r0 = 0; r0 < rows; r0 += block) {
      const int n = int(std::min(block, rows - r0));
      Kokkos::View<float***, Kokkos::LayoutRight, Mem> xs("larmor::rows", n, d, 2);
      Kokkos::deep_copy(
          xs, Kokkos::View<const float***, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged>(
                  x + std::size_t(r0) * d * 2, n, d, 2));
      Kokkos::View<float***, Kokkos::LayoutRight, Mem> c("larmor::projected", n, rank, 2);
      Kokkos::parallel_for(
          "larmor::project_exact", Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2>>({0, 0}, {n, rank}),
          KOKKOS_LAMBDA(int i, int k) {
            float re = 0.0f, im = 0.0f;
            for (int j = 0; j < d; ++j) {  // x conj(v)
              const float xr = xs(i, j, 0), xi = xs(i, j, 1), vr = v(j, k, 0), vi = v(j, k, 1);
              re += xr * vr + xi * vi;
              im += xi * vr - xr * vi;
            }
            c(i, k, 0) = re;
            c(i, k, 1) = im;
          });
      Kokkos::deep_copy(
          Kokkos::View<float***, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged>(
              out.data() + std::size_t(r0) * rank * 2, n, rank, 2),
          c);
    }
    return out;
  }
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

// The atom of largest `power(a)` over a team (ties within a thread go to
// the lower index; across threads, to the reducer's join).
template <class Member, class Power>
KOKKOS_INLINE_FUNCTION int team_argmax(const Member& m, int atoms, const Power& power) {
  using Reducer = Kokkos::MaxLoc<float, int>;
  typename Reducer::value_type result;
  Kokkos::parallel_reduce(
      Kokkos::TeamThreadRange(m, atoms),
      [&](int a, typename Reducer::value_type& r) {
        const float pa = power(a);
        if (pa > r.val || (pa == r.val && a < r.loc)) {
          r.val = pa;
          r.loc = a;
        }
      },
      Reducer(result));
  return result.loc;
}

// Voxels [v0, v0 + count) of `out` from the device's (atom, Re, Im, |s|).
void store_best(const Dictionary& d, const Kokkos::View<float* [4], Mem>& best, std::int64_t v0,
                int count, MatchResult& out) {
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), best);
  for (int v = 0; v < count; ++v) {
    const int a = int(hb(v, 0));
    const std::size_t i = std::size_t(v0 + v);
    out.atom[i] = a;
    out.m0[i] = std::complex<float>(hb(v, 1), hb(v, 2)) / d.norms[std::size_t(a)];
    out.correlation[i] = hb(v, 3) > 0 ? std::hypot(hb(v, 1), hb(v, 2)) / hb(v, 3) : 0.0f;
  }
}

// The exact-order match: a team per voxel, each thread the inner products of
// its atoms in a fixed order, an argmax over the team; nothing depends on
// which voxels share the launch.
void match_exact(const Dictionary& d, const std::vector<float>& signals, std::int64_t voxels,
                 MatchResult& out) {
  const int n = d.samples, atom_count = int(d.atoms);
  Kokkos::View<float***, Kokkos::LayoutRight, Mem> atoms("larmor::atoms", d.atoms, n, 2);
  Kokkos::deep_copy(
      atoms, Kokkos::View<const float***, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged>(
                 d.unit_atoms.data(), d.atoms, n, 2));
  const std::int64_t block = std::int64_t(1) << 16;
  for (std::int64_t v0 = 0; v0 < voxels; v0 += block) {
    const int count = int(std::min(block, voxels - v0));
    Kokkos::View<float***, Kokkos::LayoutRight, Mem> s("larmor::signals", count, n, 2);
    Kokkos::deep_copy(
        s, Kokkos::View<const float***, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged>(
               signals.data() + std::size_t(v0) * n * 2, count, n, 2));
    Kokkos::View<float* [4], Mem> best("larmor::match_best", count);
    using Policy = Kokkos::TeamPolicy<Exec>;
    Kokkos::parallel_for(
        "larmor::dictionary_match_exact", Policy(count, Kokkos::AUTO),
        KOKKOS_LAMBDA(const Policy::member_type& m) {
          const int v = m.league_rank();
          const int loc = team_argmax(m, atom_count, [&](int a) {
            float re = 0.0f, im = 0.0f;
            for (int k = 0; k < n; ++k) {  // conj(atom) x signal
              const float ar = atoms(a, k, 0), ai = atoms(a, k, 1);
              const float sr = s(v, k, 0), si = s(v, k, 1);
              re += ar * sr + ai * si;
              im += ar * si - ai * sr;
            }
            return re * re + im * im;
          });
          Kokkos::single(Kokkos::PerTeam(m), [&]() {
            float re = 0.0f, im = 0.0f, norm = 0.0f;
            for (int k = 0; k < n; ++k) {
              const float ar = atoms(loc, k, 0), ai = atoms(loc, k, 1);
              const float sr = s(v, k, 0), si = s(v, k, 1);
              re += ar * sr + ai * si;
              im += ar * si - ai * sr;
              norm += sr * sr + si * si;
            }
            best(v, 0) = float(loc);
            best(v, 1) = re;
            best(v, 2) = im;
            best(v, 3) = kx::sqrt(norm);
          });
        });
    store_best(d, best, v0, count, out);
  }
}

}  // namespace

Dictionary make_dictionary(const std::vector<float>& signals, int samples,
                           const tissue::Tissue& tissue) {
  const kx::ScopedRegion region("larmor::dictionary::normalise");
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
  const kx::ScopedRegion region("larmor::dictionary::compress");
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
  const OneBlasThread deterministic;
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
                           std::int64_t voxels, bool exact_order) {
  if (d.basis.empty()) return signals;
  const kx::ScopedRegion region("larmor::dictionary::project");
  return times_conj_basis(signals.data(), voxels, d.original_samples, d.basis, d.samples,
                          exact_order);
}

MatchResult match(const Dictionary& d, const std::vector<float>& signals, std::int64_t voxels,
                  double memory_bytes, bool exact_order) {
  const kx::ScopedRegion region("larmor::dictionary::match");
  const int n = d.samples;
  if (std::int64_t(signals.size()) != voxels * n * 2) {
    throw std::invalid_argument("dictionary matching: the signals do not have " +
                                std::to_string(n) + " samples per voxel");
  }
  if (d.atoms > 2147483647ll) {
    throw std::invalid_argument("dictionary matching: more atoms than a 32-bit index holds");
  }
  if (memory_bytes <= 0.0) memory_bytes = simulate::reverse_memory_budget<Exec>();
  MatchResult out;
  out.atom.resize(std::size_t(voxels));
  out.m0.resize(std::size_t(voxels));
  out.correlation.resize(std::size_t(voxels));
  if (exact_order) {
    match_exact(d, signals, voxels, out);
    return out;
  }
  // The inner products of a block: atoms x (2 x block voxels) floats.
  const std::int64_t block = std::clamp<std::int64_t>(
      std::int64_t(memory_bytes / (8.0 * double(d.atoms))), 1, std::max<std::int64_t>(voxels, 1));
  const Matrix<float> atoms =
      real_embedding<float>(d.unit_atoms.data(), d.atoms, n, "larmor::atoms");
  Kokkos::View<float*, Mem> norms("larmor::atom_norms", d.atoms);
  Kokkos::deep_copy(
      norms, Kokkos::View<const float*, Kokkos::HostSpace, kx::Unmanaged>(d.norms.data(), d.atoms));
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
          const int loc = team_argmax(m, atom_count, [&](int a) {
            const float re = p(a, v), im = p(a, stride + v);
            return re * re + im * im;
          });
          float norm = 0.0f;
          Kokkos::parallel_reduce(
              Kokkos::TeamThreadRange(m, n),
              [&](int k, float& sum) { sum += b(k, v) * b(k, v) + b(n + k, v) * b(n + k, v); },
              norm);
          Kokkos::single(Kokkos::PerTeam(m), [&]() {
            const int slot = m.league_rank();
            best(slot, 0) = float(loc);
            best(slot, 1) = p(loc, v);
            best(slot, 2) = p(loc, stride + v);
            best(slot, 3) = kx::sqrt(norm);
          });
        });
    store_best(d, best, v0, count, out);
  }
  (void)norms;
  return out;
}

}  // namespace larmor::estimators::dictionary
