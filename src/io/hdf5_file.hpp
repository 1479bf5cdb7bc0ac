// HDF5 output and input for larmor, on the HDF5 C API.
//
// Writing is collective over a Communicator and atomic: data goes to
// "<final>.tmp-<pid of rank 0>" and is renamed onto the final path only by a
// successful commit(), so a crash or an error never leaves a half-written
// final file. Objects carry no timestamps, so the same data gives a
// byte-identical file.
//
// Build switch LARMOR_HDF5_PARALLEL (defaults to H5_HAVE_PARALLEL):
//   1: every rank opens the file through MPI-IO and writes its own rows with
//      collective transfers.
//   0: serial HDF5; only rank 0 opens the output, rows are funnelled to it with
//      MPI_Gatherv, and readers open the file read-only on each rank.
//
// Failure handling: every collective method agrees on success across ranks
// (Communicator::all_ok) before returning, so an argument error or an HDF5
// error on any rank throws std::runtime_error on every rank, and the writers'
// destructors then discard the temporary file. Not covered: an HDF5 call that
// fails on some ranks while others wait inside the same collective MPI-IO
// operation (parallel build), and a rank that throws for reasons of its own
// and unwinds past a writer while the other ranks carry on into the next
// collective call; route such local errors through Communicator::all_ok
// first, or call MPI_Abort.
#pragma once

// First: parallel hdf5.h includes mpi.h, and communicator.hpp keeps MPI's
// C++ bindings out of it.
#include "parallel/communicator.hpp"

#include <hdf5.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#ifndef LARMOR_HDF5_PARALLEL
#ifdef H5_HAVE_PARALLEL
#define LARMOR_HDF5_PARALLEL 1
#else
#define LARMOR_HDF5_PARALLEL 0
#endif
#endif
#if LARMOR_HDF5_PARALLEL && !defined(H5_HAVE_PARALLEL)
#error "LARMOR_HDF5_PARALLEL=1 needs an HDF5 built with parallel (MPI-IO) support"
#endif

namespace larmor::io {

// True when built for parallel HDF5 (LARMOR_HDF5_PARALLEL=1).
constexpr bool parallel_hdf5_enabled() { return LARMOR_HDF5_PARALLEL != 0; }

// Owns one HDF5 identifier and releases it with the matching H5?close.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);

  Handle() noexcept = default;
  Handle(hid_t id, Closer closer) noexcept : id_(id), closer_(closer) {}
  ~Handle() { close(); }
  Handle(Handle&& other) noexcept;
  Handle& operator=(Handle&& other) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  hid_t id() const noexcept { return id_; }
  bool valid() const noexcept { return id_ >= 0; }
  // Closes now; returns the H5?close status (0 when nothing was open).
  herr_t close() noexcept;

 private:
  hid_t id_ = -1;
  Closer closer_ = nullptr;
};

// Collective, atomic HDF5 writer. Every public method must be called by every
// rank of the communicator, in the same order, with the same path/dims/
// attribute arguments (checked; a mismatch throws on all ranks).
class H5Writer {
 public:
  H5Writer(std::string final_path, const parallel::Communicator& comm);
  // Without a successful commit(): closes and deletes the temporary file.
  // Collective in the parallel build (the MPI-IO close is).
  ~H5Writer();
  H5Writer(const H5Writer&) = delete;
  H5Writer& operator=(const H5Writer&) = delete;

  // Creates dataset `path` (intermediate groups included) with shape
  // `global_dims`, whose first dimension counts rows; this rank supplies rows
  // [row_offset, row_offset + local_rows) in C order. Across ranks the row
  // blocks must tile [0, global_dims[0]) exactly (zero-row ranks allowed).
  void write_rows(const std::string& path, std::vector<std::uint64_t> global_dims,
                  std::int64_t row_offset, const float* data, std::int64_t local_rows);
  void write_rows(const std::string& path, std::vector<std::uint64_t> global_dims,
                  std::int64_t row_offset, const double* data, std::int64_t local_rows);
  void write_rows(const std::string& path, std::vector<std::uint64_t> global_dims,
                  std::int64_t row_offset, const std::int64_t* data, std::int64_t local_rows);
  void write_rows(const std::string& path, std::vector<std::uint64_t> global_dims,
                  std::int64_t row_offset, const std::uint8_t* data, std::int64_t local_rows);

  // Small arrays held identically on every rank; rank 0's copy is written.
  // data.size() must equal the product of dims.
  void write_whole(const std::string& path, std::vector<std::uint64_t> dims,
                   const std::vector<float>& data);
  void write_whole(const std::string& path, std::vector<std::uint64_t> dims,
                   const std::vector<double>& data);
  void write_whole(const std::string& path, std::vector<std::uint64_t> dims,
                   const std::vector<std::int64_t>& data);
  void write_whole(const std::string& path, std::vector<std::uint64_t> dims,
                   const std::vector<std::uint8_t>& data);

