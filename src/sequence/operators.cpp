#include "sequence/operators.hpp"

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
}  // namespace

Description& operator<<(Description& d, const Excitation& op) {
  return append(d, EventKind::pulse, op.then_s, op.extra_action, op.flip_deg, op.phase_deg);
}

Description& operator<<(Description& d, const Refocusing& op) {
  const std::uint32_t crushers = op.crushers ? (action::crush_before | action::crush_after) : 0u;
  return append(d, EventKind::pulse, op.then_s, crushers, op.flip_deg, op.phase_deg);
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
  return append(d, EventKind::wait, op.duration_s, 0u);
}

}  // namespace larmor::sequence
