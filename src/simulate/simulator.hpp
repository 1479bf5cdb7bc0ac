// The host side of a forward simulation: packs the sequence once, resolves the
// order cap, and runs the fused kernel over a tissue in memory-bounded
// chunks on a chosen backend.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "sequence/description.hpp"
#include "sequence/packing.hpp"
#include "sequence/real_subspace.hpp"
#include "sequence/slice_profile.hpp"
#include "sequence/voxel_integral.hpp"
#include "sequence/waveform_pulses.hpp"
#include "simulate/launch_settings.hpp"
#include "tissue/tissue.hpp"

namespace larmor::simulate {

// Steady state of a periodic sequence (the description is one period): the
// fixed point of the period map, found by iterating it from equilibrium
// until no state changes by more than `tolerance` (M0 = 1 units) over one
// period.
struct SteadyStateOptions {
  double tolerance = 1e-6;
  int max_repetitions = 20000;
};

// How each voxel settled: the periods simulated until its change over one
// period fell below the tolerance (-1: not within max_repetitions).
struct SteadyStateReport {
  std::vector<int> repetitions;
  int periods = 0;  // periods simulated (the slowest voxel's, or the maximum)
  std::int64_t unconverged = 0;
};

struct Options {
  // The highest EPG order kept: orders 0..max_order (max_order + 1 states, the
  // cap of the EPG literature and epgpy). < 0: the description's automatic cap
  // (sequence::default_max_order).
  int max_order = -1;
  // Tissue voxels per launch at most; <= 0: as the launch budget holds
  // (simulate/impl/memory_budget.hpp).
  std::int64_t chunk_voxels = 0;
  // Called after each chunk with the voxels done and the total.
  std::function<void(std::int64_t, std::int64_t)> progress;
  // How the kernels launch; unset: LaunchSettings::from_environment(), read
  // once when the simulator is made.
  std::optional<LaunchSettings> launch;
};

class Simulator {
 public:
  Simulator(const sequence::Description& description, const Options& options = {});

  // The truncation: the highest order kept, and the states (orders 0..max_order)
  // the kernels carry.
  int max_order() const { return states_ - 1; }
  int states() const { return states_; }
  // The states runs from equilibrium simulate: no more than reach a sample
  // (sequence::sample_reach_order_count), which gives the truncation's
  // samples exactly; LaunchSettings::trim_orders off keeps every order. The
  // steady-state iteration carries every order.
  int kernel_states() const { return kernel_states_; }
  // Whether runs step only the orders a sample can read (LaunchSettings::
  // trim_orders, on by default): kernel_states(), and on the host each
  // event's live orders (epg::live_orders_rule).
  bool trims_orders() const { return launch_.trim_orders; }
  // The launch settings every run of this simulator uses.
  const LaunchSettings& launch_settings() const { return launch_; }
  const Options& options() const { return options_; }
  int samples() const { return packed_.samples; }
  std::int64_t events() const { return packed_.size(); }
  const sequence::PackedSequence& packed() const { return packed_; }
  // The real-subspace rewrite of packed() (empty where the description is not
  // on one axis).
  const sequence::PackedSequence& axis_packed() const { return axis_packed_; }
  const sequence::Description& description() const { return description_; }
  // The slice-selective pulses' tables (profiles == 0: every pulse is
  // instantaneous). Forward runs, forward mode and the steady-state iteration
  // run each voxel once per position and sum the positions' signals; the
  // reverse modes refuse them.
  const sequence::SliceProfileTable& slice_profiles() const { return slice_table_; }
  // The pulses played from their waveforms (waveforms() == 0: none). Forward
  // runs, forward mode and the steady-state iteration integrate them in the
  // kernels; the reverse modes and pooled models run the same description
  // with each as hard pulses at its samples (sequence::expand_waveform_pulses)
  // and fold the sequence gradients back onto the waveform pulses.
  const sequence::WaveformTable& waveform_table() const { return waveform_table_; }
  // The voxel weights of the description's weighted samples for runs of
  // `orders` orders (kernel_states() or states()); tables == 0 where every
  // sample records F+_0.
  const sequence::VoxelWeightTable& sample_weights(int orders) const {
    return orders == states_ ? carried_weights_ : kernel_weights_;
  }

  // The real-subspace path (sequence/real_subspace.hpp) for a forward run of
  // `tissue`: whether it is taken, and why not (empty when taken). Taken when
  // the description's states stay on one axis for this tissue (no
  // off-resonance, flow, transmit array or pools), at every problem size,
  // unless LaunchSettings::real_path is off (LARMOR_REAL_PATH=off).
  std::string real_path_refusal(const tissue::Tissue& tissue) const;
  // The same for a reverse-mode run (run_tissue_vjp_into): the forward run's
  // conditions, and a pulse of zero flip must lie on the axis too (its flip
  // gradient turns about it). Forward over reverse keeps the complex kernels.
  std::string reverse_real_path_refusal(const tissue::Tissue& tissue) const;
  // The packed stream a forward run of `tissue` launches: the real-subspace
  // rewrite where the path is taken, else packed().
  const sequence::PackedSequence& forward_stream(const tissue::Tissue& tissue,
                                                 bool* on_axis = nullptr) const;

