// Estimation from Python on signal arrays: dictionary matching (with the
// optional SVD compression of the time axis) and voxel-wise NLLS, as
// src/estimators provides them (docs/estimators.md).
#include <cmath>
#include <complex>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "bindings.hpp"
#include "estimators/dictionary/dictionary.hpp"
#include "estimators/nlls/nlls.hpp"
#include "tissue/tissue.hpp"

namespace larmor::python {

namespace {

namespace dict = estimators::dictionary;
using Complex = std::complex<float>;

// Signals [voxels][samples] (complex, or [voxels][samples][2] reals) as the
// float pairs the estimators read.
std::vector<float> signal_floats(const py::array& a, int samples, std::int64_t* voxels,
                                 const char* what) {
  const bool complex = a.dtype().kind() == 'c';
  std::vector<float> out;
  auto fail = [&]() {
    throw std::invalid_argument(std::string(what) + " must be [voxels, " + std::to_string(samples) +
                                "] complex or [voxels, " + std::to_string(samples) +
                                ", 2] real and imaginary parts");
  };
  if (complex) {
    auto c = py::array_t<Complex, py::array::c_style | py::array::forcecast>::ensure(a);
    if (!c || c.ndim() != 2 || (samples > 0 && c.shape(1) != samples)) fail();
    *voxels = c.shape(0);
    out.resize(std::size_t(c.size()) * 2);
    std::memcpy(out.data(), c.data(), sizeof(float) * out.size());
  } else {
    auto r = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(a);
    if (!r || r.ndim() != 3 || r.shape(2) != 2 || (samples > 0 && r.shape(1) != samples)) fail();
    *voxels = r.shape(0);
    out.assign(r.data(), r.data() + r.size());
  }
  return out;
}

// Measured signals an estimator can use: finite, and not zero at every
// sample (the CLI refuses the same voxels). ValueError names the first bad
// voxel and how many there are.
void refuse_unusable_voxels(const std::vector<float>& s, int samples, std::int64_t voxels,
                            const char* what) {
  std::int64_t first = -1, bad = 0;
  std::string why;
  for (std::int64_t v = 0; v < voxels; ++v) {
    bool finite = true, zero = true;
    for (std::size_t i = std::size_t(v) * samples * 2; i < std::size_t(v + 1) * samples * 2; ++i) {
      finite = finite && std::isfinite(s[i]);
      zero = zero && s[i] == 0.0f;
    }
    if (finite && !zero) continue;
    if (first < 0) {
      first = v;
      why = finite ? "all-zero signals" : "non-finite signals";
    }
    ++bad;
  }
  if (first < 0) return;
  throw std::invalid_argument(std::string(what) + ": voxel " + std::to_string(first) + " has " +
                              why + " (" + std::to_string(bad) +
                              " such voxel(s) in all): mask them out before estimating");
}

int samples_of(const py::array& a) {
  if (a.ndim() < 2) throw std::invalid_argument("signals must be [voxels, samples]");
  return int(a.shape(1));
}

// Dictionaries hold device memory: the ones still alive give it back before
// Kokkos is finalised at interpreter exit.
std::vector<std::weak_ptr<dict::Dictionary>>& live_dictionaries() {
  static std::vector<std::weak_ptr<dict::Dictionary>> live;
  return live;
}

std::shared_ptr<dict::Dictionary> make_dictionary(const py::array& signals, const tissue::Tissue& t,
                                                  int rank, double energy) {
  ensure_kokkos();
  const int samples = samples_of(signals);
  std::int64_t atoms = 0;
  std::vector<float> s = signal_floats(signals, samples, &atoms, "dictionary signals");
  if (atoms != t.voxels) {
    throw std::invalid_argument("dictionary: " + std::to_string(atoms) +
                                " signals for a tissue of " + std::to_string(t.voxels) + " voxels");
  }
  auto d = std::make_shared<dict::Dictionary>();
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(run_mutex());
    *d = dict::make_dictionary(s, samples, t);
    if (rank >= 0) *d = dict::compress(*d, rank, energy);
  }
  live_dictionaries().push_back(d);
  return d;
}

py::dict match(const dict::Dictionary& d, const py::array& signals) {
  ensure_kokkos();
  std::int64_t voxels = 0;
  std::vector<float> s = signal_floats(signals, d.original_samples, &voxels, "signals");
  refuse_unusable_voxels(s, d.original_samples, voxels, "Dictionary.match");
  dict::MatchResult r;
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(run_mutex());
    r = dict::match(d, s, voxels);
  }
  py::dict out;
  py::array_t<std::int32_t> atom(py::ssize_t(voxels), r.atom.data());
  out["atom"] = atom;
  out["m0"] = py::array_t<Complex>(py::ssize_t(voxels), r.m0.data());
  out["correlation"] = py::array_t<float>(py::ssize_t(voxels), r.correlation.data());
  const std::size_t P = d.properties.size();
  for (std::size_t p = 0; p < P; ++p) {
    const double scale = 1.0 / tissue::to_si(d.properties[p]);
    py::array_t<double> values(static_cast<py::ssize_t>(voxels));
    for (std::int64_t v = 0; v < voxels; ++v) {
      values.mutable_at(v) = double(d.values[std::size_t(r.atom[v]) * P + p]) * scale;
    }
    out[tissue::deck_name(d.properties[p])] = values;
  }
  return out;
}

