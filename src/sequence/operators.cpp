#include "sequence/operators.hpp"

namespace larmor::sequence {

Description& operator<<(Description& d, const Excitation& op) {
  Event e;
  e.kind = EventKind::pulse;
  e.flip_rad = op.flip_deg * deg;
  e.phase_rad = op.phase_deg * deg;
  e.duration_s = op.then_s;
  e.action = op.extra_action;
  d.events.push_back(e);
  return d;
}

Description& operator<<(Description& d, const Refocusing& op) {
  Event e;
  e.kind = EventKind::pulse;
  e.flip_rad = op.flip_deg * deg;
  e.phase_rad = op.phase_deg * deg;
  e.duration_s = op.then_s;
  e.action = op.crushers ? (action::crush_before | action::crush_after) : 0u;
  d.events.push_back(e);
  return d;
}

Description& operator<<(Description& d, const Readout& op) {
  Event e;
  e.kind = EventKind::adc;
  e.phase_rad = op.phase_deg * deg;
  e.duration_s = op.then_s;
  e.action = op.echo_centre ? action::echo_centre : 0u;
  if (op.after == AfterReadout::shift) e.action |= action::shift_after;
  if (op.after == AfterReadout::spoil) e.action |= action::spoil_after;
  d.events.push_back(e);
  return d;
}

Description& operator<<(Description& d, const Dephase& op) {
  Event e;
  e.duration_s = op.then_s;
  e.action = action::shift_after;
  d.events.push_back(e);
  return d;
}

Description& operator<<(Description& d, const Spoil& op) {
  Event e;
  e.duration_s = op.then_s;
  e.action = action::spoil_after;
  d.events.push_back(e);
  return d;
}

Description& operator<<(Description& d, const Delay& op) {
  Event e;
  e.duration_s = op.duration_s;
  d.events.push_back(e);
  return d;
}

}  // namespace larmor::sequence
