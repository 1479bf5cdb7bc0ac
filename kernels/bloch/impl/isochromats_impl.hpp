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

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "bloch/isochromats.hpp"
#include "common/sincos.hpp"

namespace larmor::bloch::detail {

// One warp per team on a GPU, K isochromats per thread; on the host one
// thread per team with its K isochromats in vector lanes.
template <class ExecSpace>
inline constexpr int team_threads = kx::is_host_space_v<ExecSpace> ? 1 : 32;
template <class ExecSpace>
inline constexpr int per_thread = kx::is_host_space_v<ExecSpace> ? 16 : 8;
inline constexpr int tile_steps = 32;
// A voxel of many isochromats is shared by several teams ("parts"), each
// running at least this many chunks of T x K, so that one voxel fills a GPU
// or a host's threads; the parts' sums are added in a fixed order after.
template <class ExecSpace>
inline constexpr int chunks_per_part = kx::is_host_space_v<ExecSpace> ? 64 : 4;
// The parts' partial samples of one voxel batch stay below this size.
inline constexpr std::size_t partial_budget_bytes = std::size_t(256) << 20;

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

KOKKOS_FORCEINLINE_FUNCTION float inverse_sqrt(float x) {
#if defined(__CUDA_ARCH__)
  return ::rsqrtf(x);
#else
  return 1.0f / std::sqrt(x);
#endif
}

// The turn (s, 1 - c) followed by the turn (sd, 1 - cd), in the same form:
// the angle addition formulas rearranged so that small angles keep their
// relative precision.
KOKKOS_FORCEINLINE_FUNCTION void add_turn(float& s, float& one_minus_c, float sd,
                                          float one_minus_cd) {
  const float sum_s = s + sd - (s * one_minus_cd + sd * one_minus_c);
  one_minus_c = one_minus_c + one_minus_cd - (one_minus_c * one_minus_cd - s * sd);
  s = sum_s;
}

// How the isochromats are dealt out. The grid's longest axis (the "run"
// axis) is cut into runs of K; a thread holds one run, whose isochromats
// differ only by k times the run axis' spacing, so their precession angles
// differ by k times one step (on a GPU the thread turns one isochromat by
// sin/cos and the rest by angle addition). A run past the axis' end holds
// isochromats of weight 0.
struct Runs {
  int axis = 2;  // the run axis
  int other[2] = {0, 1};
  int per_line = 1;  // runs along one line of the run axis
  int units = 1;     // runs in the grid
  int chunks = 1;    // groups of T runs
};

inline Runs runs_of(const IsochromatGrid& grid, int k, int t) {
  Runs r;
  for (int a = 1; a >= 0; --a) {
    if (grid.counts[a] > grid.counts[r.axis]) r.axis = a;
  }
  r.other[0] = r.axis == 0 ? 1 : 0;
  r.other[1] = r.axis == 2 ? 1 : 2;
  r.per_line = (grid.counts[r.axis] + k - 1) / k;
  const long long lines = (long long)(grid.counts[r.other[0]]) * grid.counts[r.other[1]];
  const long long units = lines * r.per_line;
  const long long chunks = (units + t - 1) / t;
  if (units > 2147483647LL) throw std::invalid_argument("more than 2^31 - 1 isochromat runs");
  r.units = int(units);
  r.chunks = int(chunks);
  return r;
}

// The parts a voxel is shared by: a function of the grid and the sample
// count alone, so that a voxel's result does not depend on the voxels (or the
// ranks) beside it.
template <class ExecSpace>
int parts_of(const Runs& runs, std::size_t sample_slots) {
  const int wanted = (runs.chunks + chunks_per_part<ExecSpace> - 1) / chunks_per_part<ExecSpace>;
  const std::size_t per_part = std::max<std::size_t>(1, sample_slots) * 3 * sizeof(float);
  const int affordable = int(std::min<std::size_t>(1 << 20, partial_budget_bytes / per_part));
  return std::max(1, std::min(wanted, affordable));
}

template <class ExecSpace>
using Scratch = Kokkos::View<float*, typename ExecSpace::scratch_memory_space, kx::Unmanaged>;

template <class ExecSpace>
struct Isochromats {
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using Mem = typename ExecSpace::memory_space;
  using Partials = Kokkos::View<float** [3], Kokkos::LayoutRight, Mem>;
  static constexpr int T = team_threads<ExecSpace>, K = per_thread<ExecSpace>, S = tile_steps;
  // On a GPU the sine is the costly part of a free step; on the host the
  // lanes each take their own, which vectorises.
  static constexpr bool add_turns = !kx::is_host_space_v<ExecSpace>;
  // What every thread of a team would otherwise compute alike for a step:
  // free: expm1(-dt R1), expm1(-dt R2), the voxel's common turns, the turns
  //   between neighbours of a run, and their sine and 1 - cos;
  // sample: the encodes taken out, as the voxel's common turns and those
  //   between neighbours, and whether there are any;
  // rf: the relaxation before the turn (expm1 for R1, R2), the voxel's
  //   field along z (rad/s), its change between neighbours, the offset's
  //   turn back, the relaxation after the turn, and whether every
  //   isochromat of the voxel turns by at most a quarter turn (half angle
  //   pi / 4), where the sine's polynomials need no reduction.
  // Rows of a multiple of four floats, for vector loads from scratch.
  static constexpr int derived_floats = 12;
  // Scratch: the tile, what is derived from it, the partial sums (S x T x 3)
  // and the samples' slot and demodulation (S x 3).
  static constexpr std::size_t tile_floats = std::size_t(S) * step_floats;
  static constexpr std::size_t derived_size = std::size_t(S) * derived_floats;
  static constexpr std::size_t partial_floats = std::size_t(S) * T * 3;
  static constexpr std::size_t scratch_floats =
      tile_floats + derived_size + partial_floats + std::size_t(S) * 3;

