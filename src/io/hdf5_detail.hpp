// Shared internals of the HDF5 writer and reader: error folding, checked
// calls and path helpers. Not part of larmor's interface.
#pragma once

#include <hdf5.h>

#include "io/hdf5_file.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace larmor::io::detail {

// HDF5 prints its error stack to stderr by default; we fold it into exceptions.
inline void silence_hdf5_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

inline herr_t collect_error(unsigned, const H5E_error2_t* entry, void* sink) {
  auto& lines = *static_cast<std::vector<std::string>*>(sink);
  lines.push_back(std::string(entry->func_name ? entry->func_name : "?") +
                  "(): " + (entry->desc ? entry->desc : ""));
  return 0;
}

// The current HDF5 error stack as one line (outermost call first), then cleared.
inline std::string hdf5_error_detail() {
  std::vector<std::string> lines;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_error, &lines);
  H5Eclear2(H5E_DEFAULT);
  if (lines.empty()) return "";
  if (lines.size() > 4) lines.erase(lines.begin() + 2, lines.end() - 2);
  std::string joined = " [HDF5: ";
  for (std::size_t i = 0; i < lines.size(); ++i) joined += (i ? "; " : "") + lines[i];
  std::replace(joined.begin(), joined.end(), '\n', ' ');  // keep the message on one line
  return joined + "]";
}

[[noreturn]] inline void fail(const std::string& file, const std::string& what) {
  throw std::runtime_error(file + ": " + what + hdf5_error_detail());
}

inline Handle checked(hid_t id, Handle::Closer closer, const std::string& file,
                      const std::string& what) {
  if (id < 0) fail(file, what + " failed");
  return Handle(id, closer);
}

inline void check(herr_t status, const std::string& file, const std::string& what) {
  if (status < 0) fail(file, what + " failed");
}

inline std::string quoted(const std::string& text) { return "'" + text + "'"; }

inline std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t slash = std::min(path.find('/', start), path.size());
    if (slash > start) parts.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

inline std::string join_path(const std::vector<std::string>& parts, std::size_t count) {
  std::string joined;
  for (std::size_t i = 0; i < count; ++i) joined += "/" + parts[i];
  return joined.empty() ? "/" : joined;
}

// Whether every link along the path resolves; "/" always exists.
inline bool object_exists(hid_t file, const std::string& file_name, const std::string& path) {
  const std::vector<std::string> parts = split_path(path);
  for (std::size_t depth = 1; depth <= parts.size(); ++depth) {
    const std::string prefix = join_path(parts, depth);
    const htri_t link = H5Lexists(file, prefix.c_str(), H5P_DEFAULT);
    if (link < 0) fail(file_name, "checking link " + quoted(prefix));
    if (link == 0) return false;
  }
  const htri_t found = H5Oexists_by_name(file, join_path(parts, parts.size()).c_str(), H5P_DEFAULT);
  if (found < 0) fail(file_name, "checking object " + quoted(path));
  return found > 0;
}

inline Handle untimed_create_plist(hid_t plist_class, const std::string& file) {
  Handle plist = checked(H5Pcreate(plist_class), H5Pclose, file, "H5Pcreate");
  // No timestamps: the same data must give a byte-identical file.
  check(H5Pset_obj_track_times(plist.id(), false), file, "H5Pset_obj_track_times");
  return plist;
}

// Creates the first `depth` components of `parts` as groups where missing.
inline void ensure_groups(hid_t file, const std::string& file_name,
                          const std::vector<std::string>& parts, std::size_t depth) {
  Handle group_plist;
  for (std::size_t d = 1; d <= depth; ++d) {
    const std::string prefix = join_path(parts, d);
    const htri_t link = H5Lexists(file, prefix.c_str(), H5P_DEFAULT);
    if (link < 0) fail(file_name, "checking group " + quoted(prefix));
    if (link > 0) continue;
    if (!group_plist.valid()) group_plist = untimed_create_plist(H5P_GROUP_CREATE, file_name);
    checked(H5Gcreate2(file, prefix.c_str(), H5P_DEFAULT, group_plist.id(), H5P_DEFAULT), H5Gclose,
            file_name, "creating group " + quoted(prefix));
  }
}

inline std::uint64_t fnv1a(std::uint64_t hash, const void* bytes, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(bytes);
  for (std::size_t i = 0; i < size; ++i) hash = (hash ^ p[i]) * 1099511628211ull;
  return hash;
}

// Digest of the arguments that must be identical on every rank.
struct Fingerprint {
  std::uint64_t hash = 1469598103934665603ull;
  Fingerprint& add(const std::string& text) {
    hash = fnv1a(hash, text.data(), text.size());
    return add_value(text.size());
  }
  template <typename T>
  Fingerprint& add_value(const T& value) {
    hash = fnv1a(hash, &value, sizeof(value));
    return *this;
  }
  std::int64_t value() const { return static_cast<std::int64_t>(hash); }
};

// Selects rows [first_row, first_row + rows) of `space`, or nothing when empty.
inline void select_rows(hid_t space, const std::vector<std::uint64_t>& dims, std::int64_t first_row,
                        std::int64_t rows, const std::string& file, const std::string& path) {
  std::vector<hsize_t> start(dims.size(), 0), count(dims.begin(), dims.end());
  start[0] = static_cast<hsize_t>(first_row);
  count[0] = static_cast<hsize_t>(rows);
  const bool empty = std::find(count.begin(), count.end(), 0) != count.end();
  if (empty) {
    check(H5Sselect_none(space), file, "selecting no rows of " + quoted(path));
  } else {
    check(H5Sselect_hyperslab(space, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
          file, "selecting rows of " + quoted(path));
  }
}

}  // namespace larmor::io::detail
