// libFuzzer target for the Pulseq reader: any input is either read or refused
// with a PulseqError; anything else (another exception, a crash, a sanitizer
// report) is a finding. Built with clang by tests/fuzz/CMakeLists.txt and run
// for a bounded time by CTest; findings go to tests/data/pulseq/fuzz-regressions,
// which the GoogleTest suite replays.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "formats/pulseq/pulseq_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> warnings;
  try {
    larmor::formats::pulseq::PulseqFile::parse(
        std::string(reinterpret_cast<const char*>(data), size), "fuzz.seq", &warnings);
  } catch (const larmor::formats::pulseq::PulseqError&) {
    // A clear refusal is the expected outcome for most inputs.
  }
  return 0;
}
