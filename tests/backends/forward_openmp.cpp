// The forward-kernel and derivative tests on the OpenMP backend.
#include <Kokkos_Core.hpp>

#define TEST_EXECSPACE Kokkos::OpenMP
#define TEST_CATEGORY openmp
// The headers build on each other: keep this order.
// clang-format off
#include "epg/tstForward.hpp"
#include "epg/tstDerivatives.hpp"
#include "epg/tstHessian.hpp"
#include "epg/tstTerms.hpp"
#include "epg/tstFidelity.hpp"
#include "epg/tstPools.hpp"
#include "epg/tstPooledReverse.hpp"
#include "epg/tstSteadyState.hpp"
#include "epg/tstRealPath.hpp"
#include "epg/tstSliceProfile.hpp"
#include "epg/tstBuilders.hpp"
#include "perk/tstPerk.hpp"
#include "epg/tstPoolExchange.hpp"
// clang-format on
