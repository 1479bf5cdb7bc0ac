// libFuzzer target for the MRD v1 stream framing: any bytes are read or
// refused with an MrdError; nothing else (no crash, no sanitizer report, no
// other exception) is allowed.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "io/mrd/mrd.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    larmor::io::mrd::read_stream(in, "fuzz");
  } catch (const larmor::io::mrd::MrdError&) {
  }
  return 0;
}
