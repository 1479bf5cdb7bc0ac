// Shared by the MRD readers: libismrmrd's acquisition header to ours.
#pragma once

#include <ismrmrd/ismrmrd.h>

#include "io/mrd/mrd.hpp"

namespace larmor::io::mrd::detail {

Acquisition acquisition_of(const ISMRMRD::ISMRMRD_AcquisitionHeader& h);

}  // namespace larmor::io::mrd::detail
