// The atoms of a dictionary fit whose deck runs on the isochromat engine.
#pragma once

#include <string>

#include "app/deck.hpp"
#include "estimators/dictionary/dictionary.hpp"
#include "parallel/communicator.hpp"
#include "simulate/isochromat_simulator.hpp"
#include "tissue/tissue.hpp"

namespace larmor::app {

// The dictionary of `atoms` (the whole of the deck's [tissue] grid) played on
// `engine`. Isochromat atoms cost as much as the voxels they are matched
// against, so each rank plays its share of the grid and every rank gathers
// them all, in grid order: every rank holds the same dictionary. Tissue the
// engine cannot run is refused, naming the deck.
estimators::dictionary::Dictionary isochromat_dictionary(
    const simulate::IsochromatSimulator& engine, const Deck& deck, const tissue::Tissue& atoms,
    const parallel::Communicator& comm, const std::string& deck_path);

}  // namespace larmor::app
