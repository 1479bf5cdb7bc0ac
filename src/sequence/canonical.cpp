#include "sequence/canonical.hpp"

namespace larmor::sequence {

namespace {
// The bits that describe the instant itself rather than the gradients
// around it: an instant keeps them through the canonical form.
constexpr std::uint32_t instant_bits = action::echo_centre | action::b1_fixed;
}  // namespace

InstantForm instant_form(const Description& d) {
  InstantForm form;
  Gap* gap = &form.leading;
  for (const Event& e : d.events) {
    if (e.kind == EventKind::wait) {
      gap->duration_s += e.duration_s;
      gap->shifts += abi::shifts_of(e.action);
      gap->spoil = gap->spoil || (e.action & action::spoil_after) != 0;
      continue;
    }
    if ((e.action & action::crush_before) != 0) ++gap->shifts;
    Instant instant;
    instant.event = e;
    instant.event.duration_s = 0.0;
    instant.event.action = e.action & instant_bits;
    instant.after.duration_s = e.duration_s;
    instant.after.shifts =
        int((e.action & action::crush_after) != 0) + int((e.action & action::shift_after) != 0);
    instant.after.spoil = (e.action & action::spoil_after) != 0;
    form.instants.push_back(instant);
    gap = &form.instants.back().after;
  }
  return form;
}

namespace {

Event wait_event(double duration_s, std::uint32_t bits) {
  Event w;
  w.kind = EventKind::wait;
  w.duration_s = duration_s;
  w.action = bits;
  return w;
}

// Appends `opening` (an instant or the leading wait) with the gap's bits, and
// the zero-length waits for the shifts it cannot carry.
void append_with_gap(Description& d, Event opening, const Gap& gap, int shifts) {
  opening.duration_s = gap.duration_s;
  if (gap.spoil) opening.action |= action::spoil_after;
  // A sample carries one shift (crushers belong to pulses).
  const std::uint32_t order[2] = {
      opening.kind == EventKind::adc ? action::shift_after : action::crush_after, 0u};
  for (std::uint32_t bit : order) {
    if (shifts > 0 && bit != 0u) {
      opening.action |= bit;
      --shifts;
    }
  }
  if (shifts > 0) {
    // The gap's evolution stays on the opening event; the extra shifts
    // follow it at no cost in time.
    d.events.push_back(opening);
    for (; shifts > 0; --shifts) d.events.push_back(wait_event(0.0, action::crush_after));
    return;
  }
  d.events.push_back(opening);
}

}  // namespace

Description assemble(const InstantForm& form, const std::string& name) {
  Description d;
  d.name = name;
  const std::size_t n = form.instants.size();
  auto gap_before = [&](std::size_t i) -> const Gap& {
    return i == 0 ? form.leading : form.instants[i - 1].after;
  };
  std::vector<char> takes_before(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    takes_before[i] = abi::is_rf(form.instants[i].event.kind) && gap_before(i).shifts > 0 &&
                      form.instants[i].after.shifts > 0;
  }
  auto shifts_left = [&](std::size_t gap_owner_next, const Gap& gap) {
    return gap.shifts - (gap_owner_next < n && takes_before[gap_owner_next] ? 1 : 0);
  };
  const Gap& lead = form.leading;
  if (lead.duration_s > 0.0 || lead.shifts > 0 || lead.spoil) {
    append_with_gap(d, wait_event(0.0, 0u), lead, shifts_left(0, lead));
  }
  for (std::size_t i = 0; i < n; ++i) {
    Event e = form.instants[i].event;
    e.action &= instant_bits;
    if (takes_before[i]) e.action |= action::crush_before;
    append_with_gap(d, e, form.instants[i].after, shifts_left(i + 1, form.instants[i].after));
  }
  return d;
}

Description canonical_form(const Description& d) {
  Description c = assemble(instant_form(d), d.name);
  c.parameters = d.parameters;
  c.voxel = d.voxel;  // the samples' weights refer to it
  return c;
}

}  // namespace larmor::sequence
