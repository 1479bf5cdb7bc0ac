// Placing a Pulseq file's events in their block; see pulseq_bloch_events.hpp.
#include "reference/pulseq_bloch_events.hpp"

#include <cstdlib>
#include <stdexcept>

namespace larmor::reference::bloch_detail {
namespace {

const pq::Shape& shape_of(const pq::PulseqFile& file, int id, const std::string& what) {
  const pq::Shape* shape = file.find_shape(id);
  if (shape == nullptr || shape->values.empty()) {
    fail(file, what + ": shape " + std::to_string(id) + " is missing or empty");
  }
  return *shape;
}

// Local times of a time shape (raster units) scaled to seconds, checked.
std::vector<double> time_points(const pq::PulseqFile& file, int id, std::size_t count,
                                double raster_s, double delay_s, const std::string& what) {
  const pq::Shape& shape = shape_of(file, id, what + " time");
  if (shape.values.size() != count) {
    fail(file, what + ": time shape " + std::to_string(id) + " has " +
                   std::to_string(shape.values.size()) + " points, the waveform " +
                   std::to_string(count));
  }
  std::vector<double> times(count);
  for (std::size_t n = 0; n < count; ++n) {
    times[n] = delay_s + shape.values[n] * raster_s;
    if (shape.values[n] < 0.0 || (n > 0 && times[n] < times[n - 1])) {
      fail(file, what + ": time shape " + std::to_string(id) + " is not non-decreasing from 0");
    }
  }
  return times;
}

// f0 in MHz (so ppm x f0 is Hz), from B0 in [DEFINITIONS].
double larmor_mhz(const pq::PulseqFile& file, const std::string& what) {
  const auto it = file.definitions.values.find("B0");
  if (it != file.definitions.values.end()) {
    char* end = nullptr;
    const double b0 = std::strtod(it->second.c_str(), &end);
    if (end != it->second.c_str() && std::isfinite(b0)) return kProtonGammaMHzPerT * b0;
  }
  fail(file, what + " uses a ppm offset but [DEFINITIONS] gives no numeric B0");
}

Matrix identity() { return {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}}; }

}  // namespace

[[noreturn]] void fail(const pq::PulseqFile& file, const std::string& what) {
  throw std::invalid_argument("pulseq_bloch: " + file.path + ": " + what);
}

std::string block_name(const pq::Block& block) { return "block " + std::to_string(block.id); }

Knots gradient_knots(const pq::PulseqFile& file, int id, double raster_s, const std::string& what) {
  Knots k;
  if (id == 0) return k;
  if (const pq::TrapEvent* trap = file.find_trap(id)) {
    double t = trap->delay_s;
    k.add(t, 0.0);
    k.add(t += trap->rise_s, trap->amplitude_hz_per_m);
    k.add(t += trap->flat_s, trap->amplitude_hz_per_m);
    k.add(t += trap->fall_s, 0.0);
    return k;
  }
  const pq::GradientEvent* g = file.find_gradient(id);
  if (g == nullptr) fail(file, what + ": gradient " + std::to_string(id) + " is not defined");
  const std::string name = what + " gradient " + std::to_string(id);
  const pq::Shape& wave = shape_of(file, g->shape, name);
  const std::size_t count = wave.values.size();
  if (g->time_shape == 0) {
    for (std::size_t n = 0; n < count; ++n) {
      const double value = g->amplitude_hz_per_m * wave.values[n];
      k.add(g->delay_s + static_cast<double>(n) * raster_s, value);
      k.add(g->delay_s + static_cast<double>(n + 1) * raster_s, value);
    }
  } else {
    const std::vector<double> times =
        time_points(file, g->time_shape, count, raster_s, g->delay_s, name);
    for (std::size_t n = 0; n < count; ++n) k.add(times[n], g->amplitude_hz_per_m * wave.values[n]);
  }
  return k;
}

