#include "app/tissue_source.hpp"

#include <cmath>

#include <algorithm>
#include <limits>
#include <optional>
#include <stdexcept>

#include "io/hdf5_file.hpp"
#include "io/nifti_file.hpp"

namespace larmor::app {

namespace {

LocalVoxels load_grid(const TissueSpec& spec, const parallel::Communicator& comm,
                      const std::string& deck_path) {
  using tissue::Property;
  LocalVoxels out;
  // Axes in a fixed order; properties not given keep their identity value.
  std::vector<Property> axes;
  std::int64_t total = 1;
  for (Property p : tissue::all_properties) {
    auto it = spec.values.find(p);
    if (it == spec.values.end()) continue;
    axes.push_back(p);
    out.volume_shape.push_back(it->second.size());
    if (total > std::numeric_limits<std::int64_t>::max() / std::int64_t(it->second.size())) {
      throw std::invalid_argument(deck_path + ": [tissue] the grid has too many voxels");
    }
    total *= std::int64_t(it->second.size());
  }
  out.total = total;
  out.range = parallel::partition_evenly(total, comm.size(), comm.rank());
  const std::int64_t n = out.range.size();
  out.tissue.voxels = n;
  out.voxel_index.resize(std::size_t(n));
  for (std::int64_t i = 0; i < n; ++i) out.voxel_index[std::size_t(i)] = out.range.begin + i;
  // Strides of the grid, last axis fastest.
  std::vector<std::int64_t> stride(axes.size(), 1);
  for (std::size_t a = axes.size(); a-- > 1;) {
    stride[a - 1] = stride[a] * std::int64_t(out.volume_shape[a]);
  }
  for (std::size_t a = 0; a < axes.size(); ++a) {
    const Property p = axes[a];
    const std::vector<double>& values = spec.values.at(p);
    tissue::PropertyValues& dst = out.tissue[p];
    const double si = tissue::to_si(p);
    if (values.size() == 1) {
      dst.uniform = static_cast<float>(values[0] * si);
      continue;
    }
    dst.map.resize(std::size_t(n));
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t g = out.range.begin + i;
      const std::int64_t k = (g / stride[a]) % std::int64_t(values.size());
      dst.map[std::size_t(i)] = static_cast<float>(values[std::size_t(k)] * si);
    }
  }
  return out;
}

// The maps' volumes: the datasets of one HDF5 file, or NIfTI files (each
// rank reads whole files, as nifti2 does). `name` says where a map came from.
class MapSource {
 public:
  MapSource(const TissueSpec& spec, const parallel::Communicator& comm) : spec_(spec) {
    if (!spec.nifti) h5_.emplace(spec.maps_path, comm);
  }
  std::vector<std::uint64_t> dims(const std::string& map) const {
    if (h5_) return h5_->dims(map);
    const auto shape = io::nifti_volume_shape(map);
    return {std::uint64_t(shape[0]), std::uint64_t(shape[1]), std::uint64_t(shape[2])};
  }
  std::vector<float> read(const std::string& map, const std::vector<std::uint64_t>& shape) const {
    if (h5_) return h5_->read_all_float(map);
    return io::read_nifti_volume(
        map, {std::int64_t(shape[0]), std::int64_t(shape[1]), std::int64_t(shape[2])});
  }
  std::string name(const std::string& map) const {
    return h5_ ? spec_.maps_path + ": '" + map + "'" : map;
  }

