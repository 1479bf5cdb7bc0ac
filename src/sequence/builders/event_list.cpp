#include "sequence/builders/event_list.hpp"

#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "sequence/operators.hpp"

namespace larmor::sequence {

namespace {

using Type = ListedEvent::Type;

std::string number_text(double v) {
  std::string s = std::to_string(v);
  // std::to_string writes six decimals: drop the zeros that say nothing.
  if (s.find('.') != std::string::npos) {
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

// Folds listed events into description events, keeping the ABI's order
// inside one event: crush_before, the instant, crush_after and shift_after,
// spoil_after, then the free evolution.
class Fold {
 public:
  explicit Fold(Description& d) : d_(d) {}

  void add(const ListedEvent& e) {
    switch (e.type) {
      case Type::pulse:
      case Type::sample:
        instant(e);
        break;
      case Type::shift:
        for (int n = 0; n < e.count; ++n) shift();
        break;
      case Type::spoil:
        spoil();
        break;
      case Type::wait:
        break;
    }
    evolve(e.duration_s);
  }

  void finish() { place_pending_in_waits(); }

 private:
  Event& last() { return d_.events.back(); }

  void push(const Event& e) {
    d_.events.push_back(e);
    takes_shifts_ = true;
    takes_spoil_ = true;
  }

  void instant(const ListedEvent& listed) {
    Event e;
    if (listed.type == Type::pulse) {
      e.kind = EventKind::pulse;
      e.flip_rad = listed.flip_deg * deg;
      if (!listed.b1_scaled) e.action |= action::b1_fixed;
    } else {
      e.kind = EventKind::adc;
      e.action |= action::echo_centre;
    }
    e.phase_rad = listed.phase_deg * deg;
    if (pending_shifts_ > 0) {
      // The shift nearest the instant is its crush_before; any others happen
      // at the same time, in waits of no length just before it.
      --pending_shifts_;
      place_pending_in_waits();
      e.action |= action::crush_before;
    }
    push(e);
  }

  // One dephasing: on the event just placed when nothing (no evolution, no
  // spoiling) has happened since its instant, else kept for the next event.
  void shift() {
    if (!d_.events.empty() && takes_shifts_) {
      Event& e = last();
      const std::uint32_t first =
          e.kind == EventKind::adc ? action::shift_after : action::crush_after;
      const std::uint32_t second =
          e.kind == EventKind::adc ? action::crush_after : action::shift_after;
      for (std::uint32_t bit : {first, second}) {
        if ((e.action & bit) == 0) {
          e.action |= bit;
          return;
        }
      }
    }
    ++pending_shifts_;
  }

  void spoil() {
    place_pending_in_waits();
    if (!d_.events.empty() && takes_spoil_) {
      last().action |= action::spoil_after;
    } else {
      Event w;
      w.action = action::spoil_after;
      push(w);
    }
    takes_shifts_ = false;  // a shift after the spoiling comes after it
  }

  void evolve(double duration_s) {
    if (!(duration_s > 0.0)) return;
    place_pending_in_waits();
    if (d_.events.empty()) push(Event{});
    last().duration_s += duration_s;
    takes_shifts_ = false;
    takes_spoil_ = false;
  }

  // Shifts with no instant right after them: waits of no length, two shifts
  // each (crush_after, then shift_after), that later evolution extends.
  void place_pending_in_waits() {
    while (pending_shifts_ > 0) {
      Event w;
      w.action = action::crush_after;
      if (pending_shifts_ >= 2) w.action |= action::shift_after;
      pending_shifts_ -= abi::shifts_of(w.action);
      push(w);
    }
  }

  Description& d_;
  int pending_shifts_ = 0;
  bool takes_shifts_ = false;
  bool takes_spoil_ = false;
};

}  // namespace

bool listed_event_type(const std::string& name, ListedEvent::Type& type) {
  for (Type t : {Type::pulse, Type::wait, Type::shift, Type::spoil, Type::sample}) {
    if (name == listed_event_name(t)) {
      type = t;
      return true;
    }
  }
  return false;
}

const char* listed_event_name(ListedEvent::Type type) {
  switch (type) {
    case Type::pulse:
      return "pulse";
    case Type::wait:
      return "wait";
    case Type::shift:
      return "shift";
    case Type::spoil:
      return "spoil";
    case Type::sample:
      return "sample";
  }
  return "?";
}

bool listed_event_takes(ListedEvent::Type type, const std::string& key) {
  if (key == "duration_ms") return true;
  if (key == "flip_deg" || key == "b1_scaled") return type == Type::pulse;
  if (key == "phase_deg") return type == Type::pulse || type == Type::sample;
  if (key == "count") return type == Type::shift;
  return false;
}

const char* listed_event_required_key(ListedEvent::Type type) {
  if (type == Type::pulse) return "flip_deg";
  if (type == Type::wait) return "duration_ms";
  return nullptr;
}

const std::vector<std::string>& listed_event_keys() {
  static const std::vector<std::string> keys = {"flip_deg", "phase_deg", "duration_ms", "count",
                                                "b1_scaled"};
  return keys;
}

std::string listed_event_problem(const ListedEvent& e) {
  if (!std::isfinite(e.flip_deg)) return "flip_deg must be finite";
  if (!std::isfinite(e.phase_deg)) return "phase_deg must be finite";
  if (!std::isfinite(e.duration_s)) return "duration_ms must be finite";
  if (e.type == Type::wait && !(e.duration_s > 0.0)) {
    return "duration_ms must be positive (got " + number_text(e.duration_s * 1e3) + ")";
  }
  if (e.duration_s < 0.0) {
    return "duration_ms must be >= 0 (got " + number_text(e.duration_s * 1e3) +
           "): it is the free evolution after the event";
  }
  if (e.type == Type::shift && e.count < 1) {
    return "count must be at least 1 (got " + std::to_string(e.count) + ")";
  }
  return "";
}

Description build_event_list(const std::vector<EventBlock>& blocks) {
  // Every listed event is at most one description event, a shift of count n
  // at most n: refuse a train the host could not hold before building it (as
  // the other builders do, at 2^24 events).
  double bound = 0.0;
  std::int64_t listed = 0;
  for (const EventBlock& b : blocks) {
    if (b.repeat < 1) {
      throw std::invalid_argument(b.where + ": repeat must be at least 1 (got " +
                                  std::to_string(b.repeat) + ")");
    }
    double per_pass = 0.0;
    for (const ListedEvent& e : b.events) {
      const std::string problem = listed_event_problem(e);
      if (!problem.empty()) throw std::invalid_argument(e.where + ": " + problem);
      per_pass += e.type == Type::shift ? double(e.count) : 1.0;
    }
    bound += per_pass * b.repeat;
    listed += std::int64_t(b.events.size()) * b.repeat;
  }
  constexpr double limit = double(std::int64_t(1) << 24);
  if (bound > limit) {
    throw std::invalid_argument(
        "events: the listed train (repeats and shift counts included) "
        "may give " +
        number_text(bound) + " events; trains are limited to " +
        std::to_string(std::int64_t(limit)) + " events (2^24)");
  }
  Description d;
  d.name = "events";
  d.parameters = {{"listed_events", double(listed)}};
  Fold fold(d);
  for (const EventBlock& b : blocks) {
    for (int r = 0; r < b.repeat; ++r) {
      for (const ListedEvent& e : b.events) fold.add(e);
    }
  }
  fold.finish();
  return d;
}

}  // namespace larmor::sequence
