// The PERK estimator's fused kernels (see perk_apply.hpp for what they
// compute). One team: a block of VB = threads x VPT voxels; one thread: VPT
// voxels (interleaved by the team size, so neighbouring threads write
// neighbouring rows). Feature blocks of HB features are staged in turn. The
// output count is a compile-time bound (2, 8 or 32: the small and large
// variants) so that accumulators stay in registers: loops over them are
// unrolled to the bound and the staged weights are zero past the last output.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "common/sincos.hpp"
#include "perk/perk_apply.hpp"

namespace larmor::perk::detail {

// 2 / pi: the staged frequencies and phases give angles in quarter turns.
inline constexpr float quarter_turns_per_radian = 0.636619772367581343f;
inline constexpr float radians_per_quarter_turn = 1.57079632679489662f;

// A staged feature is one record: its Qp frequencies, then a tail of its LMax
// weights and its phase, zero-padded to whole groups of four floats so that
// a GPU thread reads it in 16-byte loads (all threads the same address).
template <int LMax>
inline constexpr int tail_floats = (LMax + 1 + 3) / 4 * 4;

template <class ExecSpace>
struct Tiling {
  int team_threads = 1;  // T
  int voxels_per_block = 1;
  int features_per_block = 64;  // HB
  int inputs_padded = 4;        // Qp: multiple of 4
  int record_floats = 8;        // Qp + tail
  int voxel_blocks = 1, feature_blocks = 1, splits = 1;
  std::size_t scratch_bytes = 0;
  int scratch_level = 0;  // 1: the blocks did not fit the fast scratch
};

// Records, then (the scratch path: any input count) the inputs and, for the
// adjoint, the gradient rows, plus four floats to align the records to 16
// bytes. The register path reads each voxel's inputs from global memory
// straight into registers: staging them would only cost scratch (and so
// resident teams) for one read.
template <int LMax>
std::size_t scratch_floats(int vb, int hb, int qp, bool staged_inputs, bool scratch_gradients) {
  const std::size_t records = std::size_t(hb) * (qp + tail_floats<LMax>);
  return records + (staged_inputs ? std::size_t(vb) * qp : 0) +
         (scratch_gradients ? std::size_t(vb) * qp : 0) + 4;
}

template <class ExecSpace, int VPT, int LMax, int QMax>
Tiling<ExecSpace> choose_tiling(int voxels, int inputs, int features, bool adjoint,
                                bool deterministic) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  Tiling<ExecSpace> t;
  t.inputs_padded = QMax > 0 ? QMax : (inputs + 3) / 4 * 4;
  t.record_floats = t.inputs_padded + tail_floats<LMax>;
  const bool device = !kx::is_host_space_v<ExecSpace>;
  const bool scratch_gradients = adjoint && QMax == 0;
  const int threads[] = {128, 64, 32};
  const int blocks[] = {64, 32, 16, 8};
  // On a GPU about four teams per multiprocessor fill it (concurrency is 2048
  // threads per multiprocessor; these register-bound teams keep about that
  // many resident); on the host two teams per thread.
  const long long concurrency = ExecSpace().concurrency();
  auto wanted_teams = [&](int team) {
    return device ? concurrency / 512 : 2ll * concurrency / team;
  };
  auto bytes_for = [&](int team, int hb) {
    return 4 * scratch_floats<LMax>(team * VPT, hb, t.inputs_padded, QMax == 0, scratch_gradients);
  };
  bool fits = false;
  // The fast (level 0) scratch first, then level 1 (device memory per team)
  // for input counts whose blocks do not fit it. On a GPU the largest team
  // whose voxel blocks still fill the device (else the smallest that fits).
  for (int level = 0; level < 2 && !fits; ++level) {
    const std::size_t scratch_max = Policy::scratch_size_max(level);
    for (int ti = device ? 0 : 2; ti < 3 && !fits; ++ti) {
      const int team = device ? threads[ti] : 1;
      const long long team_blocks = (voxels + team * VPT - 1) / (team * VPT);
      if (device && ti < 2 && team_blocks < wanted_teams(team) &&
          bytes_for(threads[2], blocks[3]) <= scratch_max) {
        continue;  // too few blocks at this size, and a smaller team fits
      }
      for (int hb : blocks) {
        const std::size_t bytes = bytes_for(team, hb);
        if (bytes <= scratch_max) {
          t.team_threads = team;
          t.features_per_block = hb;
          t.scratch_bytes = bytes;
          t.scratch_level = level;
          fits = true;
          break;
        }
      }
    }
  }
  if (!fits) {
    throw std::invalid_argument(std::string(adjoint ? adjoint_kernel_name : apply_kernel_name) +
                                ": " + std::to_string(inputs) +
                                " inputs need more team scratch than this device has");
  }
  t.voxels_per_block = t.team_threads * VPT;
  t.voxel_blocks = (voxels + t.voxels_per_block - 1) / t.voxels_per_block;
  t.feature_blocks = (features + t.features_per_block - 1) / t.features_per_block;
  if (!deterministic) {
    // Split only a launch too small to fill the device. Splitting further
    // only repeats the input reads and adds atomics (docs/performance.md,
    // "PERK kernels": `larmor-bench -m perk`).
    const long long wanted = wanted_teams(t.team_threads);
    if (t.voxel_blocks < wanted) {
      const long long s = (wanted + t.voxel_blocks - 1) / t.voxel_blocks;
      t.splits = int(s < t.feature_blocks ? s : t.feature_blocks);
    }
  }
  return t;
}

