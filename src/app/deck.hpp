// Input decks (TOML): the sequence, the tissue, the simulation options and
// where the results go. docs/input-deck.md is the reference; every error names
// the deck file, the line and the key.
#pragma once

#include <complex>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "sequence/builders/builders.hpp"
#include "sequence/description.hpp"
#include "sequence/step_table.hpp"
#include "simulate/isochromat_simulator.hpp"
#include "simulate/simulator.hpp"
#include "tissue/tissue.hpp"

namespace larmor::app {

// Where the voxels come from: a grid of every combination of the listed
// values (a dictionary), or per-voxel maps in an HDF5 file with a mask.
struct TissueSpec {
  enum class Mode { grid, maps };
  Mode mode = Mode::grid;
  // Grid mode: the values of each property in deck units (a single value is
  // uniform). Properties not listed stay at their identity value.
  std::map<tissue::Property, std::vector<double>> values;
  // Maps mode: datasets of one HDF5 file, or (nifti) NIfTI files, one per
  // map, whose paths mask_dataset and map_datasets then hold.
  std::string maps_path;                                 // resolved against the deck
  std::string mask_dataset;                              // empty: every voxel
  std::map<tissue::Property, std::string> map_datasets;  // property -> dataset
  bool nifti = false;
  // A transmit array: uniform per-channel fields, or a maps-mode dataset.
  std::vector<std::complex<double>> transmit_uniform;
  std::string transmit_dataset;
  // A bound pool's model constants.
  double bound_t2_us = 12.0;
  tissue::Lineshape bound_lineshape = tissue::Lineshape::super_lorentzian;
  // Whether the deck gives `p` (values or a map).
  bool gives(tissue::Property p) const { return values.count(p) > 0 || map_datasets.count(p) > 0; }
};

// [simulation] engine: EPG, the isochromat engine, or (auto) EPG where a
// Pulseq file's translation is exact and the isochromat engine otherwise.
enum class Engine { automatic, epg, isochromat };

struct Deck {
  std::string path;
  std::string builder;
  sequence::Description sequence;
  // The fingerprinting builder's parameters, for tools that rebuild the train
  // with other values (larmor design); empty for other builders.
  std::optional<sequence::MrfParams> mrf;
  // What a Pulseq file translated to (its assumptions and warnings), for
  // rank 0 to print; empty for the builders.
  std::string sequence_report;
  // Every file the deck reads (itself, a sequence file, a schedule, maps):
  // no output may be one of them.
  std::vector<std::string> input_files;
  TissueSpec tissue;
  simulate::Options simulation;
  // [simulation] steady_state: the fixed point of the sequence as one period.
  bool steady_state = false;
  simulate::SteadyStateOptions steady;
  std::string output_path;    // relative paths are relative to the working directory
  bool nifti_output = false;  // [output] nifti (fit decks): NIfTI copies of the maps
  int last_samples = 0;       // [output] last_samples: write only each voxel's last N (0: all)
  // [output] kspace: the output is the phantom's raw k-space (ISMRMRD), the
  // voxels' samples summed at their positions, instead of per-voxel signals.
  bool kspace = false;
  // [output] longitudinal: /mz, each sample's mean longitudinal magnetisation,
  // beside /signals; on by itself for a Pulseq file none of whose samples
  // follows an excitation (a saturation or CEST file measures Mz).
  bool longitudinal = false;
  // The engine asked for and the one that runs: with `isochromats` the
  // isochromat engine plays `steps` (a Pulseq file) over the voxel of
  // `isochromat`, for the reason in `engine_reason` (EPG's refusal under
  // auto), and `sequence` is empty.
  Engine engine = Engine::automatic;
  bool isochromats = false;
  std::string engine_reason;
  std::optional<sequence::StepTable> steps;
  simulate::IsochromatSettings isochromat;
};

// Parses and validates a deck; throws DeckError. Tables other than
// sequence, tissue, simulation and output are errors unless listed in
// `extra_sections` (read by the caller, e.g. [design]).
// `tissue_required` false: decks that take their voxels elsewhere (larmor fit)
// may leave [tissue] out.
Deck read_deck(const std::string& path, const std::set<std::string>& extra_sections = {},
               bool tissue_required = true);
// The same on a deck's TOML text rather than its file (the Python bindings
// write one from keyword arguments): `origin` stands for the file's path in
// every message.
Deck read_deck_text(const std::string& text, const std::string& origin,
                    bool tissue_required = true);

struct DeckError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Every command but `larmor simulate` runs EPG: a deck that runs on the
// isochromat engine is refused, naming the command and the engine's reason.
void require_epg(const Deck& deck, const std::string& command,
                 const std::string& what_runs_it = "larmor simulate");

// Names of the shipped builders, for messages and the CLI.
std::vector<std::string> builder_names();

}  // namespace larmor::app
