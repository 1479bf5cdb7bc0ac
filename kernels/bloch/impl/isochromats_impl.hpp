// The isochromat kernel (see isochromats.hpp for what it computes). A team
// plays one voxel: its isochromats are taken in chunks of T x K, a thread
// holding K of them in registers (isochromat i = chunk + k T + thread) for the
// whole table, which passes through team scratch in tiles of S steps. At a
// sample every thread sums its K isochromats into the tile's partial sums;
// after the tile the team adds the partials per sample (one thread per
// sample), so a tile costs two barriers however many samples it holds.
//
// Relaxation over a step of a microsecond changes a magnetisation by a part
// in a million: the factor exp(-dt / T) itself would carry float's rounding
// (a part in 10^7 of 1) as a percent-sized error in its rate, repeated every
// step. The kernel applies the change instead, m + expm1(-dt / T) m (and Mz
// relaxes towards M0 likewise), which keeps the rate to float precision.
#pragma once

#include <stdexcept>
#include <string>

#include "bloch/isochromats.hpp"
#include "common/sincos.hpp"

namespace larmor::bloch::detail {

// One warp per voxel on a GPU, K isochromats per thread; on the host one
// thread per team with K isochromats in its vector lanes.
template <class ExecSpace>
inline constexpr int team_threads = kx::is_host_space_v<ExecSpace> ? 1 : 32;
template <class ExecSpace>
inline constexpr int per_thread = kx::is_host_space_v<ExecSpace> ? 16 : 8;
inline constexpr int tile_steps = 32;

// A turn by `turns` (of 2 pi) as its sine and 1 - cos, from the half angle:
// 1 - cos = 2 sin^2(half) keeps its relative precision for the small angles
// of short steps, where 1 - cos(angle) computed in float would be mostly
// rounding, and the same rounding every step of a pulse.
KOKKOS_FORCEINLINE_FUNCTION void turn_of(float turns, float& s, float& one_minus_c) {
  float sh, ch;
  sincos_turns(0.5f * turns, sh, ch);
  s = 2.0f * sh * ch;
  one_minus_c = 2.0f * sh * sh;
}

template <class ExecSpace>
using Scratch = Kokkos::View<float*, typename ExecSpace::scratch_memory_space, kx::Unmanaged>;

template <class ExecSpace>
struct Isochromats {
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using Mem = typename ExecSpace::memory_space;
  static constexpr int T = team_threads<ExecSpace>, K = per_thread<ExecSpace>, S = tile_steps;
  // Scratch: the tile, the partial sums (S x T x 3) and the samples' slot and
  // demodulation (S x 3).
  static constexpr std::size_t tile_floats = std::size_t(S) * step_floats;
  static constexpr std::size_t partial_floats = std::size_t(S) * T * 3;
  static constexpr std::size_t scratch_floats = tile_floats + partial_floats + std::size_t(S) * 3;

  Steps<Mem> steps;
  IsochromatGrid grid;
  VoxelTissue<Mem> tissue;
  SampleViews<Mem> samples;
  int step_count = 0;
  bool with_longitudinal = false;