template <class ExecSpace>
using Scratch = Kokkos::View<float*, typename ExecSpace::scratch_memory_space,
                             Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

struct alignas(16) Quad {
  float v[4];
};

#if defined(__CUDA_ARCH__)
// Team scratch reached through a generic pointer compiles to generic loads,
// which wait on the L1TEX pipeline (Nsight Compute's stall reasons for the
// apply kernel; docs/performance.md, "PERK kernels"). Indexing the dynamic
// shared memory itself gives shared loads; the records' offset in it is taken
// once per team (level-0 scratch only).
extern __shared__ Quad larmor_perk_shared_quads[];
#endif

// What both kernels share: the staged blocks of a team.
// QMax > 0: the inputs padded to QMax, a thread's voxels' inputs held in
// registers over the whole feature loop (the scratch reads left are the
// records, shared by the team); QMax = 0: any input count, read from scratch.
template <class ExecSpace, int VPT, int LMax, int QMax>
struct Staging {
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using Mem = typename ExecSpace::memory_space;
  static constexpr int tail = tail_floats<LMax>;
  ModelViews<Mem> model;
  ConstMatrixOf<ExecSpace> inputs;
  Tiling<ExecSpace> tiling;
  int voxels = 0;

  struct Blocks {
    float* records;               // [HB][record], 16-byte aligned
    float* in;                    // [Qp][VB]
    float* grad;                  // [Qp][VB] (the adjoint's scratch gradients)
    int shared_quad_offset = -1;  // the records in larmor_perk_shared_quads (CUDA, level 0)
  };
  KOKKOS_INLINE_FUNCTION Blocks carve(const Member& m) const {
    const auto& t = tiling;
    Scratch<ExecSpace> s(m.team_scratch(t.scratch_level), t.scratch_bytes / 4);
    float* base = s.data();
    const auto misalignment = reinterpret_cast<std::uintptr_t>(base) % 16;
    if (misalignment != 0) base += (16 - misalignment) / 4;
    Blocks b;
    b.records = base;
    b.in = b.records + std::size_t(t.features_per_block) * t.record_floats;
    b.grad = b.in + (QMax == 0 ? std::size_t(t.voxels_per_block) * t.inputs_padded : 0);
#if defined(__CUDA_ARCH__)
    if (t.scratch_level == 0) {
      b.shared_quad_offset = int((reinterpret_cast<const char*>(b.records) -
                                  reinterpret_cast<const char*>(larmor_perk_shared_quads)) /
                                 16);
    }
#endif
    return b;
  }

