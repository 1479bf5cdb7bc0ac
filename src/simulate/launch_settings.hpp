// The run-time settings of how a simulation launches its kernels, read in one
// place: the kernels' layout choices (epg::LaunchOptions), which orders run,
// and whether the real-subspace path is taken. None changes a result beyond
// float rounding; they exist for tuning runs and for the tests that compare
// the layouts and paths.
#pragma once

#include <string>

#include "epg/launch_options.hpp"

namespace larmor::simulate {

enum class RealPathMode { automatic, on, off };

struct LaunchSettings {
  // LARMOR_EPG_LAYOUT=OPTxLANES, LARMOR_REAL_SCALAR=0|1,
  // LARMOR_ADJOINT_LAYOUT=plain|grouped, LARMOR_EPG_TRAIN=auto|on|off.
  epg::LaunchOptions kernels;
  // LARMOR_TRIM_ORDERS=on|off: off runs every order of the truncation, even
  // those no sample reads.
  bool trim_orders = true;
  // LARMOR_REAL_PATH=auto|on|off: auto and on take the path wherever it
  // applies.
  RealPathMode real_path = RealPathMode::automatic;

  // The settings the environment names (unset or empty: the default); a
  // value out of its set is refused with the variable's name.
  static LaunchSettings from_environment();
};

}  // namespace larmor::simulate
