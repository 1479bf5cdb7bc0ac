// libFuzzer target for the Pulseq reader and its translation to events: any
// input is either read (and translated, in both ADC modes, where EPG can,
// and made a step table for the isochromat engine), and then keeps the
// promises checked below, or refused with a PulseqError; anything
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

#include <cmath>

#include "io/pulseq/pulseq_events.hpp"
#include "io/pulseq/pulseq_file.hpp"
#include "io/pulseq/pulseq_steps.hpp"

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
void check_accepted(const larmor::io::pulseq::PulseqFile& file) {
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

// What a translated file promises the packer: finite, non-negative
// durations and finite pulse values.
void check_translated(const larmor::sequence::Description& d) {
  for (const auto& e : d.events) {
    require(std::isfinite(e.duration_s) && e.duration_s >= 0.0, "bad event duration");
    require(std::isfinite(e.flip_rad) && std::isfinite(e.phase_rad), "non-finite flip or phase");
    require(std::isfinite(e.saturation) && std::isfinite(e.rf_frequency_hz),
            "non-finite saturation or RF frequency");
  }
}

// What a step table promises the isochromat kernel: finite records, known
// kinds, non-negative steps, one slot per sample in order.
void check_steps(const larmor::sequence::StepTable& table) {
  namespace bloch = larmor::bloch;
  require(table.records.size() == table.steps() * bloch::step_floats, "ragged step records");
  std::size_t slot = 0;
  for (std::size_t i = 0; i < table.steps(); ++i) {
    const float* r = &table.records[i * bloch::step_floats];
    for (int f = 0; f < bloch::step_floats; ++f) require(std::isfinite(r[f]), "non-finite step");
    require(r[bloch::step_field::dt] >= 0.0f, "negative step");
    const int kind = int(r[bloch::step_field::kind]);
    require(kind == bloch::free_step || kind == bloch::rf_step || kind == bloch::sample_step,
            "unknown step kind");
    if (kind == bloch::sample_step) {
      require(std::size_t(r[bloch::step_field::slot]) == slot++, "samples out of order");
    }
  }
  require(slot == table.samples(), "samples and sample steps differ");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> warnings;
  try {
    using namespace larmor::io::pulseq;
    const PulseqFile file = PulseqFile::parse(
        std::string(reinterpret_cast<const char*>(data), size), "fuzz.seq", &warnings);
    check_accepted(file);
    try {
      TranslateOptions options;
      options.max_instants = 1 << 18;  // keep every input fast
      check_translated(to_description(file, options));
      options.adc = AdcSampling::every_sample;
      check_translated(to_description(file, options));
    } catch (const larmor::io::pulseq::PulseqError&) {
      // EPG refuses many files the isochromat engine plays.
    }
    StepOptions steps;
    steps.max_steps = 1 << 18;
    check_steps(to_step_table(file, steps));
  } catch (const larmor::io::pulseq::PulseqError&) {
    // A clear refusal is the expected outcome for most inputs.
  }
  return 0;
}