Matrix block_rotation(const pq::PulseqFile& file, const pq::Block& block) {
  const pq::ExtensionSpec* spec = file.find_extension("ROTATIONS");
  if (spec == nullptr || block.ext == 0) return identity();
  int next = block.ext;
  for (std::size_t hops = 0; next != 0 && hops <= file.extensions.size(); ++hops) {
    const auto row = file.extensions.find(next);
    if (row == file.extensions.end()) {
      fail(file, block_name(block) + ": extension row " + std::to_string(next) + " is missing");
    }
    if (row->second.type == spec->id) {
      const auto data = spec->rows.find(row->second.ref);
      if (data == spec->rows.end()) {
        fail(file, block_name(block) + ": ROTATIONS row " + std::to_string(row->second.ref) +
                       " is missing");
      }
      const std::vector<double>& q = data->second.values;
      if (q.size() == 9) {
        return {{{q[0], q[1], q[2]}, {q[3], q[4], q[5]}, {q[6], q[7], q[8]}}};
      }
      if (q.size() != 4) fail(file, block_name(block) + ": a ROTATIONS row needs 4 or 9 values");
      const double norm = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
      if (!(norm > 0.0)) fail(file, block_name(block) + ": zero ROTATIONS quaternion");
      const double w = q[0] / norm, x = q[1] / norm, y = q[2] / norm, z = q[3] / norm;
      return {{{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
               {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
               {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}}};
    }
    next = row->second.next;
  }
  return identity();
}

RfPlay place_rf(const pq::PulseqFile& file, const pq::Block& block, const Tissue& tissue) {
  RfPlay rf;
  if (block.rf == 0) return rf;
  const std::string what = block_name(block) + " RF " + std::to_string(block.rf);
  const pq::RfEvent* event = file.find_rf(block.rf);
  if (event == nullptr) fail(file, what + " is not defined");
  const pq::Shape& mag = shape_of(file, event->mag_shape, what + " magnitude");
  const std::size_t count = mag.values.size();
  std::vector<double> phase(count, 0.0);
  if (event->phase_shape != 0) {
    phase = shape_of(file, event->phase_shape, what + " phase").values;
    if (phase.size() != count) fail(file, what + ": phase and magnitude lengths differ");
  }
  rf.present = true;
  rf.raster = file.definitions.rf_raster_s;
  if (!(rf.raster > 0.0)) fail(file, "the RF raster must be positive");
  for (std::size_t n = 0; n < count; ++n) {
    rf.env.push_back(mag.values[n] * std::polar(1.0, kTwoPi * phase[n]));
  }
  // Sample times for locating the peak (cell centres on the default raster).
  std::vector<double> sample_times(count);
  if (event->time_shape == 0) {
    rf.start = event->delay_s;
    rf.end = event->delay_s + static_cast<double>(count) * rf.raster;
    for (std::size_t n = 0; n < count; ++n) {
      sample_times[n] = event->delay_s + (static_cast<double>(n) + 0.5) * rf.raster;
    }
  } else {
    rf.on_raster = false;
    rf.times = time_points(file, event->time_shape, count, rf.raster, event->delay_s, what);
    rf.start = rf.times.front();
    rf.end = rf.times.back();
    sample_times = rf.times;
  }
  const bool ppm = event->freq_ppm != 0.0 || event->phase_ppm != 0.0;
  const double f0_mhz = ppm ? larmor_mhz(file, what) : 0.0;
  rf.freq_hz = event->freq_hz + event->freq_ppm * f0_mhz;
  rf.scale = std::polar(kTwoPi * event->amplitude_hz * tissue.b1,
                        event->phase_rad + event->phase_ppm * f0_mhz);
  if (!std::isnan(event->center_s)) {
    rf.centre = event->delay_s + event->center_s;
  } else {
    // Middle of the magnitude's peak plateau.
    double peak = 0.0;
    for (double m : mag.values) peak = std::max(peak, std::abs(m));
    std::size_t first = count, last = 0;
    for (std::size_t n = 0; n < count; ++n) {
      if (peak - std::abs(mag.values[n]) <= 1e-9 * peak) {
        first = std::min(first, n);
        last = n;
      }
    }
    rf.centre = 0.5 * (sample_times[first] + sample_times[last]);
  }
  rf.origin = file.version.at_least(1, 5) ? rf.centre : event->delay_s;
  return rf;
}

AdcPlay place_adc(const pq::PulseqFile& file, const pq::Block& block) {
  AdcPlay adc;
  if (block.adc == 0) return adc;
  const std::string what = block_name(block) + " ADC " + std::to_string(block.adc);
  adc.event = file.find_adc(block.adc);
  if (adc.event == nullptr) fail(file, what + " is not defined");
  const pq::AdcEvent& e = *adc.event;
  if (e.samples < 0 || (e.samples > 0 && !(e.dwell_s > 0.0))) {
    fail(file, what + ": needs a positive dwell and a non-negative sample count");
  }
  for (int n = 0; n < e.samples; ++n) adc.times.push_back(e.delay_s + (n + 0.5) * e.dwell_s);
  adc.end = e.delay_s + e.samples * e.dwell_s;
  const bool ppm = e.phase_ppm != 0.0 || e.freq_ppm != 0.0;
  const double f0_mhz = ppm ? larmor_mhz(file, what) : 0.0;
  const double frequency = e.freq_hz + e.freq_ppm * f0_mhz;
  std::vector<double> shape(std::size_t(e.samples), 0.0);
  if (e.phase_shape != 0) {
    shape = shape_of(file, e.phase_shape, what + " phase").values;
    if (shape.size() != std::size_t(e.samples)) fail(file, what + ": phase shape length");
  }
  for (int n = 0; n < e.samples; ++n) {
    // The receiver turns with its offset frequency from the ADC's start.
    const double t = (n + 0.5) * e.dwell_s;
    adc.demodulation.push_back(std::polar(
        1.0,
        -(e.phase_rad + e.phase_ppm * f0_mhz + kTwoPi * (frequency * t + shape[std::size_t(n)]))));
  }
  return adc;
}

double derived_duration(const pq::PulseqFile& file, const pq::Block& block, double events_end) {
  double longest = events_end;
  if (block.delay_id != 0) {
    const auto it = file.delays.find(block.delay_id);
    if (it == file.delays.end()) {
      fail(file,
           block_name(block) + ": delay " + std::to_string(block.delay_id) + " is not defined");
    }
    longest = std::max(longest, it->second.delay_s);
  }
  const double raster = file.definitions.block_duration_raster_s;
  if (!(raster > 0.0)) fail(file, "the block duration raster must be positive");
  return std::max(0.0, std::ceil(longest / raster - 1e-6)) * raster;
}

}  // namespace larmor::reference::bloch_detail
