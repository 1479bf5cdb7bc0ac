// The fused kernels prepared once and launched repeatedly, for timing them
// apart from the uploads (larmor-bench). Runs on Kokkos' default execution
// space, the one Simulator::run uses, behind a non-template interface so that
// a caller needs neither Kokkos nor the kernel headers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "sequence/packing.hpp"
#include "simulate/simulator.hpp"
#include "tissue/tissue.hpp"

namespace larmor::simulate {

// Which kernel a TimedLaunch runs: the forward run, forward mode (the
// signals and their tangents along M0, T1, T2, B1, df), reverse mode (tissue
// and per-event sequence gradients of a loss) and forward over reverse (the
// reverse sweep at dual numbers: Hessian-vector products).
enum class KernelMode { forward, jvp, vjp, hvp };

// The forward kernel's launch layout: orders per thread x lanes / threads per
// group x groups per team.
struct LaunchLayout {
  int orders_per_thread = 0, lanes = 0, group_threads = 0, groups = 0;
};

class TimedLaunch {
 public:
  // Prepares the run as the simulator's own runs of the mode do
  // (simulate/impl/prepared_run.hpp: the stream, its event table, the launch size
  // from the one budget rule, with no split for progress) and uploads every
  // chunk of `tissue` (validated by the caller); slice-selective pulses run
  // each voxel once per slice position. The real-subspace path is taken where
  // the simulator's runs take it (forward over reverse keeps the complex
  // kernels). `simulator` outlives the TimedLaunch.
  // `checkpoint_interval` (reverse modes; 0: automatic); without
  // `sequence_derivatives` the reverse modes compute the tissue's alone.
  TimedLaunch(const Simulator& simulator, const tissue::Tissue& tissue, KernelMode mode,
              int checkpoint_interval = 0, bool sequence_derivatives = true);
  ~TimedLaunch();
  TimedLaunch(TimedLaunch&&) noexcept;
  TimedLaunch& operator=(TimedLaunch&&) noexcept;

  // Launches the kernel over every chunk (summing slice positions after the
  // forward modes) and waits for it. The loss of the reverse modes is the sum
  // of the signals' real parts and the direction of forward over reverse is
  // T1: any other costs the same.
  void run();

  std::int64_t chunks() const;
  std::int64_t chunk_voxels() const;  // tissue voxels per launch
  int positions() const;              // slice positions per voxel (1: none)
  bool on_axis() const;               // the real-subspace path
  int kernel_states() const;          // the states the kernels step
  // The layout the forward kernel picks for one chunk.
  LaunchLayout layout() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The flops the kernels do for one voxel over `stream`, per live order of
// `orders`: the complex kernels a rotation for a pulse and a free evolution
// for an interval; the on-axis kernels a real rotation per pulse, their
// intervals riding in the next rotation's coefficients.
double flops_per_voxel(const sequence::PackedSequence& stream, int orders, bool on_axis);

// Kokkos' default execution space (the one the simulator and the timed
// launches use): its name and concurrency.
std::string backend_name();
int backend_concurrency();

}  // namespace larmor::simulate
