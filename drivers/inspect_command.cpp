// larmor inspect FILE.seq: what a Pulseq file translates to (version, blocks,
// pulses and their flips, the sample kept from each ADC, the crusher moment,
// the voxel size, how the gaps mapped, every assumption and warning), or the
// reason it cannot be simulated. Rank 0 prints; nothing is written.
#include <cstdio>

#include "cli_checks.hpp"
#include "commands.hpp"
#include "io/pulseq/pulseq_events.hpp"

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
      ->check(finite_number(0.0, false, 30.0, "tesla"));
  cmd->add_flag("--every-sample", args.every_sample, "Keep every ADC sample");
  cmd->add_option("--rows", args.rows, "Pulses and ADCs listed (each; then a count)")
      ->check(whole_count(1 << 30, "rows"));
}

int run_inspect(const InspectArgs& args, const parallel::Communicator& comm) {
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
  std::vector<std::string> warnings;
  const pq::PulseqFile file = pq::PulseqFile::read(args.file, &warnings);
  pq::TranslationReport report;
  try {
    const sequence::Description d = pq::to_description(file, options, &report);
    report.warnings.insert(report.warnings.begin(), warnings.begin(), warnings.end());
    if (comm.is_root()) {
      std::printf("%s\n%s", args.file.c_str(), pq::format_report(report, args.rows).c_str());
      std::printf("events: %zu, samples: %d\n", d.events.size(), d.sample_count());
    }
  } catch (const pq::PulseqError&) {
    // What was understood before the refusal, then the refusal itself.
    report.warnings.insert(report.warnings.begin(), warnings.begin(), warnings.end());
    if (comm.is_root()) {
      std::printf("%s (refused; understood so far:)\n%s", args.file.c_str(),
                  pq::format_report(report, args.rows).c_str());
    }
    throw;
  }
  return 0;
}

}  // namespace larmor::drivers
