// Tissue from NumPy: every property by its deck name and in deck units
// (t1_ms, t2_ms, b1, m0, off_resonance_hz, ...), arrays broadcast together
// as NumPy broadcasts them and flattened in C order to the voxels; a scalar
// stays uniform (the kernels pay only for maps).
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "bindings.hpp"
#include "tissue/tissue.hpp"

namespace larmor::python {

namespace {

tissue::Property property_named(const std::string& name) {
  std::string known;
  for (tissue::Property p : tissue::all_properties) {
    if (name == tissue::deck_name(p)) return p;
    known += (known.empty() ? "" : ", ") + std::string(tissue::deck_name(p));
  }
  throw std::invalid_argument("larmor.Tissue: unknown property '" + name + "' (known: " + known +
                              ")");
}

tissue::Tissue make_tissue(std::int64_t voxels, double bound_t2_us, const py::kwargs& values) {
  py::module_ np = py::module_::import("numpy");
  std::vector<std::pair<tissue::Property, py::array_t<double, py::array::forcecast>>> given;
  py::list shapes;
  for (auto [key, value] : values) {
    const tissue::Property p = property_named(py::str(key));
    auto array = py::array_t<double, py::array::forcecast>::ensure(value);
    if (!array) {
      throw std::invalid_argument("larmor.Tissue: " + std::string(py::str(key)) +
                                  " must be a number or an array of numbers");
    }
    if (array.ndim() > 0) shapes.append(array.attr("shape"));
    given.emplace_back(p, std::move(array));
  }
  tissue::Tissue t;
  t.bound_t2_s = bound_t2_us * 1e-6;
  py::object shape = py::none();
  if (!shapes.empty()) {
    shape = np.attr("broadcast_shapes")(*shapes);
    std::int64_t count = 1;
    for (py::handle n : shape) count *= n.cast<std::int64_t>();
    if (voxels >= 0 && voxels != count) {
      throw std::invalid_argument("larmor.Tissue: voxels = " + std::to_string(voxels) +
                                  " but the arrays broadcast to " + std::to_string(count));
    }
    voxels = count;
  } else if (voxels < 0) {
    voxels = 1;
  }
  t.voxels = voxels;
  for (auto& [p, array] : given) {
    const double scale = tissue::to_si(p);
    if (array.ndim() == 0) {
      t[p].uniform = float(array.at() * scale);
      continue;
    }
    auto flat = py::array_t<double, py::array::forcecast | py::array::c_style>::ensure(
        np.attr("broadcast_to")(array, shape).attr("ravel")());
    const double* v = flat.data();
    t[p].map.resize(std::size_t(voxels));
    for (std::int64_t i = 0; i < voxels; ++i) t[p].map[std::size_t(i)] = float(v[i] * scale);
  }
  t.validate("larmor.Tissue");
  return t;
}

// A property in deck units at every voxel.
py::array_t<double> values_of(const tissue::Tissue& t, const std::string& name) {
  const tissue::Property p = property_named(name);
  const double scale = 1.0 / tissue::to_si(p);
  py::array_t<double> out(py::ssize_t(t.voxels));
  double* o = out.mutable_data();
  for (std::int64_t i = 0; i < t.voxels; ++i) o[i] = double(t[p].at(i)) * scale;
  return out;
}

}  // namespace

void register_tissue(py::module_& m) {
  py::class_<tissue::Tissue>(m, "Tissue",
                             "Tissue properties per voxel in deck units; properties not given "
                             "keep the value at which they have no effect.")
      .def(py::init(&make_tissue), py::kw_only(), py::arg("voxels") = -1,
           py::arg("bound_t2_us") = 12.0,
           "Tissue(t1_ms=..., t2_ms=..., b1=..., m0=..., off_resonance_hz=..., ...): arrays "
           "broadcast together and flatten (C order) to the voxels; scalars stay uniform. "
           "Refuses values outside a property's range (ValueError naming the property and voxel).")
      .def_readonly("voxels", &tissue::Tissue::voxels)
      .def("__len__", [](const tissue::Tissue& t) { return t.voxels; })
      .def("__getitem__", &values_of, py::arg("name"),
           "A property at every voxel, in deck units (t['t2_ms']).")
      .def(
          "is_map",
          [](const tissue::Tissue& t, const std::string& name) {
            return t[property_named(name)].is_map();
          },
          py::arg("name"))
      .def_property_readonly(
          "maps",
          [](const tissue::Tissue& t) {
            std::vector<std::string> out;
            for (tissue::Property p : tissue::all_properties) {
              if (t[p].is_map()) out.emplace_back(tissue::deck_name(p));
            }
            return out;
          },
          "The properties given per voxel.")
      .def("slice", &tissue::Tissue::slice, py::arg("begin"), py::arg("end"),
           "Voxels [begin, end) as a tissue of their own.")
      .def_static("property_names",
                  []() {
                    std::vector<std::string> out;
                    for (tissue::Property p : tissue::all_properties)
                      out.emplace_back(tissue::deck_name(p));
                    return out;
                  })
      .def("__repr__", [](const tissue::Tissue& t) {
        std::string maps;
        for (tissue::Property p : tissue::all_properties) {
          if (t[p].is_map()) maps += (maps.empty() ? "" : ", ") + std::string(tissue::deck_name(p));
        }
        return "<larmor.Tissue: " + std::to_string(t.voxels) + " voxels" +
               (maps.empty() ? "" : ", maps of " + maps) + ">";
      });
}

}  // namespace larmor::python
