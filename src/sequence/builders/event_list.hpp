// A train written out event by event (`builder = "events"` in a deck): pulses,
// waits, crusher shifts, ideal spoiling and samples in the order they happen,
// folded into a description whose every event is one the kernels run.
#pragma once

#include <string>
#include <vector>

#include "sequence/description.hpp"

namespace larmor::sequence {

// One listed event. Every event is an instant (taking no time) followed by
// `duration_s` of free evolution: relaxation and precession with no RF.
struct ListedEvent {
  enum class Type { pulse, wait, shift, spoil, sample };
  Type type = Type::wait;
  double flip_deg = 0.0;    // pulse
  double phase_deg = 0.0;   // pulse: RF phase; sample: receiver (demodulation) phase
  double duration_s = 0.0;  // free evolution after the instant; a wait's whole length
  int count = 1;            // shift: how many one-order dephasings
  bool b1_scaled = true;    // pulse: false keeps the nominal flip whatever B1 is
  std::string where;        // where it was written, for messages ("deck.toml:12: events 3")
};

// A run of listed events played `repeat` times over.
struct EventBlock {
  std::vector<ListedEvent> events;
  int repeat = 1;
  std::string where;  // for messages about the block as a whole
};

// The event type of a name ("pulse", "wait", "shift", "spoil", "sample");
// false for any other name.
bool listed_event_type(const std::string& name, ListedEvent::Type& type);
const char* listed_event_name(ListedEvent::Type type);

// Whether an event of `type` takes the key (flip_deg, phase_deg, duration_ms,
// count, b1_scaled); `event` itself is not asked about.
bool listed_event_takes(ListedEvent::Type type, const std::string& key);

// The key an event of `type` cannot do without (a pulse's flip_deg, a wait's
// duration_ms); null when every key has a default.
const char* listed_event_required_key(ListedEvent::Type type);

// The keys of listed events, in the order documented.
const std::vector<std::string>& listed_event_keys();

// What is wrong with an event's values, in the deck's terms (keys in ms and
// degrees), e.g. "duration_ms must be >= 0 (got -1)"; empty when nothing is.
std::string listed_event_problem(const ListedEvent& e);

// The description of the listed train. Each event's free evolution is added
// to the event before it where nothing happens in between (a pulse followed
// by a wait is one pulse event with that duration); a shift directly before a
// pulse or sample is its crush_before, one directly after it (no evolution
// between) its crush_after or shift_after; spoiling directly after an instant
// or shift is its spoil_after. Shifts and spoiling with evolution on both
// sides become wait events of their own, so the order of shifts, spoiling and
// evolution is kept exactly (diffusion and lobe timing depend on it). Every
// sample is an echo-centre ADC. Throws std::invalid_argument naming the event
// (its `where`) for a bad value, and for a train over 2^24 events.
Description build_event_list(const std::vector<EventBlock>& blocks);

// Reads events from a CSV file: a header line naming the columns (`event`
// required; flip_deg, phase_deg, duration_ms, count, b1_scaled optional, in
// any order), then one event per line; an empty cell is the key's default.
// Blank lines and lines starting with '#' are skipped. Throws
// std::runtime_error naming the file, the line, the column and the reason.
std::vector<ListedEvent> read_event_list_csv(const std::string& path);

}  // namespace larmor::sequence
