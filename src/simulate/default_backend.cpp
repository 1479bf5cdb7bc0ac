#include "simulate/default_backend.hpp"

#include <cstdlib>

#include <Kokkos_Core.hpp>

namespace larmor::simulate::default_backend {

using Exec = Kokkos::DefaultExecutionSpace;

const char* name() { return Exec::name(); }
int concurrency() { return Exec().concurrency(); }

bool initialized() { return Kokkos::is_initialized(); }
void state_unbound_threads() { ::setenv("OMP_PROC_BIND", "false", 0); }

void initialize() {
  state_unbound_threads();
  Kokkos::initialize();
}
void finalize() { Kokkos::finalize(); }

void run(const Simulator& sim, const tissue::Tissue& tissue, float* signals) {
  sim.run_into<Exec>(tissue, signals);
}

SteadyStateReport run_steady_state(const Simulator& sim, const tissue::Tissue& tissue,
                                   float* signals, const SteadyStateOptions& steady) {
  return sim.run_steady_state_into<Exec>(tissue, signals, steady);
}

void run_tissue_jvp(const Simulator& sim, const tissue::Tissue& tissue, float* signals,
                    float* tangents) {
  sim.run_tissue_jvp_into<Exec>(tissue, signals, tangents);
}

void run_tissue_vjp(const Simulator& sim, const tissue::Tissue& tissue, const float* cotangents,
                    float* tissue_gradients, float* sequence_gradients, int checkpoint_interval) {
  sim.run_tissue_vjp_into<Exec>(tissue, cotangents, tissue_gradients, sequence_gradients,
                                checkpoint_interval);
}

void run_tissue_hvp(const Simulator& sim, const tissue::Tissue& tissue, const float* directions,
                    const float* cotangents, float* tissue_gradients, float* sequence_gradients,
                    float* tissue_hvp, float* sequence_hvp, int checkpoint_interval) {
  sim.run_tissue_hvp_into<Exec>(tissue, directions, cotangents, tissue_gradients,
                                sequence_gradients, tissue_hvp, sequence_hvp, checkpoint_interval);
}

}  // namespace larmor::simulate::default_backend
