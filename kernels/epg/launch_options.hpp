// Settings of a launch beyond what the run computes: the tuning and
// comparison choices of the kernels' layouts. The caller reads them once
// (simulate::LaunchSettings reads them from the environment) and passes them
// to each entry point; the defaults are the kernels' own choices, and no
// setting changes a result beyond float rounding.
#pragma once

#include <string>

namespace larmor::epg {

struct LaunchOptions {
  // A compiled layout (orders per thread, voxel lanes) to take instead of
  // the table's choice; 0: the table's choice (LARMOR_EPG_LAYOUT=OPTxLANES).
  int orders_per_thread = 0;
  int lanes = 0;
  // Host runs on the axis: one train per thread instead of SIMD lanes of
  // voxels (LARMOR_REAL_SCALAR=1).
  bool real_scalar = false;
  // The reverse sweep: the grouped layout where it holds the orders, or the
  // plain one-voxel-per-thread kernel at every order count
  // (LARMOR_ADJOINT_LAYOUT=plain; the tests compare the two).
  bool plain_adjoint = false;
  // The train kernel for forward runs it can take (simulate_train):
  // automatic takes it on devices, on everywhere, off nowhere
  // (LARMOR_EPG_TRAIN=auto|on|off).
  enum class Train { automatic, on, off };
  Train train = Train::automatic;
  // What the run is (the sequence's builder or file): Kokkos Tools and
  // profilers see each launch as "larmor::epg::forward[mrf]".
  std::string label;

  bool layout_requested() const { return orders_per_thread > 0; }
};

// The name a launch carries: the kernel's, with the run's label.
inline std::string launch_name(const char* kernel, const LaunchOptions& options) {
  return options.label.empty() ? std::string(kernel)
                               : std::string(kernel) + "[" + options.label + "]";
}

}  // namespace larmor::epg
