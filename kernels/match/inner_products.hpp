// Inner products of complex rows against a set of complex "atoms", fused with
// what is done with them (declarations), for dictionary matching.
//
// A row and an atom are vectors of n complex coefficients, stored
// [row][k][re, im]. The products are <atom, row> = sum_k conj(atom_k) row_k.
// best_atoms keeps, for every row, the atom of largest |<atom, row>| (a
// running arg-max: the rows x atoms matrix is never formed); project keeps
// them all (the atoms are then the basis vectors of a subspace, and the
// result the rows' coordinates in it).
//
// One team takes a block of rows, every thread a few of them for the whole
// launch; the atoms pass through team scratch in tiles of a few atoms and a
// chunk of coefficients, each thread accumulating its rows' products in
// registers. Every product is summed in the order k = 0, 1, ..., n - 1 and
// the atoms are scanned in index order (the first of equal magnitude wins),
// so a row's result does not depend on which other rows share the launch: a
// volume's maps are the same however its voxels are split over ranks or
// chunks. Implementation: inner_products_impl.hpp, instantiated per backend
// by larmor_instantiate() (CMakeLists.txt).
#pragma once

#include <cstdint>

#include "common/kokkos_compat.hpp"

namespace larmor::match {

inline constexpr const char* best_atoms_kernel_name = "larmor::match::best_atoms";
inline constexpr const char* project_kernel_name = "larmor::match::project";
inline constexpr const char* normalise_kernel_name = "larmor::match::normalise";

template <class MemorySpace>
using ConstRows = Kokkos::View<const float***, Kokkos::LayoutRight, MemorySpace>;
template <class MemorySpace>
using Rows = Kokkos::View<float***, Kokkos::LayoutRight, MemorySpace>;

// What best_atoms finds for each row.
template <class MemorySpace>
struct BestAtoms {
  Kokkos::View<int*, MemorySpace> atom;                                // [row]: the atom's index
  Kokkos::View<float* [3], Kokkos::LayoutRight, MemorySpace> product;  // [row]: Re, Im, |row|
};

// For every row r: best.atom(r) = argmax_a |<atoms_a, rows_r>|, its product
// and the row's norm. Throws std::invalid_argument naming the kernel for
// mismatched shapes, no atoms, or more than 2^31 - 1 atoms or rows.
template <class ExecSpace>
void best_atoms(const ExecSpace& exec, const ConstRows<typename ExecSpace::memory_space>& atoms,
                const ConstRows<typename ExecSpace::memory_space>& rows,
                const BestAtoms<typename ExecSpace::memory_space>& best);

// coordinates(r, a, :) = <basis_a, rows_r> for every basis vector a.
template <class ExecSpace>
void project(const ExecSpace& exec, const ConstRows<typename ExecSpace::memory_space>& basis,
             const ConstRows<typename ExecSpace::memory_space>& rows,
             const Rows<typename ExecSpace::memory_space>& coordinates);

// Every row divided by its norm (summed in double), the norms into `norms`.
// Returns the first row of zero (or non-finite) norm, left as it was, or -1.
template <class ExecSpace>
std::int64_t normalise(const ExecSpace& exec, const Rows<typename ExecSpace::memory_space>& rows,
                       const Kokkos::View<float*, typename ExecSpace::memory_space>& norms);

}  // namespace larmor::match