  // Quad c of staged record h.
  KOKKOS_FORCEINLINE_FUNCTION Quad record_quad(const Blocks& b, int h, int c) const {
    const int index = h * (tiling.record_floats / 4) + c;
#if defined(__CUDA_ARCH__)
    if (b.shared_quad_offset >= 0) return larmor_perk_shared_quads[b.shared_quad_offset + index];
#endif
    return reinterpret_cast<const Quad*>(b.records)[index];
  }

  // Inputs input-major, in[q][v]: a thread's voxels are VB apart from
  // neighbouring threads' by one float (no bank conflicts on a GPU), and a
  // host thread's are contiguous (vector loads).
  KOKKOS_INLINE_FUNCTION void stage_inputs(const Member& m, int first_voxel, float* in) const {
    const int vb = tiling.voxels_per_block, q_count = model.inputs;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, vb * tiling.inputs_padded), [&](int i) {
      const int q = i / vb, v = i - q * vb;
      const int voxel = first_voxel + v;
      in[i] = voxel < voxels && q < q_count ? inputs(voxel, q) : 0.0f;
    });
  }

  KOKKOS_INLINE_FUNCTION void stage_features(const Member& m, int block, float* records) const {
    const int hb = tiling.features_per_block, qp = tiling.inputs_padded;
    const int stride = tiling.record_floats, h0 = block * hb;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, hb * stride), [&](int i) {
      const int h = i / stride, c = i - h * stride, feature = h0 + h;
      float value = 0.0f;
      if (feature < model.features) {
        if (c < qp) {
          if (c < model.inputs) value = model.frequencies(feature, c) * quarter_turns_per_radian;
        } else if (c - qp < LMax) {
          if (c - qp < model.outputs) value = model.weights(c - qp, feature);
        } else if (c - qp == LMax) {
          value = model.phases(feature) * quarter_turns_per_radian;
        }
      }
      records[i] = value;
    });
  }

  // The register path: this thread's voxels' inputs, from global memory
  // (zero past the last voxel and input).
  struct Registers {
    float x[VPT][QMax > 0 ? QMax : 1];
  };
  KOKKOS_FORCEINLINE_FUNCTION void load(int first_voxel, int thread, Registers& r) const {
    if constexpr (QMax > 0) {
      const int tt = tiling.team_threads, q_count = model.inputs;
      for (int k = 0; k < VPT; ++k) {
        const int voxel = first_voxel + thread + k * tt;
        for (int q = 0; q < QMax; ++q) {
          r.x[k][q] = voxel < voxels && q < q_count ? inputs(voxel, q) : 0.0f;
        }
      }
    }
  }

  // Record h's tail (weights, then the phase) into registers.
  KOKKOS_FORCEINLINE_FUNCTION void read_tail(const Blocks& b, int h, float (&t)[tail]) const {
    const int first = tiling.inputs_padded / 4;
    for (int c = 0; c < tail / 4; ++c) {
      const Quad qd = record_quad(b, h, first + c);
      for (int j = 0; j < 4; ++j) t[4 * c + j] = qd.v[j];
    }
  }

  // Angles (quarter turns) of this thread's voxels at staged record h.
  KOKKOS_FORCEINLINE_FUNCTION void angles(int thread, const Blocks& b, int h, float phase,
                                          const Registers& r, float (&angle)[VPT]) const {
    for (int k = 0; k < VPT; ++k) angle[k] = phase;
    if constexpr (QMax > 0) {
      for (int c = 0; c < QMax / 4; ++c) {
        const Quad f = record_quad(b, h, c);
        for (int j = 0; j < 4; ++j)
          for (int k = 0; k < VPT; ++k) angle[k] += f.v[j] * r.x[k][4 * c + j];
      }
      return;
    }
    const float* record = b.records + std::size_t(h) * tiling.record_floats;
    const float* in = b.in;
    const int qp = tiling.inputs_padded, vb = tiling.voxels_per_block, tt = tiling.team_threads;
    for (int q = 0; q < qp; ++q) {
      const float fq = record[q];
      const float* row = in + q * vb + thread;
      for (int k = 0; k < VPT; ++k) angle[k] += fq * row[k * tt];
    }
  }

  // The feature blocks [first, last) of split `s`.
  KOKKOS_INLINE_FUNCTION void split_range(int s, int& first, int& last) const {
    const int per = (tiling.feature_blocks + tiling.splits - 1) / tiling.splits;
    first = s * per;
    last = first + per < tiling.feature_blocks ? first + per : tiling.feature_blocks;
  }
};

