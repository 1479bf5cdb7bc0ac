// Explicit instantiation of the EPG kernels for the Cuda backend.
#include "epg/backends/instantiate.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
LARMOR_EPG_INSTANTIATE(Kokkos::Cuda)
#endif
