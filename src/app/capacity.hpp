// What a run needs against what the machine has, checked before work starts:
// a run that cannot fit is refused with the numbers and the way out, instead
// of failing part way (std::bad_alloc after minutes, a full disk at the end).
#pragma once

#include <cstdint>
#include <string>

namespace larmor::app {

// Memory the system can still give (MemAvailable), in bytes; -1 when unknown.
std::int64_t available_memory_bytes();
// Free space for an unprivileged writer in the folder `path` would be written to; -1 when unknown.
std::int64_t available_space_bytes(const std::string& path);
// "12.3 GB", "512 MB", ...
std::string readable_bytes(double bytes);

// Throws std::invalid_argument when `needed` exceeds `available` (>= 0),
// naming what needs it, both numbers and the way out.
void require_capacity(double needed, std::int64_t available, const std::string& what,
                      const std::string& where, const std::string& way_out);

}  // namespace larmor::app
