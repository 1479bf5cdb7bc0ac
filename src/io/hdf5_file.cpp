#include "io/hdf5_file.hpp"

#include "io/temporary_files.hpp"

#include "io/hdf5_detail.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace larmor::io {
using namespace detail;

// ---------------------------------------------------------------------------- Handle

Handle::Handle(Handle&& other) noexcept
    : id_(std::exchange(other.id_, -1)), closer_(other.closer_) {}

Handle& Handle::operator=(Handle&& other) noexcept {
  if (this != &other) {
    close();
    id_ = std::exchange(other.id_, -1);
    closer_ = other.closer_;
  }
  return *this;
}

herr_t Handle::close() noexcept {
  if (id_ < 0 || closer_ == nullptr) return 0;
  const herr_t status = closer_(id_);
  id_ = -1;
  return status;
}

// ---------------------------------------------------------------------------- H5Writer

enum class H5Writer::ElementType { f32, f64, i64, u8 };

struct H5Writer::AttributeValue {
  enum class Kind { f64, i64, text } kind;
  double real = 0.0;
  std::int64_t integer = 0;
  std::string text;
  std::string units;
};

namespace {

struct TypeInfo {
  hid_t memory;
  hid_t file;
  std::size_t bytes;
};

TypeInfo type_info(int type_index) {
  switch (type_index) {
    case 0:
      return {H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, sizeof(float)};
    case 1:
      return {H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, sizeof(double)};
    case 2:
      return {H5T_NATIVE_INT64, H5T_STD_I64LE, sizeof(std::int64_t)};
    default:
      return {H5T_NATIVE_UINT8, H5T_STD_U8LE, sizeof(std::uint8_t)};
  }
}

Handle create_output_file(const std::string& temp_path, const parallel::Communicator& comm,
                          const std::string& final_path) {
  Handle create_plist = untimed_create_plist(H5P_FILE_CREATE, final_path);
  Handle access_plist = checked(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, final_path, "H5Pcreate");
#if LARMOR_HDF5_PARALLEL
  check(H5Pset_fapl_mpio(access_plist.id(), comm.comm(), MPI_INFO_NULL), final_path,
        "H5Pset_fapl_mpio");
#else
  (void)comm;
#endif
  return checked(H5Fcreate(temp_path.c_str(), H5F_ACC_TRUNC, create_plist.id(), access_plist.id()),
                 H5Fclose, final_path, "creating temporary file " + quoted(temp_path));
}

Handle create_dataset(hid_t file, const std::string& file_name, const std::string& path,
                      hid_t file_type, const std::vector<std::uint64_t>& dims) {
  const std::vector<std::string> parts = split_path(path);
  ensure_groups(file, file_name, parts, parts.size() - 1);
  const std::vector<hsize_t> shape(dims.begin(), dims.end());
  Handle space = checked(H5Screate_simple(static_cast<int>(shape.size()), shape.data(), nullptr),
                         H5Sclose, file_name, "creating dataspace for " + quoted(path));
  Handle plist = untimed_create_plist(H5P_DATASET_CREATE, file_name);
  check(H5Pset_layout(plist.id(), H5D_CONTIGUOUS), file_name, "H5Pset_layout");
  // Every row is written exactly once (the tiling is checked), so skip the fill pass.
  check(H5Pset_fill_time(plist.id(), H5D_FILL_TIME_NEVER), file_name, "H5Pset_fill_time");
  return checked(H5Dcreate2(file, join_path(parts, parts.size()).c_str(), file_type, space.id(),
                            H5P_DEFAULT, plist.id(), H5P_DEFAULT),
                 H5Dclose, file_name, "creating dataset " + quoted(path));
}

}  // namespace

