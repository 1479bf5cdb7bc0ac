// Explicit instantiation of the PERK kernels for the serial backend.
#include "perk/perk_apply_impl.hpp"

#if defined(KOKKOS_ENABLE_SERIAL)
LARMOR_PERK_INSTANTIATE(Kokkos::Serial)
#endif
