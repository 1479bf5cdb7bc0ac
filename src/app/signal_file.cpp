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
                       const simulate::Simulator& simulator, const LocalVoxels& voxels,
                       const std::vector<float>& local_signals, const RunInfo& info) {
  io::H5Writer out(path, comm);  // (it makes the result's folder)
  const auto total = static_cast<std::uint64_t>(voxels.total);
  const auto samples = static_cast<std::uint64_t>(
      info.samples != nullptr ? int(info.samples->size()) : simulator.samples());
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
  const auto& packed = simulator.packed();
  std::vector<double> times = packed.sample_times_s;
  std::vector<std::uint8_t> echo = packed.sample_is_echo_centre;
  if (info.samples != nullptr) {
    times.clear();
    echo.clear();
    for (int n : *info.samples) {
      times.push_back(packed.sample_times_s[std::size_t(n)]);
      echo.push_back(packed.sample_is_echo_centre[std::size_t(n)]);
    }
  }
  out.write_whole("/sequence/sample_times_s", {samples}, times);
  out.write_whole("/sequence/echo_centre", {samples}, echo);
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
  out.set_attribute("/", "max_order", std::int64_t(simulator.max_order()));
  out.set_attribute("/", "orders_reaching_a_sample", std::int64_t(simulator.kernel_states()));
  out.set_attribute("/", "events", std::int64_t(simulator.events()));
  out.set_attribute("/", "samples", std::int64_t(samples));
  for (const auto& [name, value] : simulator.description().parameters) {
    out.set_attribute("/sequence", name, value, units_of(name));
  }
  out.commit();
}

}  // namespace larmor::app
