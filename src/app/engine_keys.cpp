#include "app/impl/engine_keys.hpp"

namespace larmor::app::detail {

Engine read_engine(const Section& simulation) {
  const std::string engine = simulation.string("engine", "auto");
  if (engine == "auto") return Engine::automatic;
  if (engine == "epg") return Engine::epg;
  if (engine == "isochromat") return Engine::isochromat;
  simulation.fail("engine", "must be \"auto\", \"epg\" or \"isochromat\"");
}

void read_isochromat_keys(const Section& simulation, std::optional<double> longest_t2_s,
                          Deck& deck) {
  if (simulation.boolean("steady_state", false)) {
    simulation.fail("steady_state",
                    "is solved by the EPG engine only; the isochromat engine plays the file "
                    "as written (" +
                        deck.engine_reason + ")");
  }
  auto& settings = deck.isochromat;
  if (simulation.has("isochromats")) {
    settings.isochromats = simulation.integer("isochromats", 1, 1);
  }
  settings.accuracy = simulation.number("isochromat_accuracy", settings.accuracy);
  if (!(settings.accuracy > 0.0 && settings.accuracy < 0.5)) {
    simulation.fail("isochromat_accuracy", "must lie between 0 and 0.5");
  }
  settings.longest_t2_s = longest_t2_s;
  settings.voxel_size_m = deck.steps->voxel_size_m;
  settings.centre_m = deck.steps->slice_position_m;
}

}  // namespace larmor::app::detail
