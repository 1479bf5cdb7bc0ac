// Small text results (CSV schedules and histories) written atomically: to a
// temporary file beside the target, flushed, then renamed onto it, so a
// reader never sees half a file and a failure leaves the old one in place.
#pragma once

#include <string>

namespace larmor::io {

// Creates missing parent directories; throws std::runtime_error naming the
// path on any failure.
void write_text_atomically(const std::string& path, const std::string& text);

}  // namespace larmor::io