  Steps<Mem> steps;
  IsochromatGrid grid;
  Runs runs;
  VoxelTissue<Mem> tissue;
  SampleViews<Mem> samples;  // written directly when parts == 1
  Partials partials;         // [voxel * parts + part][slot][re, im, z] otherwise
  int parts = 1;
  int step_count = 0;
  bool with_longitudinal = false;

  // The position (from the voxel's centre) of a run's first isochromat, the
  // run axis' spacing, and how many of the run's K isochromats are real.
  KOKKOS_INLINE_FUNCTION void run_start(int unit, float origin[3], float& spacing,
                                        int& real) const {
    const int line = unit / runs.per_line, run = unit % runs.per_line;
    const int a = runs.other[0], b = runs.other[1], r = runs.axis;
    const int ia = line / grid.counts[b], ib = line % grid.counts[b];
    origin[a] = ((float(ia) + 0.5f) / float(grid.counts[a]) - 0.5f) * grid.edges_m[a];
    origin[b] = ((float(ib) + 0.5f) / float(grid.counts[b]) - 0.5f) * grid.edges_m[b];
    origin[r] = ((float(run * K) + 0.5f) / float(grid.counts[r]) - 0.5f) * grid.edges_m[r];
    spacing = grid.edges_m[r] / float(grid.counts[r]);
    real = unit < runs.units ? kx::min(K, grid.counts[r] - run * K) : 0;
  }

  KOKKOS_INLINE_FUNCTION bool is_rf(int step) const {
    return step >= 0 && step < step_count && int(steps(step, int(step_field::kind))) == rf_step;
  }

