// libFuzzer target for the Pulseq reader: any input is either read, and then
// keeps the promises checked below, or refused with a PulseqError; anything
// else (another exception, a broken promise, a crash, a sanitizer report) is
// a finding. Built with clang by tests/fuzz/CMakeLists.txt and run
// for a bounded time by CTest; findings go to tests/data/pulseq/fuzz-regressions,
// which the GoogleTest suite replays.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "formats/pulseq/pulseq_file.hpp"

namespace {

// A finding: the fuzzer records the input that led here.
void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_pulseq: accepted file violates: %s\n", what);
    std::abort();
  }
}

// What an accepted file promises its users: every reference resolves and
// every shape holds exactly its declared samples.
void check_accepted(const larmor::formats::pulseq::PulseqFile& file) {
  for (const auto& block : file.blocks) {
    require(block.rf == 0 || file.find_rf(block.rf) != nullptr, "block names a missing RF event");
    require(block.adc == 0 || file.find_adc(block.adc) != nullptr, "block names a missing ADC");
    for (int g : {block.gx, block.gy, block.gz}) {
      require(g == 0 || file.find_gradient(g) != nullptr || file.find_trap(g) != nullptr,
              "block names a missing gradient");
    }
  }
  for (const auto& [id, shape] : file.shapes) {
    require(shape.samples >= 0 && shape.values.size() == std::size_t(shape.samples),
            "shape size differs from its num_samples");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> warnings;
  try {
    check_accepted(larmor::formats::pulseq::PulseqFile::parse(
        std::string(reinterpret_cast<const char*>(data), size), "fuzz.seq", &warnings));
  } catch (const larmor::formats::pulseq::PulseqError&) {
    // A clear refusal is the expected outcome for most inputs.
  }
  return 0;
}