H5Writer::H5Writer(std::string final_path, const parallel::Communicator& comm)
    : final_path_(std::move(final_path)), comm_(comm) {
  silence_hdf5_errors();
  if (final_path_.empty()) throw std::invalid_argument("H5Writer: empty output path");
  // The output's folder is made on demand (by rank 0, agreed by all), as
  // check_output_path allowed; rank 0's pid names the temporary file, which
  // every rank must use.
  std::string folder_error;
  if (comm_.is_root()) folder_error = make_output_folder(final_path_);
  comm_.throw_if_any_failed(folder_error.empty(), folder_error);
  if (comm_.is_root()) {
    temp_path_ = final_path_ + ".tmp-" + std::to_string(::getpid());
    for (const std::string& stale : remove_stale_temporaries(final_path_)) {
      std::fprintf(stderr, "larmor: removed %s, left by an interrupted run\n", stale.c_str());
    }
  }
  comm_.broadcast(temp_path_);
  // Every rank: whichever is interrupted removes it (an unlinked file stays
  // open for the others, which are ended too).
  register_temporary(temp_path_);
  bool ok = true;
  std::string error;
  try {
    if (parallel_hdf5_enabled() || comm_.is_root()) {
      file_ = create_output_file(temp_path_, comm_, final_path_);
    }
  } catch (const std::exception& e) {
    ok = false;
    error = e.what();
  }
  const parallel::Consensus created = comm_.all_ok(ok, error);
  if (!created.ok) {
    discard();
    throw std::runtime_error("rank " + std::to_string(created.first_failed_rank) + ": " +
                             created.message);
  }
}

H5Writer::~H5Writer() {
  if (!committed_) discard();
}

void H5Writer::discard() noexcept {
  file_.close();  // collective in the parallel build, like every MPI-IO close
  // Rank 0 created the name, rank 0 removes it (another rank's pending close
  // does not matter: unlinking an open file is fine on POSIX filesystems).
  if (comm_.is_root()) std::remove(temp_path_.c_str());
  release_temporary(temp_path_);
}

void H5Writer::require_usable(const char* operation) const {
  // committed_ and failed_ change only after agreement, so all ranks throw alike.
  if (committed_) throw std::logic_error(final_path_ + ": " + operation + " after commit()");
  if (failed_) {
    throw std::logic_error(final_path_ + ": " + operation + " after an earlier HDF5 failure");
  }
}

template <typename Work>
void H5Writer::run_agreed(Work&& work) {
  bool ok = true;
  std::string error;
  if (file_.valid()) {
    try {
      work();
    } catch (const std::exception& e) {
      ok = false;
      error = e.what();
    }
  }
  const parallel::Consensus outcome = comm_.all_ok(ok, error);
  if (!outcome.ok) {
    failed_ = true;
    throw std::runtime_error("rank " + std::to_string(outcome.first_failed_rank) + ": " +
                             outcome.message);
  }
}

void H5Writer::write_rows_typed(const std::string& path, const std::vector<std::uint64_t>& dims,
                                std::int64_t row_offset, const void* data, std::int64_t local_rows,
                                ElementType type) {
  require_usable("write_rows");
  const TypeInfo info = type_info(static_cast<int>(type));
  const std::string what = final_path_ + ": dataset " + quoted(path) + ": ";

  // 1. Shape and type must agree, or parallel HDF5 metadata would diverge.
  Fingerprint shape;
  shape.add(path).add_value(static_cast<int>(type)).add_value(dims.size());
  for (std::uint64_t d : dims) shape.add_value(d);
  if (!comm_.all_equal(shape.value())) {
    throw std::runtime_error(what + "ranks disagree on path, element type or shape");
  }
  if (split_path(path).empty()) throw std::invalid_argument(what + "not a dataset path");
  if (dims.empty()) throw std::invalid_argument(what + "needs at least one (row) dimension");
  std::uint64_t row_elements = 1;
  for (std::size_t i = 1; i < dims.size(); ++i) {
    if (dims[i] != 0 && row_elements > UINT64_MAX / dims[i]) {
      throw std::invalid_argument(what + "shape overflows");
    }
    row_elements *= dims[i];
  }
  const auto total_rows = static_cast<std::int64_t>(std::min<std::uint64_t>(dims[0], INT64_MAX));

  // 2. This rank's arguments.
  std::string local_error;
  if (row_offset < 0 || local_rows < 0 || row_offset > total_rows - local_rows) {
    local_error = what + "rows [" + std::to_string(row_offset) + ", " +
                  std::to_string(row_offset + local_rows) + ") outside [0, " +
                  std::to_string(total_rows) + ")";
  } else if (data == nullptr && local_rows > 0 && row_elements > 0) {
    local_error = what + "null data for " + std::to_string(local_rows) + " rows";
  }
  comm_.throw_if_any_failed(local_error.empty(), local_error);

  // 3. The row blocks must tile [0, rows) exactly: no gaps (no fill), no overlaps.
  const std::vector<std::int64_t> offsets = comm_.all_gather(row_offset);
  const std::vector<std::int64_t> counts = comm_.all_gather(local_rows);
  std::vector<std::pair<std::int64_t, std::int64_t>> blocks;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    if (counts[r] > 0) blocks.emplace_back(offsets[r], counts[r]);
  }
  std::sort(blocks.begin(), blocks.end());
  std::int64_t covered = 0;
  bool tiled = true;
  for (const auto& [offset, rows] : blocks) {
    if (offset != covered) {
      tiled = false;
      break;
    }
    covered += rows;
  }
  if (!tiled || covered != total_rows) {
    throw std::runtime_error(what + "the ranks' row blocks do not tile [0, " +
                             std::to_string(total_rows) + ") (gap or overlap at row " +
                             std::to_string(covered) + ")");
  }

  // 4. The write itself. A dataset of no element has no storage to write to
  // (HDF5 reports an address overflow): it is created, and that is all.
  if (total_rows == 0 || row_elements == 0) {
    run_agreed([&] { create_dataset(file_.id(), final_path_, path, info.file, dims); });
    return;
  }
