// builder = "pulseq": the file translated to EPG events, or its step table
// for the isochromat engine (docs/pulseq.md).
#include "app/impl/pulseq_deck.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "io/pulseq/pulseq_events.hpp"
#include "io/pulseq/pulseq_steps.hpp"

namespace larmor::app::detail {
namespace {

// The file's translation to EPG events and its report; throws PulseqError
// where EPG cannot represent the file.
sequence::Description translate_pulseq(const io::pulseq::PulseqFile& seq,
                                       const io::pulseq::TranslateOptions& options,
                                       const std::vector<std::string>& warnings,
                                       std::chrono::steady_clock::time_point read_start,
                                       std::string* report_text, bool* measures_mz) {
  io::pulseq::TranslationReport report;
  auto d = io::pulseq::to_description(seq, options, &report);
  const double translate_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - read_start).count();
  report.warnings.insert(report.warnings.begin(), warnings.begin(), warnings.end());
  // No sample follows an excitation: the file measures Mz (a saturation,
  // CEST or preparation file), written as /mz.
  *measures_mz = std::none_of(report.adcs.begin(), report.adcs.end(), [](const auto& a) {
    return a.kept_sample >= 0 && a.how.rfind("sample N/2 (before any excitation", 0) != 0;
  });
  if (*measures_mz) {
    report.warnings.push_back(
        "no sample follows an excitation: the file measures the longitudinal "
        "magnetisation, which the result holds as /mz");
  }
  if (report_text != nullptr) {
    *report_text = io::pulseq::format_report(report, 4);
    // A large file's reading and translation, with its rate.
    if (translate_s >= 1.0) {
      char line[160];
      std::snprintf(line, sizeof line, "read and translated in %.1f s (%.0f blocks/s)\n",
                    translate_s, double(report.blocks) / translate_s);
      *report_text += line;
    }
  }
  // The quantisation's moment is the one the description declares.
  const auto& u = report.crusher_moment;
  d.crusher.moment_per_m = std::sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
  if (report.narrowest_half_bandwidth_hz > 0.0) {
    d.parameters["rf_half_bandwidth_hz"] = report.narrowest_half_bandwidth_hz;
  }
  return d;
}

}  // namespace

// A Pulseq file translated to events (docs/pulseq.md), with the deck's
// translation keys; *measures_mz when no sample follows an excitation. Where
// the deck's engine is the isochromat engine, or auto and EPG refuses the
// file, its step table instead (deck.steps), and no events.
sequence::Description pulseq_sequence(const Section& s, const std::filesystem::path& deck_dir,
                                      std::string* report_text, std::vector<std::string>& inputs,
                                      std::optional<double> longest_t2, bool* measures_mz,
                                      Deck& deck) {
  const std::string name = s.string("file", "");
  if (name.empty()) s.fail("file", "is required: the .seq file to read");
  const std::filesystem::path file =
      std::filesystem::path(name).is_absolute() ? std::filesystem::path(name) : deck_dir / name;
  inputs.push_back(file.string());
  io::pulseq::TranslateOptions options;
  const std::string adc = s.string("adc", "echo_centre");
  if (adc == "every_sample") {
    options.adc = io::pulseq::AdcSampling::every_sample;
  } else if (adc != "echo_centre") {
    s.fail("adc", "must be \"echo_centre\" or \"every_sample\"");
  }
  if (s.has("crusher_moment_per_m")) {
    const auto u = s.numbers("crusher_moment_per_m");
    if (u.size() != 3 || (u[0] == 0 && u[1] == 0 && u[2] == 0)) {
      s.fail("crusher_moment_per_m", "must be three numbers (x, y, z in 1/m), not all zero");
    }
    options.crusher_moment = std::array<double, 3>{u[0], u[1], u[2]};
  }
  if (s.has("split_pulses")) {
    const toml::node* n = s.node("split_pulses");
    if (n->is_boolean()) {
      options.split = s.boolean("split_pulses", false)
                          ? io::pulseq::TranslateOptions::Splitting::all
                          : io::pulseq::TranslateOptions::Splitting::off_resonant;
    } else if (s.string("split_pulses", "") != "long") {
      s.fail("split_pulses", "must be true, false or \"long\"");
    }
  }
  options.slice_profile = s.boolean("slice_profile", true);
  if (s.has("max_instants")) {
    options.max_instants = s.integer("max_instants", int(options.max_instants), 1);
  }
  options.longest_t2_s = longest_t2;
  // Pulses the file marks as inversions (RF use 'i', Pulseq 1.5) as ideal.
  if (!s.boolean("inversion_b1_scaled", true)) options.b1_fixed_uses = "i";
  if (s.has("voxel_size_mm")) {
    const auto v = s.numbers("voxel_size_mm");
    if (v.size() != 3 ||
        !(v[0] > 0 && v[1] > 0 && v[2] > 0 && v[0] < 1e3 && v[1] < 1e3 && v[2] < 1e3)) {
      s.fail("voxel_size_mm", "must be three positive sizes below 1000 (x, y, z in mm)");
    }
    options.voxel_size_m = std::array<double, 3>{1e-3 * v[0], 1e-3 * v[1], 1e-3 * v[2]};
  }
  if (s.has("b0_t")) options.b0_t = s.positive("b0_t", 3.0);
  io::pulseq::PulseqFile seq;
  std::vector<std::string> warnings;
  const auto read_start = std::chrono::steady_clock::now();
  try {
    seq = io::pulseq::PulseqFile::read(file.string(), &warnings);
  } catch (const io::pulseq::PulseqError& e) {
    s.fail("file", std::string("could not be translated: ") + e.what());
  }
  // EPG has no intra-voxel frequency spread: a tissue with one runs on the
  // isochromat engine (read_deck_tables refuses it under engine = "epg").
  if (deck.tissue.gives(tissue::Property::t2_prime) && deck.engine == Engine::automatic) {
    deck.engine_reason =
        "the tissue has t2_prime_ms, an intra-voxel frequency spread that EPG does not model";
  } else if (deck.engine != Engine::isochromat) {
    try {
      return translate_pulseq(seq, options, warnings, read_start, report_text, measures_mz);
    } catch (const io::pulseq::PulseqError& e) {
      if (deck.engine == Engine::epg) {
        s.fail("file", std::string("could not be translated: ") + e.what());
      }
      deck.engine_reason = std::string("EPG cannot represent the file: ") + e.what();
    }
  } else {
    deck.engine_reason = "[simulation] engine = \"isochromat\"";
  }
  io::pulseq::StepOptions steps;
  steps.every_sample = options.adc == io::pulseq::AdcSampling::every_sample;
  steps.b0_t = options.b0_t;
  steps.voxel_size_m = options.voxel_size_m;
  try {
    deck.steps = io::pulseq::to_step_table(seq, steps);
  } catch (const std::exception& e) {
    s.fail("file", std::string("could not be played by the isochromat engine: ") + e.what());
  }
  // Without a sample neither engine has a signal: EPG's refusal says why.
  if (deck.steps->samples() == 0 && deck.engine == Engine::automatic) {
    s.fail("file", "could not be translated: " +
                       deck.engine_reason.substr(deck.engine_reason.find(": ") + 2));
  }
  deck.isochromats = true;
  if (report_text != nullptr) {
    for (const auto& w : warnings) *report_text += "warning: " + w + "\n";
  }
  return {};
}

}  // namespace larmor::app::detail