  // The offset of isochromat i from the voxel's centre along each axis.
  KOKKOS_INLINE_FUNCTION void offset_of(int i, float& x, float& y, float& z) const {
    const int nz = grid.counts[2], ny = grid.counts[1];
    const int iz = i % nz, iy = (i / nz) % ny, ix = i / (nz * ny);
    x = ((float(ix) + 0.5f) / float(grid.counts[0]) - 0.5f) * grid.edges_m[0];
    y = ((float(iy) + 0.5f) / float(ny) - 0.5f) * grid.edges_m[1];
    z = ((float(iz) + 0.5f) / float(nz) - 0.5f) * grid.edges_m[2];
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& member) const {
    const int voxel = member.league_rank(), thread = member.team_rank();
    Scratch<ExecSpace> scratch(member.team_scratch(0), scratch_floats);
    float* tile = scratch.data();
    float* partial = tile + tile_floats;
    float* sample_info = partial + partial_floats;

    const float m0 = tissue.m0(voxel), b1 = tissue.b1(voxel), df = tissue.df(voxel);
    const float r1 = 1.0f / tissue.t1(voxel), r2 = 1.0f / tissue.t2(voxel);
    const float cx = tissue.centre_m(voxel, 0), cy = tissue.centre_m(voxel, 1),
                cz = tissue.centre_m(voxel, 2);
    constexpr float two_pi = 6.283185307179586f, inverse_two_pi = 0.15915494309189535f;
    const int count = grid.size();
    const float inverse_count = 1.0f / float(count);

    for (int first = 0; first < count; first += T * K) {
      float ox[K], oy[K], oz[K], weight[K], mx[K], my[K], mz[K];
      for (int k = 0; k < K; ++k) {
        const int i = first + k * T + thread;
        const bool active = i < count;
        offset_of(active ? i : 0, ox[k], oy[k], oz[k]);
        weight[k] = active ? 1.0f : 0.0f;
        mx[k] = 0.0f;
        my[k] = 0.0f;
        mz[k] = m0;
      }
      for (int tile_start = 0; tile_start < step_count; tile_start += S) {
        const int tile_length = kx::min(S, step_count - tile_start);
        member.team_barrier();
        Kokkos::parallel_for(
            Kokkos::TeamThreadRange(member, tile_length * step_floats),
            [&](int f) { tile[f] = steps(tile_start + f / step_floats, f % step_floats); });
        member.team_barrier();
        int held = 0;  // samples of this tile so far
        for (int j = 0; j < tile_length; ++j) {
          const float* r = tile + j * step_floats;
          const int kind = int(r[step_field::kind]);
          const float dt = r[step_field::dt];
          if (kind == free_step) {
            const float mxs = r[step_field::moment], mys = r[step_field::moment + 1],
                        mzs = r[step_field::moment + 2];
            // The voxel's common turns, reduced before the small offsets add.
            float common = df * dt + (mxs * cx + mys * cy + mzs * cz);
            common -= float(kx::nearbyint(common));
            const float d1 = kx::expm1(-dt * r1), d2 = kx::expm1(-dt * r2);
            LARMOR_INDEPENDENT_LANES
            for (int k = 0; k < K; ++k) {
              float s, omc;
              turn_of(common + (mxs * ox[k] + mys * oy[k] + mzs * oz[k]), s, omc);
              const float x = mx[k] - (omc * mx[k] + s * my[k]);
              const float y = my[k] + (s * mx[k] - omc * my[k]);
              mx[k] = x + d2 * x;
              my[k] = y + d2 * y;
              mz[k] += d1 * (mz[k] - m0);
            }
          } else if (kind == rf_step) {
            const float wx = b1 * r[step_field::w1_re], wy = b1 * r[step_field::w1_im];
            const float gx = r[step_field::gradient], gy = r[step_field::gradient + 1],
                        gz = r[step_field::gradient + 2];
            const float offset = r[step_field::offset_hz];
            const float base = two_pi * ((df - offset) + (gx * cx + gy * cy + gz * cz));
            const float d1 = kx::expm1(-0.5f * dt * r1), d2 = kx::expm1(-0.5f * dt * r2);
            float sf, omcf;
            turn_of(offset * dt, sf, omcf);
            LARMOR_INDEPENDENT_LANES
            for (int k = 0; k < K; ++k) {
              float x = mx[k] + d2 * mx[k], y = my[k] + d2 * my[k];
              float z = mz[k] + d1 * (mz[k] - m0);
              const float wz = base + two_pi * (gx * ox[k] + gy * oy[k] + gz * oz[k]);
              const float rate = kx::sqrt(wx * wx + wy * wy + wz * wz);
              // No field (rate 0): no turn; the axis is then any unit vector.
              const float inverse = rate > 0.0f ? 1.0f / rate : 0.0f;
              const float nx = wx * inverse, ny = wy * inverse,
                          nz = rate > 0.0f ? wz * inverse : 1.0f;
              float s, omc;
              turn_of(rate * dt * inverse_two_pi, s, omc);
              // Rodrigues: v + s (n x v) - (1 - c) (v - n (n.v)).
              const float along = nx * x + ny * y + nz * z;
              const float rx = x + (s * (ny * z - nz * y) - omc * (x - nx * along));
              const float ry = y + (s * (nz * x - nx * z) - omc * (y - ny * along));
              z = z + (s * (nx * y - ny * x) - omc * (z - nz * along));
              // Back from the frame turning with the offset.
              x = rx - (omcf * rx + sf * ry);
              y = ry + (sf * rx - omcf * ry);
              mx[k] = x + d2 * x;
              my[k] = y + d2 * y;
              mz[k] = z + d1 * (z - m0);
            }
          } else {  // sample
            float sx = 0.0f, sy = 0.0f, sz = 0.0f;
            for (int k = 0; k < K; ++k) {
              sx += weight[k] * mx[k];
              sy += weight[k] * my[k];
              sz += weight[k] * mz[k];
            }
            float* p = partial + (std::size_t(held) * T + thread) * 3;
            p[0] = sx;
            p[1] = sy;
            p[2] = sz;
            if (thread == 0) {
              sample_info[held * 3 + 0] = r[step_field::slot];
              sample_info[held * 3 + 1] = r[step_field::demod_re];
              sample_info[held * 3 + 2] = r[step_field::demod_im];
            }
            ++held;
          }
        }
        member.team_barrier();
        for (int q = thread; q < held; q += T) {
          float sx = 0.0f, sy = 0.0f, sz = 0.0f;
          for (int t = 0; t < T; ++t) {
            const float* p = partial + (std::size_t(q) * T + t) * 3;
            sx += p[0];
            sy += p[1];
            sz += p[2];
          }
          const int slot = int(sample_info[q * 3]);
          const float c = sample_info[q * 3 + 1], s = sample_info[q * 3 + 2];
          const float re = (c * sx - s * sy) * inverse_count,
                      im = (s * sx + c * sy) * inverse_count;
          if (first == 0) {
            samples.transverse(voxel, slot, 0) = re;
            samples.transverse(voxel, slot, 1) = im;
            if (with_longitudinal) samples.longitudinal(voxel, slot) = sz * inverse_count;
          } else {
            samples.transverse(voxel, slot, 0) += re;
            samples.transverse(voxel, slot, 1) += im;
            if (with_longitudinal) samples.longitudinal(voxel, slot) += sz * inverse_count;
          }
        }
      }
    }
  }
};

}  // namespace larmor::bloch::detail

