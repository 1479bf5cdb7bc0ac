// Sequences from Python: a deck file (read_deck), a builder with the deck's
// keys as keyword arguments (build), a Pulseq file (through the deck's
// pulseq builder), and a pulse train's flip angles to read and replace.
#include <cmath>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include <toml++/toml.h>

#include "app/deck.hpp"
#include "app/tissue_source.hpp"
#include "bindings.hpp"
#include "parallel/communicator.hpp"
#include "sequence/packing.hpp"
#include "simulate/isochromat_simulator.hpp"

namespace larmor::python {

namespace {

constexpr double kRadiansPerDegree = M_PI / 180.0;

toml::array to_toml_array(py::handle sequence);
toml::table to_toml_table(const py::dict& dict);

// A Python value as the TOML value a deck would hold for it (bool before
// int: Python's bool is an int).
template <class Insert>
void insert_value(py::handle value, const std::string& key, Insert&& insert) {
  if (py::isinstance<py::bool_>(value)) {
    insert(value.cast<bool>());
  } else if (py::isinstance<py::int_>(value)) {
    insert(value.cast<std::int64_t>());
  } else if (py::isinstance<py::float_>(value)) {
    insert(value.cast<double>());
  } else if (py::isinstance<py::str>(value)) {
    insert(value.cast<std::string>());
  } else if (py::isinstance<py::dict>(value)) {
    insert(to_toml_table(value.cast<py::dict>()));
  } else if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value) ||
             py::isinstance<py::array>(value)) {
    insert(to_toml_array(value));
  } else if (py::hasattr(value, "item")) {  // a NumPy scalar
    insert_value(value.attr("item")(), key, insert);
  } else {
    throw std::invalid_argument("'" + key + "': a " +
                                std::string(py::str(value.get_type().attr("__name__"))) +
                                " is not a deck value (number, bool, string, list or dict)");
  }
}

toml::array to_toml_array(py::handle sequence) {
  toml::array out;
  py::object items = py::isinstance<py::array>(sequence)
                         ? sequence.attr("tolist")()
                         : py::reinterpret_borrow<py::object>(sequence);
  for (py::handle item : items) {
    insert_value(item, "list element", [&](auto&& v) { out.push_back(std::move(v)); });
  }
  return out;
}

toml::table to_toml_table(const py::dict& dict) {
  toml::table out;
  for (auto [key, value] : dict) {
    const std::string k = py::str(key);
    insert_value(value, k, [&](auto&& v) { out.insert_or_assign(k, std::move(v)); });
  }
  return out;
}

// The deck machinery on a [sequence] table made of keyword arguments, so
// that every builder takes the deck's keys, units and checks.
sequence::Description build(const std::string& builder, const py::kwargs& keys) {
  toml::table sequence_table = to_toml_table(keys);
  sequence_table.insert_or_assign("builder", builder);
  toml::table root;
  root.insert_or_assign("sequence", std::move(sequence_table));
  std::ostringstream text;
  text << root;
  const std::string origin = "larmor.build(" + builder + ")";
  try {
    const app::Deck deck = app::read_deck_text(text.str(), origin, false);
    app::require_epg(deck, "larmor.build", "larmor.isochromat_simulator");
    return deck.sequence;
  } catch (const app::DeckError& e) {
    // The deck's lines are this function's own text, not the caller's: the
    // message keeps the key and drops the line.
    const std::regex line_of_the_text(R"(^larmor\.build\(\w+\):\d+(:\d+)?: )");
    throw app::DeckError(std::regex_replace(e.what(), line_of_the_text, origin + ": "));
  }
}

