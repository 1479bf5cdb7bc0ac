// The simulator's runs on the build's default execution space (CUDA in a
// CUDA build, else OpenMP or Serial) behind functions that are not
// templates, and the Kokkos runtime they need: for callers compiled without
// Kokkos, whose sources go to the host compiler in a CUDA build (the Python
// module). Arrays are host memory laid out as the Simulator's *_into runs
// take them; a GPU run copies its results back into them.
#pragma once

#include "simulate/simulator.hpp"

namespace larmor::simulate::default_backend {

// The execution space's name ("OpenMP", "Cuda", ...) and how many threads
// it runs (on a GPU, the resident threads).
const char* name();
int concurrency();

// Kokkos warns on every start when OMP_PROC_BIND is unset; the OpenMP
// runtime read the environment before main, so unset means unbound, which
// this states as "false" (a value already set is kept; docs/building.md says
// how to bind threads for speed). Call before Kokkos starts.
void state_unbound_threads();

// Kokkos: started with the environment's settings (OMP_NUM_THREADS,
// KOKKOS_*; state_unbound_threads first), and stopped; `initialized` is true
// between the two.
bool initialized();
void initialize();
void finalize();

void run(const Simulator& sim, const tissue::Tissue& tissue, float* signals);
SteadyStateReport run_steady_state(const Simulator& sim, const tissue::Tissue& tissue,
                                   float* signals, const SteadyStateOptions& steady);
void run_tissue_jvp(const Simulator& sim, const tissue::Tissue& tissue, float* signals,
                    float* tangents);
void run_tissue_vjp(const Simulator& sim, const tissue::Tissue& tissue, const float* cotangents,
                    float* tissue_gradients, float* sequence_gradients,
                    int checkpoint_interval = 0);
void run_tissue_hvp(const Simulator& sim, const tissue::Tissue& tissue, const float* directions,
                    const float* cotangents, float* tissue_gradients, float* sequence_gradients,
                    float* tissue_hvp, float* sequence_hvp, int checkpoint_interval = 0);

}  // namespace larmor::simulate::default_backend
