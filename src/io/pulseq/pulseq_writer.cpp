#include "io/pulseq/pulseq_writer.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "io/pulseq/pulseq_events.hpp"
#include "io/pulseq/pulseq_file.hpp"
#include "io/text_file.hpp"
#include "sequence/canonical.hpp"

namespace larmor::io::pulseq {
namespace {

constexpr double kTwoPi = 6.283185307179586;
constexpr double kPi = 3.141592653589793;
constexpr long kRasterNs = 1000;       // BlockDurationRaster 1 us
constexpr long kInstantHalfUs = 10;    // an instant's block is 20 us
constexpr long kGradientBlockUs = 30;  // rise 10, flat 10, fall 10 us
constexpr int kRfSamples = 20;         // 1 us RF raster

std::string number(double v) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

struct Writer {
  const sequence::Description& d;
  std::ostringstream blocks;
  std::map<std::pair<double, double>, int> rf_ids;  // (amplitude, phase)
  std::map<double, int> adc_ids;                    // receiver phase
  int block_id = 0;

  void block(long duration_us, int rf, int gx, int gy, int gz, int adc) {
    blocks << ++block_id << " " << duration_us << " " << rf << " " << gx << " " << gy << " " << gz
           << " " << adc << " 0\n";
  }
  int rf_for(const sequence::Event& e) {
    double flip = e.flip_rad, phase = e.phase_rad;
    if (flip < 0) {
      flip = -flip;
      phase += kPi;
    }
    const double amplitude = flip / (kTwoPi * kRfSamples * 1e-6);
    return rf_ids.emplace(std::make_pair(amplitude, phase), int(rf_ids.size()) + 1).first->second;
  }
  int adc_for(const sequence::Event& e) {
    return adc_ids.emplace(e.phase_rad, int(adc_ids.size()) + 1).first->second;
  }
};

long on_raster_us(double t, std::size_t instant, const std::string& name) {
  const double us = t * 1e6;
  const double whole = std::round(us);
  if (std::fabs(us - whole) > 1e-3) {
    throw std::invalid_argument("Pulseq writer (" + name + "): instant " + std::to_string(instant) +
                                " at " + number(t) +
                                " s is not on the 1 us raster of the written file");
  }
  return long(whole);
}

// What a Pulseq 1.4 file of 20 us hard pulses can say of pulse instant `k` at
// `at_us`; anything else is refused, naming the instant.
void check_writable_pulse(const sequence::Description& d, const sequence::Event& e, std::size_t k,
                          long at_us) {
  const auto refuse = [&](const std::string& why) {
    throw std::invalid_argument("Pulseq writer (" + d.name + "): instant " + std::to_string(k) +
                                " (the pulse at " + number(at_us * 1e-3) + " ms) " + why);
  };
  if (e.kind == sequence::EventKind::waveform_pulse) {
    refuse("is played from its waveform; the writer writes hard pulses only");
  }
  if (e.rf_frequency_hz != 0.0) {
    refuse("is an off-resonant pulse; the writer keeps hard pulses on resonance only");
  }
  if ((e.action & sequence::action::b1_fixed) != 0) {
    refuse(
        "keeps its nominal flip whatever B1 is (b1_scaled = false); a Pulseq 1.4 file "
        "cannot say so, and read back it would scale with B1");
  }
  // (The power of the written pulse itself, as a file read back carries, is kept.)
  const double written_power = e.flip_rad * e.flip_rad / (kRfSamples * 1e-6);
  if (e.saturation != 0.0f && std::fabs(e.saturation - written_power) > 1e-4 * written_power) {
    refuse(
        "carries the power of a pulse of its own duration (a bound pool's saturation); "
        "the writer writes every pulse as a 20 us hard pulse, of another power");
  }
  if (e.slice_profile != 0 || e.shim_index != 0) {
    refuse(std::string("is ") +
           (e.slice_profile != 0 ? "slice-selective ([[sequence.across_slice]])"
                                 : "played with a transmit shim setting") +
           "; the writer writes non-selective hard pulses of the scalar transmit field only");
  }
}

}  // namespace

double written_crusher_moment(const sequence::Description& d, const WriteOptions& options) {
  const double asked = options.crusher_moment_per_m;
  if (!(asked >= 0.0) || !std::isfinite(asked)) {
    throw std::invalid_argument("Pulseq writer: the crusher moment must be positive");
  }
  if (!d.crusher.declared()) return asked > 0.0 ? asked : 1000.0;
  const double declared = d.crusher.moment_per_m;
  if (asked > 0.0 && std::abs(asked - declared) > 1e-9 * declared) {
    throw std::invalid_argument("Pulseq writer (" + d.name +
                                "): the sequence declares a crusher moment of " + number(declared) +
                                " 1/m; writing " + number(asked) +
                                " 1/m would change its diffusion and flow terms");
  }
  return declared;
}

std::string format_pulseq(const sequence::Description& d, const WriteOptions& options) {
  const double crusher_moment = written_crusher_moment(d, options);
  if (d.crusher.duration_s > 0.0) {
    // Lobes take their time out of the events' durations: the file would
    // play the instants closer together than the deck does.
    throw std::invalid_argument("Pulseq writer (" + d.name + "): the crusher lobes last " +
                                number(d.crusher.duration_s * 1e3) +
                                " ms (crusher_duration_ms); the writer writes every shift as a "
                                "30 us gradient block and cannot keep their timing");
  }
  const sequence::InstantForm form = sequence::instant_form(d);
  Writer w{d};
  // Instants before 10 us cannot have their block centred on them: the whole
  // file starts later by an empty block (equilibrium does not change).
  std::vector<long> at(form.instants.size());
  double t = form.leading.duration_s;
  for (std::size_t k = 0; k < form.instants.size(); ++k) {
    at[k] = on_raster_us(t, k, d.name);
    t += form.instants[k].after.duration_s;
  }
  const long end_us = on_raster_us(t, form.instants.size(), d.name);
  const long offset = !at.empty() && at[0] < kInstantHalfUs ? kInstantHalfUs : 0;
  long now = 0;
  auto fill_gap = [&](const sequence::Gap& gap, long until, std::size_t k) {
    const long needed = gap.shifts * kGradientBlockUs + (gap.spoil ? kGradientBlockUs : 0);
    if (until - now < needed) {
      throw std::invalid_argument("Pulseq writer (" + d.name + "): the gap after instant " +
                                  std::to_string(k) + " is " + std::to_string(until - now) +
                                  " us between blocks; its gradients need " +
                                  std::to_string(needed) + " us");
    }
    for (int s = 0; s < gap.shifts; ++s) w.block(kGradientBlockUs, 0, 0, 0, 1, 0);
    if (gap.spoil) w.block(kGradientBlockUs, 0, 2, 2, 0, 0);
    now += needed;
    if (until > now) w.block(until - now, 0, 0, 0, 0, 0);
    now = until;
  };
  if (offset + (at.empty() ? end_us : at[0]) - kInstantHalfUs > 0) {
    fill_gap(sequence::Gap{}, offset + (at.empty() ? end_us : at[0] + 0) - kInstantHalfUs, 0);
  }
  for (std::size_t k = 0; k < form.instants.size(); ++k) {
    const sequence::Event& e = form.instants[k].event;
    const long start = offset + at[k] - kInstantHalfUs;
    if (start < now) {
      throw std::invalid_argument("Pulseq writer (" + d.name + "): instant " + std::to_string(k) +
                                  " is closer than 20 us to the one before it");
    }
    if (abi::is_rf(e.kind)) {
      check_writable_pulse(d, e, k, at[k]);
      w.block(2 * kInstantHalfUs, w.rf_for(e), 0, 0, 0, 0);
    } else {
      w.block(2 * kInstantHalfUs, 0, 0, 0, 0, w.adc_for(e));
    }
    now = start + 2 * kInstantHalfUs;
    const long until =
        k + 1 < form.instants.size() ? offset + at[k + 1] - kInstantHalfUs : offset + end_us;
    fill_gap(form.instants[k].after, std::max(until, now), k);
  }

  std::ostringstream out;
  out << "# Pulseq sequence file written by larmor from the description '" << d.name << "'\n"
      << "[VERSION]\nmajor 1\nminor 4\nrevision 2\n\n"
      << "[DEFINITIONS]\nAdcRasterTime 1e-07\nBlockDurationRaster 1e-06\n"
      << "GradientRasterTime 1e-05\nRadiofrequencyRasterTime 1e-06\n"
      << crusher_moment_definition << " 0 0 " << number(crusher_moment) << "\n";
  if (!d.name.empty() && d.name.find_first_of(" \t\r\n") == std::string::npos) {
    out << "Name " << d.name << "\n";
  }
  out << "TotalDuration " << number(now * 1e-6) << "\n\n";
  out << "# id duration[us] rf gx gy gz adc ext\n[BLOCKS]\n" << w.blocks.str() << "\n";
  if (!w.rf_ids.empty()) {
    out << "# id amplitude[Hz] mag_id phase_id time_id delay[us] freq[Hz] phase[rad]\n[RF]\n";
    for (const auto& [key, id] : w.rf_ids) {
      out << id << " " << number(key.first) << " 1 2 0 0 0 " << number(key.second) << "\n";
    }
    out << "\n";
  }
  // Shift: area u over rise/2 + flat + fall/2 = 20 us; spoiler: twice u.
  const double shift_amplitude = crusher_moment / 20e-6;
  out << "# id amplitude[Hz/m] rise flat fall delay [us]\n[TRAP]\n"
      << "1 " << number(shift_amplitude) << " 10 10 10 0\n"
      << "2 " << number(2.0 * shift_amplitude) << " 10 10 10 0\n\n";
  if (!w.adc_ids.empty()) {
    out << "# id samples dwell[ns] delay[us] freq[Hz] phase[rad]\n[ADC]\n";
    for (const auto& [phase, id] : w.adc_ids) {
      out << id << " 1 10000 5 0 " << number(phase) << "\n";
    }
    out << "\n";
  }
  out << "[SHAPES]\n\nshape_id 1\nnum_samples " << kRfSamples << "\n";
  for (int n = 0; n < kRfSamples; ++n) out << "1\n";
  out << "\nshape_id 2\nnum_samples " << kRfSamples << "\n";
  for (int n = 0; n < kRfSamples; ++n) out << "0\n";
  out << "\n";
  std::string text = out.str();
  text +=
      "[SIGNATURE]\n# over the bytes before [SIGNATURE]\nType md5\nHash " + md5_hex(text) + "\n";
  (void)kRasterNs;
  return text;
}

void write_pulseq(const std::string& path, const sequence::Description& d,
                  const WriteOptions& options) {
  write_text_atomically(path, format_pulseq(d, options));
}

}  // namespace larmor::io::pulseq
