// A TOML table of an input deck together with where it came from, so that
// every complaint names the file, the line, the table and the key. Shared by
// the deck readers (deck.cpp, builder_decks.cpp, design_deck.cpp, fit_deck.cpp);
// not part of the public API.
#pragma once

#include <cmath>
#include <complex>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "app/deck.hpp"

namespace larmor::app::detail {

// Milliseconds, the deck's unit of time, in seconds.
inline double ms(double v) { return v * 1e-3; }

// The deck file's tables: its text checked (toml_text.hpp), then parsed;
// throws DeckError naming the file, line and column.
toml::table parse_deck_file(const std::string& path);

// read_deck on tables already parsed from `path` (decks with sections of
// their own parse the file once and read those sections from the same tables).
Deck read_deck_tables(const toml::table& root, const std::string& path,
                      const std::set<std::string>& extra_sections, bool tissue_required);

// A table together with where it came from, so that every complaint can name
// the file, the line, the table and the key.
class Section {
 public:
  Section(const std::string& file, const std::string& name, const toml::table* table)
      : file_(file), name_(name), table_(table) {}

  bool has(const std::string& key) const { return table_ && table_->contains(key); }
  const std::string& file() const { return file_; }
  const toml::table* table() const { return table_; }
  const toml::node* node(const std::string& key) const {
    used_.insert(key);
    return table_ ? table_->get(key) : nullptr;
  }

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    std::ostringstream msg;
    msg << file_;
    const toml::node* n = table_ ? table_->get(key) : nullptr;
    // Tables built in memory (the Python package's larmor.build) have no lines.
    if (n && n->source().begin.line > 0) msg << ":" << n->source().begin.line;
    msg << ": [" << name_ << "] " << key << " " << what;
    throw DeckError(msg.str());
  }

  double number(const std::string& key, double fallback) const {
    const toml::node* n = node(key);
    if (!n) return fallback;
    if (auto v = n->value<double>(); v && (n->is_number())) {
      if (!std::isfinite(*v)) fail(key, "must be finite");
      return *v;
    }
    fail(key, "must be a number");
  }
  double positive(const std::string& key, double fallback) const {
    const double v = number(key, fallback);
    if (!(v > 0.0)) fail(key, "must be positive");
    return v;
  }
  int integer(const std::string& key, int fallback, int min_value) const {
    const toml::node* n = node(key);
    if (!n) return fallback;
    if (!n->is_integer()) fail(key, "must be an integer");
    const auto v = n->value<std::int64_t>().value();
    if (v < min_value || v > std::numeric_limits<int>::max()) {
      fail(key, "must be an integer >= " + std::to_string(min_value));
    }
    return static_cast<int>(v);
  }
  bool boolean(const std::string& key, bool fallback) const {
    const toml::node* n = node(key);
    if (!n) return fallback;
    if (!n->is_boolean()) fail(key, "must be true or false");
    return n->value<bool>().value();
  }
  std::string string(const std::string& key, const std::string& fallback) const {
    const toml::node* n = node(key);
    if (!n) return fallback;
    if (!n->is_string()) fail(key, "must be a string");
    return n->value<std::string>().value();
  }
  std::vector<double> numbers(const std::string& key) const {
    const toml::node* n = node(key);
    std::vector<double> out;
    if (!n) return out;
    const toml::array* a = n->as_array();
    if (!a) fail(key, "must be an array of numbers");
    for (const toml::node& e : *a) {
      auto v = e.value<double>();
      if (!e.is_number() || !v || !std::isfinite(*v)) fail(key, "must hold finite numbers only");
      out.push_back(*v);
    }
    return out;
  }

  // An array of complex numbers written as [re, im] pairs.
  std::vector<std::complex<double>> complex_numbers(const std::string& key,
                                                    const toml::node* n) const {
    std::vector<std::complex<double>> out;
    const toml::array* a = n ? n->as_array() : nullptr;
    if (!a) fail(key, "must be an array of [re, im] pairs");
    for (const toml::node& e : *a) {
      const toml::array* pair = e.as_array();
      if (!pair || pair->size() != 2 || !(*pair)[0].is_number() || !(*pair)[1].is_number()) {
        fail(key, "must hold [re, im] pairs of numbers");
      }
      const double re = (*pair)[0].value<double>().value(), im = (*pair)[1].value<double>().value();
      if (!std::isfinite(re) || !std::isfinite(im)) fail(key, "must hold finite numbers only");
      out.emplace_back(re, im);
    }
    return out;
  }

  // Every key the deck gave must have been read by someone.
  void reject_unknown_keys() const {
    if (!table_) return;
    for (const auto& [key, value] : *table_) {
      const std::string k(key.str());
      if (!used_.count(k)) fail(k, "is not a known key of this section");
    }
  }

 private:
  std::string file_, name_;
  const toml::table* table_;
  mutable std::set<std::string> used_;
};

// The sequence of a shipped builder (mese, tse, mprage, dess, spgr, bssfp,
// mt_spgr, mrf) from its [sequence] keys (builder_decks.cpp); the mrf
// builder's parameters go to `mrf` and its schedule file to `inputs`. An
// unknown builder is refused with the known ones.
sequence::Description build_shipped_sequence(const std::string& builder, const Section& s,
                                             const std::filesystem::path& deck_dir,
                                             std::optional<sequence::MrfParams>& mrf,
                                             std::vector<std::string>& inputs);

}  // namespace larmor::app::detail