#if LARMOR_HDF5_PARALLEL
  run_agreed([&] {
    Handle dataset = create_dataset(file_.id(), final_path_, path, info.file, dims);
    Handle file_space = checked(H5Dget_space(dataset.id()), H5Sclose, final_path_, "H5Dget_space");
    select_rows(file_space.id(), dims, row_offset, local_rows, final_path_, path);
    // The local block is contiguous in memory; a rank without elements selects
    // nothing but still joins the collective write.
    const hsize_t local_elements = static_cast<hsize_t>(local_rows) * row_elements;
    Handle memory_space = checked(H5Screate_simple(1, &local_elements, nullptr), H5Sclose,
                                  final_path_, "H5Screate_simple");
    if (local_elements == 0) {
      check(H5Sselect_none(memory_space.id()), final_path_, "H5Sselect_none");
    }
    Handle transfer = checked(H5Pcreate(H5P_DATASET_XFER), H5Pclose, final_path_, "H5Pcreate");
    check(H5Pset_dxpl_mpio(transfer.id(), H5FD_MPIO_COLLECTIVE), final_path_, "H5Pset_dxpl_mpio");
    static const unsigned char no_data = 0;
    check(H5Dwrite(dataset.id(), info.memory, memory_space.id(), file_space.id(), transfer.id(),
                   data != nullptr ? data : &no_data),
          final_path_, "writing " + quoted(path));
  });
#else
  // Serial HDF5: rank 0 owns the file, so the rows travel to it first.
  const parallel::GatheredRows gathered =
      comm_.gather_rows(data, local_rows, static_cast<std::size_t>(row_elements) * info.bytes);
  run_agreed([&] {
    Handle dataset = create_dataset(file_.id(), final_path_, path, info.file, dims);
    Handle file_space = checked(H5Dget_space(dataset.id()), H5Sclose, final_path_, "H5Dget_space");
    std::size_t byte_offset = 0;
    for (std::size_t r = 0; r < gathered.rows_per_rank.size(); ++r) {
      const std::int64_t rows = gathered.rows_per_rank[r];
      if (rows == 0 || row_elements == 0) continue;
      select_rows(file_space.id(), dims, offsets[r], rows, final_path_, path);
      const hsize_t elements = static_cast<hsize_t>(rows) * row_elements;
      Handle memory_space = checked(H5Screate_simple(1, &elements, nullptr), H5Sclose, final_path_,
                                    "H5Screate_simple");
      check(H5Dwrite(dataset.id(), info.memory, memory_space.id(), file_space.id(), H5P_DEFAULT,
                     gathered.bytes.data() + byte_offset),
            final_path_, "writing " + quoted(path) + " rows of rank " + std::to_string(r));
      byte_offset += static_cast<std::size_t>(elements) * info.bytes;
    }
  });
#endif
}

