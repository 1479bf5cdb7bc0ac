#include "simulate/simulator.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include <Kokkos_Core.hpp>

#include "epg/adjoint.hpp"

namespace larmor::simulate {

Simulator::Simulator(const sequence::Description& description, const Options& options)
    : description_(description),
      packed_(sequence::pack(description)),
      slice_table_(sequence::build_slice_profile_table(description)),
      waveform_table_(sequence::build_waveform_table(description)),
      states_(sequence::resolve_state_count(description, options.max_order)),
      launch_(options.launch ? *options.launch : LaunchSettings::from_environment()),
      kernel_states_(launch_.trim_orders
                         ? std::clamp(sequence::sample_reach_order_count(description), 1, states_)
                         : states_),
      options_(options) {
  if (description.voxel.declared()) {
    kernel_weights_ = sequence::build_voxel_weight_table(description, kernel_states_, slice_table_);
    carried_weights_ = sequence::build_voxel_weight_table(description, states_, slice_table_);
  }
  // Kokkos Tools see each launch as larmor::epg::forward[<name>]: the
  // builder's name, or the file's without its folder.
  if (launch_.kernels.label.empty()) {
    const auto& name = description.name;
    launch_.kernels.label = name.substr(name.find_last_of('/') + 1);
  }
  // The test is O(events), once per sequence; which tissue may use it is
  // decided per run.
  axis_plan_ = sequence::plan_real_subspace(description, {});
  if (axis_plan_.eligible) {
    axis_packed_ = packed_;
    for (std::int64_t i = 0; i < packed_.size(); ++i) {
      const auto kind = static_cast<sequence::EventKind>(packed_.kind[std::size_t(i)]);
      if (kind == sequence::EventKind::pulse) {
        axis_packed_.flip[std::size_t(i)] = float(axis_plan_.signed_flip_rad[std::size_t(i)]);
        axis_packed_.phase[std::size_t(i)] = 0.0;
      } else if (kind == sequence::EventKind::adc) {
        axis_packed_.phase[std::size_t(i)] -= axis_plan_.axis_rad;
      }
    }
  }
}

namespace {
bool zero_everywhere(const tissue::PropertyValues& p) {
  if (p.map.empty()) return p.uniform == 0.0f;
  for (float x : p.map) {
    if (x != 0.0f) return false;
  }
  return true;
}
}  // namespace

std::string Simulator::real_path_refusal(const tissue::Tissue& tissue) const {
  if (launch_.real_path == RealPathMode::off) return "LARMOR_REAL_PATH=off";
  if (!axis_plan_.eligible) return axis_plan_.reason;
  sequence::RealSubspaceDeclarations declared;
  declared.off_resonance = !zero_everywhere(tissue.df_hz);
  declared.flow = !zero_everywhere(tissue.velocity_m_s);
  declared.transmit_array = tissue.transmit_channels > 0 && description_.shims.channels > 0;
  declared.pools = tissue.has_second_pool() || tissue.has_bound_pool();
  // The description's plan is made once (constructor); a run only adds its declarations.
  if (std::string reason = sequence::real_subspace_refusal(declared); !reason.empty()) {
    return reason;
  }
  // `auto` takes the path wherever it applies, small problems included: it
  // was never slower than the complex kernel, on the host or a device
  // (docs/performance.md, "Real path at every size").
  return {};
}

std::string Simulator::reverse_real_path_refusal(const tissue::Tissue& tissue) const {
  std::string reason = real_path_refusal(tissue);
  return reason.empty() ? axis_plan_.reverse_reason : reason;
}

const sequence::PackedSequence& Simulator::forward_stream(const tissue::Tissue& tissue,
                                                          bool* on_axis) const {
  const bool axis = real_path_refusal(tissue).empty();
  if (on_axis != nullptr) *on_axis = axis;
  return axis ? axis_packed_ : packed_;
}

double Simulator::reverse_bytes_per_voxel(const tissue::Tissue& tissue, int checkpoint_interval,
                                          bool second_order) const {
  const std::int64_t events = this->events();
  const std::int64_t interval = checkpoint_interval > 0
                                    ? std::min<std::int64_t>(checkpoint_interval, events)
                                    : epg::default_checkpoint_interval(int(events));
  double states = double((events + interval - 1) / std::max<std::int64_t>(interval, 1) + interval);
  // A device's grouped sweep may keep its stretch in team scratch instead, at
  // a shorter interval: the larger of the two is a bound for either backend.
  const int scratch_interval =
      epg::scratch_stretch_interval(int(events), checkpoint_interval, epg::reverse_scratch_slots);
  if (scratch_interval > 0) {
    states = std::max(states, double((events + scratch_interval - 1) / scratch_interval));
  }
  return states *
             epg::reverse_state_floats(kernel_states_, tissue.has_second_pool() ? 2 : 1,
                                       tissue.has_bound_pool() ? 1 : 0) *
             4.0 * (second_order ? 2.0 : 1.0) +
         samples() * 8.0;
}

const Simulator::HardPulseTwin* Simulator::hard_pulse_twin() const {
  if (waveform_table_.waveforms() == 0) return nullptr;
  const std::lock_guard<std::mutex> lock(*twin_mutex_);
  if (!twin_) {
    std::vector<std::int64_t> origin;
    sequence::Description expanded = sequence::expand_waveform_pulses(description_, &origin);
    Options options = options_;
    options.max_order = max_order();
    options.launch = launch_;
    twin_ = std::make_shared<HardPulseTwin>(HardPulseTwin{Simulator(expanded, options), origin});
  }
  return twin_.get();
}

bool Simulator::needs_hard_pulses(const tissue::Tissue& tissue) const {
  return waveform_table_.waveforms() > 0 && (tissue.has_second_pool() || tissue.has_bound_pool());
}

void Simulator::fold_twin_rows(const HardPulseTwin& twin, const std::vector<float>& from,
                               float* to) const {
  constexpr int columns = epg::sequence_gradient::count;
  std::fill(to, to + events() * columns, 0.0f);
  const auto& events = twin.simulator.description().events;
  for (std::size_t j = 0; j < events.size(); ++j) {
    const std::size_t i = std::size_t(twin.origin[j]);
    const sequence::Event& e = description_.events[i];
    const float* g = from.data() + j * columns;
    float* out = to + i * columns;
    if (e.kind != sequence::EventKind::waveform_pulse) {
      for (int c = 0; c < columns; ++c) out[c] += g[c];
      continue;
    }
    const sequence::Event& h = events[j];
    if (h.kind != sequence::EventKind::pulse) continue;  // the lead to the first sample
    // Each hard pulse's flip is its angle times the event's flip over the
    // waveform's; every sample's phase moves with the event's; the event's
    // duration is the last's tail.
    if (e.flip_rad != 0.0) {
      out[epg::sequence_gradient::flip] +=
          g[epg::sequence_gradient::flip] * float(h.flip_rad / e.flip_rad);
    }
    out[epg::sequence_gradient::phase] += g[epg::sequence_gradient::phase];
    if (j + 1 == events.size() || std::size_t(twin.origin[j + 1]) != i) {
      out[epg::sequence_gradient::duration] += g[epg::sequence_gradient::duration];
    }
  }
}

std::vector<float> Simulator::run(const tissue::Tissue& tissue) const {
  std::vector<float> out(std::size_t(tissue.voxels) * std::size_t(samples()) * 2);
  run_into<Kokkos::DefaultExecutionSpace>(tissue, out.data());
  return out;
}

}  // namespace larmor::simulate
