#include "app/fit_deck.hpp"

#include <cmath>
#include <filesystem>

#include "app/impl/deck_section.hpp"
#include "io/nifti_file.hpp"

namespace larmor::app {
namespace {

namespace fs = std::filesystem;
using detail::Section;

tissue::Property property_named(const Section& s, const std::string& key, const std::string& name) {
  for (tissue::Property p : tissue::all_properties) {
    if (name == tissue::deck_name(p)) return p;
  }
  s.fail(key,
         "names '" + name + "', not a tissue property (m0, t1_ms, t2_ms, b1, off_resonance_hz)");
}

// A table of property = number | { from, to, spacing } (| map = "/dataset"
// when `maps` is given) in deck units.
std::vector<estimators::perk::Prior> priors(const Section& s, const std::string& key,
                                            std::vector<std::string>* maps) {
  std::vector<estimators::perk::Prior> out;
  const toml::node* n = s.node(key);
  if (!n) return out;
  const toml::table* t = n->as_table();
  if (!t) s.fail(key, "must be a table such as { t2_ms = { from = 20, to = 400 } }");
  for (const auto& [k, value] : *t) {
    const std::string name(k.str());
    estimators::perk::Prior p;
    p.property = property_named(s, key, name);
    const double si = tissue::to_si(p.property);
    if (value.is_number()) {
      p.low = p.high = value.value<double>().value() * si;
      if (maps) maps->push_back("");
    } else if (const toml::table* r = value.as_table()) {
      const toml::node* from = r->get("from");
      const toml::node* to = r->get("to");
      if (!from || !to || !from->is_number() || !to->is_number()) {
        s.fail(key, "." + name + " needs numeric 'from' and 'to'");
      }
      p.low = from->value<double>().value() * si;
      p.high = to->value<double>().value() * si;
      const std::string spacing =
          r->get("spacing") ? r->get("spacing")->value<std::string>().value_or("?") : "linear";
      if (spacing != "linear" && spacing != "log") {
        s.fail(key, "." + name + ".spacing must be \"linear\" or \"log\"");
      }
      p.log_uniform = spacing == "log";
      std::string map;
      for (const auto& [field, v] : *r) {
        const std::string f(field.str());
        if (f == "map" && maps) {
          if (!v.is_string()) s.fail(key, "." + name + ".map must be a dataset name");
          map = v.value<std::string>().value();
        } else if (f != "from" && f != "to" && f != "spacing") {
          s.fail(key, "." + name + " has an unknown field '" + f + "'");
        }
      }
      if (maps) maps->push_back(map);
    } else {
      s.fail(key, "." + name + " must be a number or { from, to, spacing }");
    }
    if (!(p.low <= p.high) || !std::isfinite(p.low) || !std::isfinite(p.high)) {
      s.fail(key, "." + name + ": 'from' must not exceed 'to'");
    }
    if (p.log_uniform && !(p.low > 0.0)) s.fail(key, "." + name + ": a log range needs from > 0");
    out.push_back(p);
  }
  return out;
}

std::vector<double> powers_of_two(const Section& s, const std::string& key) {
  std::vector<double> out;
  for (double e : s.numbers(key)) out.push_back(std::pow(2.0, e));
  return out;
}

}  // namespace

FitDeck read_fit_deck(const std::string& path) {
  FitDeck out;
  const toml::table root = detail::parse_deck_file(path);
  out.deck = detail::read_deck_tables(root, path, {"data", "estimator"}, false);
  out.nifti_output = out.deck.nifti_output;
  const fs::path dir = fs::path(path).parent_path();
  auto resolve = [&](const std::string& name) {
    return (fs::path(name).is_absolute() ? fs::path(name) : dir / name).string();
  };
  const toml::node* data = root.get("data");
  if (!data || !data->is_table()) throw DeckError(path + ": the [data] section is required");
  Section d(path, "data", data->as_table());
  const std::string file = d.string("file", "");
  if (file.empty()) d.fail("file", "is required: the HDF5 file of measured signals");
  out.data_path = resolve(file);
  if (io::is_nifti_path(out.data_path)) {
    for (const char* key : {"signals", "voxel_index", "volume_shape"}) {
      if (d.has(key)) d.fail(key, "names an HDF5 dataset; a NIfTI file holds only the signals");
    }
    if (d.has("mask")) out.mask_path = resolve(d.string("mask", ""));
  } else if (d.has("mask")) {
    d.fail("mask", "is for NIfTI signals; an HDF5 data file lists its voxels in /voxel_index");
  }
  out.signals_dataset = d.string("signals", out.signals_dataset);
  out.index_dataset = d.string("voxel_index", out.index_dataset);
  out.shape_dataset = d.string("volume_shape", out.shape_dataset);
  d.reject_unknown_keys();

  const toml::node* est = root.get("estimator");
  if (!est || !est->is_table()) throw DeckError(path + ": the [estimator] section is required");
  Section e(path, "estimator", est->as_table());
  out.method = e.string("method", "perk");
  if (out.method != "perk" && out.method != "dictionary" && out.method != "nlls") {
    e.fail("method", "must be \"perk\", \"dictionary\" or \"nlls\"");
  }
  // PERK and NLLS simulate through EPG (training signals, derivatives); a
  // dictionary's atoms are plain runs, which the isochromat engine plays.
  if (out.method != "dictionary") {
    require_epg(out.deck, "larmor fit with method = \"" + out.method + "\"",
                "[estimator] method = \"dictionary\" (atoms simulated on that engine)");
  }
  out.nlls_iterations = e.integer("iterations", out.nlls_iterations, 1);
  out.compress_energy = e.number("compress_energy", out.compress_energy);
  if (!(out.compress_energy >= 0.0 && out.compress_energy <= 1.0)) {
    e.fail("compress_energy", "must lie in [0, 1] (0: no compression)");
  }
  if (out.method == "dictionary") {
    for (const char* key : {"estimate", "known", "nuisance", "model", "save_model"}) {
      if (e.has(key)) e.fail(key, "is a PERK key; a dictionary takes its atoms from [tissue]");
    }
    e.reject_unknown_keys();
    return out;
  }
  if (const toml::node* t = root.get("tissue")) {
    throw DeckError(path + ":" + std::to_string(t->source().begin.line) +
                    ": [tissue] is read only by method = \"dictionary\" (its atoms); " +
                    out.method + " takes its priors from [estimator]");
  }
  auto& spec = out.perk;
  spec.latent = priors(e, "estimate", nullptr);
  spec.known = priors(e, "known", &out.known_datasets);
  for (std::size_t k = 0; k < out.known_datasets.size(); ++k) {
    auto& ds = out.known_datasets[k];
    if (io::is_nifti_path(ds)) {
      ds = resolve(ds);  // a NIfTI file, relative to the deck
    } else if (!ds.empty() && io::is_nifti_path(out.data_path)) {
      e.fail("known", std::string(".") + tissue::deck_name(spec.known[k].property) + ".map '" + ds +
                          "' is a dataset name, but the data are NIfTI: give a .nii file");
    }
  }
  spec.nuisance = priors(e, "nuisance", nullptr);
  out.model_path = e.has("model") ? resolve(e.string("model", "")) : "";
  out.save_model_path = e.has("save_model") ? resolve(e.string("save_model", "")) : "";
  if (spec.latent.empty() && out.model_path.empty()) {  // PERK
    e.fail("estimate",
           "is required (the properties to estimate and their priors) unless a model is given");
  }
  spec.samples = e.integer("samples", spec.samples, 10);
  spec.features = e.integer("features", spec.features, 1);
  spec.noise_sigma = e.number("noise", spec.noise_sigma);
  if (!(spec.noise_sigma >= 0.0)) e.fail("noise", "must be >= 0");
  spec.holdout_fraction = e.number("holdout", spec.holdout_fraction);
  if (!(spec.holdout_fraction > 0.0 && spec.holdout_fraction < 1.0))
    e.fail("holdout", "must lie in (0, 1)");
  if (e.has("log2_lambdas")) spec.lambdas = powers_of_two(e, "log2_lambdas");
  if (e.has("log2_rhos")) spec.rhos = powers_of_two(e, "log2_rhos");
  spec.seed = std::uint64_t(e.integer("seed", 1, 0));
  spec.m0 = e.boolean("m0", spec.m0);
  if (out.method == "nlls") {
    for (const auto& p : spec.nuisance) {
      if (p.low != p.high) {
        e.fail("nuisance", std::string(".") + tissue::deck_name(p.property) +
                               ": NLLS takes fixed values (a number), not ranges");
      }
    }
  }
  spec.max_order = out.deck.simulation.max_order;
  e.reject_unknown_keys();
  return out;
}

}  // namespace larmor::app