// A Pulseq file on the isochromat engine: the deck machinery on [sequence]
// (builder pulseq) and [simulation] (engine isochromat) tables made of the
// caller's keys.
simulate::IsochromatSimulator isochromat_simulator(const std::string& path,
                                                   const py::dict& sequence_keys,
                                                   const py::dict& simulation_keys,
                                                   std::optional<double> longest_t2_ms) {
  if (longest_t2_ms && !(*longest_t2_ms > 0.0 && std::isfinite(*longest_t2_ms))) {
    throw std::invalid_argument(
        "larmor.isochromat_simulator: longest_t2_ms must be a positive "
        "number of milliseconds");
  }
  toml::table sequence_table = to_toml_table(sequence_keys);
  sequence_table.insert_or_assign("builder", "pulseq");
  sequence_table.insert_or_assign("file", path);
  toml::table simulation_table = to_toml_table(simulation_keys);
  simulation_table.insert_or_assign("engine", "isochromat");
  toml::table root;
  root.insert_or_assign("sequence", std::move(sequence_table));
  root.insert_or_assign("simulation", std::move(simulation_table));
  std::ostringstream text;
  text << root;
  const std::string origin = "larmor.isochromat_simulator";
  try {
    app::Deck deck = app::read_deck_text(text.str(), origin, false);
    if (!deck.isochromats || !deck.steps) {
      throw std::logic_error(origin + ": the deck did not select the isochromat engine");
    }
    if (longest_t2_ms) deck.isochromat.longest_t2_s = 1e-3 * *longest_t2_ms;
    return simulate::IsochromatSimulator(std::move(*deck.steps), deck.isochromat);
  } catch (const app::DeckError& e) {
    const std::regex line_of_the_text(R"(^larmor\.isochromat_simulator:\d+(:\d+)?: )");
    throw app::DeckError(std::regex_replace(e.what(), line_of_the_text, origin + ": "));
  }
}

std::vector<std::size_t> pulse_events(const sequence::Description& d) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < d.events.size(); ++i) {
    if (abi::is_rf(d.events[i].kind)) out.push_back(i);
  }
  return out;
}

bool deck_has_tissue(const app::Deck& deck) {
  return !deck.tissue.values.empty() || !deck.tissue.maps_path.empty();
}

// Every voxel of the deck's tissue in this process (MPI_COMM_SELF: a Python
// process under mpirun still gets all of them).
app::LocalVoxels load_deck_tissue(const app::Deck& deck) {
  if (!deck_has_tissue(deck)) throw std::invalid_argument(deck.path + ": the deck has no [tissue]");
  ensure_mpi();
  return app::load_local_tissue(deck.tissue, parallel::Communicator(MPI_COMM_SELF), deck.path);
}

}  // namespace