void H5Writer::write_rows(const std::string& path, std::vector<std::uint64_t> global_dims,
                          std::int64_t row_offset, const float* data, std::int64_t local_rows) {
  write_rows_typed(path, global_dims, row_offset, data, local_rows, ElementType::f32);
}
void H5Writer::write_rows(const std::string& path, std::vector<std::uint64_t> global_dims,
                          std::int64_t row_offset, const double* data, std::int64_t local_rows) {
  write_rows_typed(path, global_dims, row_offset, data, local_rows, ElementType::f64);
}
void H5Writer::write_rows(const std::string& path, std::vector<std::uint64_t> global_dims,
                          std::int64_t row_offset, const std::int64_t* data,
                          std::int64_t local_rows) {
  write_rows_typed(path, global_dims, row_offset, data, local_rows, ElementType::i64);
}
void H5Writer::write_rows(const std::string& path, std::vector<std::uint64_t> global_dims,
                          std::int64_t row_offset, const std::uint8_t* data,
                          std::int64_t local_rows) {
  write_rows_typed(path, global_dims, row_offset, data, local_rows, ElementType::u8);
}

void H5Writer::write_whole_typed(const std::string& path, const std::vector<std::uint64_t>& dims,
                                 const void* data, std::size_t element_count, ElementType type) {
  std::uint64_t expected = 1;
  for (std::uint64_t d : dims) expected *= d;
  std::string error;
  if (dims.empty()) {
    error = final_path_ + ": dataset " + quoted(path) + ": needs at least one dimension";
  } else if (expected != element_count) {
    error = final_path_ + ": dataset " + quoted(path) + ": " + std::to_string(element_count) +
            " values for a shape of " + std::to_string(expected);
  }
  comm_.throw_if_any_failed(error.empty(), error);
  // Rank 0 supplies every row; the others take part with none.
  const auto rows = comm_.is_root() ? static_cast<std::int64_t>(dims[0]) : 0;
  write_rows_typed(path, dims, 0, data, rows, type);
}

void H5Writer::write_whole(const std::string& path, std::vector<std::uint64_t> dims,
                           const std::vector<float>& data) {
  write_whole_typed(path, dims, data.data(), data.size(), ElementType::f32);
}
void H5Writer::write_whole(const std::string& path, std::vector<std::uint64_t> dims,
                           const std::vector<double>& data) {
  write_whole_typed(path, dims, data.data(), data.size(), ElementType::f64);
}
void H5Writer::write_whole(const std::string& path, std::vector<std::uint64_t> dims,
                           const std::vector<std::int64_t>& data) {
  write_whole_typed(path, dims, data.data(), data.size(), ElementType::i64);
}
void H5Writer::write_whole(const std::string& path, std::vector<std::uint64_t> dims,
                           const std::vector<std::uint8_t>& data) {
  write_whole_typed(path, dims, data.data(), data.size(), ElementType::u8);
}

namespace {

// Creates (replacing any previous) scalar attribute `name` on `object`.
void write_scalar_attribute(hid_t object, const std::string& file, const std::string& where,
                            const std::string& name, hid_t file_type, hid_t memory_type,
                            const void* value) {
  const std::string what = "attribute " + quoted(name) + " on " + quoted(where);
  const htri_t present = H5Aexists(object, name.c_str());
  if (present < 0) fail(file, "checking " + what);
  if (present > 0) check(H5Adelete(object, name.c_str()), file, "replacing " + what);
  Handle space = checked(H5Screate(H5S_SCALAR), H5Sclose, file, "H5Screate");
  Handle attribute =
      checked(H5Acreate2(object, name.c_str(), file_type, space.id(), H5P_DEFAULT, H5P_DEFAULT),
              H5Aclose, file, "creating " + what);
  check(H5Awrite(attribute.id(), memory_type, value), file, "writing " + what);
}

void write_string_attribute(hid_t object, const std::string& file, const std::string& where,
                            const std::string& name, const std::string& text) {
  // Fixed-length, NUL-terminated UTF-8: plain metadata, safe under parallel HDF5.
  Handle type = checked(H5Tcopy(H5T_C_S1), H5Tclose, file, "H5Tcopy");
  check(H5Tset_size(type.id(), text.size() + 1), file, "H5Tset_size");
  check(H5Tset_strpad(type.id(), H5T_STR_NULLTERM), file, "H5Tset_strpad");
  check(H5Tset_cset(type.id(), H5T_CSET_UTF8), file, "H5Tset_cset");
  write_scalar_attribute(object, file, where, name, type.id(), type.id(), text.c_str());
}

}  // namespace