  KOKKOS_INLINE_FUNCTION void derive(int step, const float* r, float* d, float r1, float r2,
                                     float df, float b1, const float centre[3],
                                     float spacing) const {
    constexpr float two_pi = 6.283185307179586f;
    const int kind = int(r[step_field::kind]);
    const float dt = r[step_field::dt];
    if (kind == free_step) {
      const float* m = r + step_field::moment;
      d[0] = kx::expm1(-dt * r1);
      d[1] = kx::expm1(-dt * r2);
      // The voxel's common turns, reduced before the small offsets add.
      float common = df * dt + (m[0] * centre[0] + m[1] * centre[1] + m[2] * centre[2]);
      d[2] = common - float(kx::nearbyint(common));
      d[3] = m[runs.axis] * spacing;
      turn_of(d[3], d[4], d[5]);
    } else if (kind == sample_step) {
      // The encodes to take out: the voxel's common turns and those between
      // neighbours of a run (zero: the raw sample).
      const float* m = r + step_field::rewound;
      float common = m[0] * centre[0] + m[1] * centre[1] + m[2] * centre[2];
      d[0] = common - float(kx::nearbyint(common));
      d[1] = m[runs.axis] * spacing;
      d[2] = (m[0] != 0.0f || m[1] != 0.0f || m[2] != 0.0f) ? 1.0f : 0.0f;
    } else if (kind == rf_step) {
      const float* g = r + step_field::gradient;
      const float offset = r[step_field::offset_hz];
      // The relaxation before the turn: this cell's first half and, after
      // another cell, that cell's second half (nothing turns in between);
      // after the turn: the second half, unless a cell follows.
      const float before =
          0.5f * dt + (is_rf(step - 1) ? 0.5f * steps(step - 1, int(step_field::dt)) : 0.0f);
      const float after = is_rf(step + 1) ? 0.0f : 0.5f * dt;
      d[0] = kx::expm1(-before * r1);
      d[1] = kx::expm1(-before * r2);
      d[6] = kx::expm1(-after * r1);
      d[7] = kx::expm1(-after * r2);
      d[2] = two_pi * ((df - offset) + (g[0] * centre[0] + g[1] * centre[1] + g[2] * centre[2]));
      d[3] = two_pi * g[runs.axis] * spacing;
      turn_of(offset * dt, d[4], d[5]);
      // The largest field over the voxel's extent bounds every isochromat's.
      float wz_max = kx::fabs(d[2]);
      for (int a = 0; a < 3; ++a) wz_max += 0.5f * two_pi * kx::fabs(g[a]) * grid.edges_m[a];
      const float wx = b1 * r[step_field::w1_re], wy = b1 * r[step_field::w1_im];
      const float half_angle_max = 0.5f * dt * kx::sqrt(wx * wx + wy * wy + wz_max * wz_max);
      d[8] = half_angle_max <= 0.75f ? 1.0f : 0.0f;
    }
  }

  // Adds a change to a component kept as a float and its rounding residual
  // (compensated summation). An RF cell of a microsecond changes a component
  // by less than float resolves near 1: rounded alone, the same cells would
  // round alike every time, and a long pulse would settle anywhere within a
  // dead band of about one rounding per step's relaxation rate (percents
  // after seconds of saturation).
  KOKKOS_FORCEINLINE_FUNCTION static void add_compensated(float& value, float& residual,
                                                          float change) {
    const float total = change + residual;
    const float sum = value + total;
    residual = total - (sum - value);
    value = sum;
  }

