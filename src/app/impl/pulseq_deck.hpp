// `builder = "pulseq"`: a Pulseq file for the deck's engine. Not part of the
// public API.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "app/deck.hpp"
#include "app/impl/deck_section.hpp"

namespace larmor::app::detail {

// The file of [sequence] `s` translated to events with the deck's
// translation keys (*report_text: what it translated to; *measures_mz when
// no sample follows an excitation). Where deck.engine is the isochromat
// engine, or automatic and EPG refuses the file, its step table instead
// (deck.steps, deck.isochromats, deck.engine_reason), and no events. Throws
// DeckError naming the deck, the line, the key and the reason.
sequence::Description pulseq_sequence(const Section& s, const std::filesystem::path& deck_dir,
                                      std::string* report_text, std::vector<std::string>& inputs,
                                      std::optional<double> longest_t2, bool* measures_mz,
                                      Deck& deck);

}  // namespace larmor::app::detail
