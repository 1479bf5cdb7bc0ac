// A double-precision reference for the pooled EPG models, written without the
// kernels' matrix exponentials: every interval is integrated as the coupled
// rate equations of each order (Bloch-McConnell for the free pools'
// transverse states, relaxation and exchange for every pool's Z) by
// fourth-order Runge-Kutta with steps short enough for 1e-12 accuracy, on the
// signed-array EPG of epg_reference.hpp, one state per free pool.
#pragma once

#include <vector>

#include "reference/epg_reference.hpp"
#include "tissue/lineshape.hpp"

namespace larmor::reference {

struct PooledTissue {
  Tissue free;  // M0, the first free pool's T1 and T2, B1 and df
  double pool_fraction = 0.0, pool_t1_s = kNoRelaxation, pool_t2_s = kNoRelaxation;
  double pool_exchange_hz = 0.0;  // first free pool -> second
  double bound_fraction = 0.0, bound_t1_s = kNoRelaxation, bound_exchange_hz = 0.0;
  larmor::tissue::Lineshape bound_lineshape = larmor::tissue::Lineshape::super_lorentzian;
  double bound_t2_s = 12e-6;
  bool second_pool() const { return pool_fraction > 0.0; }
  bool bound_pool() const { return bound_fraction > 0.0; }
};

// Samples of `d` from equilibrium with `orders` orders per pool.
std::vector<Complex> simulate_pooled(const larmor::sequence::Description& d,
                                     const PooledTissue& tissue, int orders);

}  // namespace larmor::reference