 private:
  const TissueSpec& spec_;
  std::optional<io::H5Reader> h5_;
};

LocalVoxels load_maps(const TissueSpec& spec, const parallel::Communicator& comm) {
  using tissue::Property;
  LocalVoxels out;
  const MapSource file(spec, comm);
  // The volume's shape comes from the mask, or from the first map.
  std::string shape_from = spec.mask_dataset;
  if (shape_from.empty()) {
    if (spec.map_datasets.empty()) {
      throw std::invalid_argument(
          (spec.nifti ? std::string("[tissue]") : spec.maps_path + ": [tissue] maps") +
          " needs a mask or at least one map");
    }
    shape_from = spec.map_datasets.begin()->second;
  }
  out.volume_shape = file.dims(shape_from);
  std::uint64_t volume = 1;
  for (auto d : out.volume_shape) volume *= d;

  std::vector<std::int64_t> selected;
  if (!spec.mask_dataset.empty()) {
    // Read as numbers, not bytes: a float mask of 0.5 is inside (nonzero),
    // where a conversion to uint8 would have truncated it to 0.
    const std::vector<float> mask = file.read(spec.mask_dataset, out.volume_shape);
    const std::string mask_name =
        spec.nifti ? spec.mask_dataset : spec.maps_path + ": mask '" + spec.mask_dataset + "'";
    std::vector<std::uint8_t> inside(mask.size());
    for (std::size_t i = 0; i < mask.size(); ++i) {
      if (!std::isfinite(mask[i])) {
        throw std::invalid_argument(mask_name + " is not finite at voxel " + std::to_string(i) +
                                    " (linear index)");
      }
      inside[i] = mask[i] != 0.0f ? 1 : 0;
    }
    selected = parallel::masked_indices(inside);
    if (selected.empty()) {
      throw std::invalid_argument(mask_name +
                                  " selects no voxel (every value is 0): nothing to simulate");
    }
  } else {
    selected.resize(volume);
    for (std::uint64_t i = 0; i < volume; ++i) selected[i] = std::int64_t(i);
  }
  out.total = std::int64_t(selected.size());
  out.range = parallel::partition_evenly(out.total, comm.size(), comm.rank());
  out.voxel_index.assign(selected.begin() + out.range.begin, selected.begin() + out.range.end);
  out.tissue.voxels = out.range.size();

  for (const auto& [p, dataset] : spec.map_datasets) {
    if (file.dims(dataset) != out.volume_shape) {
      throw std::invalid_argument(file.name(dataset) + " (" + tissue::deck_name(p) +
                                  ") does not have the shape of " + file.name(shape_from));
    }
    const std::vector<float> all = file.read(dataset, out.volume_shape);
    const float si = static_cast<float>(tissue::to_si(p));
    tissue::PropertyValues& dst = out.tissue[p];
    dst.map.resize(out.voxel_index.size());
    for (std::size_t i = 0; i < out.voxel_index.size(); ++i) {
      dst.map[i] = all[std::size_t(out.voxel_index[i])] * si;
    }
  }
  for (const auto& [p, values] : spec.values) {
    if (values.size() != 1) {
      throw std::invalid_argument(spec.maps_path + ": [tissue] " + tissue::deck_name(p) +
                                  " must be a single value or a dataset name in maps mode");
    }
    out.tissue[p].uniform = static_cast<float>(values[0] * tissue::to_si(p));
  }
  return out;
}

// The transmit array's channel fields of the local voxels.
void load_transmit(const TissueSpec& spec, const parallel::Communicator& comm, LocalVoxels& out) {
  auto& t = out.tissue;
  if (!spec.transmit_uniform.empty()) {
    t.transmit_channels = int(spec.transmit_uniform.size());
    t.transmit.reserve(std::size_t(t.voxels) * spec.transmit_uniform.size());
    for (std::int64_t v = 0; v < t.voxels; ++v) {
      for (const auto& b : spec.transmit_uniform)
        t.transmit.emplace_back(float(b.real()), float(b.imag()));
    }
    return;
  }
  if (spec.transmit_dataset.empty()) return;
  io::H5Reader file(spec.maps_path, comm);
  const auto dims = file.dims(spec.transmit_dataset);
  const auto& volume = out.volume_shape;
  const bool shaped = dims.size() == volume.size() + 2 && dims.back() == 2 &&
                      std::equal(volume.begin(), volume.end(), dims.begin());
  if (!shaped) {
    throw std::invalid_argument(spec.maps_path + ": transmit dataset '" + spec.transmit_dataset +
                                "' must have the volume's shape followed by [channels, 2]");
  }
  const std::size_t channels = dims[dims.size() - 2];
  const std::vector<float> all = file.read_all_float(spec.transmit_dataset);
  t.transmit_channels = int(channels);
  t.transmit.resize(out.voxel_index.size() * channels);
  for (std::size_t i = 0; i < out.voxel_index.size(); ++i) {
    for (std::size_t c = 0; c < channels; ++c) {
      const std::size_t at = (std::size_t(out.voxel_index[i]) * channels + c) * 2;
      t.transmit[i * channels + c] = {all[at], all[at + 1]};
    }
  }
}

}  // namespace

std::int64_t grid_voxel_count(const TissueSpec& spec, const std::string& deck_path) {
  if (spec.mode != TissueSpec::Mode::grid) return -1;
  std::int64_t total = 1;
  for (const auto& [p, values] : spec.values) {
    if (total > std::numeric_limits<std::int64_t>::max() / std::int64_t(values.size())) {
      throw std::invalid_argument(deck_path +
                                  ": [tissue] the grid has more voxels than an int64 "
                                  "counts (the product of its value counts)");
    }
    total *= std::int64_t(values.size());
  }
  return total;
}

LocalVoxels load_local_tissue(const TissueSpec& spec, const parallel::Communicator& comm,
                              const std::string& deck_path) {
  LocalVoxels out = spec.mode == TissueSpec::Mode::grid ? load_grid(spec, comm, deck_path)
                                                        : load_maps(spec, comm);
  load_transmit(spec, comm, out);
  out.tissue.bound_t2_s = spec.bound_t2_us * 1e-6;
  out.tissue.bound_lineshape = spec.bound_lineshape;
  const std::string source = spec.mode == TissueSpec::Mode::grid ? deck_path + ": [tissue]"
                             : spec.nifti ? deck_path + ": [tissue]'s NIfTI maps"
                                          : spec.maps_path;
  // Validation is local; agree on it so no rank walks on alone.
  std::string error;
  try {
    out.tissue.validate(source, spec.mode == TissueSpec::Mode::maps ? &out.voxel_index : nullptr);
  } catch (const std::exception& e) {
    error = e.what();
  }
  comm.throw_if_any_failed(error.empty(), error);
  return out;
}

}  // namespace larmor::app
