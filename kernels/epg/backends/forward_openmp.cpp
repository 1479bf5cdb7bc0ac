// Explicit instantiation of the forward kernel for the OpenMP backend.
#include "epg/adjoint_impl.hpp"
#include "epg/forward_impl.hpp"

#if defined(KOKKOS_ENABLE_OPENMP)
namespace larmor::epg {
template LaunchShape choose_launch_shape<Kokkos::OpenMP>(int, int);
template void simulate_forward<Kokkos::OpenMP>(
    const Kokkos::OpenMP&, const EventTable<Kokkos::OpenMP::memory_space>&,
    const TissueViews<Kokkos::OpenMP::memory_space>&,
    const Kokkos::View<float***, Kokkos::LayoutRight, Kokkos::OpenMP::memory_space>&);
template void simulate_tissue_jvp<Kokkos::OpenMP>(
    const Kokkos::OpenMP&, const EventTable<Kokkos::OpenMP::memory_space>&,
    const TissueViews<Kokkos::OpenMP::memory_space>&,
    const Kokkos::View<float***, Kokkos::LayoutRight, Kokkos::OpenMP::memory_space>&,
    const Kokkos::View<float****, Kokkos::LayoutRight, Kokkos::OpenMP::memory_space>&);
template void simulate_tissue_vjp<Kokkos::OpenMP>(
    const Kokkos::OpenMP&, const EventTable<Kokkos::OpenMP::memory_space>&,
    const TissueViews<Kokkos::OpenMP::memory_space>&,
    const Kokkos::View<const float***, Kokkos::LayoutRight, Kokkos::OpenMP::memory_space>&,
    const Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::OpenMP::memory_space>&,
    const Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::OpenMP::memory_space>&, int);
template void simulate_tissue_hvp<Kokkos::OpenMP>(
    const Kokkos::OpenMP&, const EventTable<Kokkos::OpenMP::memory_space>&,
    const TissueViews<Kokkos::OpenMP::memory_space>&,
    const Kokkos::View<const float**, Kokkos::LayoutRight, Kokkos::OpenMP::memory_space>&,
    const Kokkos::View<const float***, Kokkos::LayoutRight, Kokkos::OpenMP::memory_space>&,
    const Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::OpenMP::memory_space>&,
    const Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::OpenMP::memory_space>&,
    const Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::OpenMP::memory_space>&,
    const Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::OpenMP::memory_space>&, int);
}  // namespace larmor::epg
#endif
