#include "sequence/operators.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace larmor::sequence {

namespace {
Description& append(Description& d, EventKind kind, double then_s, std::uint32_t action_bits,
                    double flip_deg = 0.0, double phase_deg = 0.0) {
  Event e;
  e.kind = kind;
  e.duration_s = then_s;
  e.action = action_bits;
  e.flip_rad = flip_deg * deg;
  e.phase_rad = phase_deg * deg;
  d.events.push_back(e);
  return d;
}
// A hard pulse's power integral: omega1 = flip / duration for `duration_s`.
void carry_power(Description& d, const char* op, double duration_s) {
  if (!(duration_s >= 0.0) || !std::isfinite(duration_s)) {
    throw std::invalid_argument(std::string(op) + ": duration_s = " + std::to_string(duration_s) +
                                " s; a hard pulse's duration must be finite and >= 0 (0: "
                                "instantaneous)");
  }
  if (duration_s == 0.0) return;
  Event& e = d.events.back();
  e.saturation = float(e.flip_rad * e.flip_rad / duration_s);
}

std::uint32_t b1_bit(bool b1_scaled) { return b1_scaled ? 0u : action::b1_fixed; }
}  // namespace

Description& operator<<(Description& d, const Excitation& op) {
  append(d, EventKind::pulse, op.then_s, op.extra_action | b1_bit(op.b1_scaled), op.flip_deg,
         op.phase_deg);
  carry_power(d, "excitation", op.duration_s);
  return d;
}

Description& operator<<(Description& d, const ShapedPulse& op) {
  std::complex<double> area = 0.0;
  for (const auto& x : op.shape) area += x;
  if (op.shape.empty() || !(std::abs(area) > 0.0) || !std::isfinite(std::abs(area))) {
    throw std::invalid_argument(
        "shaped pulse: the waveform is empty or its area is zero or not finite");
  }
  if (!(op.duration_s > 0.0) || !std::isfinite(op.duration_s)) {
    throw std::invalid_argument("shaped pulse: the duration must be positive");
  }
  if (!std::isfinite(op.frequency_offset_hz)) {
    throw std::invalid_argument("shaped pulse: the frequency offset must be finite");
  }
  const double dt = op.duration_s / double(op.shape.size());
  append(d, EventKind::wait, 0.5 * dt, 0u);
  for (std::size_t i = 0; i < op.shape.size(); ++i) {
    const double after = i + 1 < op.shape.size() ? dt : 0.5 * dt + op.then_s;
    const double from_centre = (double(i) + 0.5) * dt - 0.5 * op.duration_s;
    const double flip_deg = op.flip_deg * std::abs(op.shape[i]) / std::abs(area);
    append(
        d, EventKind::pulse, after, b1_bit(op.b1_scaled), flip_deg,
        op.phase_deg + std::arg(op.shape[i]) / deg + 360.0 * op.frequency_offset_hz * from_centre);
    Event& e = d.events.back();
    e.rf_frequency_hz = op.frequency_offset_hz;
    e.saturation = float((flip_deg * deg) * (flip_deg * deg) / dt);
  }
  return d;
}

Description& operator<<(Description& d, const Refocusing& op) {
  const std::uint32_t crushers = op.crushers ? (action::crush_before | action::crush_after) : 0u;
  append(d, EventKind::pulse, op.then_s, crushers | b1_bit(op.b1_scaled), op.flip_deg,
         op.phase_deg);
  carry_power(d, "refocusing pulse", op.duration_s);
  return d;
}

Description& operator<<(Description& d, const Readout& op) {
  std::uint32_t bits = op.echo_centre ? action::echo_centre : 0u;
  if (op.after == AfterReadout::shift) bits |= action::shift_after;
  if (op.after == AfterReadout::spoil) bits |= action::spoil_after;
  return append(d, EventKind::adc, op.then_s, bits, 0.0, op.phase_deg);
}

Description& operator<<(Description& d, const Dephase& op) {
  return append(d, EventKind::wait, op.then_s, action::shift_after);
}

Description& operator<<(Description& d, const Spoil& op) {
  return append(d, EventKind::wait, op.then_s, action::spoil_after);
}

Description& operator<<(Description& d, const Delay& op) {
  return append(d, EventKind::wait, op.then_s, 0u);
}

}  // namespace larmor::sequence
