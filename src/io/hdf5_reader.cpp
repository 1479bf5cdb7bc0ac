#include "io/hdf5_file.hpp"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "io/hdf5_detail.hpp"

namespace larmor::io {

using namespace detail;

// ---------------------------------------------------------------------------- H5Reader

namespace {

// Reads the selected elements of `dataset` converted to `memory_type`. HDF5
// converts integer, floating point and enum (h5py bool: enum over int8, read
// as its integer codes) storage; out-of-range values clamp to the target range.
// `values` holds `count` elements.
template <typename T>
void read_numeric_into(T* values, hid_t dataset, hid_t file_space, hsize_t count, hid_t memory_type,
                       const std::string& file, const std::string& path) {
  if (count == 0) return;
  Handle stored = checked(H5Dget_type(dataset), H5Tclose, file, "H5Dget_type");
  const H5T_class_t type_class = H5Tget_class(stored.id());
  if (type_class != H5T_INTEGER && type_class != H5T_FLOAT && type_class != H5T_ENUM) {
    throw std::runtime_error(file + ": dataset " + quoted(path) + " is not numeric");
  }
  Handle memory_space =
      checked(H5Screate_simple(1, &count, nullptr), H5Sclose, file, "H5Screate_simple");
  check(H5Dread(dataset, memory_type, memory_space.id(), file_space, H5P_DEFAULT, values), file,
        "reading dataset " + quoted(path));
}

template <typename T>
std::vector<T> read_numeric(hid_t dataset, hid_t file_space, hsize_t count, hid_t memory_type,
                            const std::string& file, const std::string& path) {
  std::vector<T> values(count);
  read_numeric_into(values.data(), dataset, file_space, count, memory_type, file, path);
  return values;
}

Handle open_dataset(hid_t file, const std::string& file_name, const std::string& path) {
  if (!object_exists(file, file_name, path)) {
    throw std::runtime_error(file_name + ": dataset " + quoted(path) + " not found");
  }
  Handle object = checked(H5Oopen(file, path.c_str(), H5P_DEFAULT), H5Oclose, file_name,
                          "opening " + quoted(path));
  if (H5Iget_type(object.id()) != H5I_DATASET) {
    throw std::runtime_error(file_name + ": " + quoted(path) + " is not a dataset");
  }
  return object;
}

std::vector<std::uint64_t> dataset_dims(hid_t dataset, const std::string& file,
                                        const std::string& path, Handle* space_out = nullptr) {
  Handle space = checked(H5Dget_space(dataset), H5Sclose, file, "H5Dget_space of " + quoted(path));
  const int rank = H5Sget_simple_extent_ndims(space.id());
  if (rank < 0) fail(file, "reading the shape of " + quoted(path));
  std::vector<hsize_t> shape(static_cast<std::size_t>(rank));
  if (rank > 0 && H5Sget_simple_extent_dims(space.id(), shape.data(), nullptr) < 0) {
    fail(file, "reading the shape of " + quoted(path));
  }
  if (space_out) *space_out = std::move(space);
  return std::vector<std::uint64_t>(shape.begin(), shape.end());
}

hsize_t element_count(const std::vector<std::uint64_t>& dims) {
  hsize_t count = 1;
  for (std::uint64_t d : dims) count *= d;
  return count;
}

}  // namespace

H5Reader::H5Reader(std::string path, const parallel::Communicator& comm) : path_(std::move(path)) {
  silence_hdf5_errors();
  bool ok = true;
  std::string error;
  try {
    Handle access_plist = checked(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, path_, "H5Pcreate");
#if LARMOR_HDF5_PARALLEL
    check(H5Pset_fapl_mpio(access_plist.id(), comm.comm(), MPI_INFO_NULL), path_,
          "H5Pset_fapl_mpio");
#endif
    file_ = checked(H5Fopen(path_.c_str(), H5F_ACC_RDONLY, access_plist.id()), H5Fclose, path_,
                    "opening for reading");
  } catch (const std::exception& e) {
    ok = false;
    error = e.what();
    // The common causes in a user's words, the library's detail after them.
    std::error_code ec;
    if (!std::filesystem::exists(path_, ec)) {
      error = path_ + ": no such file";
    } else if (error.find("file signature not found") != std::string::npos) {
      error = path_ + ": is not an HDF5 file (" + error.substr(error.find('[')) + ")";
    } else if (error.find("truncated file") != std::string::npos) {
      error = path_ +
              ": is truncated: it ends before the size its header records, so it was cut "
              "short while written or copied (" +
              error.substr(error.find('[')) + ")";
    }
  }
  comm.throw_if_any_failed(ok, error);
}

bool H5Reader::exists(const std::string& object_path) const {
  return object_exists(file_.id(), path_, object_path);
}

std::vector<std::uint64_t> H5Reader::dims(const std::string& dataset_path) const {
  Handle dataset = open_dataset(file_.id(), path_, dataset_path);
  return dataset_dims(dataset.id(), path_, dataset_path);
}

std::vector<float> H5Reader::read_rows_float(const std::string& dataset_path,
                                             std::int64_t row_offset, std::int64_t rows) const {
  std::vector<float> values(
      std::size_t(row_elements(dataset_path) * std::max<std::int64_t>(rows, 0)));
  read_rows_float(dataset_path, row_offset, rows, values.data());
  return values;
}

std::int64_t H5Reader::row_elements(const std::string& dataset_path) const {
  const std::vector<std::uint64_t> shape = dims(dataset_path);
  if (shape.empty()) {
    throw std::runtime_error(path_ + ": dataset " + quoted(dataset_path) + " is scalar, no rows");
  }
  return std::int64_t(element_count(shape) / std::max<hsize_t>(shape[0], 1));
}

void H5Reader::read_rows_float(const std::string& dataset_path, std::int64_t row_offset,
                               std::int64_t rows, float* out) const {
  Handle dataset = open_dataset(file_.id(), path_, dataset_path);
  Handle space;
  const std::vector<std::uint64_t> shape = dataset_dims(dataset.id(), path_, dataset_path, &space);
  if (shape.empty()) {
    throw std::runtime_error(path_ + ": dataset " + quoted(dataset_path) + " is scalar, no rows");
  }
  const auto total = static_cast<std::int64_t>(shape[0]);
  if (row_offset < 0 || rows < 0 || row_offset > total - rows) {
    throw std::out_of_range(path_ + ": dataset " + quoted(dataset_path) + ": rows [" +
                            std::to_string(row_offset) + ", " + std::to_string(row_offset + rows) +
                            ") outside [0, " + std::to_string(total) + ")");
  }
  select_rows(space.id(), shape, row_offset, rows, path_, dataset_path);
  const hsize_t count = element_count(shape) / std::max<hsize_t>(shape[0], 1) * rows;
  read_numeric_into(out, dataset.id(), space.id(), count, H5T_NATIVE_FLOAT, path_, dataset_path);
}

std::vector<float> H5Reader::read_all_float(const std::string& dataset_path) const {
  Handle dataset = open_dataset(file_.id(), path_, dataset_path);
  Handle space;
  const auto shape = dataset_dims(dataset.id(), path_, dataset_path, &space);
  return read_numeric<float>(dataset.id(), space.id(), element_count(shape), H5T_NATIVE_FLOAT,
                             path_, dataset_path);
}

std::vector<std::uint8_t> H5Reader::read_all_u8(const std::string& dataset_path) const {
  Handle dataset = open_dataset(file_.id(), path_, dataset_path);
  Handle space;
  const auto shape = dataset_dims(dataset.id(), path_, dataset_path, &space);
  return read_numeric<std::uint8_t>(dataset.id(), space.id(), element_count(shape),
                                    H5T_NATIVE_UINT8, path_, dataset_path);
}

std::vector<std::int64_t> H5Reader::read_all_int64(const std::string& dataset_path) const {
  Handle dataset = open_dataset(file_.id(), path_, dataset_path);
  Handle space;
  const auto shape = dataset_dims(dataset.id(), path_, dataset_path, &space);
  return read_numeric<std::int64_t>(dataset.id(), space.id(), element_count(shape),
                                    H5T_NATIVE_INT64, path_, dataset_path);
}

namespace {

// Opens attribute `name` of `object` with its stored type; checks it is a scalar.
Handle open_attribute(hid_t file, const std::string& file_name, const std::string& object,
                      const std::string& name, Handle* type_out) {
  const std::string what = "attribute " + quoted(name) + " on " + quoted(object);
  if (!object_exists(file, file_name, object)) {
    throw std::runtime_error(file_name + ": object " + quoted(object) + " not found");
  }
  const htri_t present = H5Aexists_by_name(file, object.c_str(), name.c_str(), H5P_DEFAULT);
  if (present < 0) fail(file_name, "checking " + what);
  if (present == 0) throw std::runtime_error(file_name + ": " + what + " not found");
  Handle attribute =
      checked(H5Aopen_by_name(file, object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT),
              H5Aclose, file_name, "opening " + what);
  Handle space = checked(H5Aget_space(attribute.id()), H5Sclose, file_name, "H5Aget_space");
  if (H5Sget_simple_extent_npoints(space.id()) != 1) {
    throw std::runtime_error(file_name + ": " + what + " is not a single value");
  }
  *type_out = checked(H5Aget_type(attribute.id()), H5Tclose, file_name, "H5Aget_type");
  return attribute;
}

}  // namespace

bool H5Reader::has_attribute(const std::string& object_path, const std::string& name) const {
  if (!exists(object_path)) return false;
  const htri_t present =
      H5Aexists_by_name(file_.id(), object_path.c_str(), name.c_str(), H5P_DEFAULT);
  if (present < 0) fail(path_, "checking attribute " + quoted(name) + " on " + quoted(object_path));
  return present > 0;
}

double H5Reader::attribute_double(const std::string& object_path, const std::string& name) const {
  Handle type;
  Handle attribute = open_attribute(file_.id(), path_, object_path, name, &type);
  const H5T_class_t type_class = H5Tget_class(type.id());
  if (type_class != H5T_INTEGER && type_class != H5T_FLOAT) {
    throw std::runtime_error(path_ + ": attribute " + quoted(name) + " on " + quoted(object_path) +
                             " is not numeric");
  }
  double value = 0.0;
  check(H5Aread(attribute.id(), H5T_NATIVE_DOUBLE, &value), path_,
        "reading attribute " + quoted(name));
  return value;
}

std::int64_t H5Reader::attribute_int64(const std::string& object_path,
                                       const std::string& name) const {
  Handle type;
  Handle attribute = open_attribute(file_.id(), path_, object_path, name, &type);
  if (H5Tget_class(type.id()) != H5T_INTEGER) {
    throw std::runtime_error(path_ + ": attribute " + quoted(name) + " on " + quoted(object_path) +
                             " is not an integer");
  }
  std::int64_t value = 0;
  check(H5Aread(attribute.id(), H5T_NATIVE_INT64, &value), path_,
        "reading attribute " + quoted(name));
  return value;
}

std::string H5Reader::attribute_string(const std::string& object_path,
                                       const std::string& name) const {
  Handle type;
  Handle attribute = open_attribute(file_.id(), path_, object_path, name, &type);
  const std::string what = "attribute " + quoted(name) + " on " + quoted(object_path);
  if (H5Tget_class(type.id()) != H5T_STRING) {
    throw std::runtime_error(path_ + ": " + what + " is not a string");
  }
  Handle memory_type = checked(H5Tcopy(H5T_C_S1), H5Tclose, path_, "H5Tcopy");
  check(H5Tset_cset(memory_type.id(), H5Tget_cset(type.id())), path_, "H5Tset_cset");
  if (H5Tis_variable_str(type.id()) > 0) {
    check(H5Tset_size(memory_type.id(), H5T_VARIABLE), path_, "H5Tset_size");
    char* text = nullptr;
    check(H5Aread(attribute.id(), memory_type.id(), &text), path_, "reading " + what);
    std::string value = text ? text : "";
    H5free_memory(text);
    return value;
  }
  const std::size_t size = H5Tget_size(type.id());
  check(H5Tset_size(memory_type.id(), size), path_, "H5Tset_size");
  check(H5Tset_strpad(memory_type.id(), H5Tget_strpad(type.id())), path_, "H5Tset_strpad");
  std::string value(size, '\0');
  check(H5Aread(attribute.id(), memory_type.id(), value.data()), path_, "reading " + what);
  value.resize(std::min(value.find('\0'), value.size()));  // NUL-terminated or NUL-padded
  if (H5Tget_strpad(type.id()) == H5T_STR_SPACEPAD) {
    value.erase(value.find_last_not_of(' ') + 1);
  }
  return value;
}

}  // namespace larmor::io