template <class ExecSpace, int VPT, int LMax, int QMax>
struct ApplyKernel : Staging<ExecSpace, VPT, LMax, QMax> {
  using Base = Staging<ExecSpace, VPT, LMax, QMax>;
  using typename Base::Member;
  MatrixOf<ExecSpace> estimates;

  KOKKOS_INLINE_FUNCTION void operator()(const Member& m) const {
    const auto& t = this->tiling;
    const int block = m.league_rank() / t.splits, split = m.league_rank() % t.splits;
    const int first_voxel = block * t.voxels_per_block, thread = m.team_rank();
    const auto blocks = this->carve(m);
    if constexpr (QMax == 0) this->stage_inputs(m, first_voxel, blocks.in);
    typename Base::Registers regs;
    this->load(first_voxel, thread, regs);
    float acc[VPT][LMax];
    for (int k = 0; k < VPT; ++k)
      for (int l = 0; l < LMax; ++l) acc[k][l] = 0.0f;
    int b0 = 0, b1 = 0;
    this->split_range(split, b0, b1);
    for (int b = b0; b < b1; ++b) {
      m.team_barrier();  // the previous block is consumed
      this->stage_features(m, b, blocks.records);
      m.team_barrier();
      for (int h = 0; h < t.features_per_block; ++h) {
        float tail[Base::tail];
        this->read_tail(blocks, h, tail);
        float angle[VPT];
        this->angles(thread, blocks, h, tail[LMax], regs, angle);
        for (int k = 0; k < VPT; ++k) {
          const float cs = cos_quarter_turns(angle[k]);
          for (int l = 0; l < LMax; ++l) acc[k][l] += tail[l] * cs;
        }
      }
    }
    const int outputs = this->model.outputs;
    for (int k = 0; k < VPT; ++k) {
      const int voxel = first_voxel + thread + k * t.team_threads;
      if (voxel >= this->voxels) continue;
      for (int l = 0; l < LMax; ++l) {  // unrolled to the bound, guarded
        if (l >= outputs) continue;
        if (t.splits == 1) {
          estimates(voxel, l) = this->model.offsets(l) + acc[k][l];
        } else {
          Kokkos::atomic_add(&estimates(voxel, l), acc[k][l]);
        }
      }
    }
  }
};

// The adjoint's per-voxel gradients: in registers beside the inputs when
// those are (QMax > 0), else rows of team scratch.
template <int VPT, int QMax>
struct GradientRegisters {
  float g[VPT][QMax > 0 ? QMax : 1];
};

template <class ExecSpace, int VPT, int LMax, int QMax>
struct AdjointKernel : Staging<ExecSpace, VPT, LMax, QMax> {
  using Base = Staging<ExecSpace, VPT, LMax, QMax>;
  using typename Base::Member;
  ConstMatrixOf<ExecSpace> cotangents;
  MatrixOf<ExecSpace> gradients;