void H5Writer::set_attribute_typed(const std::string& object_path, const std::string& name,
                                   const AttributeValue& value) {
  require_usable("set_attribute");
  Fingerprint arguments;
  arguments.add(object_path).add(name).add(value.units).add(value.text);
  arguments.add_value(static_cast<int>(value.kind)).add_value(value.real).add_value(value.integer);
  if (!comm_.all_equal(arguments.value())) {
    throw std::runtime_error(final_path_ + ": ranks disagree on attribute " + quoted(name) +
                             " of " + quoted(object_path));
  }
  // Identical arguments everywhere, so these checks throw on all ranks alike.
  if (name.empty()) throw std::invalid_argument(final_path_ + ": empty attribute name");
  run_agreed([&] {
    const std::vector<std::string> parts = split_path(object_path);
    const std::string where = join_path(parts, parts.size());
    if (!object_exists(file_.id(), final_path_, where)) {
      ensure_groups(file_.id(), final_path_, parts, parts.size());
    }
    Handle object = checked(H5Oopen(file_.id(), where.c_str(), H5P_DEFAULT), H5Oclose, final_path_,
                            "opening " + quoted(where));
    switch (value.kind) {
      case AttributeValue::Kind::f64:
        write_scalar_attribute(object.id(), final_path_, where, name, H5T_IEEE_F64LE,
                               H5T_NATIVE_DOUBLE, &value.real);
        break;
      case AttributeValue::Kind::i64:
        write_scalar_attribute(object.id(), final_path_, where, name, H5T_STD_I64LE,
                               H5T_NATIVE_INT64, &value.integer);
        break;
      case AttributeValue::Kind::text:
        write_string_attribute(object.id(), final_path_, where, name, value.text);
        break;
    }
    if (!value.units.empty()) {
      write_string_attribute(object.id(), final_path_, where, name + "_units", value.units);
    }
  });
}

void H5Writer::set_attribute(const std::string& object_path, const std::string& name, double value,
                             const std::string& units) {
  set_attribute_typed(object_path, name, {AttributeValue::Kind::f64, value, 0, "", units});
}
void H5Writer::set_attribute(const std::string& object_path, const std::string& name,
                             std::int64_t value, const std::string& units) {
  set_attribute_typed(object_path, name, {AttributeValue::Kind::i64, 0.0, value, "", units});
}
void H5Writer::set_attribute(const std::string& object_path, const std::string& name,
                             const std::string& value) {
  set_attribute_typed(object_path, name, {AttributeValue::Kind::text, 0.0, 0, value, ""});
}

void H5Writer::commit() {
  require_usable("commit");
  // 1. Close (and so flush) everywhere and agree: no rank is still writing.
  bool ok = file_.close() >= 0;  // nothing to close (serial build, rank > 0) is fine
  std::string error;
  if (!ok)
    error = final_path_ + ": closing " + quoted(temp_path_) + " failed" + hdf5_error_detail();
  parallel::Consensus outcome = comm_.all_ok(ok, error);
  if (before_output_rename != nullptr) before_output_rename();  // the fault tests' seam
  // 2. Rank 0 pushes the bytes to stable storage, so the rename can never
  // expose a file whose data is still in flight, then renames (atomic).
  if (outcome.ok && comm_.is_root()) {
    const int fd = ::open(temp_path_.c_str(), O_RDONLY);
    if (fd < 0 || ::fsync(fd) != 0) {
      ok = false;
      error = final_path_ + ": syncing " + quoted(temp_path_) + ": " + std::strerror(errno);
    } else if (std::rename(temp_path_.c_str(), final_path_.c_str()) != 0) {
      ok = false;
      error = final_path_ + ": renaming " + quoted(temp_path_) + " failed: " + std::strerror(errno);
    }
    if (fd >= 0) ::close(fd);
  }
  // 3. Agreement doubles as the barrier: no rank returns before the final file exists.
  if (outcome.ok) outcome = comm_.all_ok(ok, error);
  if (!outcome.ok) {
    failed_ = true;  // the destructor removes the temporary file
    throw std::runtime_error("rank " + std::to_string(outcome.first_failed_rank) + ": " +
                             outcome.message);
  }
  committed_ = true;
  release_temporary(temp_path_);
}

}  // namespace larmor::io