tissue::Property property_named(const std::string& name) {
  for (tissue::Property p : tissue::all_properties) {
    if (name == tissue::deck_name(p)) return p;
  }
  throw std::invalid_argument("fit_nlls: unknown property '" + name + "'");
}

py::dict fit_nlls(const simulate::Simulator& sim, tissue::Tissue t, const py::array& measured,
                  const py::dict& estimate, int iterations, double step_tolerance) {
  ensure_kokkos();
  std::int64_t voxels = 0;
  std::vector<float> s = signal_floats(measured, sim.samples(), &voxels, "measured signals");
  refuse_unusable_voxels(s, sim.samples(), voxels, "fit_nlls");
  bool any_map = false;
  for (tissue::Property p : tissue::all_properties) any_map = any_map || t[p].is_map();
  if (t.voxels != voxels) {
    if (any_map) {
      throw std::invalid_argument("fit_nlls: " + std::to_string(voxels) +
                                  " measured voxels for a tissue of " + std::to_string(t.voxels));
    }
    t.voxels = voxels;  // a uniform tissue holds for any number of voxels
  }
  estimators::nlls::NllsSpec spec;
  spec.iterations = iterations;
  spec.step_tolerance = step_tolerance;
  for (auto [key, value] : estimate) {
    const std::string name = py::str(key);
    auto bounds = value.cast<py::tuple>();
    if (bounds.size() != 2 && bounds.size() != 3) {
      throw std::invalid_argument("fit_nlls: " + name +
                                  " needs (low, high) or (low, high, 'log') in deck units");
    }
    estimators::perk::Prior prior;
    prior.property = property_named(name);
    prior.low = bounds[0].cast<double>() * tissue::to_si(prior.property);
    prior.high = bounds[1].cast<double>() * tissue::to_si(prior.property);
    if (bounds.size() == 3) {
      const std::string scale = py::str(bounds[2]);
      if (scale != "log" && scale != "linear") {
        throw std::invalid_argument("fit_nlls: " + name + "'s scale must be 'log' or 'linear'");
      }
      prior.log_uniform = scale == "log";
    }
    spec.estimate.push_back(prior);
  }
  estimators::nlls::NllsResult r;
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(run_mutex());
    r = estimators::nlls::fit_nlls(sim, t, s, spec);
  }
  py::dict out;
  const int P = r.parameters;
  for (int j = 0; j < P; ++j) {
    const tissue::Property p = j == 0 ? tissue::Property::m0 : spec.estimate[j - 1].property;
    const double scale = 1.0 / tissue::to_si(p);
    py::array_t<double> values(static_cast<py::ssize_t>(voxels));
    for (std::int64_t v = 0; v < voxels; ++v) {
      values.mutable_at(v) = double(r.values[std::size_t(v) * P + j]) * scale;
    }
    out[tissue::deck_name(p)] = values;
  }
  out["cost"] = py::array_t<float>(py::ssize_t(voxels), r.cost.data());
  out["iterations"] = py::array_t<std::int32_t>(py::ssize_t(voxels), r.iterations.data());
  return out;
}

}  // namespace

void release_dictionaries() {
  for (auto& weak : live_dictionaries()) {
    if (auto d = weak.lock()) d->device.reset();
  }
  live_dictionaries().clear();
}

void register_estimators(py::module_& m) {
  py::class_<dict::Dictionary, std::shared_ptr<dict::Dictionary>>(
      m, "Dictionary",
      "Unit-norm atoms of simulated signals and the tissue values that "
      "vary over them; match() finds each voxel's best atom.")
      .def(py::init(&make_dictionary), py::arg("signals"), py::arg("tissue"), py::arg("rank") = -1,
           py::arg("energy") = 0.9999,
           "signals [atoms, samples] (complex) of `tissue` (its maps become the dictionary's "
           "properties). rank >= 0 compresses the time axis to that many singular directions "
           "(0: the fewest that keep `energy` of the atoms' squared norm).")
      .def_readonly("atoms", &dict::Dictionary::atoms)
      .def_readonly("samples", &dict::Dictionary::samples)
      .def_property_readonly("properties",
                             [](const dict::Dictionary& d) {
                               std::vector<std::string> out;
                               for (auto p : d.properties) out.emplace_back(tissue::deck_name(p));
                               return out;
                             })
      .def("match", &match, py::arg("signals"),
           "Each voxel's best atom.\n\n"
           "Parameters\n----------\nsignals : ndarray of shape [voxels, samples], complex\n"
           "    Finite and not all zero in any voxel (else ValueError naming the voxel).\n\n"
           "Returns\n-------\ndict of ndarray of shape [voxels]\n"
           "    atom (index), m0 (complex), correlation (|<atom, s>| / |s|) and every property "
           "of the atom in deck units. A voxel's result does not depend on the other voxels.");
  m.def("fit_nlls", &fit_nlls, py::arg("simulator"), py::arg("tissue"), py::arg("measured"),
        py::arg("estimate"), py::arg("iterations") = 40, py::arg("step_tolerance") = 1e-6,
        "Voxel-wise magnitude NLLS (Levenberg-Marquardt on forward-mode Jacobians) of M0 and "
        "the properties named in `estimate` ({'t2_ms': (low, high), 'b1': (low, high, "
        "'linear')}); `tissue` holds the fixed ones. A dict of arrays in deck units, the "
        "cost and the accepted steps per voxel.");
}

}  // namespace larmor::python