  KOKKOS_INLINE_FUNCTION void operator()(const Member& m) const {
    const auto& t = this->tiling;
    const int block = m.league_rank() / t.splits, split = m.league_rank() % t.splits;
    const int first_voxel = block * t.voxels_per_block, thread = m.team_rank();
    const int qp = t.inputs_padded, vb = t.voxels_per_block, outputs = this->model.outputs;
    const auto blocks = this->carve(m);
    if constexpr (QMax == 0) {
      this->stage_inputs(m, first_voxel, blocks.in);
      Kokkos::parallel_for(Kokkos::TeamThreadRange(m, vb * qp),
                           [&](int i) { blocks.grad[i] = 0.0f; });
      m.team_barrier();  // zeroed before any thread reads its rows, even with no block to do
    }
    typename Base::Registers regs;
    this->load(first_voxel, thread, regs);
    GradientRegisters<VPT, QMax> gx;
    if constexpr (QMax > 0) {
      for (int k = 0; k < VPT; ++k)
        for (int q = 0; q < QMax; ++q) gx.g[k][q] = 0.0f;
    }
    float g[VPT][LMax];
    for (int k = 0; k < VPT; ++k) {
      const int voxel = first_voxel + thread + k * t.team_threads;
      for (int l = 0; l < LMax; ++l) {
        g[k][l] = voxel < this->voxels && l < outputs ? cotangents(voxel, l) : 0.0f;
      }
    }
    int b0 = 0, b1 = 0;
    this->split_range(split, b0, b1);
    for (int b = b0; b < b1; ++b) {
      m.team_barrier();
      this->stage_features(m, b, blocks.records);
      m.team_barrier();
      for (int h = 0; h < t.features_per_block; ++h) {
        float tail[Base::tail];
        this->read_tail(blocks, h, tail);
        float angle[VPT], scale[VPT];
        this->angles(thread, blocks, h, tail[LMax], regs, angle);
        for (int k = 0; k < VPT; ++k) {
          float sn, cs;
          sincos_quarter_turns(angle[k], sn, cs);
          float gw = 0.0f;
          for (int l = 0; l < LMax; ++l) gw += g[k][l] * tail[l];
          // d angle / d q is the frequency in radians.
          scale[k] = -sn * gw * radians_per_quarter_turn;
        }
        if constexpr (QMax > 0) {
          for (int c = 0; c < QMax / 4; ++c) {
            const Quad f = this->record_quad(blocks, h, c);
            for (int j = 0; j < 4; ++j)
              for (int k = 0; k < VPT; ++k) gx.g[k][4 * c + j] += scale[k] * f.v[j];
          }
        } else {
          const float* record = blocks.records + std::size_t(h) * t.record_floats;
          for (int q = 0; q < qp; ++q) {
            const float fq = record[q];
            float* row = blocks.grad + q * vb + thread;
            for (int k = 0; k < VPT; ++k) row[k * t.team_threads] += scale[k] * fq;
          }
        }
      }
    }
    for (int k = 0; k < VPT; ++k) {
      const int voxel = first_voxel + thread + k * t.team_threads;
      if (voxel >= this->voxels) continue;
      auto store = [&](int q, float v) {
        if (t.splits == 1) {
          gradients(voxel, q) = v;
        } else {
          Kokkos::atomic_add(&gradients(voxel, q), v);
        }
      };
      if constexpr (QMax > 0) {
        for (int q = 0; q < QMax; ++q) {  // unrolled to the bound: registers stay registers
          if (q < this->model.inputs) store(q, gx.g[k][q]);
        }
      } else {
        for (int q = 0; q < this->model.inputs; ++q) {
          store(q, blocks.grad[q * vb + thread + k * t.team_threads]);
        }
      }
    }
  }
};

template <class ExecSpace>
void check_shapes(const char* kernel, const ModelViews<typename ExecSpace::memory_space>& model,
                  long long voxels, long long columns, long long expected_columns) {
  auto fail = [&](const std::string& why) {
    throw std::invalid_argument(std::string(kernel) + ": " + why);
  };
  if (model.outputs < 1 || model.outputs > max_outputs) {
    fail(std::to_string(model.outputs) + " outputs: the kernel holds 1 to " +
         std::to_string(max_outputs));
  }
  if (model.inputs < 1 || model.inputs > max_inputs) {
    fail(std::to_string(model.inputs) + " inputs: the kernel takes 1 to " +
         std::to_string(max_inputs));
  }
  if (model.features < 1) fail("the model has no features");
  if (voxels > 2147483647ll) {
    fail(std::to_string(voxels) + " voxels exceed the kernel's 32-bit voxel index");
  }
  if (columns != expected_columns) {
    fail("an array has " + std::to_string(columns) + " columns where " +
         std::to_string(expected_columns) + " are needed");
  }
}

