#include "simulate/kernel_timing.hpp"

#include <algorithm>
#include <vector>

#include "common/kokkos_compat.hpp"
#include "epg/adjoint.hpp"
#include "epg/forward.hpp"
#include "simulate/impl/prepared_run.hpp"

namespace larmor::simulate {

namespace {
using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;
using Rows3 = Kokkos::View<float***, Kokkos::LayoutRight, Mem>;
using Rows2 = Kokkos::View<float**, Kokkos::LayoutRight, Mem>;
}  // namespace

struct TimedLaunch::Impl {
  KernelMode mode = KernelMode::forward;
  epg::LaunchOptions launch;  // the simulator's
  int interval = 0, samples = 0, states = 0;
  bool on_axis = false;
  std::unique_ptr<PreparedRun<Exec>> run;
  std::vector<epg::TissueViews<Mem>> chunks;
  Rows3 signals, summed, cotangents;
  Kokkos::View<float****, Kokkos::LayoutRight, Mem> tangents;
  Rows2 tissue_gradients, sequence_gradients, directions, tissue_hvp, sequence_hvp;
};

TimedLaunch::TimedLaunch(const Simulator& sim, const tissue::Tissue& tissue, KernelMode mode,
                         int checkpoint_interval, bool sequence_derivatives)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.mode = mode;
  m.launch = sim.launch_settings().kernels;
  m.samples = sim.samples();
  m.states = sim.kernel_states();
  const std::int64_t voxels = tissue.voxels;
  const bool jvp = mode == KernelMode::jvp, hvp = mode == KernelMode::hvp;
  const bool vjp = mode == KernelMode::vjp || hvp;  // hvp: the reverse sweep at dual numbers
  m.interval = checkpoint_interval;  // 0: the kernels' automatic interval, as the simulator's runs
  // Each kernel voxel's bytes as the simulator's own runs of the mode count
  // them, so that the launches timed are the launches it makes.
  const double per_voxel = vjp ? sim.reverse_bytes_per_voxel(tissue, m.interval, hvp)
                               : sim.samples() * 8.0 * (jvp ? 1 + epg::tissue_tangent_count : 1);
  // Forward runs, forward mode and the adjoint take the real-subspace path
  // where the simulator would (forward over reverse keeps the complex one).
  if (mode == KernelMode::vjp) m.on_axis = sim.reverse_real_path_refusal(tissue).empty();
  const auto& stream = mode == KernelMode::forward || jvp
                           ? sim.forward_stream(tissue, &m.on_axis)
                           : (m.on_axis ? sim.axis_packed() : sim.packed());
  m.run = std::make_unique<PreparedRun<Exec>>(
      sim, tissue, stream, m.on_axis, sim.kernel_states(),
      epg::live_orders_rule<Exec>(sim.trims_orders()), per_voxel, false,
      mode == KernelMode::forward ? epg::train_steps_rule<Exec>(m.launch, m.on_axis)
                                  : epg::TrainSteps::skip);
  const PreparedRun<Exec>& run = *m.run;
  for (std::int64_t b = 0; b < voxels; b += run.chunk) {
    m.chunks.push_back(run.tissue_views(tissue, b, std::min(run.chunk, voxels - b)));
  }
  const std::int64_t rows = run.kernel_rows();
  m.signals = Rows3("larmor::bench_signals", rows, m.samples, 2);
  m.summed = Rows3("larmor::bench_summed", run.positions > 1 ? run.chunk : 0, m.samples, 2);
  m.tangents = decltype(m.tangents)("larmor::bench_tangents", jvp ? rows : 0,
                                    epg::tissue_tangent_count, m.samples, 2);
  // The reverse sweeps take each slice position as a voxel of its own.
  const std::int64_t reverse_rows = vjp ? rows : 0;
  m.cotangents = Rows3("larmor::bench_cotangents", reverse_rows, m.samples, 2);
  Kokkos::deep_copy(m.cotangents, 1.0f);
  m.tissue_gradients =
      Rows2("larmor::bench_tissue_gradients", reverse_rows, epg::tissue_tangent_count);
  const bool sequence = vjp && sequence_derivatives;
  m.sequence_gradients = Rows2("larmor::bench_sequence_gradients", sequence ? sim.events() : 0,
                               epg::sequence_gradient::count);
  m.directions =
      Rows2("larmor::bench_directions", hvp ? reverse_rows : 0, epg::tissue_tangent_count);
  Kokkos::deep_copy(Kokkos::subview(m.directions, Kokkos::ALL, epg::tissue_direction::t1), 1.0f);
  m.tissue_hvp =
      Rows2("larmor::bench_tissue_hvp", hvp ? reverse_rows : 0, epg::tissue_tangent_count);
  m.sequence_hvp = Rows2("larmor::bench_sequence_hvp", hvp && sequence ? sim.events() : 0,
                         epg::sequence_gradient::count);
}

