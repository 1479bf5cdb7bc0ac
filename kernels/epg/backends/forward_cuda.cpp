// Explicit instantiation of the forward kernel for the Cuda backend.
#include "epg/adjoint_impl.hpp"
#include "epg/forward_impl.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
namespace larmor::epg {
template LaunchShape choose_launch_shape<Kokkos::Cuda>(int, int);
template void simulate_forward<Kokkos::Cuda>(
    const Kokkos::Cuda&, const EventTable<Kokkos::Cuda::memory_space>&,
    const TissueViews<Kokkos::Cuda::memory_space>&,
    const Kokkos::View<float***, Kokkos::LayoutRight, Kokkos::Cuda::memory_space>&);
template void simulate_tissue_jvp<Kokkos::Cuda>(
    const Kokkos::Cuda&, const EventTable<Kokkos::Cuda::memory_space>&,
    const TissueViews<Kokkos::Cuda::memory_space>&,
    const Kokkos::View<float***, Kokkos::LayoutRight, Kokkos::Cuda::memory_space>&,
    const Kokkos::View<float****, Kokkos::LayoutRight, Kokkos::Cuda::memory_space>&);
template void simulate_tissue_vjp<Kokkos::Cuda>(
    const Kokkos::Cuda&, const EventTable<Kokkos::Cuda::memory_space>&,
    const TissueViews<Kokkos::Cuda::memory_space>&,
    const Kokkos::View<const float***, Kokkos::LayoutRight, Kokkos::Cuda::memory_space>&,
    const Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::Cuda::memory_space>&,
    const Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::Cuda::memory_space>&, int);
template void simulate_tissue_hvp<Kokkos::Cuda>(
    const Kokkos::Cuda&, const EventTable<Kokkos::Cuda::memory_space>&,
    const TissueViews<Kokkos::Cuda::memory_space>&,
    const Kokkos::View<const float**, Kokkos::LayoutRight, Kokkos::Cuda::memory_space>&,
    const Kokkos::View<const float***, Kokkos::LayoutRight, Kokkos::Cuda::memory_space>&,
    const Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::Cuda::memory_space>&,
    const Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::Cuda::memory_space>&,
    const Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::Cuda::memory_space>&,
    const Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::Cuda::memory_space>&, int);
}  // namespace larmor::epg
#endif
