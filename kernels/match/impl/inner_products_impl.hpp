// The fused inner-product kernels (see inner_products.hpp for what they
// compute). A team: a block of RB = threads x RPT rows; a thread: RPT rows
// (interleaved by the team size, so neighbouring threads read neighbouring
// rows), whose accumulators for a tile of A atoms stay in registers while the
// tile's coefficients pass through scratch in chunks of K. When the rows have
// no more than K coefficients (compressed dictionaries) a thread loads its
// rows once for the whole launch; otherwise each chunk again per tile.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "match/inner_products.hpp"

namespace larmor::match::detail {

// Atoms per tile and coefficients per chunk: the accumulators (2A) and a
// chunk of a row (2K) per row held by a thread.
inline constexpr int tile_atoms = 16;
inline constexpr int chunk_coefficients = 32;

// One thread per row on a GPU; on the host one thread per team, its rows
// contiguous in the innermost loops (vector lanes).
template <class ExecSpace>
inline constexpr int team_threads = kx::is_host_space_v<ExecSpace> ? 1 : 128;
template <class ExecSpace>
inline constexpr int rows_per_thread = kx::is_host_space_v<ExecSpace> ? 16 : 1;

struct alignas(16) Quad {
  float v[4];
};

#if defined(__CUDA_ARCH__)
// Indexing the dynamic shared memory itself gives shared loads (a generic
// pointer to team scratch would give generic ones).
extern __shared__ Quad larmor_match_shared_quads[];
#endif

template <class ExecSpace>
using Scratch = Kokkos::View<float*, typename ExecSpace::scratch_memory_space,
                             Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// The tile: A atoms x K coefficients x (re, im), as quads (two coefficients),
// plus room to align it to 16 bytes.
inline constexpr std::size_t tile_floats = std::size_t(tile_atoms) * chunk_coefficients * 2 + 4;

template <class ExecSpace, bool KeepBest>
struct InnerProducts {
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using Mem = typename ExecSpace::memory_space;
  static constexpr int A = tile_atoms, K = chunk_coefficients, T = team_threads<ExecSpace>,
                       RPT = rows_per_thread<ExecSpace>, RB = T * RPT;
  ConstRows<Mem> atoms, rows;
  BestAtoms<Mem> best;    // KeepBest
  Rows<Mem> coordinates;  // !KeepBest
  int n = 0, atom_count = 0, row_count = 0;