  // Scalar attribute on `object_path` ("/" for the root group; a missing
  // object is created as a group). A non-empty `units` also writes the string
  // attribute "<name>_units". An existing attribute of that name is replaced.
  void set_attribute(const std::string& object_path, const std::string& name, double value,
                     const std::string& units = "");
  void set_attribute(const std::string& object_path, const std::string& name, std::int64_t value,
                     const std::string& units = "");
  void set_attribute(const std::string& object_path, const std::string& name,
                     const std::string& value);
  // Other integer types (int, long long, ...) go to the int64 overload rather
  // than being ambiguous between it and double.
  template <typename Integer,
            std::enable_if_t<std::is_integral_v<Integer> && !std::is_same_v<Integer, bool> &&
                                 !std::is_same_v<Integer, std::int64_t>,
                             int> = 0>
  void set_attribute(const std::string& object_path, const std::string& name, Integer value,
                     const std::string& units = "") {
    if constexpr (std::is_unsigned_v<Integer> && sizeof(Integer) >= sizeof(std::int64_t)) {
      if (value > static_cast<Integer>(std::numeric_limits<std::int64_t>::max())) {
        throw std::out_of_range("set_attribute: '" + name + "' does not fit in int64");
      }
    }
    set_attribute(object_path, name, static_cast<std::int64_t>(value), units);
  }

  // Flushes and closes on every rank, then rank 0 renames the temporary file
  // onto the final path (atomic on one filesystem). When it returns, on any
  // rank, the final file is complete. On failure throws on every rank and the
  // temporary file is removed.
  void commit();

  const std::string& final_path() const { return final_path_; }
  const std::string& temp_path() const { return temp_path_; }
  bool committed() const { return committed_; }

 private:
  enum class ElementType;
  struct AttributeValue;

  void write_rows_typed(const std::string& path, const std::vector<std::uint64_t>& dims,
                        std::int64_t row_offset, const void* data, std::int64_t local_rows,
                        ElementType type);
  void write_whole_typed(const std::string& path, const std::vector<std::uint64_t>& dims,
                         const void* data, std::size_t element_count, ElementType type);
  void set_attribute_typed(const std::string& object_path, const std::string& name,
                           const AttributeValue& value);
  // Throws std::logic_error (identically on all ranks) once the writer can no
  // longer be used: after commit() or after an HDF5 failure.
  void require_usable(const char* operation) const;
  // Runs HDF5 work on the ranks that hold the file, then agrees on the outcome;
  // a failure poisons the writer and throws on every rank.
  template <typename Work>
  void run_agreed(Work&& work);
  void discard() noexcept;

  std::string final_path_;
  std::string temp_path_;
  parallel::Communicator comm_;
  Handle file_;  // open on every rank (parallel) or on rank 0 only (serial)
  bool committed_ = false;
  bool failed_ = false;
};

// Read access; every rank opens the file read-only. In the parallel build the
// open and the destructor are collective (MPI-IO); reads are independent, so
// the query and read methods may be called by any subset of ranks.
// Errors name the file and object, e.g. "tissue.h5: dataset '/t1' not found".
class H5Reader {
 public:
  H5Reader(std::string path, const parallel::Communicator& comm);

  const std::string& path() const { return path_; }

  // True when an object (group or dataset) exists at `object_path`.
  bool exists(const std::string& object_path) const;
  // Shape of a dataset; empty for a scalar.
  std::vector<std::uint64_t> dims(const std::string& dataset_path) const;

  // Rows [row_offset, row_offset + rows) in C order, converted to float from
  // any stored integer, floating point or enum (e.g. bool) type.
  std::vector<float> read_rows_float(const std::string& dataset_path, std::int64_t row_offset,
                                     std::int64_t rows) const;
  // The same into `out`, which holds rows * row_elements(dataset_path) floats
  // (a caller's staging buffer: chunked reading keeps host memory bounded).
  void read_rows_float(const std::string& dataset_path, std::int64_t row_offset, std::int64_t rows,
                       float* out) const;
  // Elements per row: the product of the dimensions after the first.
  std::int64_t row_elements(const std::string& dataset_path) const;
  std::vector<float> read_all_float(const std::string& dataset_path) const;
  // Whole dataset as uint8 (masks stored as uint8, any integer or bool);
  // values outside [0, 255] are clamped by HDF5's conversion.
  std::vector<std::uint8_t> read_all_u8(const std::string& dataset_path) const;
  // Whole dataset as int64 (indices and shapes: exact where float is not,
  // beyond 2^24).
  std::vector<std::int64_t> read_all_int64(const std::string& dataset_path) const;

  bool has_attribute(const std::string& object_path, const std::string& name) const;
  // Numeric scalar attribute, converted to double.
  double attribute_double(const std::string& object_path, const std::string& name) const;
  std::int64_t attribute_int64(const std::string& object_path, const std::string& name) const;
  // Fixed- or variable-length string attribute.
  std::string attribute_string(const std::string& object_path, const std::string& name) const;

 private:
  std::string path_;
  Handle file_;
};

}  // namespace larmor::io