  // Signals of every voxel: [voxel][sample][re, im], float.
  std::vector<float> run(const tissue::Tissue& tissue) const;

  // The same on a given backend (Kokkos::Serial, Kokkos::OpenMP,
  // Kokkos::Cuda: whichever are enabled), into caller memory of
  // tissue.voxels * samples() * 2 floats.
  template <class ExecSpace>
  void run_into(const tissue::Tissue& tissue, float* signals) const;

  // The same into memory of the backend's own space (device memory on a
  // GPU): the signals never pass through the host.
  template <class ExecSpace>
  void run_into_device(const tissue::Tissue& tissue, float* device_signals) const;

  // The samples of the steady-state period (SteadyStateOptions) into caller
  // memory as run_into, and the settling report. Pooled models carry every
  // pool's states.
  template <class ExecSpace>
  SteadyStateReport run_steady_state_into(const tissue::Tissue& tissue, float* signals,
                                          const SteadyStateOptions& steady) const;

  // Forward mode: the signals as run_into writes them, and their derivatives
  // along the tissue directions M0, T1 (s), T2 (s), B1, df (Hz) into
  // tangents[voxel][direction][sample][re, im] (tissue.voxels * 5 *
  // samples() * 2 floats).
  template <class ExecSpace>
  void run_tissue_jvp_into(const tissue::Tissue& tissue, float* signals, float* tangents) const;

  // Reverse mode: for the loss sum Re(conj(w) y) over voxels and samples, with
  // w = cotangents[voxel][sample][re, im] (tissue.voxels * samples() * 2),
  // writes tissue_gradients[voxel][M0, T1, T2, B1, df] (tissue.voxels * 5)
  // and sequence_gradients[event][flip, phase, duration] summed over voxels
  // (events() * 3), with a checkpoint every `checkpoint_interval` events (0:
  // automatic). A null sequence_gradients skips the sequence derivatives: a
  // fit of the tissue needs none, and the sweep is faster without their sums.
  // The device bytes one kernel voxel of a reverse-mode run takes: its
  // checkpoints and one stretch of states every `checkpoint_interval` events
  // (0: automatic; forward over reverse, `second_order`: twice the floats),
  // or the more checkpoints of a stretch kept in a GPU team's scratch, and
  // its cotangents.
  double reverse_bytes_per_voxel(const tissue::Tissue& tissue, int checkpoint_interval,
                                 bool second_order) const;

  template <class ExecSpace>
  void run_tissue_vjp_into(const tissue::Tissue& tissue, const float* cotangents,
                           float* tissue_gradients, float* sequence_gradients,
                           int checkpoint_interval = 0) const;

  // Forward over reverse: the reverse-mode run at dual numbers seeded along
  // directions[voxel][M0, T1, T2, B1, df] (tissue.voxels * 5). Writes what
  // run_tissue_vjp_into writes and, along the directions, their derivatives:
  // tissue_hvp[voxel][5] (the loss's tissue Hessian times the direction) and
  // sequence_hvp[event][flip, phase, duration] (mixed second derivatives,
  // summed over voxels; null with a null sequence_gradients).
  template <class ExecSpace>
  void run_tissue_hvp_into(const tissue::Tissue& tissue, const float* directions,
                           const float* cotangents, float* tissue_gradients,
                           float* sequence_gradients, float* tissue_hvp, float* sequence_hvp,
                           int checkpoint_interval = 0) const;

 private:
  // run_into and run_into_device: `signals` in ExecSpace's memory or the host's.
  template <class ExecSpace>
  void run_forward(const tissue::Tissue& tissue, float* signals, bool on_device) const;
  // Reverse mode (directions == nullptr) or forward over reverse.
  template <class ExecSpace>
  void run_reverse(const tissue::Tissue& tissue, const float* directions, const float* cotangents,
                   float* tissue_gradients, float* sequence_gradients, float* tissue_hvp,
                   float* sequence_hvp, int checkpoint_interval) const;

  sequence::Description description_;
  sequence::PackedSequence packed_;
  // The description's real-subspace plan, and its rewritten stream where
  // eligible (every pulse at phase 0 with its signed flip, each receiver phase
  // moved by the axis).
  sequence::RealSubspacePlan axis_plan_;
  sequence::PackedSequence axis_packed_;
  sequence::SliceProfileTable slice_table_;
  sequence::WaveformTable waveform_table_;
  // The hard-pulse twin, made on first use (a long pulse's samples are many).
  struct HardPulseTwin;
  const HardPulseTwin* hard_pulse_twin() const;
  bool needs_hard_pulses(const tissue::Tissue& tissue) const;
  // Sequence rows (events x columns) of the twin summed onto this description's events.
  void fold_twin_rows(const HardPulseTwin& twin, const std::vector<float>& from, float* to) const;
  mutable std::shared_ptr<HardPulseTwin> twin_;
  std::shared_ptr<std::mutex> twin_mutex_ = std::make_shared<std::mutex>();
  int states_ = 0;
  LaunchSettings launch_;
  int kernel_states_ = 0;
  sequence::VoxelWeightTable kernel_weights_, carried_weights_;
  Options options_;
};

struct Simulator::HardPulseTwin {
  Simulator simulator;
  std::vector<std::int64_t> origin;  // per twin event: the event it comes from
};

}  // namespace larmor::simulate
