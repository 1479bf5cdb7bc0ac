// Explicit instantiation of the EPG kernels for the OpenMP backend.
#include "epg/backends/instantiate.hpp"

#if defined(KOKKOS_ENABLE_OPENMP)
LARMOR_EPG_INSTANTIATE(Kokkos::OpenMP)
#endif
