// RF events as the translation sees them: where their centre is, what they
// rotate by, and how they respond off their own frequency (which decides
// whether a selective pulse reaches the simulated voxel).
#include <algorithm>
#include <cmath>
#include <sstream>

#include "io/pulseq/pulseq_detail.hpp"

namespace larmor::io::pulseq::detail {
namespace {
constexpr double kTwoPi = 6.283185307179586;
constexpr double kGammaMHzPerT = 42.577478518;  // 1H
}  // namespace

double larmor_frequency_mhz(const PulseqFile& file, const TranslateOptions& options, int block,
                            const Failure& fail) {
  if (options.b0_t) return kGammaMHzPerT * *options.b0_t;
  const auto it = file.definitions.values.find("B0");
  double b0 = 0.0;
  if (it == file.definitions.values.end() || !(std::istringstream(it->second) >> b0) ||
      !(b0 > 0.0)) {
    fail(block, block,
         "a frequency or phase in ppm needs the main field: give B0 in [DEFINITIONS] or b0_t in "
         "the deck's [sequence]");
  }
  return kGammaMHzPerT * b0;
}

std::complex<double> PulseAnalysis::sample_value(int n) const {
  const double ph = phase != nullptr ? kTwoPi * phase->values[n] : 0.0;
  return std::polar(kTwoPi * rf->amplitude_hz * mag->values[n], ph);
}

double PulseAnalysis::profile_at(double offset) const {
  if (!(std::abs(area) > 0.0)) return 1.0;
  std::complex<double> sum = 0.0;
  for (int n = 0; n < mag->samples; ++n) {
    sum += sample_value(n) * sampling.w[n] *
           std::polar(1.0, -kTwoPi * offset * (sampling.t[n] - centre));
  }
  return std::abs(sum) / std::abs(area);
}

double PulseAnalysis::half_maximum_width() const {
  const double step = 0.05 / std::max(sampling.duration, 1e-9);
  for (double f = step; std::abs(area) > 0.0 && f < 800.0 * step; f += step) {
    if (profile_at(f) >= 0.5) continue;
    double lo = f - step, hi = f;
    for (int i = 0; i < 40; ++i) {
      const double mid = 0.5 * (lo + hi);
      (profile_at(mid) < 0.5 ? hi : lo) = mid;
    }
    return lo + hi;  // twice the half width
  }
  return 0.0;
}

PulseAnalysis analyse_pulse(const PulseqFile& file, const Block& b, const BlockGradients& g,
                            const TranslateOptions& options, const Failure& fail) {
  PulseAnalysis p;
  p.rf = &file.rf.at(b.rf);
  const RfEvent& rf = *p.rf;
  p.mag = &shape_of(file, rf.mag_shape, b.id, fail, "RF magnitude");
  p.phase = rf.phase_shape != 0 ? &shape_of(file, rf.phase_shape, b.id, fail, "RF phase") : nullptr;
  if (p.phase != nullptr && p.phase->samples != p.mag->samples) {
    fail(b.id, b.id,
         "RF " + std::to_string(rf.id) + ": magnitude and phase shapes differ in length");
  }
  p.sampling = sampling_of(file, p.mag->samples, rf.time_shape, file.definitions.rf_raster_s, b.id,
                           fail, "RF");
  const Sampling& s = p.sampling;
  const bool ppm = rf.freq_ppm != 0.0 || rf.phase_ppm != 0.0;
  const double f0 = ppm ? larmor_frequency_mhz(file, options, b.id, fail) : 0.0;
  p.freq = rf.freq_hz + rf.freq_ppm * f0;
  p.event_phase = rf.phase_rad + rf.phase_ppm * f0;
  // Centre: given (1.5), else the middle of the magnitude's peak plateau.
  p.centre = rf.center_s;
  if (std::isfinite(p.centre) &&
      !(p.centre >= 0.0 && p.centre <= s.duration * (1.0 + 1e-9) + 1e-12)) {
    fail(b.id, b.id,
         "RF " + std::to_string(rf.id) + ": its center (" + std::to_string(p.centre * 1e6) +
             " us) lies outside the pulse (0 to " + std::to_string(s.duration * 1e6) + " us)");
  }
  double peak = 0.0;
  for (double v : p.mag->values) peak = std::max(peak, std::fabs(v));
  if (!std::isfinite(p.centre)) {
    int first = -1, last = -1;
    for (int n = 0; n < p.mag->samples; ++n) {
      if (std::fabs(p.mag->values[n]) >= peak * (1.0 - 1e-9)) {
        if (first < 0) first = n;
        last = n;
      }
    }
    p.centre = first < 0 ? 0.5 * s.duration : 0.5 * (s.t[first] + s.t[last]);
  }
  // The frequency ramp's phase counts from the pulse start before 1.5, from
  // its centre in 1.5.
  p.ramp_origin = file.version.at_least(1, 5) ? p.centre : 0.0;
  p.selective = g.on_during(rf.delay_s, rf.delay_s + std::max(s.duration, 1e-12));
  p.gradient = g.gradient(rf.delay_s + p.centre);
  for (int n = 0; n < p.mag->samples; ++n) {
    p.area += p.sample_value(n) * s.w[n];
    p.power += std::norm(p.sample_value(n)) * s.w[n];
  }
  return p;
}

}  // namespace larmor::io::pulseq::detail
