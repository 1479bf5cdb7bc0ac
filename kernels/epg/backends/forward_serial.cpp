// Explicit instantiation of the EPG kernels for the Serial backend.
#include "epg/backends/instantiate.hpp"

#if defined(KOKKOS_ENABLE_SERIAL)
LARMOR_EPG_INSTANTIATE(Kokkos::Serial)
#endif
