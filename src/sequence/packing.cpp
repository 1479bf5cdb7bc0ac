#include "sequence/packing.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "sequence/voxel_integral.hpp"
#include "sequence/waveform_pulses.hpp"

namespace larmor::sequence {

abi::PackedEventsRef PackedSequence::ref() const {
  abi::PackedEventsRef r;
  r.count = size();
  r.duration = duration.data();
  r.kind = kind.data();
  r.flip = flip.data();
  r.phase = phase.data();
  r.action = action.data();
  r.output_index = output_index.data();
  r.shim_index = shim_index.data();
  r.saturation = saturation.data();
  r.rf_frequency_hz = rf_frequency_hz.data();
  r.slice_profile = slice_profile.data();
  return r;
}

namespace {
[[noreturn]] void refuse(const Description& d, std::size_t i, const std::string& what) {
  throw std::invalid_argument("sequence '" + d.name + "', event " + std::to_string(i) + ": " +
                              what);
}

// What the whole description must hold before any event is packed.
void check_description(const Description& d) {
  if (d.events.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
    throw std::invalid_argument("sequence '" + d.name + "' has " + std::to_string(d.events.size()) +
                                " events; the kernels index events with 32-bit integers");
  }
  const auto& g = d.crusher;
  if (!(g.moment_per_m >= 0.0 && std::isfinite(g.moment_per_m)) ||
      !(g.duration_s >= 0.0 && std::isfinite(g.duration_s)) ||
      !(g.slice_thickness_m >= 0.0 && std::isfinite(g.slice_thickness_m))) {
    throw std::invalid_argument(
        "sequence '" + d.name +
        "': the crusher's moment, lobe duration and slice thickness must be "
        "finite and >= 0");
  }
  if (d.shims.channels < 0 ||
      (d.shims.channels > 0 && d.shims.weights.size() % std::size_t(d.shims.channels) != 0)) {
    throw std::invalid_argument("sequence '" + d.name +
                                "': " + std::to_string(d.shims.weights.size()) +
                                " shim weights are not whole settings of " +
                                std::to_string(d.shims.channels) + " channels");
  }
  for (const auto& w : d.shims.weights) {
    if (!std::isfinite(w.real()) || !std::isfinite(w.imag())) {
      throw std::invalid_argument("sequence '" + d.name + "': a shim weight is not finite");
    }
  }
  if (d.shims.settings() > abi::max_shim_settings) {
    throw std::invalid_argument("sequence '" + d.name + "': " + std::to_string(d.shims.settings()) +
                                " shim settings exceed the kernels' limit of " +
                                std::to_string(abi::max_shim_settings));
  }
  if (d.slice_profiles.size() > std::size_t(abi::max_slice_profiles)) {
    throw std::invalid_argument(
        "sequence '" + d.name + "': " + std::to_string(d.slice_profiles.size()) +
        " slice profiles exceed the kernels' limit of " + std::to_string(abi::max_slice_profiles));
  }
  if (d.waveforms.size() > std::size_t(abi::max_slice_profiles)) {
    throw std::invalid_argument("sequence '" + d.name + "': " + std::to_string(d.waveforms.size()) +
                                " pulse waveforms exceed the kernels' limit of " +
                                std::to_string(abi::max_slice_profiles));
  }
  validate_voxel_integral(d);
  validate_waveforms(d);
}

// One event's values, against the description's tables.
void check_event(const Description& d, std::size_t i) {
  const Event& e = d.events[i];
  if (!std::isfinite(e.duration_s) || e.duration_s < 0.0) {
    refuse(d, i, "duration " + std::to_string(e.duration_s) + " s must be finite and >= 0");
  }
  if (!std::isfinite(e.flip_rad)) refuse(d, i, "flip angle is not finite");
  if (!std::isfinite(e.phase_rad)) refuse(d, i, "phase is not finite");
  if (!std::isfinite(e.rf_frequency_hz)) refuse(d, i, "rf_frequency_hz is not finite");
  if ((e.action & ~action::all_bits) != 0) refuse(d, i, "unknown action bits");
  const bool rf = abi::is_rf(e.kind);
  if (!rf && e.flip_rad != 0.0) {
    refuse(d, i, "a flip angle on an event that is not a pulse");
  }
  if (e.kind == EventKind::adc && (e.action & (action::crush_before | action::crush_after))) {
    refuse(d, i, "crushers belong to refocusing pulses, not to a readout");
  }
  if (e.shim_index < 0 || (!rf && e.shim_index != 0)) {
    refuse(d, i,
           "shim_index " + std::to_string(e.shim_index) +
               (rf ? " is negative" : " on an event that is not a pulse"));
  }
  if (e.shim_index > d.shims.settings()) {
    refuse(d, i,
           "shim_index " + std::to_string(e.shim_index) + " but the sequence declares " +
               std::to_string(d.shims.settings()) + " shim settings");
  }
  if (e.slice_profile < 0 || (e.kind != EventKind::pulse && e.slice_profile != 0) ||
      e.slice_profile > int(d.slice_profiles.size())) {
    refuse(d, i,
           "slice_profile " + std::to_string(e.slice_profile) + " but the sequence declares " +
               std::to_string(d.slice_profiles.size()) + " slice profiles" +
               (e.kind == EventKind::pulse ? "" : " (and the event is not a pulse)"));
  }
  if (e.voxel_weights < 0 || (e.kind != EventKind::adc && e.voxel_weights != 0) ||
      e.voxel_weights > int(d.voxel.residuals_per_m.size())) {
    refuse(d, i,
           "voxel_weights " + std::to_string(e.voxel_weights) + " but the sequence declares " +
               std::to_string(d.voxel.residuals_per_m.size()) + " sample residuals" +
               (e.kind == EventKind::adc ? "" : " (and the event is not a sample)"));
  }
  if (e.waveform < 0 || (e.kind != EventKind::waveform_pulse && e.waveform != 0) ||
      (e.kind == EventKind::waveform_pulse &&
       (e.waveform == 0 || e.waveform > int(d.waveforms.size())))) {
    refuse(d, i,
           "waveform " + std::to_string(e.waveform) + " but the sequence declares " +
               std::to_string(d.waveforms.size()) + " pulse waveforms" +
               (e.kind == EventKind::waveform_pulse ? "" : " (and the event is not one)"));
  }
  if ((e.action & action::b1_fixed) != 0 && !rf) {
    refuse(d, i, "b1_fixed (a flip B1 does not scale) on an event that is not a pulse");
  }
  if ((e.action & action::b1_fixed) != 0 && e.shim_index != 0) {
    refuse(d, i,
           "a pulse B1 does not scale (b1_fixed) cannot use a transmit shim setting "
           "(shim_index " +
               std::to_string(e.shim_index) + ")");
  }
  if (e.slice_profile > 0 && e.flip_rad < 0.0) {
    refuse(d, i, "a slice-selective pulse needs a flip angle >= 0 (turn its phase instead)");
  }
}

}  // namespace

PackedSequence pack(const Description& d) {
  check_description(d);
  PackedSequence p;
  const std::size_t n = d.events.size();
  p.duration.reserve(n);
  p.kind.reserve(n);
  p.flip.reserve(n);
  p.phase.reserve(n);
  p.action.reserve(n);
  p.output_index.reserve(n);
  p.shim_index.reserve(n);
  p.saturation.reserve(n);
  p.rf_frequency_hz.reserve(n);
  p.slice_profile.reserve(n);
  double now = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const Event& e = d.events[i];
    check_event(d, i);
    // The kernels' duration runs from this instant to the next: the free
    // evolution and the lobes between (event_abi.hpp).
    const double interval_s = e.duration_s + d.lobe_time_after_s(i);
    p.duration.push_back(static_cast<float>(interval_s));
    p.kind.push_back(static_cast<std::uint8_t>(e.kind));
    p.flip.push_back(static_cast<float>(e.flip_rad));
    p.phase.push_back(e.phase_rad);
    p.action.push_back(e.action);
    p.shim_index.push_back(e.shim_index);
    p.saturation.push_back(e.saturation);
    p.rf_frequency_hz.push_back(static_cast<float>(e.rf_frequency_hz));
    // One array, by kind: a pulse's slice table, a waveform pulse's
    // waveform, a sample's voxel weights.
    p.slice_profile.push_back(e.kind == EventKind::adc              ? e.voxel_weights
                              : e.kind == EventKind::waveform_pulse ? e.waveform
                                                                    : e.slice_profile);
    if (e.kind == EventKind::adc) {
      p.output_index.push_back(p.samples++);
      p.sample_times_s.push_back(now);
      p.sample_is_echo_centre.push_back((e.action & action::echo_centre) ? 1 : 0);
    } else {
      p.output_index.push_back(-1);
    }
    now += interval_s + d.instant_length_s(i);
  }
  return p;
}

}  // namespace larmor::sequence
