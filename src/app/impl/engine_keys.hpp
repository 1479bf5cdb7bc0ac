// The deck's engine keys ([simulation] engine, isochromats,
// isochromat_accuracy): private to src/app.
#pragma once

#include <optional>

#include "app/deck.hpp"
#include "app/impl/deck_section.hpp"

namespace larmor::app::detail {

// [simulation] engine = "auto" (default) | "epg" | "isochromat".
Engine read_engine(const Section& simulation);

// The isochromat engine's keys, and its voxel from the step table; refuses
// keys it cannot honour (steady_state).
void read_isochromat_keys(const Section& simulation, std::optional<double> longest_t2_s,
                          Deck& deck);

}  // namespace larmor::app::detail
