#include "app/deck.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "app/impl/deck_section.hpp"
#include "app/impl/engine_keys.hpp"
#include "app/impl/events_deck.hpp"
#include "app/impl/pulseq_deck.hpp"
#include "io/nifti_file.hpp"
#include "io/toml_text.hpp"
#if LARMOR_HAVE_ISMRMRD
#include "io/mrd/mrd.hpp"
#endif
#include "sequence/builders/builders.hpp"
#include "sequence/slice_profile.hpp"

namespace larmor::app {

namespace fs = std::filesystem;

namespace {

using detail::Section;

using detail::ms;

// The longest T2 [s] of a grid tissue (every free pool's); none for maps,
// whose values are read later.
std::optional<double> longest_t2_s(const TissueSpec& t) {
  if (t.mode != TissueSpec::Mode::grid) return std::nullopt;
  double longest = 0.0;
  bool given = false;
  for (const auto property : {tissue::Property::t2, tissue::Property::pool_t2}) {
    const auto it = t.values.find(property);
    if (it == t.values.end()) continue;
    for (double ms : it->second) longest = std::max(longest, 1e-3 * ms);
    given = given || property == tissue::Property::t2;
  }
  // T2 not given is infinite: no transverse state ever decays.
  if (!given || !(longest > 0.0)) return std::nullopt;
  return longest;
}

// The builder's parameters from an MRD file's XML header (docs/mrd.md).
sequence::Description mrd_sequence(const std::string& builder, const Section& s,
                                   const fs::path& deck_dir, std::vector<std::string>& inputs) {
  const fs::path file = deck_dir / s.string("mrd", "");
  inputs.push_back(file.string());
  const int count = s.integer("count", 0, 0);
#if LARMOR_HAVE_ISMRMRD
  try {
    const auto m = io::mrd::read_dataset(file.string());
    return io::mrd::instantiate_builder(io::mrd::sequence_parameters(m.header_xml, file.string()),
                                        builder, file.string(), count);
  } catch (const io::mrd::MrdError& e) {
    s.fail("mrd", std::string("could not be used: ") + e.what());
  }
#else
  (void)count;
  s.fail("mrd", "needs libismrmrd, which this build of larmor lacks");
#endif
  throw std::logic_error("unreachable: Section::fail throws");
}

sequence::Description build_sequence(const std::string& builder, const Section& s,
                                     const fs::path& deck_dir,
                                     std::optional<sequence::MrfParams>& mrf,
                                     std::string* report_text, std::vector<std::string>& inputs,
                                     std::optional<double> longest_t2, bool* measures_mz,
                                     Deck& deck) {
  using namespace sequence;
  if (s.has("mrd")) return mrd_sequence(builder, s, deck_dir, inputs);
  if (builder == "pulseq") {
    return detail::pulseq_sequence(s, deck_dir, report_text, inputs, longest_t2, measures_mz, deck);
  }
  if (deck.engine == Engine::isochromat) {
    throw DeckError(s.file() +
                    ": [simulation] engine = \"isochromat\" plays Pulseq files "
                    "(builder = \"pulseq\"); the " +
                    builder + " builder runs on EPG");
  }
  if (builder == "events") return detail::read_event_list(s, deck_dir, inputs);
  return detail::build_shipped_sequence(builder, s, deck_dir, mrf, inputs);
}

// Keys every builder takes: the crusher's moment and lobe duration and the
// slice thickness (diffusion and flow), and a transmit array's shim settings
// with the cycle of settings the pulses use (dynamic shimming).
void read_gradient_and_shims(const std::string& builder, const Section& s,
                             sequence::Description& d) {
  if (builder != "pulseq" && s.has("crusher_moment_per_m")) {
    d.crusher.moment_per_m = s.positive("crusher_moment_per_m", 0.0);
  }
  // The builders' and the file's timing is instant to instant: the lobes
  // take their time out of it.
  const double lobe_s = ms(s.number("crusher_duration_ms", 0.0));
  if (lobe_s < 0.0) s.fail("crusher_duration_ms", "must be >= 0");
  if (lobe_s > 0.0) {
    try {
      sequence::place_lobes_within_timing(d, lobe_s);
    } catch (const std::invalid_argument& e) {
      s.fail("crusher_duration_ms", e.what());
    }
  }
  if (s.has("slice_thickness_mm"))
    d.crusher.slice_thickness_m = 1e-3 * s.positive("slice_thickness_mm", 1.0);
  if (!s.has("shim_weights")) {
    if (s.has("shim_cycle")) s.fail("shim_cycle", "needs shim_weights");
    return;
  }
  const toml::array* settings = s.node("shim_weights")->as_array();
  if (!settings || settings->empty()) {
    s.fail("shim_weights", "must be an array of settings, each an array of [re, im] per channel");
  }
  for (const toml::node& setting : *settings) {
    const auto w = s.complex_numbers("shim_weights", &setting);
    if (w.empty()) s.fail("shim_weights", "a setting needs one weight per channel");
    if (d.shims.channels == 0) d.shims.channels = int(w.size());
    if (int(w.size()) != d.shims.channels) {
      s.fail("shim_weights", "every setting needs the same number of channels");
    }
    d.shims.weights.insert(d.shims.weights.end(), w.begin(), w.end());
  }
  std::vector<int> cycle = {1};
  if (s.has("shim_cycle")) {
    cycle.clear();
    for (double v : s.numbers("shim_cycle")) {
      if (v != std::floor(v) || v < 0 || v > d.shims.settings()) {
        s.fail("shim_cycle", "must hold setting numbers from 0 (no array) to " +
                                 std::to_string(d.shims.settings()));
      }
      cycle.push_back(int(v));
    }
    if (cycle.empty()) s.fail("shim_cycle", "must not be empty");
  }
  std::size_t n = 0;
  for (auto& e : d.events) {
    if (e.kind == sequence::EventKind::pulse) e.shim_index = cycle[n++ % cycle.size()];
  }
}

// Slice-selective pulses: [[sequence.across_slice]] tables, each naming the
// pulses it shapes ("first": the first pulse, "rest": the others, "all") and
// the pulse (its own `waveform` samples, or a Hann-windowed sinc of
// `time_bandwidth`), its slice `thickness` relative to the sequence's, the
// `rephase` share of its slice-select area, and the profile's resolution
// (`positions` across `extent` slice thicknesses).
void read_slice_profiles(const std::string& file, const Section& s, sequence::Description& d) {
  if (!s.has("across_slice")) return;
  const toml::array* tables = s.node("across_slice")->as_array();
  if (!tables || tables->empty() || !tables->is_array_of_tables()) {
    s.fail("across_slice", "must be one or more [[sequence.across_slice]] tables");
  }
  std::vector<int> pulses;  // indices of the pulse events
  for (std::size_t i = 0; i < d.events.size(); ++i) {
    if (d.events[i].kind == sequence::EventKind::pulse) pulses.push_back(int(i));
  }
  for (const toml::node& node : *tables) {
    const int number = int(d.slice_profiles.size()) + 1;
    const Section t(file, "sequence.across_slice " + std::to_string(number), node.as_table());
    sequence::SliceProfileSpec spec;
    const std::string which = t.string("pulses", "all");
    if (which != "first" && which != "rest" && which != "all") {
      t.fail("pulses", "must be \"first\", \"rest\" or \"all\"");
    }
    spec.name = file + " [[sequence.across_slice]] " + std::to_string(number);
    spec.waveform = t.numbers("waveform");
    spec.time_bandwidth = t.positive("time_bandwidth", spec.time_bandwidth);
    spec.thickness = t.positive("thickness", spec.thickness);
    spec.rephase = t.number("rephase", which == "rest" ? 0.0 : 0.5);
    if (spec.rephase < 0.0 || spec.rephase > 1.0) t.fail("rephase", "must lie in [0, 1]");
    spec.positions = t.integer("positions", spec.positions, 1);
    spec.extent = t.positive("extent", spec.extent);
    spec.flip_nodes = t.integer("flip_nodes", spec.flip_nodes, 4);
    t.reject_unknown_keys();
    for (std::size_t k = 0; k < pulses.size(); ++k) {
      if ((which == "first" && k != 0) || (which == "rest" && k == 0)) continue;
      auto& e = d.events[std::size_t(pulses[k])];
      if (e.slice_profile != 0) {
        t.fail("pulses", "selects pulse " + std::to_string(k) + ", already shaped by table " +
                             std::to_string(e.slice_profile));
      }
      e.slice_profile = number;
    }
    d.slice_profiles.push_back(spec);
  }
}

// A property given as a number, an array, or a range {from, to, count,
// spacing = "linear" | "log"}.
std::vector<double> property_values(const Section& s, const std::string& key) {
  const toml::node* n = s.node(key);
  if (n->is_number()) return {s.number(key, 0.0)};
  if (n->is_array()) {
    auto v = s.numbers(key);
    if (v.empty()) s.fail(key, "must not be an empty array");
    return v;
  }
  if (const toml::table* t = n->as_table()) {
    const auto get = [&](const char* field) -> const toml::node* { return t->get(field); };
    for (const auto& [k, v] : *t) {
      const std::string name(k.str());
      if (name != "from" && name != "to" && name != "count" && name != "spacing") {
        s.fail(key, "has an unknown range field '" + name + "'");
      }
    }
    const toml::node* from = get("from");
    const toml::node* to = get("to");
    const toml::node* count = get("count");
    if (!from || !to || !count || !from->is_number() || !to->is_number() || !count->is_integer()) {
      s.fail(key, "range needs numeric 'from', 'to' and an integer 'count'");
    }
    const double a = from->value<double>().value();
    const double b = to->value<double>().value();
    const std::int64_t c = count->value<std::int64_t>().value();
    const std::string spacing =
        get("spacing") ? get("spacing")->value<std::string>().value_or("?") : "linear";
    if (c < 1 || c > 100000000) s.fail(key, "range count must be between 1 and 1e8");
    if (!std::isfinite(a) || !std::isfinite(b)) s.fail(key, "range ends must be finite");
    std::vector<double> out(static_cast<std::size_t>(c));
    for (std::int64_t i = 0; i < c; ++i) {
      const double f = c == 1 ? 0.0 : double(i) / double(c - 1);
      if (spacing == "linear") {
        out[std::size_t(i)] = a + (b - a) * f;
      } else if (spacing == "log") {
        if (!(a > 0.0 && b > 0.0)) s.fail(key, "a log range needs positive ends");
        out[std::size_t(i)] = a * std::pow(b / a, f);
      } else {
        s.fail(key, "range spacing must be \"linear\" or \"log\"");
      }
    }
    return out;
  }
  s.fail(key, "must be a number, an array of numbers, or {from, to, count, spacing}");
}

TissueSpec read_tissue(const Section& s, const fs::path& deck_dir) {
  TissueSpec spec;
  const auto resolved = [&](const std::string& name) {
    return (fs::path(name).is_absolute() ? fs::path(name) : deck_dir / name).string();
  };
  // A NIfTI file named for a property or the mask: every map is a NIfTI file
  // of its own (what larmor phantom --nifti and fit's nifti output write).
  std::string nifti_key;
  for (tissue::Property p : tissue::all_properties) {
    const std::string key = tissue::deck_name(p);
    if (s.has(key) && s.node(key)->is_string() && io::is_nifti_path(s.string(key, ""))) {
      nifti_key = key;
    }
  }
  if (s.has("mask") && s.node("mask")->is_string() && io::is_nifti_path(s.string("mask", ""))) {
    nifti_key = "mask";
  }
  if (s.has("maps")) {
    if (!nifti_key.empty()) {
      s.fail(nifti_key,
             "names a NIfTI file, but maps names an HDF5 file of datasets: give NIfTI maps "
             "without maps, or datasets of the maps file");
    }
    spec.mode = TissueSpec::Mode::maps;
    spec.maps_path = resolved(s.string("maps", ""));
    spec.mask_dataset = s.string("mask", "");
  } else if (!nifti_key.empty()) {
    spec.mode = TissueSpec::Mode::maps;
    spec.nifti = true;
    if (s.has("mask")) {
      if (!io::is_nifti_path(s.string("mask", ""))) {
        s.fail("mask", "must be a NIfTI file (.nii, .nii.gz) beside NIfTI maps");
      }
      spec.mask_dataset = resolved(s.string("mask", ""));
    }
  }
  // The bound pool's lineshape and T2 are model constants, not maps.
  spec.bound_t2_us = s.positive("bound_t2_us", spec.bound_t2_us);
  if (s.has("bound_lineshape")) {
    try {
      spec.bound_lineshape = tissue::lineshape_named(s.string("bound_lineshape", ""));
    } catch (const std::invalid_argument& e) {
      s.fail("bound_lineshape", e.what());
    }
  }
  if (s.has("transmit")) {
    // Per-channel complex fields: one uniform [re, im] per channel, or (maps
    // mode) a dataset of the volume's shape followed by [channels, 2].
    if (spec.mode == TissueSpec::Mode::maps && s.node("transmit")->is_string()) {
      if (spec.nifti) s.fail("transmit", "is read from an HDF5 maps file only, not from NIfTI");
      spec.transmit_dataset = s.string("transmit", "");
    } else {
      spec.transmit_uniform = s.complex_numbers("transmit", s.node("transmit"));
      if (spec.transmit_uniform.empty()) s.fail("transmit", "needs at least one channel");
    }
  }
  for (tissue::Property p : tissue::all_properties) {
    const std::string key = tissue::deck_name(p);
    if (!s.has(key)) continue;
    if (spec.mode == TissueSpec::Mode::maps && s.node(key)->is_string()) {
      const std::string name = s.string(key, "");
      if (spec.nifti && !io::is_nifti_path(name)) {
        s.fail(key, "must be a number or a NIfTI file (.nii, .nii.gz) beside NIfTI maps");
      }
      spec.map_datasets[p] = spec.nifti ? resolved(name) : name;
    } else {
      spec.values[p] = property_values(s, key);
    }
  }
  s.reject_unknown_keys();
  return spec;
}

const toml::table* table_or_null(const toml::table& root, const char* name,
                                 const std::string& file) {
  const toml::node* n = root.get(name);
  if (!n) return nullptr;
  if (!n->is_table()) {
    throw DeckError(file + ":" + std::to_string(n->source().begin.line) + ": '" + name +
                    "' must be a table ([" + name + "])");
  }
  return n->as_table();
}

// The TOML of a deck; a syntax error names the origin, line and column.
toml::table parse_deck_text(const std::string& text, const std::string& origin) {
  try {
    return toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    throw DeckError(origin + ":" + std::to_string(e.source().begin.line) + ":" +
                    std::to_string(e.source().begin.column) + ": " + std::string(e.description()));
  }
}

}  // namespace

toml::table detail::parse_deck_file(const std::string& path) {
  if (!fs::exists(path)) throw DeckError(path + ": no such deck file");
  if (fs::is_directory(path)) throw DeckError(path + ": is a folder, not a deck file (TOML)");
  std::string text;
  try {
    text = io::read_toml_text(path);
  } catch (const std::exception& e) {
    throw DeckError(e.what());
  }
  return parse_deck_text(text, path);
}

void require_epg(const Deck& deck, const std::string& command, const std::string& what_runs_it) {
  if (!deck.isochromats) return;
  throw DeckError(deck.path + ": " + command +
                  " runs on EPG, and this deck runs on the isochromat engine (" +
                  deck.engine_reason + "); " + what_runs_it + " runs it");
}

std::vector<std::string> builder_names() {
  return {"mese", "tse", "spgr", "mprage", "bssfp", "dess", "mt_spgr", "mrf", "pulseq", "events"};
}

Deck read_deck(const std::string& path, const std::set<std::string>& extra_sections,
               bool tissue_required) {
  return detail::read_deck_tables(detail::parse_deck_file(path), path, extra_sections,
                                  tissue_required);
}

Deck read_deck_text(const std::string& text, const std::string& origin, bool tissue_required) {
  return detail::read_deck_tables(parse_deck_text(text, origin), origin, {}, tissue_required);
}

Deck detail::read_deck_tables(const toml::table& root, const std::string& path,
                              const std::set<std::string>& extra_sections, bool tissue_required) {
  std::string extras;
  for (const auto& e : extra_sections) extras += ", " + e;
  for (const auto& [key, value] : root) {
    const std::string k(key.str());
    if (k != "sequence" && k != "tissue" && k != "simulation" && k != "output" &&
        !extra_sections.count(k)) {
      throw DeckError(path + ":" + std::to_string(value.source().begin.line) +
                      ": unknown section '" + k + "' (known: sequence, tissue, simulation, output" +
                      extras + ")");
    }
  }
  const fs::path deck_dir = fs::absolute(fs::path(path)).parent_path();
  Deck deck;
  deck.path = path;

  const toml::table* seq_table = table_or_null(root, "sequence", path);
  if (!seq_table) throw DeckError(path + ": the [sequence] section is required");
  Section seq(path, "sequence", seq_table);
  deck.builder = seq.string("builder", "");
  if (deck.builder.empty()) {
    throw DeckError(path + ":" + std::to_string(seq_table->source().begin.line) +
                    ": [sequence] needs a 'builder' key");
  }
  bool measures_mz = false;
  const toml::table* sim_table = table_or_null(root, "simulation", path);
  deck.engine = detail::read_engine(Section(path, "simulation", sim_table));
  // The tissue first: a Pulseq file's translation spoils the gaps that
  // outlast every transverse state of the tissue (its longest T2).
  const toml::table* tissue_table = table_or_null(root, "tissue", path);
  if (!tissue_table && tissue_required) {
    throw DeckError(path + ": the [tissue] section is required");
  }
  if (tissue_table) deck.tissue = read_tissue(Section(path, "tissue", tissue_table), deck_dir);
  try {
    deck.input_files.push_back(path);
    deck.sequence = build_sequence(deck.builder, seq, deck_dir, deck.mrf, &deck.sequence_report,
                                   deck.input_files, longest_t2_s(deck.tissue), &measures_mz, deck);
    read_gradient_and_shims(deck.builder, seq, deck.sequence);
    read_slice_profiles(path, seq, deck.sequence);
    // The tables' own checks (sizes, waveform, shared positions), named by
    // table; the Simulator integrates them.
    sequence::validate_slice_profiles(deck.sequence);
  } catch (const DeckError&) {
    throw;
  } catch (const std::exception& e) {
    throw DeckError(path + ": [sequence] " + e.what());
  }
  if (!deck.isochromats && deck.tissue.gives(tissue::Property::t2_prime)) {
    throw DeckError(path +
                    ": [tissue] t2_prime_ms: an intra-voxel frequency spread is simulated "
                    "by the isochromat engine only, and this deck runs on EPG (" +
                    (deck.builder == "pulseq" ? std::string("[simulation] engine = \"epg\"")
                                              : "builder '" + deck.builder +
                                                    "'; the isochromat engine plays Pulseq files") +
                    ")");
  }
  if (deck.isochromats ? deck.steps->samples() == 0 : deck.sequence.sample_count() == 0) {
    throw DeckError(path +
                    ": [sequence] records no sample (it has no ADC event), so there is no "
                    "signal to simulate or write");
  }
  seq.reject_unknown_keys();

  if (!deck.tissue.maps_path.empty()) deck.input_files.push_back(deck.tissue.maps_path);
  if (deck.tissue.nifti) {
    if (!deck.tissue.mask_dataset.empty()) deck.input_files.push_back(deck.tissue.mask_dataset);
    for (const auto& [p, file] : deck.tissue.map_datasets) deck.input_files.push_back(file);
  }

  Section sim(path, "simulation", sim_table);
  detail::read_engine(sim);  // (read above: the sequence depends on it)
  if (deck.isochromats) detail::read_isochromat_keys(sim, longest_t2_s(deck.tissue), deck);
  if (sim.has("orders")) {
    // The old key counted states (orders 0..N-1); max_order is the highest order kept.
    const toml::node* n = sim.node("orders");
    const auto old = n->value<std::int64_t>();
    sim.fail("orders",
             "is not read: the order cap is max_order, the highest EPG order kept "
             "(orders 0..max_order); write max_order = " +
                 (n->is_integer() && *old >= 1 ? std::to_string(*old - 1)
                                               : std::string("<orders - 1>")) +
                 " for the same truncation");
  }
  deck.simulation.max_order = sim.integer("max_order", -1, 0);
  if (deck.simulation.max_order >= abi::max_orders) {
    sim.fail("max_order", "= " + std::to_string(deck.simulation.max_order) +
                              " exceeds the EPG kernels' limit of " +
                              std::to_string(abi::max_orders - 1) + " (larmor::epg::forward)");
  }
  deck.simulation.chunk_voxels = sim.integer("chunk_voxels", 0, 0);
  deck.steady_state = sim.boolean("steady_state", false);
  deck.steady.tolerance = sim.positive("steady_state_tolerance", deck.steady.tolerance);
  deck.steady.max_repetitions =
      sim.integer("steady_state_max_repetitions", deck.steady.max_repetitions, 1);
  sim.reject_unknown_keys();

  Section out(path, "output", table_or_null(root, "output", path));
  deck.output_path = out.string("path", "larmor-" + deck.builder + ".h5");
  if (deck.output_path.empty()) out.fail("path", "is empty: name the file to write");
  deck.nifti_output = out.boolean("nifti", false);
  deck.last_samples = out.integer("last_samples", 0, 0);
  if (out.has("longitudinal")) {
    deck.longitudinal = out.boolean("longitudinal", false);
    if (extra_sections.count("estimator")) {
      out.fail("longitudinal", "is for larmor simulate (a fit reads the transverse signal)");
    }
  } else if (measures_mz && !extra_sections.count("estimator")) {
    deck.longitudinal = true;
  }
  if (deck.last_samples > 0 && extra_sections.count("estimator")) {
    out.fail("last_samples", "is for larmor simulate (a fit reads every sample)");
  }
  deck.kspace = out.boolean("kspace", false);
  if (deck.kspace) {
    if (extra_sections.count("estimator")) out.fail("kspace", "is for larmor simulate");
    if (!deck.isochromats) {
      out.fail("kspace",
               "needs the isochromat engine, which keeps the encodes (this sequence runs on "
               "EPG; set [simulation] engine = \"isochromat\" with a Pulseq file)");
    }
    if (deck.tissue.mode != TissueSpec::Mode::maps) {
      out.fail("kspace",
               "needs voxel positions: give [tissue] maps (a volume), whose voxels are "
               "placed on the sequence's voxel grid");
    }
    if (!deck.steps->every_sample) {
      out.fail("kspace", "needs every ADC sample: set [sequence] adc = \"every_sample\"");
    }
    if (deck.last_samples > 0 || (out.has("longitudinal") && deck.longitudinal)) {
      out.fail("kspace", "writes raw data only: drop last_samples and longitudinal");
    }
    deck.longitudinal = false;
  }
  if (deck.nifti_output && !extra_sections.count("estimator")) {
    out.fail("nifti", "NIfTI copies are written for larmor fit's maps only");
  }
  out.reject_unknown_keys();
  return deck;
}

}  // namespace larmor::app
