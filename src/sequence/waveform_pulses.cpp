#include "sequence/waveform_pulses.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace larmor::sequence {
namespace {

constexpr double kTwoPi = 6.283185307179586;

[[noreturn]] void refuse(const Description& d, std::size_t w, const std::string& what) {
  throw std::invalid_argument("sequence '" + d.name + "', pulse waveform " + std::to_string(w + 1) +
                              ": " + what);
}

// The scale an event of flip `flip` gives the waveform's angles.
double flip_scale(const PulseWaveform& w, double flip) {
  return w.flip_rad > 0.0 ? flip / w.flip_rad : 1.0;
}

}  // namespace

void validate_waveforms(const Description& d) {
  for (std::size_t w = 0; w < d.waveforms.size(); ++w) {
    const PulseWaveform& p = d.waveforms[w];
    if (p.runs.empty()) refuse(d, w, "has no samples");
    if (!std::isfinite(p.rf_frequency_hz) || !std::isfinite(p.flip_rad) || p.flip_rad < 0.0) {
      refuse(d, w, "its RF frequency and nominal flip must be finite (the flip >= 0)");
    }
    for (std::size_t r = 0; r < p.runs.size(); ++r) {
      const WaveformRun& run = p.runs[r];
      if (!std::isfinite(run.angle_rad) || !std::isfinite(run.phase_rad) ||
          !(run.dt_s > 0.0 && std::isfinite(run.dt_s))) {
        refuse(d, w,
               "run " + std::to_string(r) +
                   ": the angle and phase must be finite and the sample duration > 0");
      }
      if (run.samples < 1 || run.samples > std::numeric_limits<std::int32_t>::max()) {
        refuse(d, w,
               "run " + std::to_string(r) + " has " + std::to_string(run.samples) +
                   " samples (1 to 2^31 - 1)");
      }
    }
  }
}

bool has_waveform_pulses(const Description& d) {
  for (const Event& e : d.events) {
    if (e.kind == EventKind::waveform_pulse) return true;
  }
  return false;
}

WaveformTable build_waveform_table(const Description& d) {
  WaveformTable t;
  if (!has_waveform_pulses(d)) return t;
  validate_waveforms(d);
  for (const PulseWaveform& w : d.waveforms) {
    t.span.push_back(std::int32_t(t.run_samples.size()));
    for (const WaveformRun& r : w.runs) {
      t.runs.insert(t.runs.end(), {float(r.angle_rad), float(std::cos(r.phase_rad)),
                                   float(std::sin(r.phase_rad)), float(r.dt_s)});
      t.run_samples.push_back(std::int32_t(r.samples));
    }
    t.span.push_back(std::int32_t(t.run_samples.size()));
    // The frame's turn over the pulse, reduced in double.
    const double turns = w.rf_frequency_hz * w.duration_s();
    const double angle = kTwoPi * (turns - std::nearbyint(turns));
    t.frame.insert(t.frame.end(),
                   {float(w.rf_frequency_hz), float(std::cos(angle)), float(std::sin(angle)),
                    float(w.duration_s()), float(w.flip_rad)});
  }
  return t;
}

Description expand_waveform_pulses(const Description& d, std::vector<std::int64_t>* origin) {
  validate_waveforms(d);
  Description out = d;
  out.events.clear();
  out.waveforms.clear();
  if (origin != nullptr) origin->clear();
  const auto push = [&](const Event& e, std::size_t from) {
    out.events.push_back(e);
    if (origin != nullptr) origin->push_back(std::int64_t(from));
  };
  for (std::size_t i = 0; i < d.events.size(); ++i) {
    const Event& e = d.events[i];
    if (e.kind != EventKind::waveform_pulse) {
      push(e, i);
      continue;
    }
    const PulseWaveform& w = d.waveforms.at(std::size_t(e.waveform - 1));
    const double scale = flip_scale(w, e.flip_rad);
    const double first_half = 0.5 * w.runs.front().dt_s;
    if (out.events.empty()) {
      Event lead;  // the time to the first sample's centre
      push(lead, i);
    }
    out.events.back().duration_s += first_half;
    double t = 0.0;  // from the pulse's start to the sample's centre
    bool first = true;
    for (const WaveformRun& r : w.runs) {
      for (std::int64_t n = 0; n < r.samples; ++n) {
        if (!first) out.events.back().duration_s += 0.5 * r.dt_s;
        t += 0.5 * r.dt_s;
        Event h;
        h.kind = EventKind::pulse;
        h.flip_rad = r.angle_rad * scale;
        h.phase_rad =
            e.phase_rad + r.phase_rad + kTwoPi * std::remainder(w.rf_frequency_hz * t, 1.0);
        h.rf_frequency_hz = w.rf_frequency_hz;
        h.saturation = float(h.flip_rad * h.flip_rad / r.dt_s);
        h.shim_index = e.shim_index;
        h.action = (e.action & action::b1_fixed) | (first ? e.action & action::crush_before : 0u);
        h.duration_s = 0.5 * r.dt_s;
        push(h, i);
        t += 0.5 * r.dt_s;
        first = false;
      }
    }
    Event& last = out.events.back();
    last.action |= e.action & ~(action::crush_before | action::b1_fixed);
    last.duration_s += e.duration_s;
  }
  return out;
}

}  // namespace larmor::sequence
