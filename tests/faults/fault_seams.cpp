// larmor_fault_seams: larmor with io::before_output_rename set, so that
// LARMOR_FAULT_PAUSE_BEFORE_RENAME_S (seconds, at most 60) holds a finished
// temporary file that long and a fault case can interrupt the run while it
// exists. The product reads no such variable.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "io/temporary_files.hpp"

namespace {

void pause_before_rename() {
  if (const char* pause = std::getenv("LARMOR_FAULT_PAUSE_BEFORE_RENAME_S")) {
    ::usleep(static_cast<useconds_t>(std::clamp(std::atof(pause), 0.0, 60.0) * 1e6));
  }
}

// Set before main runs (the pointer itself is constant-initialised to null).
const bool seam_set = (larmor::io::before_output_rename = pause_before_rename, true);

}  // namespace