  KOKKOS_FORCEINLINE_FUNCTION Quad tile_quad(const float* tile, int shared_offset, int i) const {
#if defined(__CUDA_ARCH__)
    return larmor_match_shared_quads[shared_offset + i];
#else
    (void)shared_offset;
    return reinterpret_cast<const Quad*>(tile)[i];
#endif
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& m) const {
    Scratch<ExecSpace> s(m.team_scratch(0), tile_floats);
    float* tile = s.data();
    const auto misalignment = reinterpret_cast<std::uintptr_t>(tile) % 16;
    if (misalignment != 0) tile += (16 - misalignment) / 4;
    int shared_offset = 0;
#if defined(__CUDA_ARCH__)
    shared_offset = int((reinterpret_cast<const char*>(tile) -
                         reinterpret_cast<const char*>(larmor_match_shared_quads)) /
                        16);
#endif
    const int first = m.league_rank() * RB + m.team_rank();
    const int chunks = (n + K - 1) / K;
    // This thread's rows' chunk of coefficients, [k][row] (zero past the
    // last row and coefficient).
    float sr[K][RPT], si[K][RPT];
    float norm[RPT];
    float best_power[RPT], best_re[RPT], best_im[RPT];
    int best_atom[RPT];
    for (int j = 0; j < RPT; ++j) {
      norm[j] = 0.0f;
      best_power[j] = -1.0f;
      best_re[j] = best_im[j] = 0.0f;
      best_atom[j] = 0;
    }
    for (int a0 = 0; a0 < atom_count; a0 += A) {
      float re[A][RPT], im[A][RPT];
      LARMOR_UNROLL
      for (int a = 0; a < A; ++a) {
        for (int j = 0; j < RPT; ++j) re[a][j] = im[a][j] = 0.0f;
      }
      for (int c = 0; c < chunks; ++c) {
        m.team_barrier();  // the previous tile is consumed
        Kokkos::parallel_for(Kokkos::TeamThreadRange(m, A * K / 2), [&](int i) {
          const int a = i / (K / 2), k = c * K + 2 * (i - a * (K / 2)), atom = a0 + a;
          Quad q{{0.0f, 0.0f, 0.0f, 0.0f}};
          if (atom < atom_count) {
            if (k < n) q.v[0] = atoms(atom, k, 0), q.v[1] = atoms(atom, k, 1);
            if (k + 1 < n) q.v[2] = atoms(atom, k + 1, 0), q.v[3] = atoms(atom, k + 1, 1);
          }
          reinterpret_cast<Quad*>(tile)[i] = q;
        });
        m.team_barrier();
        if (chunks > 1 || a0 == 0) load_chunk(first, c, sr, si, norm, a0 == 0);
        LARMOR_UNROLL
        for (int a = 0; a < A; ++a) {
          LARMOR_UNROLL
          for (int h = 0; h < K / 2; ++h) {
            const Quad q = tile_quad(tile, shared_offset, a * (K / 2) + h);
            for (int j = 0; j < RPT; ++j) {  // conj(atom) x row, k ascending
              re[a][j] = re[a][j] + q.v[0] * sr[2 * h][j];
              re[a][j] = re[a][j] + q.v[1] * si[2 * h][j];
              im[a][j] = im[a][j] + q.v[0] * si[2 * h][j];
              im[a][j] = im[a][j] - q.v[1] * sr[2 * h][j];
              re[a][j] = re[a][j] + q.v[2] * sr[2 * h + 1][j];
              re[a][j] = re[a][j] + q.v[3] * si[2 * h + 1][j];
              im[a][j] = im[a][j] + q.v[2] * si[2 * h + 1][j];
              im[a][j] = im[a][j] - q.v[3] * sr[2 * h + 1][j];
            }
          }
        }
      }
      if constexpr (KeepBest) {
        LARMOR_UNROLL
        for (int a = 0; a < A; ++a) {
          if (a0 + a >= atom_count) continue;
          for (int j = 0; j < RPT; ++j) {
            const float power = re[a][j] * re[a][j] + im[a][j] * im[a][j];
            if (power > best_power[j]) {
              best_power[j] = power;
              best_atom[j] = a0 + a;
              best_re[j] = re[a][j];
              best_im[j] = im[a][j];
            }
          }
        }
      } else {
        for (int j = 0; j < RPT; ++j) {
          const int row = first + j * T;
          if (row >= row_count) continue;
          LARMOR_UNROLL
          for (int a = 0; a < A; ++a) {
            if (a0 + a >= atom_count) continue;
            coordinates(row, a0 + a, 0) = re[a][j];
            coordinates(row, a0 + a, 1) = im[a][j];
          }
        }
      }
    }
    if constexpr (KeepBest) {
      for (int j = 0; j < RPT; ++j) {
        const int row = first + j * T;
        if (row >= row_count) continue;
        best.atom(row) = best_atom[j];
        best.product(row, 0) = best_re[j];
        best.product(row, 1) = best_im[j];
        best.product(row, 2) = kx::sqrt(norm[j]);
      }
    }
  }

  // Chunk c of this thread's rows into registers; `sum_norm`: add their
  // squares to the rows' norms (once per coefficient, in k order).
  KOKKOS_FORCEINLINE_FUNCTION void load_chunk(int first, int c, float (&sr)[K][RPT],
                                              float (&si)[K][RPT], float (&norm)[RPT],
                                              bool sum_norm) const {
    for (int j = 0; j < RPT; ++j) {
      const int row = first + j * T;
      LARMOR_UNROLL
      for (int kk = 0; kk < K; ++kk) {
        const int k = c * K + kk;
        const bool inside = row < row_count && k < n;
        sr[kk][j] = inside ? rows(row, k, 0) : 0.0f;
        si[kk][j] = inside ? rows(row, k, 1) : 0.0f;
        if (sum_norm) norm[j] = norm[j] + (sr[kk][j] * sr[kk][j] + si[kk][j] * si[kk][j]);
      }
    }
  }
};

template <class ExecSpace, bool KeepBest>
void launch(const ExecSpace& exec, InnerProducts<ExecSpace, KeepBest> kernel, const char* name) {
  using Kernel = InnerProducts<ExecSpace, KeepBest>;
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  if (kernel.row_count == 0) return;
  const int blocks = int((std::int64_t(kernel.row_count) + Kernel::RB - 1) / Kernel::RB);
  Policy policy(exec, blocks, Kernel::T);
  policy.set_scratch_size(0, Kokkos::PerTeam(tile_floats * sizeof(float)));
  Kokkos::parallel_for(std::string(name), policy, kernel);
}

inline void check(bool ok, const char* kernel, const std::string& what) {
  if (!ok) throw std::invalid_argument(std::string(kernel) + ": " + what);
}

template <class Mem>
void check_shapes(const char* kernel, const ConstRows<Mem>& atoms, const ConstRows<Mem>& rows) {
  constexpr std::int64_t most = std::numeric_limits<int>::max();
  check(atoms.extent(2) == 2 && rows.extent(2) == 2, kernel,
        "rows and atoms must be [count][coefficients][2]");
  check(atoms.extent(1) == rows.extent(1), kernel,
        "the atoms have " + std::to_string(atoms.extent(1)) + " coefficients and the rows " +
            std::to_string(rows.extent(1)));
  check(atoms.extent(0) > 0, kernel, "no atoms");
  check(std::int64_t(atoms.extent(0)) <= most && std::int64_t(rows.extent(0)) <= most, kernel,
        "more than 2^31 - 1 atoms or rows in one launch");
}

// The kernel over `atoms` and `rows` once their shapes are checked.
template <class ExecSpace, bool KeepBest>
InnerProducts<ExecSpace, KeepBest> kernel_for(
    const char* name, const ConstRows<typename ExecSpace::memory_space>& atoms,
    const ConstRows<typename ExecSpace::memory_space>& rows) {
  check_shapes(name, atoms, rows);
  InnerProducts<ExecSpace, KeepBest> k;
  k.atoms = atoms;
  k.rows = rows;
  k.n = int(rows.extent(1));
  k.atom_count = int(atoms.extent(0));
  k.row_count = int(rows.extent(0));
  return k;
}

}  // namespace larmor::match::detail

