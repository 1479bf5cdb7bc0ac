#include "app/signal_file.hpp"

#include <filesystem>
#include <system_error>

#include "io/hdf5_file.hpp"
#include "larmor_config.hpp"

namespace larmor::app {

namespace {
// Sequence parameters carry their unit as a name suffix.
std::string units_of(const std::string& name) {
  auto ends_with = [&](const char* s) {
    const std::string suffix(s);
    return name.size() >= suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with("_s")) return "s";
  if (ends_with("_deg")) return "degree";
  if (ends_with("_hz")) return "Hz";
  return "1";
}
}  // namespace

void write_signal_file(const std::string& path, const parallel::Communicator& comm,
                       const SignalLayout& layout, const LocalVoxels& voxels,
                       const std::vector<float>& local_signals, const RunInfo& info) {
  io::H5Writer out(path, comm);  // (it makes the result's folder)
  const auto total = static_cast<std::uint64_t>(voxels.total);
  const auto samples = static_cast<std::uint64_t>(layout.sample_times_s.size());
  const std::int64_t offset = voxels.range.begin;
  const std::int64_t rows = voxels.range.size();

  out.write_rows("/signals", {total, samples, 2}, offset, local_signals.data(), rows);
  if (info.local_mz != nullptr) {
    out.write_rows("/mz", {total, samples}, offset, info.local_mz->data(), rows);
  }
  out.write_rows("/voxel_index", {total}, offset, voxels.voxel_index.data(), rows);
  for (tissue::Property p : tissue::all_properties) {
    const tissue::PropertyValues& v = voxels.tissue[p];
    const float to_deck = static_cast<float>(1.0 / tissue::to_si(p));
    std::vector<float> deck_units(static_cast<std::size_t>(rows));
    for (std::int64_t i = 0; i < rows; ++i) deck_units[std::size_t(i)] = v.at(i) * to_deck;
    const std::string name = std::string("/tissue/") + tissue::deck_name(p);
    out.write_rows(name, {total}, offset, deck_units.data(), rows);
  }
  out.write_whole("/sequence/sample_times_s", {samples}, layout.sample_times_s);
  out.write_whole("/sequence/echo_centre", {samples}, layout.echo_centre);
  std::vector<std::int64_t> shape(voxels.volume_shape.begin(), voxels.volume_shape.end());
  out.write_whole("/volume_shape", {std::uint64_t(shape.size())}, shape);

  if (info.steady_repetitions != nullptr) {
    out.write_rows("/steady_state/repetitions", {total}, offset, info.steady_repetitions->data(),
                   rows);
    out.set_attribute("/steady_state", "tolerance", info.steady_tolerance);
  }
  out.set_attribute("/", "larmor_version", std::string(LARMOR_VERSION));
  out.set_attribute("/", "builder", info.builder);
  out.set_attribute("/", "deck", info.deck_path);
  out.set_attribute("/", "backend", info.backend);
  for (const auto& [name, value] : layout.counts) out.set_attribute("/", name, value);
  for (const auto& [name, value] : layout.texts) out.set_attribute("/", name, value);
  out.set_attribute("/", "samples", std::int64_t(samples));
  for (const auto& [name, value] : layout.parameters) {
    out.set_attribute("/sequence", name, value, units_of(name));
  }
  out.commit();
}

void write_signal_file(const std::string& path, const parallel::Communicator& comm,
                       const simulate::Simulator& simulator, const LocalVoxels& voxels,
                       const std::vector<float>& local_signals, const RunInfo& info) {
  SignalLayout layout;
  const auto& packed = simulator.packed();
  layout.sample_times_s = packed.sample_times_s;
  layout.echo_centre = packed.sample_is_echo_centre;
  if (info.samples != nullptr) {
    layout.sample_times_s.clear();
    layout.echo_centre.clear();
    for (int n : *info.samples) {
      layout.sample_times_s.push_back(packed.sample_times_s[std::size_t(n)]);
      layout.echo_centre.push_back(packed.sample_is_echo_centre[std::size_t(n)]);
    }
  }
  layout.counts = {{"max_order", simulator.max_order()},
                   {"orders_reaching_a_sample", simulator.kernel_states()},
                   {"events", std::int64_t(simulator.events())}};
  layout.texts = {{"engine", "epg"}};
  layout.parameters.insert(simulator.description().parameters.begin(),
                           simulator.description().parameters.end());
  write_signal_file(path, comm, layout, voxels, local_signals, info);
}

}  // namespace larmor::app
