// `builder = "events"`: a [sequence] that lists its events, in the deck or in
// a CSV file beside it (docs/input-deck.md). Not part of the public API.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "app/impl/deck_section.hpp"
#include "sequence/description.hpp"

namespace larmor::app::detail {

// The listed train of [sequence] `s`: `events` or `events_csv` with `repeat`,
// or [[sequence.block]] tables that each hold them. A CSV file is added to
// `inputs`. Throws DeckError naming the deck, the line, the event (1-based) or
// the CSV line, the key and the reason.
sequence::Description read_event_list(const Section& s, const std::filesystem::path& deck_dir,
                                      std::vector<std::string>& inputs);

}  // namespace larmor::app::detail
