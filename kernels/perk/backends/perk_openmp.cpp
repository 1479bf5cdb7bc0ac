// Explicit instantiation of the PERK kernels for the openmp backend.
#include "perk/perk_apply_impl.hpp"

#if defined(KOKKOS_ENABLE_OPENMP)
LARMOR_PERK_INSTANTIATE(Kokkos::OpenMP)
#endif
