// The PERK estimator applied to voxels, and its adjoint (declarations).
//
// A trained estimator (src/estimators/perk/) is x(q) = b + W cos(F q + phi):
// q the Q inputs of a voxel (signal magnitudes and known parameters, already
// normalised), F the H x Q random frequencies (2 pi and the length scales
// folded in), phi the H phases (radians), W the L x H weights (sqrt(2/H)
// folded in), b the L offsets. The kernels never form the (voxels x H)
// feature matrix: a team stages a block of inputs and a block of features in
// scratch (zero past the last voxel, input and feature, so inner loops carry
// no bounds), each thread takes the angles of a few voxels over the block,
// their cosines and the second product while they are in registers. When a
// launch has too few voxel blocks to fill the device, the features are split
// across teams and the outputs accumulated atomically (not for a
// `deterministic` call, whose results then do not depend on the launch size).
// Implementation: perk_apply_impl.hpp, instantiated per backend by
// larmor_instantiate() (CMakeLists.txt).
#pragma once

#include "common/kokkos_compat.hpp"

namespace larmor::perk {

inline constexpr const char* apply_kernel_name = "larmor::perk::apply";
inline constexpr const char* adjoint_kernel_name = "larmor::perk::adjoint";
inline constexpr int max_outputs = 32;   // L
inline constexpr int max_inputs = 1024;  // Q

template <class MemorySpace>
struct ModelViews {
  int inputs = 0, features = 0, outputs = 0;                                  // Q, H, L
  Kokkos::View<const float**, Kokkos::LayoutRight, MemorySpace> frequencies;  // [H][Q]
  Kokkos::View<const float*, MemorySpace> phases;                             // [H]
  Kokkos::View<const float**, Kokkos::LayoutRight, MemorySpace> weights;      // [L][H]
  Kokkos::View<const float*, MemorySpace> offsets;                            // [L]
};

template <class ExecSpace>
using MatrixOf = Kokkos::View<float**, Kokkos::LayoutRight, typename ExecSpace::memory_space>;
template <class ExecSpace>
using ConstMatrixOf =
    Kokkos::View<const float**, Kokkos::LayoutRight, typename ExecSpace::memory_space>;

// estimates(voxel, l) = x_l(inputs(voxel, :)). Throws std::invalid_argument
// naming the kernel for sizes past its limits (L > 32, Q > 1024, more than
// 2^31 - 1 voxels, mismatched shapes).
template <class ExecSpace>
void apply(const ExecSpace& exec, const ModelViews<typename ExecSpace::memory_space>& model,
           const ConstMatrixOf<ExecSpace>& inputs, const MatrixOf<ExecSpace>& estimates,
           bool deterministic = false);

// The adjoint: input_gradients(voxel, q) = sum_l cotangents(voxel, l)
// d x_l / d q = -sum_h (sum_l g_l W_lh) sin(F_h q + phi_h) F_hq.
template <class ExecSpace>
void adjoint(const ExecSpace& exec, const ModelViews<typename ExecSpace::memory_space>& model,
             const ConstMatrixOf<ExecSpace>& inputs, const ConstMatrixOf<ExecSpace>& cotangents,
             const MatrixOf<ExecSpace>& input_gradients, bool deterministic = false);

}  // namespace larmor::perk
