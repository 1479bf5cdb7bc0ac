#include "app/capacity.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace larmor::app {

std::int64_t available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  std::int64_t kib = 0;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return -1;
}

std::int64_t available_space_bytes(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path folder = fs::path(path).parent_path();
  if (folder.empty()) folder = ".";
  std::error_code ec;
  // The output's folder may not exist yet: its nearest existing ancestor.
  while (!fs::exists(folder, ec) && folder.has_parent_path() && folder != folder.parent_path()) {
    folder = folder.parent_path();
  }
  const fs::space_info space = fs::space(folder, ec);
  return ec ? -1 : std::int64_t(space.available);
}

std::string readable_bytes(double bytes) {
  const char* units[] = {"bytes", "KB", "MB", "GB", "TB", "PB", "EB"};
  int u = 0;
  while (bytes >= 1000.0 && u < 6) {
    bytes /= 1000.0;
    ++u;
  }
  char text[48];
  std::snprintf(text, sizeof text, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return text;
}

void require_capacity(double needed, std::int64_t available, const std::string& what,
                      const std::string& where, const std::string& way_out) {
  if (available < 0 || needed <= double(available)) return;
  throw std::invalid_argument(what + " need " + readable_bytes(needed) + ", more than the " +
                              readable_bytes(double(available)) + " " + where + ": " + way_out);
}

}  // namespace larmor::app
