// Explicit instantiation of the forward kernel for the Serial backend.
#include "epg/adjoint_impl.hpp"
#include "epg/forward_impl.hpp"

#if defined(KOKKOS_ENABLE_SERIAL)
namespace larmor::epg {
template LaunchShape choose_launch_shape<Kokkos::Serial>(int, int);
template void simulate_forward<Kokkos::Serial>(
    const Kokkos::Serial&, const EventTable<Kokkos::Serial::memory_space>&,
    const TissueViews<Kokkos::Serial::memory_space>&,
    const Kokkos::View<float***, Kokkos::LayoutRight, Kokkos::Serial::memory_space>&);
template void simulate_tissue_jvp<Kokkos::Serial>(
    const Kokkos::Serial&, const EventTable<Kokkos::Serial::memory_space>&,
    const TissueViews<Kokkos::Serial::memory_space>&,
    const Kokkos::View<float***, Kokkos::LayoutRight, Kokkos::Serial::memory_space>&,
    const Kokkos::View<float****, Kokkos::LayoutRight, Kokkos::Serial::memory_space>&);
template void simulate_tissue_vjp<Kokkos::Serial>(
    const Kokkos::Serial&, const EventTable<Kokkos::Serial::memory_space>&,
    const TissueViews<Kokkos::Serial::memory_space>&,
    const Kokkos::View<const float***, Kokkos::LayoutRight, Kokkos::Serial::memory_space>&,
    const Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::Serial::memory_space>&,
    const Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::Serial::memory_space>&, int);
template void simulate_tissue_hvp<Kokkos::Serial>(
    const Kokkos::Serial&, const EventTable<Kokkos::Serial::memory_space>&,
    const TissueViews<Kokkos::Serial::memory_space>&,
    const Kokkos::View<const float**, Kokkos::LayoutRight, Kokkos::Serial::memory_space>&,
    const Kokkos::View<const float***, Kokkos::LayoutRight, Kokkos::Serial::memory_space>&,
    const Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::Serial::memory_space>&,
    const Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::Serial::memory_space>&,
    const Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::Serial::memory_space>&,
    const Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::Serial::memory_space>&, int);
}  // namespace larmor::epg
#endif
