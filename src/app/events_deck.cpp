#include "app/impl/events_deck.hpp"

#include <algorithm>

#include "sequence/builders/event_list.hpp"

namespace larmor::app::detail {

namespace fs = std::filesystem;

namespace {

using sequence::ListedEvent;

// A complaint about a table as a whole (a key it lacks has no line of its
// own): the table's line.
[[noreturn]] void fail_at(const std::string& file, const toml::node& table, const std::string& name,
                          const std::string& what) {
  throw DeckError(file + ":" + std::to_string(table.source().begin.line) + ": [" + name + "] " +
                  what);
}

std::string event_keys_text() {
  std::string text = "event";
  for (const auto& k : sequence::listed_event_keys()) text += ", " + k;
  return text;
}

std::string keys_of(ListedEvent::Type type) {
  std::string text;
  for (const auto& k : sequence::listed_event_keys()) {
    if (sequence::listed_event_takes(type, k)) text += (text.empty() ? "" : ", ") + k;
  }
  return text;
}

ListedEvent read_event(const std::string& file, const toml::node& node, const std::string& name) {
  const toml::table* table = node.as_table();
  if (!table) {
    fail_at(file, node, name,
            "must be a table such as { event = \"pulse\", flip_deg = 90.0 }, not a bare value");
  }
  const Section e(file, name, table);
  const auto& keys = sequence::listed_event_keys();
  for (const auto& [key, value] : *table) {
    const std::string k(key.str());
    if (k != "event" && std::find(keys.begin(), keys.end(), k) == keys.end()) {
      e.fail(k, "is not a key of an event (" + event_keys_text() + ")");
    }
  }
  ListedEvent out;
  out.where = file + ":" + std::to_string(node.source().begin.line) + ": [" + name + "]";
  if (!e.has("event")) {
    fail_at(file, node, name, "event is required: pulse, wait, shift, spoil or sample");
  }
  const std::string type = e.string("event", "");
  if (!sequence::listed_event_type(type, out.type)) {
    e.fail("event", "'" + type + "' is not an event type (pulse, wait, shift, spoil, sample)");
  }
  for (const auto& k : keys) {
    if (!e.has(k)) continue;
    if (!sequence::listed_event_takes(out.type, k)) {
      e.fail(k, std::string("is not a key of a ") + sequence::listed_event_name(out.type) +
                    " event (it takes " + keys_of(out.type) + ")");
    }
  }
  if (const char* required = sequence::listed_event_required_key(out.type);
      required != nullptr && !e.has(required)) {
    fail_at(file, node, name, std::string(required) + " is required for a " + type + " event");
  }
  out.flip_deg = e.number("flip_deg", out.flip_deg);
  out.phase_deg = e.number("phase_deg", out.phase_deg);
  out.duration_s = 1e-3 * e.number("duration_ms", 0.0);
  out.count = e.integer("count", out.count, 1);
  out.b1_scaled = e.boolean("b1_scaled", out.b1_scaled);
  if (const std::string problem = sequence::listed_event_problem(out); !problem.empty()) {
    fail_at(file, node, name, problem);
  }
  return out;
}

// One run of events: `events` or `events_csv`, and `repeat`, from [sequence]
// itself or from one [[sequence.block]] (`name` is its name in messages).
sequence::EventBlock read_block(const Section& t, const toml::node& table, const std::string& name,
                                const fs::path& deck_dir, std::vector<std::string>& inputs) {
  sequence::EventBlock block;
  block.where = t.file() + ":" + std::to_string(table.source().begin.line) + ": [" + name + "]";
  if (t.has("events") && t.has("events_csv")) {
    t.fail("events_csv",
           "and events are both given: list the events in the deck or in a CSV file, not both");
  }
  if (!t.has("events") && !t.has("events_csv")) {
    fail_at(t.file(), table, name,
            "needs events = [ { event = \"pulse\", flip_deg = 90.0 }, ... ] or events_csv = "
            "\"train.csv\"");
  }
  block.repeat = t.integer("repeat", 1, 1);
  if (t.has("events_csv")) {
    const std::string csv = t.string("events_csv", "");
    if (csv.empty()) t.fail("events_csv", "must name a CSV file");
    const fs::path file = fs::path(csv).is_absolute() ? fs::path(csv) : deck_dir / csv;
    inputs.push_back(file.string());
    try {
      block.events = sequence::read_event_list_csv(file.string());
    } catch (const std::runtime_error& e) {
      t.fail("events_csv", std::string("could not be read: ") + e.what());
    }
    return block;
  }
  const toml::array* events = t.node("events")->as_array();
  if (!events || events->empty()) {
    t.fail("events",
           "must be a non-empty array of events, e.g. [ { event = \"pulse\", "
           "flip_deg = 90.0 }, { event = \"wait\", duration_ms = 5.0 } ]");
  }
  for (std::size_t k = 0; k < events->size(); ++k) {
    const std::string event_name =
        (name == "sequence" ? std::string("sequence.events ") : name + ", events ") +
        std::to_string(k + 1);
    block.events.push_back(read_event(t.file(), (*events)[k], event_name));
  }
  return block;
}

}  // namespace

sequence::Description read_event_list(const Section& s, const fs::path& deck_dir,
                                      std::vector<std::string>& inputs) {
  std::vector<sequence::EventBlock> blocks;
  if (s.has("block")) {
    for (const char* key : {"events", "events_csv", "repeat"}) {
      if (s.has(key)) {
        s.fail(key, "goes inside each [[sequence.block]] when the train is given in blocks");
      }
    }
    const toml::array* tables = s.node("block")->as_array();
    if (!tables || tables->empty() || !tables->is_array_of_tables()) {
      s.fail("block", "must be one or more [[sequence.block]] tables");
    }
    for (std::size_t b = 0; b < tables->size(); ++b) {
      const toml::node& node = (*tables)[b];
      const std::string name = "sequence.block " + std::to_string(b + 1);
      const Section t(s.file(), name, node.as_table());
      blocks.push_back(read_block(t, node, name, deck_dir, inputs));
      t.reject_unknown_keys();
    }
  } else {
    blocks.push_back(read_block(s, *s.table(), "sequence", deck_dir, inputs));
  }
  return sequence::build_event_list(blocks);
}

}  // namespace larmor::app::detail
