// Simulates a CPMG train through the installed larmor and checks each echo
// against the ideal-refocusing decay exp(-n ESP / T2), on the default backend
// and on Kokkos::Serial where it is enabled. Exit status 0 when every echo
// agrees to float rounding.
#include <larmor/sequence/builders/builders.hpp>
#include <larmor/simulate/simulator.hpp>
#include <larmor/tissue/tissue.hpp>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdio>

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  larmor::sequence::MeseParams cpmg;
  cpmg.echoes = 16;
  cpmg.echo_spacing_s = 0.010;
  const larmor::simulate::Simulator simulator(larmor::sequence::build_mese(cpmg));

  larmor::tissue::Tissue tissue;
  tissue.voxels = 3;
  tissue.t1_s.uniform = 1.0f;
  tissue.t2_s.map = {0.02f, 0.08f, 0.3f};
  const std::vector<float> signals = simulator.run(tissue);
#if defined(KOKKOS_ENABLE_SERIAL)
  // Every backend of the build is the package's, not the default one alone.
  std::vector<float> on_serial(signals.size());
  simulator.run_into<Kokkos::Serial>(tissue, on_serial.data());
  for (std::size_t i = 0; i < signals.size(); ++i) {
    if (std::abs(on_serial[i] - signals[i]) > 1e-6f) {
      std::printf("sample %zu: %.7f on Kokkos::Serial, %.7f on the default backend\n", i,
                  on_serial[i], signals[i]);
      return 1;
    }
  }
#endif

  int wrong = 0;
  for (int v = 0; v < tissue.voxels; ++v) {
    for (int n = 1; n <= cpmg.echoes; ++n) {
      const std::size_t at = (std::size_t(v) * simulator.samples() + (n - 1)) * 2;
      const double magnitude = std::hypot(signals[at], signals[at + 1]);
      const double expected = std::exp(-n * cpmg.echo_spacing_s / tissue.t2_s.map[v]);
      if (std::abs(magnitude - expected) > 1e-5) {
        std::printf("T2 %.3f s, echo %d: |signal| %.7f, expected %.7f\n", tissue.t2_s.map[v], n,
                    magnitude, expected);
        ++wrong;
      }
    }
  }
  std::printf("%d voxels x %d echoes: %d differ from exp(-n ESP / T2)\n", int(tissue.voxels),
              cpmg.echoes, wrong);
  return wrong == 0 ? 0 : 1;
}
