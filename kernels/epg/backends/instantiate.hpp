// The explicit instantiations of the EPG entry points, one macro per entry
// point: forward, forward mode (JVP), reverse (VJP) and forward over reverse
// (HVP). larmor_instantiate() (CMakeLists.txt) writes one translation unit
// per backend and entry point, so each kernel is compiled once per backend
// by that backend's compiler and a build compiles the four in parallel.
#pragma once

#include "epg/impl/adjoint_dispatch.hpp"
#include "epg/impl/forward_impl.hpp"

#define LARMOR_EPG_INSTANTIATE_FORWARD(EXEC)                                               \
  namespace larmor::epg {                                                                  \
  template LaunchShape choose_launch_shape<EXEC>(int, int, bool, const LaunchOptions&);    \
  template void simulate_forward<EXEC>(const EXEC&, const EventTable<EXEC::memory_space>&, \
                                       const TissueViews<EXEC::memory_space>&,             \
                                       const SignalsOf<EXEC>&,                             \
                                       const CarriedState<EXEC::memory_space>&,            \
                                       const LaunchOptions&);                              \
  }

#define LARMOR_EPG_INSTANTIATE_JVP(EXEC)                                                      \
  namespace larmor::epg {                                                                     \
  template void simulate_tissue_jvp<EXEC>(const EXEC&, const EventTable<EXEC::memory_space>&, \
                                          const TissueViews<EXEC::memory_space>&,             \
                                          const SignalsOf<EXEC>&, const TangentsOf<EXEC>&,    \
                                          const LaunchOptions&);                              \
  }

#define LARMOR_EPG_INSTANTIATE_VJP(EXEC)                                                      \
  namespace larmor::epg {                                                                     \
  template void simulate_tissue_vjp<EXEC>(const EXEC&, const EventTable<EXEC::memory_space>&, \
                                          const TissueViews<EXEC::memory_space>&,             \
                                          const CotangentsOf<EXEC>&, const MatrixOf<EXEC>&,   \
                                          const MatrixOf<EXEC>&, int, const LaunchOptions&);  \
  }

#define LARMOR_EPG_INSTANTIATE_HVP(EXEC)                                                         \
  namespace larmor::epg {                                                                        \
  template void simulate_tissue_hvp<EXEC>(const EXEC&, const EventTable<EXEC::memory_space>&,    \
                                          const TissueViews<EXEC::memory_space>&,                \
                                          const ConstMatrixOf<EXEC>&, const CotangentsOf<EXEC>&, \
                                          const MatrixOf<EXEC>&, const MatrixOf<EXEC>&,          \
                                          const MatrixOf<EXEC>&, const MatrixOf<EXEC>&, int,     \
                                          const LaunchOptions&);                                 \
  }