TimedLaunch::~TimedLaunch() = default;
TimedLaunch::TimedLaunch(TimedLaunch&&) noexcept = default;
TimedLaunch& TimedLaunch::operator=(TimedLaunch&&) noexcept = default;

void TimedLaunch::run() {
  Impl& m = *impl_;
  Exec& exec = m.run->exec;
  const auto& table = m.run->table;
  const bool forward_modes = m.mode == KernelMode::forward || m.mode == KernelMode::jvp;
  for (const auto& c : m.chunks) {
    switch (m.mode) {
      case KernelMode::jvp:
        epg::simulate_tissue_jvp(exec, table, c, m.signals, m.tangents, m.launch);
        break;
      case KernelMode::hvp:
        epg::simulate_tissue_hvp(exec, table, c, m.directions, m.cotangents, m.tissue_gradients,
                                 m.sequence_gradients, m.tissue_hvp, m.sequence_hvp, m.interval,
                                 m.launch);
        break;
      case KernelMode::vjp:
        epg::simulate_tissue_vjp(exec, table, c, m.cotangents, m.tissue_gradients,
                                 m.sequence_gradients, m.interval, m.launch);
        break;
      case KernelMode::forward:
        epg::simulate_forward(exec, table, c, m.signals, {}, m.launch);
        break;
    }
    // The positions' signals summed into the voxel's (as the forward runs do).
    if (m.run->positions > 1 && forward_modes) {
      m.run->sum_positions(m.signals.data(), m.summed.data(), c.voxels / m.run->positions,
                           std::int64_t(m.samples) * 2);
    }
  }
  exec.fence();
}

std::int64_t TimedLaunch::chunks() const { return std::int64_t(impl_->chunks.size()); }
std::int64_t TimedLaunch::chunk_voxels() const { return impl_->run->chunk; }
int TimedLaunch::positions() const { return impl_->run->positions; }
bool TimedLaunch::on_axis() const { return impl_->on_axis; }
int TimedLaunch::kernel_states() const { return impl_->states; }

LaunchLayout TimedLaunch::layout() const {
  const epg::LaunchShape shape = epg::choose_launch_shape<Exec>(
      impl_->states, int(impl_->run->chunk), impl_->on_axis, impl_->launch);
  return {shape.orders_per_thread, shape.lanes, shape.group_threads, shape.groups};
}

// Per live order: a complex rotation takes 65 flops and a free evolution 15;
// a real rotation 14 (a and b three multiplies and two adds each, c two of
// each). Counting the complex work for an on-axis run would report more than
// the FP32 peak.
double flops_per_voxel(const sequence::PackedSequence& p, int orders, bool on_axis) {
  const double rotation = on_axis ? 14.0 : 65.0, interval = on_axis ? 0.0 : 15.0;
  double flops = 0.0;
  int shifts = 0;
  for (std::int64_t i = 0; i < p.size(); ++i) {
    shifts += abi::shifts_of(p.action[std::size_t(i)]);
    const double live = std::min(shifts + 1, orders);
    if (abi::is_rf(abi::EventKind(p.kind[std::size_t(i)]))) flops += rotation * live;
    if (p.duration[std::size_t(i)] > 0.0f) flops += interval * live;
  }
  return flops;
}

std::string backend_name() { return kx::backend_name(); }
int backend_concurrency() { return Exec().concurrency(); }

}  // namespace larmor::simulate
