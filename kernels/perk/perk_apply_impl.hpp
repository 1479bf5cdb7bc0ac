// The PERK estimator's fused kernels (see perk_apply.hpp for what they
// compute). One team: a block of VB = threads x VPT voxels; one thread: VPT
// voxels (interleaved by the team size, so neighbouring threads write
// neighbouring rows). Feature blocks of HB features are staged in turn. The
// output count is a compile-time bound (2, 8 or 32: the small and large
// variants) so that accumulators stay in registers: loops over them are
// unrolled to the bound and the staged weights are zero past the last output.
#pragma once

#include <stdexcept>
#include <string>
#include <type_traits>

#include "common/sincos.hpp"
#include "perk/perk_apply.hpp"

namespace larmor::perk::detail {

template <class ExecSpace>
struct Tiling {
  int team_threads = 1;  // T
  int voxels_per_block = 1;
  int features_per_block = 64;  // HB
  int inputs_padded = 4;        // Qp: multiple of 4
  int voxel_blocks = 1, feature_blocks = 1, splits = 1;
  std::size_t scratch_bytes = 0;
  int scratch_level = 0;  // 1: the blocks did not fit the fast scratch
};

template <int LMax>
std::size_t scratch_floats(int vb, int hb, int qp, bool adjoint) {
  // inputs, frequencies, phases, weights (and the adjoint's gradient rows)
  return std::size_t(vb) * qp + std::size_t(hb) * qp + hb + std::size_t(LMax) * hb +
         (adjoint ? std::size_t(vb) * qp : 0);
}

template <class ExecSpace, int VPT, int LMax, int QMax>
Tiling<ExecSpace> choose_tiling(int voxels, int inputs, int features, bool adjoint,
                                bool deterministic) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  Tiling<ExecSpace> t;
  t.inputs_padded = QMax > 0 ? QMax : (inputs + 3) / 4 * 4;
  const bool device = !kx::is_host_space_v<ExecSpace>;
  const int threads[] = {128, 64, 32};
  const int blocks[] = {64, 32, 16, 8};
  bool fits = false;
  // The fast (level 0) scratch first, then level 1 (device memory per team)
  // for input counts whose blocks do not fit it.
  for (int level = 0; level < 2 && !fits; ++level) {
    const std::size_t scratch_max = Policy::scratch_size_max(level);
    for (int ti = device ? 0 : 2; ti < 3 && !fits; ++ti) {
      for (int hb : blocks) {
        const int team = device ? threads[ti] : 1;
        const std::size_t bytes =
            4 * scratch_floats<LMax>(team * VPT, hb, t.inputs_padded, adjoint);
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
    // Enough teams to fill the device: twice its concurrency in threads.
    const long long wanted = 2ll * ExecSpace().concurrency() / t.team_threads;
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

// What both kernels share: the staged blocks of a team.
// QMax > 0: the inputs padded to QMax, a thread's voxels' inputs held in
// registers over the whole feature loop (the scratch reads left are the
// frequencies, shared by the team); QMax = 0: any input count, read from
// scratch.
template <class ExecSpace, int VPT, int LMax, int QMax>
struct Staging {
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using Mem = typename ExecSpace::memory_space;
  ModelViews<Mem> model;
  ConstMatrixOf<ExecSpace> inputs;
  Tiling<ExecSpace> tiling;
  int voxels = 0;

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

  KOKKOS_INLINE_FUNCTION void stage_features(const Member& m, int block, float* f, float* ph,
                                             float* w) const {
    const int hb = tiling.features_per_block, qp = tiling.inputs_padded;
    const int h0 = block * hb;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, hb * qp), [&](int i) {
      const int h = i / qp, q = i - h * qp;
      f[i] = h0 + h < model.features && q < model.inputs ? model.frequencies(h0 + h, q) : 0.0f;
    });
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, hb), [&](int h) {
      ph[h] = h0 + h < model.features ? model.phases(h0 + h) : 0.0f;
    });
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, LMax * hb), [&](int i) {
      const int l = i / hb, h = i - l * hb;
      w[i] = l < model.outputs && h0 + h < model.features ? model.weights(l, h0 + h) : 0.0f;
    });
  }

  // This thread's voxels' inputs, from the staged block into registers.
  struct Registers {
    float x[VPT][QMax > 0 ? QMax : 1];
  };
  KOKKOS_FORCEINLINE_FUNCTION void load(int thread, const float* in, Registers& r) const {
    if constexpr (QMax > 0) {
      const int vb = tiling.voxels_per_block, tt = tiling.team_threads;
      for (int q = 0; q < QMax; ++q)
        for (int k = 0; k < VPT; ++k) r.x[k][q] = in[q * vb + thread + k * tt];
    }
  }

  // Angles of this thread's voxels at feature h of the staged block.
  KOKKOS_FORCEINLINE_FUNCTION void angles(int thread, int h, const float* in, const Registers& r,
                                          const float* f, const float* ph,
                                          float (&angle)[VPT]) const {
    if constexpr (QMax > 0) {
      for (int k = 0; k < VPT; ++k) angle[k] = ph[h];
      for (int q = 0; q < QMax; ++q) {
        const float fq = f[h * QMax + q];
        for (int k = 0; k < VPT; ++k) angle[k] += fq * r.x[k][q];
      }
      return;
    }
    const int qp = tiling.inputs_padded, vb = tiling.voxels_per_block, tt = tiling.team_threads;
    for (int k = 0; k < VPT; ++k) angle[k] = ph[h];
    for (int q = 0; q < qp; ++q) {
      const float fq = f[h * qp + q];
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
    Scratch<ExecSpace> s(m.team_scratch(t.scratch_level), t.scratch_bytes / 4);
    float* in = s.data();
    float* f = in + std::size_t(t.voxels_per_block) * t.inputs_padded;
    float* ph = f + std::size_t(t.features_per_block) * t.inputs_padded;
    float* w = ph + t.features_per_block;
    this->stage_inputs(m, first_voxel, in);
    m.team_barrier();
    typename Base::Registers regs;
    this->load(thread, in, regs);
    float acc[VPT][LMax];
    for (int k = 0; k < VPT; ++k)
      for (int l = 0; l < LMax; ++l) acc[k][l] = 0.0f;
    int b0 = 0, b1 = 0;
    this->split_range(split, b0, b1);
    for (int b = b0; b < b1; ++b) {
      m.team_barrier();  // the previous block is consumed
      this->stage_features(m, b, f, ph, w);
      m.team_barrier();
      for (int h = 0; h < t.features_per_block; ++h) {
        float angle[VPT];
        this->angles(thread, h, in, regs, f, ph, angle);
        for (int k = 0; k < VPT; ++k) {
          float sn, cs;
          sincos_reduced(angle[k], sn, cs);
          for (int l = 0; l < LMax; ++l) acc[k][l] += w[l * t.features_per_block + h] * cs;
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
    Scratch<ExecSpace> s(m.team_scratch(t.scratch_level), t.scratch_bytes / 4);
    float* in = s.data();
    float* f = in + std::size_t(vb) * qp;
    float* ph = f + std::size_t(t.features_per_block) * qp;
    float* w = ph + t.features_per_block;
    float* grad = w + std::size_t(LMax) * t.features_per_block;  // [Qp][VB]
    this->stage_inputs(m, first_voxel, in);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, vb * qp), [&](int i) { grad[i] = 0.0f; });
    m.team_barrier();
    typename Base::Registers regs;
    this->load(thread, in, regs);
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
      this->stage_features(m, b, f, ph, w);
      m.team_barrier();
      for (int h = 0; h < t.features_per_block; ++h) {
        float angle[VPT], scale[VPT];
        this->angles(thread, h, in, regs, f, ph, angle);
        for (int k = 0; k < VPT; ++k) {
          float sn, cs;
          sincos_reduced(angle[k], sn, cs);
          float gw = 0.0f;
          for (int l = 0; l < LMax; ++l) gw += g[k][l] * w[l * t.features_per_block + h];
          scale[k] = -sn * gw;
        }
        for (int q = 0; q < qp; ++q) {
          const float fq = f[h * qp + q];
          float* row = grad + q * vb + thread;
          for (int k = 0; k < VPT; ++k) row[k * t.team_threads] += scale[k] * fq;
        }
      }
    }
    for (int k = 0; k < VPT; ++k) {
      const int voxel = first_voxel + thread + k * t.team_threads;
      if (voxel >= this->voxels) continue;
      for (int q = 0; q < this->model.inputs; ++q) {
        const float v = grad[q * vb + thread + k * t.team_threads];
        if (t.splits == 1) {
          gradients(voxel, q) = v;
        } else {
          Kokkos::atomic_add(&gradients(voxel, q), v);
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
  // The adjoint also holds its cotangents: two voxels per GPU thread.
  constexpr int VPT = kx::is_host_space_v<ExecSpace> ? 8 : 2;
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
// in registers up to 32 or 64 (read from scratch beyond). Host threads read
// their voxels' inputs contiguously from scratch, which vectorises; padding
// to a register bound would only add work there.
template <class ExecSpace, template <class, int, int> class Run, class... Args>
void dispatch(int outputs, int inputs, Args&&... args) {
  auto by_inputs = [&](auto l_bound) {
    constexpr int L = decltype(l_bound)::value;
    if constexpr (!kx::is_host_space_v<ExecSpace>) {
      if (inputs <= 32) return Run<ExecSpace, L, 32>::go(args...);
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