template <class ExecSpace, int VPT, int LMax, class Kernel>
void launch(const ExecSpace& exec, Kernel kernel, const char* name) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  const auto& t = kernel.tiling;
  Policy policy(exec, t.voxel_blocks * t.splits, t.team_threads);
  policy.set_scratch_size(t.scratch_level, Kokkos::PerTeam(t.scratch_bytes));
  Kokkos::parallel_for(std::string(name), policy, kernel);
}

// Voxels per thread: 8 on the host (vector lanes); on a GPU 4 while a
// thread's inputs fit 128 registers (each staged frequency then feeds four
// multiply-adds), else 2.
template <class ExecSpace, int QMax>
inline constexpr int voxels_per_thread = kx::is_host_space_v<ExecSpace>
                                             ? 8
                                             : (QMax > 0 && QMax <= 32 ? 4 : 2);

template <class ExecSpace, int LMax, int QMax>
void apply_with(const ExecSpace& exec, const ModelViews<typename ExecSpace::memory_space>& model,
                const ConstMatrixOf<ExecSpace>& inputs, const MatrixOf<ExecSpace>& estimates,
                bool deterministic) {
  constexpr int VPT = voxels_per_thread<ExecSpace, QMax>;
  ApplyKernel<ExecSpace, VPT, LMax, QMax> k;
  k.model = model;
  k.inputs = inputs;
  k.voxels = int(inputs.extent(0));
  k.estimates = estimates;
  k.tiling = choose_tiling<ExecSpace, VPT, LMax, QMax>(k.voxels, model.inputs, model.features,
                                                       false, deterministic);
  if (k.voxels == 0) return;
  if (k.tiling.splits > 1) {  // accumulate onto the offsets
    auto offsets = model.offsets;
    const int outputs = model.outputs;
    Kokkos::parallel_for(
        "larmor::perk::apply_offsets",
        Kokkos::RangePolicy<ExecSpace>(exec, 0, std::int64_t(k.voxels) * outputs),
        KOKKOS_LAMBDA(std::int64_t i) {
          estimates(i / outputs, i % outputs) = offsets(i % outputs);
        });
  }
  launch<ExecSpace, VPT, LMax>(exec, k, apply_kernel_name);
}

template <class ExecSpace, int LMax, int QMax>
void adjoint_with(const ExecSpace& exec, const ModelViews<typename ExecSpace::memory_space>& model,
                  const ConstMatrixOf<ExecSpace>& inputs,
                  const ConstMatrixOf<ExecSpace>& cotangents, const MatrixOf<ExecSpace>& gradients,
                  bool deterministic) {
  // A GPU thread also holds its voxels' gradients (as many registers as the
  // inputs): two voxels while the inputs fit 32, else one.
  constexpr int VPT = kx::is_host_space_v<ExecSpace> ? 8 : (QMax > 0 && QMax <= 32 ? 2 : 1);
  AdjointKernel<ExecSpace, VPT, LMax, QMax> k;
  k.model = model;
  k.inputs = inputs;
  k.voxels = int(inputs.extent(0));
  k.cotangents = cotangents;
  k.gradients = gradients;
  k.tiling = choose_tiling<ExecSpace, VPT, LMax, QMax>(k.voxels, model.inputs, model.features, true,
                                                       deterministic);
  if (k.voxels == 0) return;
  if (k.tiling.splits > 1) Kokkos::deep_copy(exec, gradients, 0.0f);
  launch<ExecSpace, VPT, LMax>(exec, k, adjoint_kernel_name);
}

