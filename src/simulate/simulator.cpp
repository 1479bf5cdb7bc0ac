#include "simulate/simulator.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include <Kokkos_Core.hpp>

namespace larmor::simulate {

Simulator::Simulator(const sequence::Description& description, const Options& options)
    : description_(description),
      packed_(sequence::pack(description)),
      slice_table_(sequence::build_slice_profile_table(description)),
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

std::int64_t Simulator::chunk_for(std::int64_t voxels) const {
  const std::int64_t per_voxel = std::max<std::int64_t>(1, std::int64_t(samples()) * 2 * 4);
  std::int64_t chunk = options_.chunk_voxels;
  if (chunk <= 0) {
    chunk = (std::int64_t(256) << 20) / per_voxel;
    // Large runs go in at least 16 launches so progress can be reported;
    // 32768 voxels per launch still fill a GPU (docs/performance.md, "Throughput against voxel
    // count").
    constexpr std::int64_t min_launches = 16, fills_a_gpu = 32768;
    if (voxels >= min_launches * fills_a_gpu) {
      chunk = std::min(chunk, (voxels + min_launches - 1) / min_launches);
    }
  }
  // The kernels index voxels with 32-bit integers.
  chunk = std::min<std::int64_t>(chunk, std::numeric_limits<std::int32_t>::max());
  return std::max<std::int64_t>(1, std::min(chunk, voxels));
}

// Tissue voxels per launch when each runs once per slice position: the
// forward budget shared among the positions, within the kernels' 32-bit
// voxel index.
std::int64_t Simulator::slice_chunk(std::int64_t voxels, int positions) const {
  if (positions <= 1) return chunk_for(voxels);
  const std::int64_t limit = std::numeric_limits<std::int32_t>::max() / positions;
  return std::max<std::int64_t>(1, std::min(chunk_for(voxels * positions) / positions, limit));
}

std::vector<float> Simulator::run(const tissue::Tissue& tissue) const {
  std::vector<float> out(std::size_t(tissue.voxels) * std::size_t(samples()) * 2);
  run_into<Kokkos::DefaultExecutionSpace>(tissue, out.data());
  return out;
}

}  // namespace larmor::simulate
