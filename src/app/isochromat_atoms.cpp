#include "app/isochromat_atoms.hpp"

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <vector>

#include "app/tissue_source.hpp"

namespace larmor::app {

estimators::dictionary::Dictionary isochromat_dictionary(
    const simulate::IsochromatSimulator& engine, const Deck& deck, const tissue::Tissue& atoms,
    const parallel::Communicator& comm, const std::string& deck_path) {
  const std::string refusal = simulate::isochromat_tissue_refusal(atoms);
  if (!refusal.empty()) {
    throw std::invalid_argument(deck_path + ": [tissue]: the isochromat engine runs this file (" +
                                deck.engine_reason + "), but " + refusal);
  }
  try {
    engine.most_frequency_offsets(atoms);  // refuses a spread beyond max_isochromats
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(deck_path + ": [tissue] " + e.what());
  }
  // A voxel's signal does not depend on the voxels beside it, so the shares
  // gathered equal the grid played whole.
  const LocalVoxels share = load_local_tissue(deck.tissue, comm, deck_path);
  const std::size_t row_floats = engine.samples() * 2;
  std::vector<float> mine(std::size_t(share.tissue.voxels) * row_floats);
  std::string failure;
  try {
    engine.run(share.tissue, mine.data(), nullptr);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  comm.throw_if_any_failed(failure.empty(), failure);
  const parallel::GatheredRows all =
      comm.all_gather_rows(mine.data(), share.tissue.voxels, row_floats * sizeof(float));
  std::vector<float> signals(all.bytes.size() / sizeof(float));
  std::copy_n(all.bytes.data(), all.bytes.size(), reinterpret_cast<unsigned char*>(signals.data()));
  return estimators::dictionary::make_dictionary(signals, int(engine.samples()), atoms);
}

}  // namespace larmor::app
