// The Pulseq file's events placed in their block for the isochromat Bloch
// reference (pulseq_bloch.hpp): gradients as knots, the ROTATIONS row, the RF
// envelope with its phase ramp and centre, the ADC's sample times and
// demodulation, and the block's duration where the file does not state it.
// Times are local to the block, in seconds.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "io/pulseq/pulseq_file.hpp"
#include "reference/pulseq_bloch.hpp"

namespace larmor::reference::bloch_detail {

namespace pq = larmor::io::pulseq;

constexpr double kTwoPi = 6.28318530717958647692;

[[noreturn]] void fail(const pq::PulseqFile& file, const std::string& what);

std::string block_name(const pq::Block& block);

// A waveform sampled at knots, linear between consecutive knots and zero
// outside them. Repeated times make jumps (piecewise-constant cells).
struct Knots {
  std::vector<double> t, v;
  void add(double time, double value) {
    t.push_back(time);
    v.push_back(value);
  }
  double end() const { return t.empty() ? 0.0 : t.back(); }
  // The value strictly between two knots: never asked at a knot's own time,
  // since every knot is a breakpoint and only midpoints are evaluated.
  double at(double x) const {
    const auto it = std::upper_bound(t.begin(), t.end(), x);
    if (it == t.begin() || it == t.end()) return 0.0;
    const std::size_t k = static_cast<std::size_t>(it - t.begin()) - 1;
    const double span = t[k + 1] - t[k];
    if (span <= 0.0) return v[k + 1];
    return v[k] + (v[k + 1] - v[k]) * (x - t[k]) / span;
  }
  // The exact integral over [a, b], a <= b: the trapezoid rule on each piece.
  double integral(double a, double b) const {
    double sum = 0.0;
    for (std::size_t k = 0; k + 1 < t.size(); ++k) {
      const double lo = std::max(a, t[k]), hi = std::min(b, t[k + 1]);
      const double span = t[k + 1] - t[k];
      if (!(hi > lo) || !(span > 0.0)) continue;
      const double slope = (v[k + 1] - v[k]) / span;
      sum += (hi - lo) * (v[k] + slope * (0.5 * (lo + hi) - t[k]));
    }
    return sum;
  }
};

Knots gradient_knots(const pq::PulseqFile& file, int id, double raster_s, const std::string& what);

using Matrix = std::array<std::array<double, 3>, 3>;

// The block's ROTATIONS row (logical -> physical), identity without one.
Matrix block_rotation(const pq::PulseqFile& file, const pq::Block& block);

// One RF event placed in its block (local times, seconds).
struct RfPlay {
  bool present = false;
  double start = 0.0, end = 0.0;
  double raster = 0.0;
  bool on_raster = true;      // default raster: env[n] over cell n
  std::vector<double> times;  // time shape: the points
  std::vector<Complex> env;   // mag x exp(i 2 pi phase), per cell or per point
  Complex scale;              // 2 pi amp b1 exp(i (phase + phase_ppm f0))
  double freq_hz = 0.0;
  double origin = 0.0;  // where the offset's phase ramp is zero
  double centre = 0.0;  // center_s, else the middle of the peak plateau

  Complex envelope(double x) const {
    if (on_raster) {
      const double cell = std::floor((x - start) / raster);
      const auto n =
          static_cast<std::size_t>(std::clamp(cell, 0.0, static_cast<double>(env.size() - 1)));
      return env[n];
    }
    const auto it = std::upper_bound(times.begin(), times.end(), x);
    if (it == times.begin() || it == times.end()) return 0.0;
    const std::size_t k = static_cast<std::size_t>(it - times.begin()) - 1;
    const double span = times[k + 1] - times[k];
    if (span <= 0.0) return env[k + 1];
    return env[k] + (env[k + 1] - env[k]) * ((x - times[k]) / span);
  }

  void add_breakpoints(std::vector<double>& points, int substeps) const {
    if (on_raster) {
      const std::size_t steps = env.size() * static_cast<std::size_t>(substeps);
      for (std::size_t s = 0; s <= steps; ++s) {
        points.push_back(start + raster * static_cast<double>(s) / substeps);
      }
      return;
    }
    points.push_back(times.front());
    for (std::size_t n = 0; n + 1 < times.size(); ++n) {
      const double span = times[n + 1] - times[n];
      const double cells = std::max(1.0, std::ceil(span / raster - 1e-9));
      const int steps = static_cast<int>(cells) * substeps;
      for (int s = 1; s <= steps; ++s) points.push_back(times[n] + span * s / steps);
    }
  }
};

RfPlay place_rf(const pq::PulseqFile& file, const pq::Block& block, const Tissue& tissue);

struct AdcPlay {
  const pq::AdcEvent* event = nullptr;
  std::vector<double> times;          // local
  std::vector<Complex> demodulation;  // per sample
  double end = 0.0;
};

AdcPlay place_adc(const pq::PulseqFile& file, const pq::Block& block);

// Pre-1.4 block duration: the longest of the delay and every event, rounded
// up to the block raster.
double derived_duration(const pq::PulseqFile& file, const pq::Block& block, double events_end);

}  // namespace larmor::reference::bloch_detail
