// Explicit instantiation of the PERK kernels for the cuda backend.
#include "perk/perk_apply_impl.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
LARMOR_PERK_INSTANTIATE(Kokkos::Cuda)
#endif