// The compiled variants: outputs bounded by 2, 8 or 32; on a GPU, inputs held
// in registers up to 16, 24, 32, 40, 48 or 64 (read from scratch beyond;
// padding 24 inputs to 32 would cost a third more multiply-adds, 33 to 64
// nearly double). Host threads read
// their voxels' inputs contiguously from scratch, which vectorises; padding
// to a register bound would only add work there.
template <class ExecSpace, template <class, int, int> class Run, class... Args>
void dispatch(int outputs, int inputs, Args&&... args) {
  auto by_inputs = [&](auto l_bound) {
    constexpr int L = decltype(l_bound)::value;
    if constexpr (!kx::is_host_space_v<ExecSpace>) {
      if (inputs <= 16) return Run<ExecSpace, L, 16>::go(args...);
      if (inputs <= 24) return Run<ExecSpace, L, 24>::go(args...);
      if (inputs <= 32) return Run<ExecSpace, L, 32>::go(args...);
      if (inputs <= 40) return Run<ExecSpace, L, 40>::go(args...);
      if (inputs <= 48) return Run<ExecSpace, L, 48>::go(args...);
      if (inputs <= 64) return Run<ExecSpace, L, 64>::go(args...);
    }
    Run<ExecSpace, L, 0>::go(args...);
  };
  if (outputs <= 2) return by_inputs(std::integral_constant<int, 2>{});
  if (outputs <= 8) return by_inputs(std::integral_constant<int, 8>{});
  by_inputs(std::integral_constant<int, max_outputs>{});
}

template <class ExecSpace, int L, int Q>
struct RunApply {
  template <class... Args>
  static void go(Args&&... args) {
    apply_with<ExecSpace, L, Q>(args...);
  }
};
template <class ExecSpace, int L, int Q>
struct RunAdjoint {
  template <class... Args>
  static void go(Args&&... args) {
    adjoint_with<ExecSpace, L, Q>(args...);
  }
};

}  // namespace larmor::perk::detail

namespace larmor::perk {

template <class ExecSpace>
void apply(const ExecSpace& exec, const ModelViews<typename ExecSpace::memory_space>& model,
           const ConstMatrixOf<ExecSpace>& inputs, const MatrixOf<ExecSpace>& estimates,
           bool deterministic) {
  detail::check_shapes<ExecSpace>(apply_kernel_name, model, inputs.extent(0), inputs.extent(1),
                                  model.inputs);
  detail::check_shapes<ExecSpace>(apply_kernel_name, model, estimates.extent(0),
                                  estimates.extent(1), model.outputs);
  detail::dispatch<ExecSpace, detail::RunApply>(model.outputs, model.inputs, exec, model, inputs,
                                                estimates, deterministic);
}

template <class ExecSpace>
void adjoint(const ExecSpace& exec, const ModelViews<typename ExecSpace::memory_space>& model,
             const ConstMatrixOf<ExecSpace>& inputs, const ConstMatrixOf<ExecSpace>& cotangents,
             const MatrixOf<ExecSpace>& input_gradients, bool deterministic) {
  detail::check_shapes<ExecSpace>(adjoint_kernel_name, model, inputs.extent(0), inputs.extent(1),
                                  model.inputs);
  detail::check_shapes<ExecSpace>(adjoint_kernel_name, model, cotangents.extent(0),
                                  cotangents.extent(1), model.outputs);
  detail::check_shapes<ExecSpace>(adjoint_kernel_name, model, input_gradients.extent(0),
                                  input_gradients.extent(1), model.inputs);
  detail::dispatch<ExecSpace, detail::RunAdjoint>(model.outputs, model.inputs, exec, model, inputs,
                                                  cotangents, input_gradients, deterministic);
}

}  // namespace larmor::perk

#define LARMOR_PERK_INSTANTIATE(EXEC)                                                 \
  namespace larmor::perk {                                                            \
  template void apply<EXEC>(const EXEC&, const ModelViews<EXEC::memory_space>&,       \
                            const ConstMatrixOf<EXEC>&, const MatrixOf<EXEC>&, bool); \
  template void adjoint<EXEC>(const EXEC&, const ModelViews<EXEC::memory_space>&,     \
                              const ConstMatrixOf<EXEC>&, const ConstMatrixOf<EXEC>&, \
                              const MatrixOf<EXEC>&, bool);                           \
  }