void register_sequence(py::module_& m) {
  py::class_<sequence::Description>(m, "Sequence",
                                    "A sequence: the events a builder, deck or Pulseq file made.")
      .def_property_readonly("name", [](const sequence::Description& d) { return d.name; })
      .def_property_readonly(
          "events", [](const sequence::Description& d) { return d.events.size(); },
          "Number of events (the rows of a sequence gradient).")
      .def_property_readonly("samples", &sequence::Description::sample_count)
      .def_property_readonly("parameters",
                             [](const sequence::Description& d) { return d.parameters; })
      .def_property_readonly("duration_s", &sequence::Description::total_duration_s)
      .def_property_readonly(
          "sample_times_s",
          [](const sequence::Description& d) {
            const auto packed = sequence::pack(d);
            return py::array_t<double>(py::ssize_t(packed.sample_times_s.size()),
                                       packed.sample_times_s.data());
          },
          "Time of every sample from the first event's instant.")
      .def_property_readonly(
          "event_kinds",
          [](const sequence::Description& d) {
            py::array_t<std::uint8_t> out(py::ssize_t(d.events.size()));
            auto w = out.mutable_unchecked<1>();
            for (std::size_t i = 0; i < d.events.size(); ++i) w(i) = std::uint8_t(d.events[i].kind);
            return out;
          },
          "Every event's kind as larmor's event ABI numbers it (EventKind).")
      .def_property_readonly(
          "pulse_events",
          [](const sequence::Description& d) {
            const auto pulses = pulse_events(d);
            py::array_t<std::int64_t> out(py::ssize_t(pulses.size()));
            for (std::size_t i = 0; i < pulses.size(); ++i) out.mutable_at(i) = pulses[i];
            return out;
          },
          "Indices of the pulse events, in order.")
      .def_property_readonly(
          "flip_deg",
          [](const sequence::Description& d) {
            const auto pulses = pulse_events(d);
            py::array_t<double> out(py::ssize_t(pulses.size()));
            for (std::size_t i = 0; i < pulses.size(); ++i) {
              out.mutable_at(i) = d.events[pulses[i]].flip_rad / kRadiansPerDegree;
            }
            return out;
          },
          "Flip angle of every pulse event (degrees), in order.")
      .def(
          "with_flip_deg",
          [](const sequence::Description& d, py::array_t<double, py::array::forcecast> flips) {
            const auto pulses = pulse_events(d);
            if (flips.ndim() != 1 || std::size_t(flips.size()) != pulses.size()) {
              throw std::invalid_argument("with_flip_deg: " + std::to_string(flips.size()) +
                                          " flip angles for " + std::to_string(pulses.size()) +
                                          " pulses of sequence '" + d.name + "'");
            }
            sequence::Description out = d;
            for (std::size_t i = 0; i < pulses.size(); ++i) {
              const double flip = flips.at(i);
              if (!std::isfinite(flip)) {
                throw std::invalid_argument("with_flip_deg: the flip angle of pulse " +
                                            std::to_string(i) + " is not finite");
              }
              out.events[pulses[i]].flip_rad = flip * kRadiansPerDegree;
            }
            return out;
          },
          py::arg("flip_deg"),
          "A copy with every pulse's flip angle replaced (degrees, one per pulse event).")
      .def("__repr__", [](const sequence::Description& d) {
        return "<larmor.Sequence '" + d.name + "': " + std::to_string(d.events.size()) +
               " events, " + std::to_string(d.sample_count()) + " samples>";
      });

  py::class_<app::Deck>(m, "Deck", "An input deck: its sequence, tissue and simulation options.")
      .def_property_readonly("path", [](const app::Deck& d) { return d.path; })
      .def_property_readonly("builder", [](const app::Deck& d) { return d.builder; })
      .def_property_readonly("sequence", [](const app::Deck& d) { return d.sequence; })
      .def_property_readonly("max_order", [](const app::Deck& d) { return d.simulation.max_order; })
      .def_property_readonly("steady_state", [](const app::Deck& d) { return d.steady_state; })
      .def_property_readonly("output_path", [](const app::Deck& d) { return d.output_path; })
      .def_property_readonly("sequence_report",
                             [](const app::Deck& d) { return d.sequence_report; })
      .def_property_readonly(
          "tissue",
          [](const app::Deck& d) -> py::object {
            if (!deck_has_tissue(d)) return py::none();
            return py::cast(load_deck_tissue(d).tissue);
          },
          "The deck's voxels (a grid's every combination, the last property fastest; "
          "or the masked voxels of its maps), None without [tissue].")
      .def_property_readonly(
          "tissue_shape",
          [](const app::Deck& d) -> py::object {
            if (!deck_has_tissue(d)) return py::none();
            return py::cast(load_deck_tissue(d).volume_shape);
          },
          "A grid's value counts per listed property (deck order), or a maps volume's shape.");

  m.def(
      "_read_deck",
      [](const std::string& path) {
        app::Deck deck = app::read_deck(path, {}, false);
        app::require_epg(deck, "larmor.read_deck",
                         "larmor simulate (or larmor.isochromat_simulator)");
        return deck;
      },
      py::arg("path"));
  m.def("build", &build, py::arg("builder"),
        "A builder's sequence from the deck's [sequence] keys given as keyword arguments "
        "(larmor.build('mese', echoes=32, echo_spacing_ms=10.0)); relative file names are "
        "relative to the working directory.");
  m.def("builder_names", &app::builder_names);
  m.def("_isochromat_simulator", &isochromat_simulator, py::arg("path"), py::arg("sequence_keys"),
        py::arg("simulation_keys"), py::arg("longest_t2_ms") = py::none());
}

}  // namespace larmor::python
