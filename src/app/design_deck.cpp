#include "app/design_deck.hpp"

#include <algorithm>
#include <filesystem>

#include "app/impl/deck_section.hpp"

namespace larmor::app {

namespace {

using detail::Section;

int direction_of(const Section& s, const std::string& key, const std::string& name) {
  const auto& names = design::tissue_direction_names();
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) s.fail(key, "names '" + name + "', not one of m0, t1, t2, b1, df");
  return int(it - names.begin());
}

std::vector<std::string> strings(const Section& s, const std::string& key,
                                 const std::vector<std::string>& fallback) {
  const toml::node* n = s.node(key);
  if (!n) return fallback;
  const toml::array* a = n->as_array();
  if (!a || a->empty()) s.fail(key, "must be a non-empty array of strings");
  std::vector<std::string> out;
  for (const toml::node& e : *a) {
    if (!e.is_string()) s.fail(key, "must hold strings only");
    out.push_back(e.value<std::string>().value());
  }
  return out;
}

// [min, max] in deck units.
std::pair<double, double> bounds(const Section& s, const std::string& key,
                                 std::pair<double, double> fallback) {
  if (!s.has(key)) return fallback;
  const auto v = s.numbers(key);
  if (v.size() != 2 || !(v[0] < v[1])) s.fail(key, "must be [min, max] with min < max");
  return {v[0], v[1]};
}

}  // namespace

DesignDeck read_design_deck(const std::string& path) {
  DesignDeck out;
  const toml::table root = detail::parse_deck_file(path);
  out.deck = detail::read_deck_tables(root, path, {"design"}, true);
  require_epg(out.deck, "larmor design");
  const toml::node* node = root.get("design");
  if (!node || !node->is_table()) throw DeckError(path + ": the [design] section is required");
  Section s(path, "design", node->as_table());
  if (!out.deck.mrf) {
    throw DeckError(path + ": [sequence] builder must be \"mrf\" for a design (got \"" +
                    out.deck.builder + "\")");
  }

  // What the Fisher matrix estimates, and the weight of each bound.
  for (const auto& name : strings(s, "estimate", {"m0", "t1", "t2"})) {
    const int d = direction_of(s, "estimate", name);
    if (std::count(out.crlb.estimated.begin(), out.crlb.estimated.end(), d)) {
      s.fail("estimate", "lists '" + name + "' twice");
    }
    out.crlb.estimated.push_back(d);
  }
  out.crlb.weights.assign(out.crlb.estimated.size(), 0.0);
  if (const toml::node* w = s.node("weights")) {
    const toml::table* t = w->as_table();
    if (!t) s.fail("weights", "must be a table such as { t1 = 1.0, t2 = 1.0 }");
    for (const auto& [key, value] : *t) {
      const std::string name(key.str());
      const int d = direction_of(s, "weights", name);
      const auto it = std::find(out.crlb.estimated.begin(), out.crlb.estimated.end(), d);
      if (it == out.crlb.estimated.end())
        s.fail("weights", "weights '" + name + "', which is not estimated");
      const auto v = value.value<double>();
      if (!value.is_number() || !v || !(*v >= 0.0) || !std::isfinite(*v)) {
        s.fail("weights", "." + name + " must be a finite number >= 0");
      }
      out.crlb.weights[std::size_t(it - out.crlb.estimated.begin())] = *v;
    }
  } else {
    // By default the relaxation times are the targets and the rest nuisance.
    for (std::size_t p = 0; p < out.crlb.estimated.size(); ++p) {
      const int d = out.crlb.estimated[p];
      out.crlb.weights[p] = (d == 1 || d == 2) ? 1.0 : 0.0;
    }
  }
  if (std::all_of(out.crlb.weights.begin(), out.crlb.weights.end(),
                  [](double w) { return w == 0.0; })) {
    s.fail("weights", "are all zero: nothing to minimise");
  }
  out.crlb.noise_sigma = s.positive("noise_sigma", 0.01);
  out.crlb.max_order = out.deck.simulation.max_order;

  auto& space = out.space;
  space.start = *out.deck.mrf;
  space.flips = space.repetition_times = false;
  for (const auto& name : strings(s, "optimise", {"flip"})) {
    if (name == "flip") {
      space.flips = true;
    } else if (name == "tr") {
      space.repetition_times = true;
    } else {
      s.fail("optimise", "names '" + name + "', not \"flip\" or \"tr\"");
    }
  }
  const auto flip = bounds(s, "flip_deg", {0.0, 90.0});
  if (flip.first < 0.0 || flip.second > 180.0)
    s.fail("flip_deg", "must lie within [0, 180] degrees");
  space.flip_min_deg = flip.first;
  space.flip_max_deg = flip.second;
  if (space.repetition_times) {
    if (!s.has("tr_ms")) s.fail("tr_ms", "is required when optimise lists \"tr\"");
    const auto tr = bounds(s, "tr_ms", {0.0, 0.0});
    if (!(tr.first > 0.0)) s.fail("tr_ms", "must be positive");
    space.tr_min_s = tr.first * 1e-3;
    space.tr_max_s = tr.second * 1e-3;
  }
  out.crlb.time_normalised = s.boolean("time_normalised", space.repetition_times);
  out.optimiser.max_iterations = s.integer("iterations", 50, 0);
  out.optimiser.tolerance = s.positive("tolerance", 1e-6);
  std::filesystem::path schedule(out.deck.output_path);
  if (out.deck.output_path.rfind("larmor-", 0) == 0 && schedule.extension() == ".h5") {
    schedule.replace_extension(".csv");  // the generic default names an HDF5 file
    out.deck.output_path = schedule.string();
  }
  out.history_path = s.string(
      "history", (schedule.parent_path() / (schedule.stem().string() + "-history.csv")).string());
  s.reject_unknown_keys();
  try {
    space.validate();
  } catch (const std::exception& e) {
    throw DeckError(path + ": [design] " + e.what());
  }
  return out;
}

}  // namespace larmor::app
