// Design decks: a fingerprinting deck ([sequence] with the mrf builder as the
// starting train, [tissue] as the prior, [simulation], [output] path for the
// optimised schedule CSV) plus a [design] table. docs/input-deck.md lists the
// keys; every error names the deck file, the line and the key.
#pragma once

#include <string>

#include "app/deck.hpp"
#include "design/crlb.hpp"
#include "design/mrf_design.hpp"
#include "design/spg.hpp"

namespace larmor::app {

struct DesignDeck {
  Deck deck;
  design::CrlbSpec crlb;
  design::MrfDesignSpace space;
  design::SpgOptions optimiser;
  std::string history_path;  // the CRLB history CSV
};

DesignDeck read_design_deck(const std::string& path);

}  // namespace larmor::app
