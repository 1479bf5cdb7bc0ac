#include "sequence/longitudinal_samples.hpp"

namespace larmor::sequence {

LongitudinalSamples add_longitudinal_samples(Description& d) {
  constexpr double kQuarterTurn = 1.5707963267948966;
  constexpr double kPi = 3.14159265358979323846;
  LongitudinalSamples out;
  // Mz has no residual phase: a weighted turned sample takes the weights of
  // no residual moment (the voxel's mean of Mx - i Mz).
  int still = 0;
  if (d.voxel.declared()) {
    d.voxel.residuals_per_m.push_back({0.0, 0.0, 0.0});
    still = int(d.voxel.residuals_per_m.size());
  }
  std::vector<Event> events;
  events.reserve(d.events.size());
  int sample = 0;
  for (const Event& e : d.events) {
    if (e.kind != EventKind::adc) {
      events.push_back(e);
      continue;
    }
    // The sample's shifts, spoiling and free evolution follow the turn back.
    Event own = e;
    own.action = e.action & (action::echo_centre);
    own.duration_s = 0.0;
    Event turn;
    turn.kind = EventKind::pulse;
    turn.flip_rad = kQuarterTurn;
    turn.action = action::b1_fixed;
    Event turned;
    turned.kind = EventKind::adc;
    turned.voxel_weights = still;
    Event back = turn;
    back.phase_rad = kPi;
    back.duration_s = e.duration_s;
    back.action |= ((e.action & action::shift_after) != 0 ? action::crush_after : 0u) |
                   (e.action & action::spoil_after);
    own.action |= e.action & action::crush_before;
    events.push_back(own);
    events.push_back(turn);
    events.push_back(turned);
    events.push_back(back);
    out.transverse.push_back(sample++);
    out.longitudinal.push_back(sample++);
  }
  d.events = std::move(events);
  return out;
}

}  // namespace larmor::sequence
