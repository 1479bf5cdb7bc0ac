// Configure-time probe (cmake/LarmorKokkosProbe.cmake): a managed host View
// assigned to a View of const elements, the pattern that g++ 12.2-12.5
// miscompiles in Kokkos 4.5-4.7 develop (kokkos issue 8187): the View's
// allocation tracker is left zeroed, and the copy dereferences a null record.
// Exit status 0: the assignment works; 2: it ran but gave wrong results; a
// crash is the defect itself.
#include <Kokkos_Core.hpp>

int main(int argc, char* argv[]) {
  Kokkos::initialize(argc, argv);
  int status = 0;
  {
    using Host = Kokkos::DefaultHostExecutionSpace;
    Kokkos::View<double*, Host::memory_space> values("larmor_view_probe", 4);
    for (int i = 0; i < 4; ++i) values(i) = i + 1.0;
    Kokkos::View<const double*, Host::memory_space> readonly;
    readonly = values;
    Kokkos::View<const double*, Host::memory_space> copied = values;
    double sum = 0.0;
    for (int i = 0; i < 4; ++i) sum += readonly(i) + copied(i);
    if (sum != 20.0 || values.use_count() != 3 || readonly.label() != "larmor_view_probe")
      status = 2;
  }
  Kokkos::finalize();
  return status;
}