namespace larmor::bloch {

template <class ExecSpace>
void simulate_isochromats(const ExecSpace& exec,
                          const Steps<typename ExecSpace::memory_space>& steps,
                          const IsochromatGrid& grid,
                          const VoxelTissue<typename ExecSpace::memory_space>& tissue,
                          const SampleViews<typename ExecSpace::memory_space>& samples) {
  using Kernel = detail::Isochromats<ExecSpace>;
  const auto fail = [](const std::string& why) {
    throw std::invalid_argument(std::string(isochromats_kernel_name) + ": " + why);
  };
  const std::size_t voxels = tissue.m0.extent(0);
  if (tissue.t1.extent(0) != voxels || tissue.t2.extent(0) != voxels ||
      tissue.b1.extent(0) != voxels || tissue.df.extent(0) != voxels ||
      tissue.centre_m.extent(0) != voxels || samples.transverse.extent(0) != voxels) {
    fail("the tissue's and the outputs' voxel counts differ");
  }
  if (samples.longitudinal.size() != 0 &&
      (samples.longitudinal.extent(0) != voxels ||
       samples.longitudinal.extent(1) != samples.transverse.extent(1))) {
    fail("the longitudinal output's extents differ from the transverse one's");
  }
  for (int a = 0; a < 3; ++a) {
    if (grid.counts[a] < 1) fail("every axis needs at least one isochromat");
  }
  if (double(grid.counts[0]) * grid.counts[1] * grid.counts[2] > 2147483647.0) {
    fail("more than 2^31 - 1 isochromats per voxel");
  }
  if (steps.extent(0) > 2147483647u) fail("more than 2^31 - 1 steps");
  if (voxels == 0 || steps.extent(0) == 0) return;
  Kernel kernel{
      steps, grid, tissue, samples, int(steps.extent(0)), samples.longitudinal.size() != 0};
  Kokkos::TeamPolicy<ExecSpace> policy(exec, int(voxels), Kernel::T);
  policy.set_scratch_size(0, Kokkos::PerTeam(Kernel::scratch_floats * sizeof(float)));
  Kokkos::parallel_for(isochromats_kernel_name, policy, kernel);
}

}  // namespace larmor::bloch

#define LARMOR_BLOCH_INSTANTIATE(EXEC)                                                    \
  namespace larmor::bloch {                                                               \
  template void simulate_isochromats<EXEC>(const EXEC&, const Steps<EXEC::memory_space>&, \
                                           const IsochromatGrid&,                         \
                                           const VoxelTissue<EXEC::memory_space>&,        \
                                           const SampleViews<EXEC::memory_space>&);       \
  }