namespace larmor::match {

template <class ExecSpace>
void best_atoms(const ExecSpace& exec, const ConstRows<typename ExecSpace::memory_space>& atoms,
                const ConstRows<typename ExecSpace::memory_space>& rows,
                const BestAtoms<typename ExecSpace::memory_space>& best) {
  auto k = detail::kernel_for<ExecSpace, true>(best_atoms_kernel_name, atoms, rows);
  detail::check(best.atom.extent(0) >= rows.extent(0) && best.product.extent(0) >= rows.extent(0),
                best_atoms_kernel_name, "the results hold fewer rows than given");
  k.best = best;
  detail::launch(exec, k, best_atoms_kernel_name);
}

template <class ExecSpace>
void project(const ExecSpace& exec, const ConstRows<typename ExecSpace::memory_space>& basis,
             const ConstRows<typename ExecSpace::memory_space>& rows,
             const Rows<typename ExecSpace::memory_space>& coordinates) {
  auto k = detail::kernel_for<ExecSpace, false>(project_kernel_name, basis, rows);
  detail::check(coordinates.extent(0) >= rows.extent(0) &&
                    coordinates.extent(1) == basis.extent(0) && coordinates.extent(2) == 2,
                project_kernel_name, "the coordinates must be [rows][basis vectors][2]");
  k.coordinates = coordinates;
  detail::launch(exec, k, project_kernel_name);
}

template <class ExecSpace>
std::int64_t normalise(const ExecSpace& exec, const Rows<typename ExecSpace::memory_space>& rows,
                       const Kokkos::View<float*, typename ExecSpace::memory_space>& norms) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Member = typename Policy::member_type;
  const std::int64_t count = std::int64_t(rows.extent(0));
  const int n = int(rows.extent(1));
  detail::check(norms.extent(0) >= rows.extent(0) && rows.extent(2) == 2, normalise_kernel_name,
                "rows must be [count][coefficients][2] and the norms as many");
  if (count == 0) return -1;
  std::int64_t first_bad = count;
  Kokkos::parallel_reduce(
      std::string(normalise_kernel_name), Policy(exec, count, Kokkos::AUTO),
      KOKKOS_LAMBDA(const Member& m, std::int64_t& bad) {
        const std::int64_t r = m.league_rank();
        double sq = 0.0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(m, n),
            [&](int k, double& sum) {
              const double re = rows(r, k, 0), im = rows(r, k, 1);
              sum += re * re + im * im;
            },
            sq);
        const double norm = kx::sqrt(sq);
        const bool usable = norm > 0.0 && norm <= 3.0e38;
        if (usable) {
          const float inverse = float(1.0 / norm);
          Kokkos::parallel_for(Kokkos::TeamThreadRange(m, n), [&](int k) {
            rows(r, k, 0) *= inverse;
            rows(r, k, 1) *= inverse;
          });
        }
        Kokkos::single(Kokkos::PerTeam(m), [&]() {
          norms(r) = usable ? float(norm) : 0.0f;
          if (!usable && r < bad) bad = r;
        });
      },
      Kokkos::Min<std::int64_t>(first_bad));
  return first_bad < count ? first_bad : -1;
}

}  // namespace larmor::match

#define LARMOR_MATCH_INSTANTIATE(EXEC)                                                    \
  namespace larmor::match {                                                               \
  template void best_atoms<EXEC>(const EXEC&, const ConstRows<EXEC::memory_space>&,       \
                                 const ConstRows<EXEC::memory_space>&,                    \
                                 const BestAtoms<EXEC::memory_space>&);                   \
  template void project<EXEC>(const EXEC&, const ConstRows<EXEC::memory_space>&,          \
                              const ConstRows<EXEC::memory_space>&,                       \
                              const Rows<EXEC::memory_space>&);                           \
  template std::int64_t normalise<EXEC>(const EXEC&, const Rows<EXEC::memory_space>&,     \
                                        const Kokkos::View<float*, EXEC::memory_space>&); \
  }
