// larmor inspect FILE.seq: what a Pulseq file translates to (version, blocks,
// pulses and their flips, the sample kept from each ADC, the crusher moment,
// the voxel size, how the gaps mapped, every assumption and warning), or the
// reason it cannot be simulated. Rank 0 prints; nothing is written.
#include <chrono>
#include <cstdio>
#include <string>

#include "cli/checks.hpp"
#include "commands.hpp"
#include "io/pulseq/pulseq_events.hpp"
#include "io/pulseq/pulseq_steps.hpp"
#include "simulate/isochromat_simulator.hpp"

namespace larmor::drivers {

void add_inspect(CLI::App& app, InspectArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "inspect", "Show what a Pulseq file (.seq) translates to, or why it cannot be simulated");
  cmd->add_option("file", args.file, "The Pulseq file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--voxel-size-mm", args.voxel_size_mm, "Voxel edges x y z (mm)")->expected(3);
  cmd->add_option("--crusher-moment", args.crusher_moment_per_m,
                  "Declare the crusher moment x y z (1/m)")
      ->expected(3);
  cmd->add_option("--b0", args.b0_t, "Main field (T) for ppm offsets")
      ->check(cli::finite_number(0.0, false, 30.0, "tesla"));
  cmd->add_flag("--every-sample", args.every_sample, "Keep every ADC sample");
  cmd->add_option("--split-pulses", args.split_pulses,
                  "Pulses played from their waveforms: long (not selective and over 1 ms, or "
                  "off resonance), all, or off-resonant")
      ->check(CLI::IsMember({"long", "all", "off-resonant"}));
  cmd->add_flag("--ideal-slab", args.ideal_slab,
                "Slice-selective pulses as one rotation at the slice's centre");
  cmd->add_option("--longest-t2-ms", args.longest_t2_ms,
                  "The tissue's longest T2 (ms): waits it outlasts 13.8 times spoil")
      ->check(cli::finite_number(0.0, true, 1e7, "ms"));
  cmd->add_option("--rows", args.rows, "Pulses and ADCs listed (each; then a count)")
      ->check(cli::whole_count(1 << 30, "rows"));
}

namespace {

// Where EPG refuses a file: what `engine = "auto"` plays instead (the step
// table and the isochromat grid its windings need), or why that fails too.
std::string isochromat_summary(const io::pulseq::PulseqFile& file,
                               const io::pulseq::TranslateOptions& options) {
  try {
    io::pulseq::StepOptions step_options;
    step_options.every_sample = options.adc == io::pulseq::AdcSampling::every_sample;
    step_options.b0_t = options.b0_t;
    step_options.voxel_size_m = options.voxel_size_m;
    const sequence::StepTable table = io::pulseq::to_step_table(file, step_options);
    if (table.samples() == 0) return "isochromat engine: no sample to simulate either";
    simulate::IsochromatSettings settings;
    settings.voxel_size_m = table.voxel_size_m;
    settings.centre_m = table.slice_position_m;
    settings.longest_t2_s = options.longest_t2_s;
    const simulate::IsochromatPlan plan = simulate::plan_isochromats(table, settings);
    char head[256];
    std::snprintf(head, sizeof head,
                  "under engine = \"auto\" the isochromat engine plays it: %zu steps (%zu RF, %zu "
                  "free), %zu samples over %.4g s;\n",
                  table.steps(), table.rf_steps, table.free_steps, table.samples(),
                  table.duration_s);
    return head + plan.report;
  } catch (const std::exception& e) {
    std::string text = std::string("isochromat engine: refused too: ") + e.what();
    if (!options.longest_t2_s) {
      text +=
          " (every pulse-to-pulse span counted: --longest-t2-ms, a deck's tissue, counts only "
          "those a coherence outlives)";
    }
    return text;
  }
}

}  // namespace

int run_inspect(const InspectArgs& args, bool root) {
  namespace pq = io::pulseq;
  pq::TranslateOptions options;
  if (!args.voxel_size_mm.empty()) {
    const auto& v = args.voxel_size_mm;
    if (!(v[0] > 0 && v[1] > 0 && v[2] > 0 && v[0] < 1e3 && v[1] < 1e3 && v[2] < 1e3)) {
      throw std::invalid_argument("--voxel-size-mm needs three positive sizes below 1000 mm");
    }
    options.voxel_size_m = std::array<double, 3>{1e-3 * v[0], 1e-3 * v[1], 1e-3 * v[2]};
  }
  if (!args.crusher_moment_per_m.empty()) {
    const auto& u = args.crusher_moment_per_m;
    if (u[0] == 0 && u[1] == 0 && u[2] == 0) {
      throw std::invalid_argument("--crusher-moment needs a moment that is not zero");
    }
    options.crusher_moment = std::array<double, 3>{u[0], u[1], u[2]};
  }
  if (args.b0_t > 0) options.b0_t = args.b0_t;
  if (args.every_sample) options.adc = pq::AdcSampling::every_sample;
  using Splitting = pq::TranslateOptions::Splitting;
  options.split = args.split_pulses == "all"            ? Splitting::all
                  : args.split_pulses == "off-resonant" ? Splitting::off_resonant
                                                        : Splitting::long_pulses;
  options.slice_profile = !args.ideal_slab;
  if (args.longest_t2_ms > 0) options.longest_t2_s = 1e-3 * args.longest_t2_ms;
  std::vector<std::string> warnings;
  const auto start = std::chrono::steady_clock::now();
  const pq::PulseqFile file = pq::PulseqFile::read(args.file, &warnings);
  const auto read = std::chrono::steady_clock::now();
  pq::TranslationReport report;
  try {
    const sequence::Description d = pq::to_description(file, options, &report);
    const auto translated = std::chrono::steady_clock::now();
    report.warnings.insert(report.warnings.begin(), warnings.begin(), warnings.end());
    if (root) {
      using seconds = std::chrono::duration<double>;
      std::printf("%s\n%s", args.file.c_str(), pq::format_report(report, args.rows).c_str());
      std::printf(
          "events: %zu, samples: %d, slice profiles: %zu; read in %.3f s, translated in %.3f s\n",
          d.events.size(), d.sample_count(), d.slice_profiles.size(), seconds(read - start).count(),
          seconds(translated - read).count());
    }
  } catch (const pq::PulseqError&) {
    // What was understood before the refusal, what the isochromat engine
    // would play instead, then the refusal itself.
    report.warnings.insert(report.warnings.begin(), warnings.begin(), warnings.end());
    if (root) {
      std::printf("%s (refused; understood so far:)\n%s", args.file.c_str(),
                  pq::format_report(report, args.rows).c_str());
      std::printf("%s\n", isochromat_summary(file, options).c_str());
    }
    throw;
  }
  return 0;
}

}  // namespace larmor::drivers
