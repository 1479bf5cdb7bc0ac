// The isochromat (Bloch) engine's kernel (declarations): every voxel's
// isochromats played through a table of steps, for sequences EPG cannot
// represent (arbitrary gradients, long pulses, any k-space path).
//
// A step is one of three records (step_abi.hpp), in time order:
//  * free: an interval without RF. Free precession is exact over any
//    interval, whatever the gradient did inside it: an isochromat at r turns
//    by 2 pi (df dt + m.r) about +z (m the interval's gradient moment, in
//    cycles per metre) and relaxes with T1 and T2 over dt.
//  * rf: a cell of constant RF field w1 (rad/s, complex: x + i y, scaled by
//    the voxel's B1) with frequency offset f (Hz) and the gradient's mean g
//    over the cell (Hz/m). In the frame turning with the offset the field is
//    static, (Re w1, Im w1, 2 pi (df + g.r - f)): the isochromat relaxes dt/2,
//    turns right-handed about it, turns back by 2 pi f dt about z, and
//    relaxes dt/2 (second order in dt, exact for a constant off-resonant
//    pulse without relaxation).
//  * sample: the mean transverse magnetisation (Mx + i My) over the voxel's
//    isochromats, each first turned back by 2 pi m.r for the record's
//    rewound encodes m (zero: the raw sample), times the receiver's
//    demodulation c + i s, into the sample's slot; and the mean Mz.
//
// Conventions are those of larmor's EPG (docs/physics.md): rotating frame,
// M+ = Mx + i My gains exp(+i angle) under precession, a pulse of phase 0
// turns +z towards -y. The isochromats sit on the midpoints of a
// counts[0] x counts[1] x counts[2] grid over the voxel's box (edges_m),
// centred on the voxel's centre.
//
// One team per voxel (a block of voxels on the host's vector lanes), the
// isochromats on its threads, several per thread, summed in registers before
// the team's reduction; the steps pass through team scratch in tiles.
// Implementation: impl/isochromats_impl.hpp, instantiated per backend by
// larmor_instantiate() (CMakeLists.txt).
#pragma once

#include <cstdint>

#include "bloch/step_abi.hpp"
#include "common/kokkos_compat.hpp"

namespace larmor::bloch {

inline constexpr const char* isochromats_kernel_name = "larmor::bloch::isochromats";

template <class MemorySpace>
using Steps = Kokkos::View<const float* [step_floats], Kokkos::LayoutRight, MemorySpace>;

// Where a voxel's isochromats sit.
struct IsochromatGrid {
  int counts[3] = {1, 1, 1};
  float edges_m[3] = {0.0f, 0.0f, 0.0f};
  KOKKOS_INLINE_FUNCTION int size() const { return counts[0] * counts[1] * counts[2]; }
};

// Per-voxel tissue: M0, T1 (s), T2 (s), B1 (relative), df (Hz), and the
// voxel's centre (m, physical).
template <class MemorySpace>
struct VoxelTissue {
  Kokkos::View<const float*, MemorySpace> m0, t1, t2, b1, df;
  Kokkos::View<const float* [3], Kokkos::LayoutRight, MemorySpace> centre_m;
};

// Outputs: [voxel][slot][re, im] and [voxel][slot] (mean Mz; may be empty).
template <class MemorySpace>
struct SampleViews {
  Kokkos::View<float** [2], Kokkos::LayoutRight, MemorySpace> transverse;
  Kokkos::View<float**, Kokkos::LayoutRight, MemorySpace> longitudinal;
};

// Plays `steps` on every voxel of `tissue` from equilibrium (0, 0, M0).
// Throws std::invalid_argument naming the kernel for mismatched extents or an
// empty grid. The samples' slots must lie within the outputs (the table's
// writer numbers them 0, 1, ... in order).
template <class ExecSpace>
void simulate_isochromats(const ExecSpace& exec,
                          const Steps<typename ExecSpace::memory_space>& steps,
                          const IsochromatGrid& grid,
                          const VoxelTissue<typename ExecSpace::memory_space>& tissue,
                          const SampleViews<typename ExecSpace::memory_space>& samples);

}  // namespace larmor::bloch
