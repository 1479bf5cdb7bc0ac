// One run of a simulator's kernels on a backend, prepared once: the stream
// chosen, its event table, the slice profiles, sample weights and pulse
// waveforms uploaded and
// the launch size, from the one budget rule (memory_budget.hpp). Every mode (forward,
// forward mode, reverse, forward over reverse), the steady-state solver and
// the bench's timed launches (kernel_timing.cpp) set up through it.
#pragma once

#include <cstdint>

#include "epg/forward.hpp"
#include "simulate/impl/device_tissue.hpp"
#include "simulate/impl/memory_budget.hpp"
#include "simulate/impl/slice_positions.hpp"
#include "simulate/impl/waveform_upload.hpp"
#include "simulate/simulator.hpp"

namespace larmor::simulate {

template <class ExecSpace>
class PreparedRun {
 public:
  using Mem = typename ExecSpace::memory_space;

  // `stream` is the simulator's packed() or its real-subspace rewrite
  // (`on_axis`); `orders` the states the kernels step (a run from
  // equilibrium: kernel_states(); one that carries states between periods:
  // states()); `live` the orders rule of the event table; `train` whether it
  // carries the step list of the train kernel (forward runs only:
  // epg::train_steps_rule).
  PreparedRun(const Simulator& sim, const tissue::Tissue& tissue,
              const sequence::PackedSequence& stream, bool on_axis, int orders,
              epg::LiveOrders live, double bytes_per_kernel_voxel, bool reports_progress,
              epg::TrainSteps train = epg::TrainSteps::skip)
      : sim_(sim) {
    table = epg::make_event_table<Mem>(stream.ref(), orders, sim.samples(), live, train);
    table.on_axis = on_axis;
    check_slice_tissue(sim.slice_profiles(), tissue, sim.description());
    slice_ = upload_slice_profiles<Mem>(sim.slice_profiles());
    weights_ = upload_sample_weights<Mem>(sim.sample_weights(table.orders));
    waveforms_ = upload_waveforms<Mem>(sim.waveform_table());
    positions = slice_.active() ? slice_.positions : 1;
    chunk =
        voxels_per_launch(launch_memory_budget<ExecSpace>(), bytes_per_kernel_voxel, tissue.voxels,
                          positions, sim.options().chunk_voxels, reports_progress);
  }

  // Kernel voxels of a full launch: each tissue voxel once per slice position.
  std::int64_t kernel_rows() const { return chunk * positions; }

  // The kernels' views of tissue voxels [begin, begin + count).
  epg::TissueViews<Mem> tissue_views(const tissue::Tissue& tissue, std::int64_t begin,
                                     std::int64_t count) const {
    epg::TissueViews<Mem> views = upload_tissue<Mem>(tissue, begin, count, sim_.description());
    views.weights = weights_;
    views.waveforms = waveforms_;
    if (positions > 1) {
      views.slice = slice_;
      views.voxels = int(count * positions);
    }
    return views;
  }

  // Each tissue voxel's rows of `width` floats summed over its positions
  // (with the slice's weights), from `in` (count * positions rows) to `out`.
  void sum_positions(const float* in, float* out, std::int64_t count, std::int64_t width) const {
    sum_slice_positions(exec, in, out, count, width, sim_.slice_profiles());
  }

  ExecSpace exec;
  epg::EventTable<Mem> table;
  int positions = 1;
  std::int64_t chunk = 1;  // tissue voxels per launch

 private:
  const Simulator& sim_;
  epg::SliceProfileViews<Mem> slice_;
  epg::SampleWeightViews<Mem> weights_;
  epg::WaveformViews<Mem> waveforms_;
};

}  // namespace larmor::simulate
