// The explicit instantiations of every EPG entry point (forward, forward
// mode, adjoint, forward over reverse) for one backend: each
// kernels/epg/backends/forward_<backend>.cpp expands this once, so the
// kernels are compiled once per backend by that backend's compiler.
#pragma once

#include "epg/adjoint_dispatch.hpp"
#include "epg/forward_impl.hpp"

#define LARMOR_EPG_INSTANTIATE(EXEC)                                                             \
  namespace larmor::epg {                                                                        \
  template LaunchShape choose_launch_shape<EXEC>(int, int, bool);                                      \
  template void simulate_forward<EXEC>(const EXEC&, const EventTable<EXEC::memory_space>&,       \
                                       const TissueViews<EXEC::memory_space>&,                   \
                                       const SignalsOf<EXEC>&,                                   \
                                       const CarriedState<EXEC::memory_space>&);                 \
  template void simulate_tissue_jvp<EXEC>(const EXEC&, const EventTable<EXEC::memory_space>&,    \
                                          const TissueViews<EXEC::memory_space>&,                \
                                          const SignalsOf<EXEC>&, const TangentsOf<EXEC>&);      \
  template void simulate_tissue_vjp<EXEC>(const EXEC&, const EventTable<EXEC::memory_space>&,    \
                                          const TissueViews<EXEC::memory_space>&,                \
                                          const CotangentsOf<EXEC>&, const MatrixOf<EXEC>&,      \
                                          const MatrixOf<EXEC>&, int);                           \
  template void simulate_tissue_hvp<EXEC>(const EXEC&, const EventTable<EXEC::memory_space>&,    \
                                          const TissueViews<EXEC::memory_space>&,                \
                                          const ConstMatrixOf<EXEC>&, const CotangentsOf<EXEC>&, \
                                          const MatrixOf<EXEC>&, const MatrixOf<EXEC>&,          \
                                          const MatrixOf<EXEC>&, const MatrixOf<EXEC>&, int);    \
  }