  // One RF cell on a thread's K isochromats: the relaxation before it and
  // the turn about each isochromat's field, as one change per component;
  // then, where the cell has them, the offset's frame turned back and the
  // relaxation after it. Small: every half angle is at most pi / 4.
  template <bool Small>
  KOKKOS_FORCEINLINE_FUNCTION void rf_cell(const float* r, const float* d, float b1, float m0,
                                           const float origin[3], float (&mx)[K], float (&my)[K],
                                           float (&dz)[K], float (&residual)[3][K]) const {
    constexpr float two_pi = 6.283185307179586f, inverse_two_pi = 0.15915494309189535f;
    const float wx = b1 * r[step_field::w1_re], wy = b1 * r[step_field::w1_im];
    const float* g = r + step_field::gradient;
    const float d1 = d[0], d2 = d[1];
    const float first_wz = d[2] + two_pi * (g[0] * origin[0] + g[1] * origin[1] + g[2] * origin[2]);
    // A floor far below any field keeps the inverse finite where there is
    // none (then b = 0: no turn).
    const float wxy2 = wx * wx + wy * wy + 1e-30f;
    const float half_dt = 0.5f * r[step_field::dt];
    const float half_dt2 = half_dt * half_dt;
    LARMOR_INDEPENDENT_LANES
    for (int k = 0; k < K; ++k) {
      const float relax_x = d2 * mx[k], relax_y = d2 * my[k], relax_z = d1 * dz[k];
      const float x = mx[k] + relax_x, y = my[k] + relax_y;
      const float z = m0 + (dz[k] + relax_z);
      const float wz = first_wz + float(k) * d[3];
      const float rate2 = wxy2 + wz * wz;
      // The turn as a unit quaternion (a, b), b = w sin(angle / 2) / |w|:
      // v + 2 a (b x v) + 2 b x (b x v), which keeps small turns' relative
      // precision. Small turns take b = w (dt / 2) sinc(angle / 2), which
      // needs the angle's square alone.
      float a, scale;
      if constexpr (Small) {
        float sinc;
        sinc_cos_of_square(rate2 * half_dt2, sinc, a);
        scale = half_dt * sinc;
      } else {
        const float inverse = inverse_sqrt(rate2);
        float half_sine;
        sincos_turns(rate2 * inverse * (half_dt * inverse_two_pi), half_sine, a);
        scale = half_sine * inverse;
      }
      const float bx = wx * scale, by = wy * scale, bz = wz * scale;
      const float tx = by * z - bz * y, ty = bz * x - bx * z, tz = bx * y - by * x;
      const float turn_x = 2.0f * (a * tx + (by * tz - bz * ty));
      const float turn_y = 2.0f * (a * ty + (bz * tx - bx * tz));
      const float turn_z = 2.0f * (a * tz + (bx * ty - by * tx));
      add_compensated(mx[k], residual[0][k], relax_x + turn_x);
      add_compensated(my[k], residual[1][k], relax_y + turn_y);
      add_compensated(dz[k], residual[2][k], relax_z + turn_z);
    }
    const float sf = d[4], omcf = d[5], d1_after = d[6], d2_after = d[7];
    if (sf == 0.0f && omcf == 0.0f && d1_after == 0.0f && d2_after == 0.0f) return;
    // Back from the frame turning with the offset, then the relaxation after
    // the cell (the last of a pulse).
    LARMOR_INDEPENDENT_LANES
    for (int k = 0; k < K; ++k) {
      const float x = mx[k], y = my[k];
      const float back_x = -(omcf * x + sf * y), back_y = sf * x - omcf * y;
      add_compensated(mx[k], residual[0][k], back_x + d2_after * (x + back_x));
      add_compensated(my[k], residual[1][k], back_y + d2_after * (y + back_y));
      add_compensated(dz[k], residual[2][k], d1_after * dz[k]);
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& member) const {
    const int voxel = member.league_rank() / parts, part = member.league_rank() % parts;
    const int thread = member.team_rank();
    Scratch<ExecSpace> scratch(member.team_scratch(0), scratch_floats);
    float* tile = scratch.data();
    float* derived = tile + tile_floats;
    float* partial = derived + derived_size;
    float* sample_info = partial + partial_floats;

    const float m0 = tissue.m0(voxel), b1 = tissue.b1(voxel), df = tissue.df(voxel);
    const float r1 = 1.0f / tissue.t1(voxel), r2 = 1.0f / tissue.t2(voxel);
    const float centre[3] = {tissue.centre_m(voxel, 0), tissue.centre_m(voxel, 1),
                             tissue.centre_m(voxel, 2)};
    const float inverse_count = 1.0f / float(grid.size());

    for (int chunk = part; chunk < runs.chunks; chunk += parts) {
      float origin[3], spacing;
      int real;
      run_start(chunk * T + thread, origin, spacing, real);
      // Mz as its difference from M0, which relaxation scales: a recovery
      // near M0 stays resolved (Mz itself would stop within a few percent
      // of M0 once a step's recovery fell below its rounding).
      float mx[K], my[K], dz[K];
      // RF cells' rounding residuals (see add_compensated); free steps,
      // whose changes float resolves, leave them be.
      float residual[3][K];
      for (int k = 0; k < K; ++k) {
        mx[k] = 0.0f;
        my[k] = 0.0f;
        dz[k] = 0.0f;
        residual[0][k] = residual[1][k] = residual[2][k] = 0.0f;
      }
      for (int tile_start = 0; tile_start < step_count; tile_start += S) {
        const int tile_length = kx::min(S, step_count - tile_start);
        member.team_barrier();
        Kokkos::parallel_for(
            Kokkos::TeamThreadRange(member, tile_length * step_floats),
            [&](int f) { tile[f] = steps(tile_start + f / step_floats, f % step_floats); });
        member.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(member, tile_length), [&](int j) {
          derive(tile_start + j, tile + j * step_floats, derived + j * derived_floats, r1, r2, df,
                 b1, centre, spacing);
        });
        member.team_barrier();
        int held = 0;  // samples of this tile so far
        for (int j = 0; j < tile_length; ++j) {
          const float* r = tile + j * step_floats;
          const float* d = derived + j * derived_floats;
          const int kind = int(r[step_field::kind]);
          if (kind == free_step) {
            const float* m = r + step_field::moment;
            const float d1 = d[0], d2 = d[1], between = d[3];
            const float first_turns =
                d[2] + (m[0] * origin[0] + m[1] * origin[1] + m[2] * origin[2]);
            float s = 0.0f, omc = 0.0f;
            if constexpr (add_turns) turn_of(first_turns, s, omc);
            LARMOR_INDEPENDENT_LANES
            for (int k = 0; k < K; ++k) {
              if constexpr (!add_turns) turn_of(first_turns + float(k) * between, s, omc);
              const float x = mx[k] - (omc * mx[k] + s * my[k]);
              const float y = my[k] + (s * mx[k] - omc * my[k]);
              mx[k] = x + d2 * x;
              my[k] = y + d2 * y;
              dz[k] += d1 * dz[k];
              if constexpr (add_turns) add_turn(s, omc, d[4], d[5]);
            }
          } else if (kind == rf_step) {
            if (d[8] != 0.0f) {
              rf_cell<true>(r, d, b1, m0, origin, mx, my, dz, residual);
            } else {
              rf_cell<false>(r, d, b1, m0, origin, mx, my, dz, residual);
            }
          } else {  // sample
            float sx = 0.0f, sy = 0.0f, sz = 0.0f;
            if (d[2] != 0.0f) {
              // Each isochromat turned back by its rewound encodes.
              const float* m = r + step_field::rewound;
              const float first_turns =
                  d[0] + (m[0] * origin[0] + m[1] * origin[1] + m[2] * origin[2]);
              LARMOR_INDEPENDENT_LANES
              for (int k = 0; k < K; ++k) {
                const float weight = k < real ? 1.0f : 0.0f;
                float s, omc;
                turn_of(-(first_turns + float(k) * d[1]), s, omc);
                sx += weight * (mx[k] - (omc * mx[k] + s * my[k]));
                sy += weight * (my[k] + (s * mx[k] - omc * my[k]));
                sz += weight * dz[k];
              }
            } else {
              for (int k = 0; k < K; ++k) {
                const float weight = k < real ? 1.0f : 0.0f;
                sx += weight * mx[k];
                sy += weight * my[k];
                sz += weight * dz[k];
              }
            }
            float* p = partial + (std::size_t(held) * T + thread) * 3;
            p[0] = sx;
            p[1] = sy;
            p[2] = sz + float(real) * m0;
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
          store(voxel, part, slot, chunk == part, (c * sx - s * sy) * inverse_count,
                (s * sx + c * sy) * inverse_count, sz * inverse_count);
        }
      }
    }
  }

  KOKKOS_INLINE_FUNCTION void store(int voxel, int part, int slot, bool first, float re, float im,
                                    float z) const {
    if (parts == 1) {
      float& out_re = samples.transverse(voxel, slot, 0);
      float& out_im = samples.transverse(voxel, slot, 1);
      out_re = first ? re : out_re + re;
      out_im = first ? im : out_im + im;
      if (with_longitudinal) {
        float& out_z = samples.longitudinal(voxel, slot);
        out_z = first ? z : out_z + z;
      }
      return;
    }
    float* out = &partials(std::size_t(voxel) * parts + part, slot, 0);
    out[0] = first ? re : out[0] + re;
    out[1] = first ? im : out[1] + im;
    out[2] = first ? z : out[2] + z;
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
  const detail::Runs runs = detail::runs_of(grid, Kernel::K, Kernel::T);
  const std::size_t slots = samples.transverse.extent(1);
  const int parts = detail::parts_of<ExecSpace>(runs, slots);
  const bool with_longitudinal = samples.longitudinal.size() != 0;
  // Voxels in batches whose parts' partial samples fit the budget (and
  // whose teams an int counts).
  const std::size_t partial_row =
      std::size_t(parts) * std::max<std::size_t>(1, slots) * 3 * sizeof(float);
  const std::size_t batch = std::min<std::size_t>(
      2147483647u / std::size_t(parts),
      parts == 1 ? voxels : std::max<std::size_t>(1, detail::partial_budget_bytes / partial_row));
  typename Kernel::Partials partials;
  if (parts > 1) {
    partials = typename Kernel::Partials(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, exec, "larmor::bloch::partials"),
        std::min(batch, voxels) * std::size_t(parts), slots);
  }
  for (std::size_t begin = 0; begin < voxels; begin += batch) {
    const std::size_t end = std::min(voxels, begin + batch);
    const auto range = Kokkos::make_pair(begin, end);
    VoxelTissue<typename ExecSpace::memory_space> part_tissue{
        Kokkos::subview(tissue.m0, range), Kokkos::subview(tissue.t1, range),
        Kokkos::subview(tissue.t2, range), Kokkos::subview(tissue.b1, range),
        Kokkos::subview(tissue.df, range), Kokkos::subview(tissue.centre_m, range, Kokkos::ALL)};
    SampleViews<typename ExecSpace::memory_space> part_samples{
        Kokkos::subview(samples.transverse, range, Kokkos::ALL, Kokkos::ALL), samples.longitudinal};
    if (with_longitudinal) {
      part_samples.longitudinal = Kokkos::subview(samples.longitudinal, range, Kokkos::ALL);
    }
    Kernel kernel{steps,
                  grid,
                  runs,
                  part_tissue,
                  part_samples,
                  partials,
                  parts,
                  int(steps.extent(0)),
                  with_longitudinal};
    const int league = int((end - begin) * std::size_t(parts));
    Kokkos::TeamPolicy<ExecSpace> policy(exec, league, Kernel::T);
    policy.set_scratch_size(0, Kokkos::PerTeam(Kernel::scratch_floats * sizeof(float)));
    Kokkos::parallel_for(isochromats_kernel_name, policy, kernel);
    if (parts == 1) continue;
    // The parts' sums, added in part order.
    const int batch_voxels = int(end - begin);
    Kokkos::parallel_for(
        "larmor::bloch::sum_parts",
        Kokkos::RangePolicy<ExecSpace>(exec, 0, std::size_t(batch_voxels) * slots),
        KOKKOS_LAMBDA(const std::size_t i) {
          const std::size_t v = i / slots, slot = i % slots;
          float re = 0.0f, im = 0.0f, z = 0.0f;
          for (int p = 0; p < parts; ++p) {
            re += partials(v * parts + p, slot, 0);
            im += partials(v * parts + p, slot, 1);
            z += partials(v * parts + p, slot, 2);
          }
          part_samples.transverse(v, slot, 0) = re;
          part_samples.transverse(v, slot, 1) = im;
          if (with_longitudinal) part_samples.longitudinal(v, slot) = z;
        });
  }
}

}  // namespace larmor::bloch

#define LARMOR_BLOCH_INSTANTIATE(EXEC)                                                    \
  namespace larmor::bloch {                                                               \
  template void simulate_isochromats<EXEC>(const EXEC&, const Steps<EXEC::memory_space>&, \
                                           const IsochromatGrid&,                         \
                                           const VoxelTissue<EXEC::memory_space>&,        \
                                           const SampleViews<EXEC::memory_space>&);       \
  }
