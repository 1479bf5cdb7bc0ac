// The translation report as text (`larmor inspect`, the start of a run).
#include <cmath>
#include <cstdio>
#include <sstream>

#include "io/pulseq/pulseq_events.hpp"

namespace larmor::io::pulseq {
namespace {

std::string vec_text(const std::array<double, 3>& v, double scale, const char* unit) {
  char text[96];
  std::snprintf(text, sizeof text, "(%.4g, %.4g, %.4g) %s", v[0] * scale, v[1] * scale,
                v[2] * scale, unit);
  return text;
}

}  // namespace

std::string format_report(const TranslationReport& r, int detail_rows) {
  std::ostringstream s;
  char line[512];
  std::snprintf(line, sizeof line, "Pulseq %s: %zu blocks, %.6g s\n", r.version.c_str(), r.blocks,
                r.duration_s);
  s << line;
  std::snprintf(line, sizeof line, "voxel: %.4g x %.4g x %.4g mm (%s)\n", r.voxel_size_m[0] * 1e3,
                r.voxel_size_m[1] * 1e3, r.voxel_size_m[2] * 1e3, r.voxel_source.c_str());
  s << line;
  const auto& p = r.slice_position_m;
  if (p[0] != 0.0 || p[1] != 0.0 || p[2] != 0.0) {
    s << "voxel position along the slice normal: " << vec_text(p, 1e3, "mm") << "\n";
  }
  const auto& u = r.crusher_moment;
  const double turns = std::fabs(u[0]) * r.voxel_size_m[0] + std::fabs(u[1]) * r.voxel_size_m[1] +
                       std::fabs(u[2]) * r.voxel_size_m[2];
  if (r.crusher_source == "none" || r.crusher_source.empty()) {
    s << "crusher moment: none (no gap dephases by a repeated moment)\n";
  } else {
    std::snprintf(line, sizeof line, "crusher moment: %s, %s; %.3g turns across the voxel\n",
                  vec_text(u, 1.0, "1/m").c_str(), r.crusher_source.c_str(), turns);
    s << line;
  }
  std::snprintf(line, sizeof line,
                "spans between pulses: %d wind whole crusher moments, %d in phase, %d spoiled (a "
                "spoiled state keeps at most %.3g of itself), %d relaxed (T2); at a pulse at most "
                "%.3g turns are rounded away, adding up to %.3g (at most %.2g allowed); %d "
                "encoding axes rewound between pulses dropped\n",
                r.shifted_gaps, r.in_phase_gaps, r.spoiled_gaps, r.largest_spoil_leftover,
                r.relaxed_gaps, r.largest_residual_turns, r.largest_drift_turns, in_phase_turns,
                r.encoding_axes_dropped);
  s << line;
  std::snprintf(line, sizeof line,
                "samples: %d recorded as the voxel's mean over every order (the moment beyond "
                "whole orders winds at most %.3g turns across the voxel)\n",
                r.weighted_samples, r.largest_sample_residual_turns);
  s << line;
  int kept = 0;
  for (const AdcRecord& a : r.adcs) kept += a.kept_sample >= 0;
  std::snprintf(line, sizeof line,
                "RF pulses: %zu (%d miss the voxel, %d played from their waveforms); ADCs: %zu (%d "
                "kept, %d dropped)\n",
                r.pulses.size(), r.missed_pulses, r.waveform_pulses, r.adcs.size(), kept,
                r.dropped_adcs);
  s << line;
  int shown = 0;
  for (const PulseRecord& pulse : r.pulses) {
    if (shown++ == detail_rows) {
      s << "  ... " << r.pulses.size() - std::size_t(detail_rows) << " more pulses\n";
      break;
    }
    std::snprintf(line, sizeof line,
                  "  pulse  block %-6d %10.4f ms  %7.2f deg  phase %8.2f deg  use %c  %s\n",
                  pulse.block, pulse.time_s * 1e3, pulse.flip_deg, pulse.phase_deg, pulse.use,
                  pulse.how.c_str());
    s << line;
  }
  shown = 0;
  for (const AdcRecord& a : r.adcs) {
    if (shown++ == detail_rows) {
      s << "  ... " << r.adcs.size() - std::size_t(detail_rows) << " more ADCs\n";
      break;
    }
    if (a.kept_sample >= 0) {
      std::snprintf(line, sizeof line, "  adc    block %-6d %10.4f ms  sample %d of %d: %s\n",
                    a.block, a.time_s * 1e3, a.kept_sample, a.samples, a.how.c_str());
    } else {
      std::snprintf(line, sizeof line, "  adc    block %-6d %10.4f ms  %d samples: %s\n", a.block,
                    a.time_s * 1e3, a.samples, a.how.c_str());
    }
    s << line;
  }
  for (const std::string& w : r.warnings) s << "warning: " << w << "\n";
  return s.str();
}

}  // namespace larmor::io::pulseq
