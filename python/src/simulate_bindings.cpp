// Runs from Python: the simulator's forward run, steady state, forward mode,
// the adjoint and forward over reverse on the build's host execution space.
// Signals are complex64 NumPy arrays [voxel][sample] that the kernels fill in
// place (their float [voxel][sample][re, im] is complex64's layout). Tissue
// derivatives are per deck unit (T1 and T2 per ms); sequence gradients are
// per event: flip and phase per radian, duration per second.
#include <array>
#include <complex>
#include <cstring>
#include <string>

#include <pybind11/complex.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "simulate/default_backend.hpp"
#include "simulate/isochromat_simulator.hpp"
#include "simulate/simulator.hpp"
#include "tissue/tissue.hpp"

namespace larmor::python {

namespace {

using Complex = std::complex<float>;
using ComplexArray = py::array_t<Complex>;
constexpr int kDirections = 5;  // M0, T1, T2, B1, df: epg::tissue_direction
constexpr std::array<tissue::Property, kDirections> kDirectionProperties = {
    tissue::Property::m0, tissue::Property::t1, tissue::Property::t2, tissue::Property::b1,
    tissue::Property::off_resonance};

// SI per deck unit of each direction: a derivative per SI unit times it is
// per deck unit.
float direction_scale(int d) { return float(tissue::to_si(kDirectionProperties[std::size_t(d)])); }

// The caller's array when given (complex64, C-contiguous, writeable, of the
// run's shape: refused otherwise rather than copied), else a new one.
ComplexArray output_array(const py::object& out, const std::vector<py::ssize_t>& shape,
                          const char* what) {
  if (out.is_none()) return ComplexArray(shape);
  if (!py::isinstance<py::array>(out)) {
    throw std::invalid_argument(std::string(what) + ": out must be a NumPy array");
  }
  py::array a = out.cast<py::array>();
  if (!a.dtype().is(py::dtype::of<Complex>())) {
    throw std::invalid_argument(std::string(what) + ": out must be complex64, not " +
                                std::string(py::str(a.dtype())));
  }
  if (!(a.flags() & py::array::c_style) || !a.writeable()) {
    throw std::invalid_argument(std::string(what) + ": out must be C-contiguous and writeable");
  }
  if (std::vector<py::ssize_t>(a.shape(), a.shape() + a.ndim()) != shape) {
    std::string want;
    for (auto n : shape) want += (want.empty() ? "" : ", ") + std::to_string(n);
    throw std::invalid_argument(std::string(what) + ": out must have shape (" + want + ")");
  }
  return py::reinterpret_borrow<ComplexArray>(a);
}

float* floats(ComplexArray& a) { return reinterpret_cast<float*>(a.mutable_data()); }

// Cotangents w[voxel][sample] as complex values or [voxel][sample][re, im]
// reals, as the float pairs the kernels read.
py::array_t<float> cotangent_floats(const py::array& w, std::int64_t voxels, int samples) {
  const bool complex = w.dtype().kind() == 'c';
  py::array_t<float, py::array::c_style | py::array::forcecast> out;
  if (complex) {
    auto c = py::array_t<Complex, py::array::c_style | py::array::forcecast>::ensure(w);
    if (!c || c.ndim() != 2 || c.shape(0) != voxels || c.shape(1) != samples) {
      throw std::invalid_argument("cotangents must have shape (" + std::to_string(voxels) + ", " +
                                  std::to_string(samples) + ") (complex) or (" +
                                  std::to_string(voxels) + ", " + std::to_string(samples) +
                                  ", 2) (real and imaginary parts)");
    }
    out = py::array_t<float>({py::ssize_t(voxels), py::ssize_t(samples), py::ssize_t(2)});
    std::memcpy(out.mutable_data(), c.data(), sizeof(float) * std::size_t(out.size()));
    return out;
  }
  out = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(w);
  if (!out || out.ndim() != 3 || out.shape(0) != voxels || out.shape(1) != samples ||
      out.shape(2) != 2) {
    throw std::invalid_argument("cotangents must have shape (" + std::to_string(voxels) + ", " +
                                std::to_string(samples) + ") (complex) or (" +
                                std::to_string(voxels) + ", " + std::to_string(samples) +
                                ", 2) (real and imaginary parts)");
  }
  return out;
}

// Runs `body` with the GIL released and the run lock held.
template <class Body>
void run_unlocked(Body&& body) {
  ensure_kokkos();
  py::gil_scoped_release release;
  std::lock_guard<std::mutex> lock(run_mutex());
  body();
}

ComplexArray simulate(const simulate::Simulator& sim, const tissue::Tissue& t,
                      const py::object& out) {
  ComplexArray signals = output_array(out, {t.voxels, sim.samples()}, "simulate");
  float* s = floats(signals);
  run_unlocked([&] { simulate::default_backend::run(sim, t, s); });
  return signals;
}

py::tuple steady_state(const simulate::Simulator& sim, const tissue::Tissue& t, double tolerance,
                       int max_repetitions, const py::object& out) {
  ComplexArray signals = output_array(out, {t.voxels, sim.samples()}, "steady_state");
  float* s = floats(signals);
  simulate::SteadyStateOptions options{tolerance, max_repetitions};
  simulate::SteadyStateReport report;
  run_unlocked([&] { report = simulate::default_backend::run_steady_state(sim, t, s, options); });
  py::array_t<int> repetitions(py::ssize_t(report.repetitions.size()), report.repetitions.data());
  return py::make_tuple(signals, repetitions);
}

py::tuple jvp(const simulate::Simulator& sim, const tissue::Tissue& t) {
  const py::ssize_t samples = sim.samples();
  ComplexArray signals({py::ssize_t(t.voxels), samples});
  ComplexArray tangents({py::ssize_t(t.voxels), py::ssize_t(kDirections), samples});
  float* s = floats(signals);
  float* d = floats(tangents);
  run_unlocked([&] {
    simulate::default_backend::run_tissue_jvp(sim, t, s, d);
    // Per deck unit: the kernels differentiate along SI units.
    for (std::int64_t v = 0; v < t.voxels; ++v) {
      for (int k = 0; k < kDirections; ++k) {
        const float scale = direction_scale(k);
        if (scale == 1.0f) continue;
        float* row = d + ((v * kDirections + k) * samples) * 2;
        for (py::ssize_t i = 0; i < 2 * samples; ++i) row[i] *= scale;
      }
    }
  });
  return py::make_tuple(signals, tangents);
}

void scale_tissue_rows(float* rows, std::int64_t voxels) {
  for (std::int64_t v = 0; v < voxels; ++v) {
    for (int k = 0; k < kDirections; ++k) rows[v * kDirections + k] *= direction_scale(k);
  }
}

py::tuple vjp(const simulate::Simulator& sim, const tissue::Tissue& t, const py::array& cotangents,
              int checkpoint_interval, bool sequence) {
  auto w = cotangent_floats(cotangents, t.voxels, sim.samples());
  py::array_t<float> tissue_gradients({py::ssize_t(t.voxels), py::ssize_t(kDirections)});
  py::array_t<float> sequence_gradients({py::ssize_t(sequence ? sim.events() : 0), py::ssize_t(3)});
  const float* wp = w.data();
  float* tg = tissue_gradients.mutable_data();
  float* sg = sequence ? sequence_gradients.mutable_data() : nullptr;
  run_unlocked([&] {
    simulate::default_backend::run_tissue_vjp(sim, t, wp, tg, sg, checkpoint_interval);
    scale_tissue_rows(tg, t.voxels);
  });
  if (!sequence) return py::make_tuple(tissue_gradients, py::none());
  return py::make_tuple(tissue_gradients, sequence_gradients);
}

py::tuple hvp(const simulate::Simulator& sim, const tissue::Tissue& t,
              py::array_t<float, py::array::c_style | py::array::forcecast> directions,
              const py::array& cotangents, int checkpoint_interval) {
  if (directions.ndim() != 2 || directions.shape(0) != t.voxels ||
      directions.shape(1) != kDirections) {
    throw std::invalid_argument("directions must have shape (" + std::to_string(t.voxels) +
                                ", 5): per voxel along m0, t1_ms, t2_ms, b1, off_resonance_hz");
  }
  auto w = cotangent_floats(cotangents, t.voxels, sim.samples());
  // Directions in deck units as the SI steps the kernels take.
  py::array_t<float> u({py::ssize_t(t.voxels), py::ssize_t(kDirections)});
  std::memcpy(u.mutable_data(), directions.data(), sizeof(float) * std::size_t(u.size()));
  scale_tissue_rows(u.mutable_data(), t.voxels);
  const py::ssize_t V = t.voxels, E = sim.events();
  py::array_t<float> tg({V, py::ssize_t(kDirections)}), sg({E, py::ssize_t(3)});
  py::array_t<float> th({V, py::ssize_t(kDirections)}), sh({E, py::ssize_t(3)});
  const float* up = u.data();
  const float* wp = w.data();
  float *tgp = tg.mutable_data(), *sgp = sg.mutable_data(), *thp = th.mutable_data(),
        *shp = sh.mutable_data();
  run_unlocked([&] {
    simulate::default_backend::run_tissue_hvp(sim, t, up, wp, tgp, sgp, thp, shp,
                                              checkpoint_interval);
    scale_tissue_rows(tgp, t.voxels);
    scale_tissue_rows(thp, t.voxels);
  });
  return py::make_tuple(tg, sg, th, sh);
}

// Signals [voxels, samples] on the isochromat engine and, with `mz`, Mz
// [voxels, samples] (float32) beside them.
py::object simulate_isochromats(const simulate::IsochromatSimulator& engine,
                                const tissue::Tissue& t, bool mz, const py::object& out) {
  const std::string refusal = simulate::isochromat_tissue_refusal(t);
  if (!refusal.empty()) throw std::invalid_argument("IsochromatSimulator.simulate: " + refusal);
  const auto samples = py::ssize_t(engine.samples());
  ComplexArray signals = output_array(out, {t.voxels, samples}, "IsochromatSimulator.simulate");
  py::array_t<float> longitudinal(std::vector<py::ssize_t>{mz ? t.voxels : 0, samples});
  float* s = floats(signals);
  float* z = mz ? longitudinal.mutable_data() : nullptr;
  run_unlocked([&] { engine.run(t, s, z); });
  if (!mz) return std::move(signals);
  return py::make_tuple(signals, longitudinal);
}

}  // namespace

void register_simulate(py::module_& m) {
  py::class_<simulate::IsochromatSimulator>(
      m, "IsochromatSimulator",
      "A Pulseq file's step table on the isochromat engine, over the isochromat grid its "
      "windings need; every run takes a Tissue (larmor.isochromat_simulator makes one).")
      .def_property_readonly("samples", &simulate::IsochromatSimulator::samples)
      .def_property_readonly(
          "steps", [](const simulate::IsochromatSimulator& e) { return e.table().steps(); })
      .def_property_readonly(
          "sample_times_s",
          [](const simulate::IsochromatSimulator& e) { return e.table().sample_time_s; })
      .def_property_readonly(
          "voxel_size_m",
          [](const simulate::IsochromatSimulator& e) { return e.table().voxel_size_m; })
      .def_property_readonly(
          "isochromats", [](const simulate::IsochromatSimulator& e) { return e.plan().counts; },
          "Isochromats per voxel along x, y, z.")
      .def_property_readonly(
          "report", [](const simulate::IsochromatSimulator& e) { return e.plan().report; },
          "Why the grid is as it is: the windings it resolves and the accuracy.")
      .def(
          "frequency_offsets",
          [](const simulate::IsochromatSimulator& e, const tissue::Tissue& t) {
            return e.most_frequency_offsets(t);
          },
          py::arg("tissue"),
          "The most frequency offsets a voxel's isochromats are repeated at for its "
          "t2_prime_ms (1 without); refuses a tissue whose spread would exceed the isochromat "
          "limit.")
      .def("simulate", &simulate_isochromats, py::arg("tissue"), py::arg("mz") = false,
           py::arg("out") = py::none(),
           "Signals [voxels, samples] (complex64, units of M0: each voxel's mean over its "
           "isochromats), and with mz=True a tuple with Mz [voxels, samples] (float32) too.");

  py::class_<simulate::Simulator>(m, "Simulator",
                                  "A sequence packed once for runs: its truncation, samples and "
                                  "events; every run method takes a Tissue.")
      .def(py::init([](const sequence::Description& d, int max_order) {
             simulate::Options options;
             options.max_order = max_order;
             return simulate::Simulator(d, options);
           }),
           py::arg("sequence"), py::arg("max_order") = -1,
           "max_order: the highest EPG order kept (< 0: the sequence's automatic cap).")
      .def_property_readonly("samples", &simulate::Simulator::samples)
      .def_property_readonly("events", &simulate::Simulator::events)
      .def_property_readonly("max_order", &simulate::Simulator::max_order)
      .def_property_readonly("kernel_states", &simulate::Simulator::kernel_states)
      .def_property_readonly("sequence", &simulate::Simulator::description)
      .def("real_path_refusal", &simulate::Simulator::real_path_refusal, py::arg("tissue"))
      .def("simulate", &simulate, py::arg("tissue"), py::arg("out") = py::none(),
           "Signals [voxels, samples] (complex64, units of M0), written by the kernels into "
           "`out` when given (complex64, C-contiguous, of that shape).")
      .def("steady_state", &steady_state, py::arg("tissue"), py::arg("tolerance") = 1e-6,
           py::arg("max_repetitions") = 20000, py::arg("out") = py::none(),
           "The samples of the sequence's steady-state period (the sequence is one period) and "
           "the periods each voxel took to settle (-1: not within max_repetitions).")
      .def("jvp", &jvp, py::arg("tissue"),
           "Signals [voxels, samples] and their derivatives [voxels, 5, samples] (complex64) "
           "along m0, t1_ms, t2_ms, b1, off_resonance_hz (per deck unit: T1, T2 per ms).")
      .def("vjp", &vjp, py::arg("tissue"), py::arg("cotangents"),
           py::arg("checkpoint_interval") = 0, py::arg("sequence") = true,
           "For the loss sum Re(conj(w) y), w = cotangents [voxels, samples] (complex) or "
           "[voxels, samples, 2]: the tissue gradients [voxels, 5] per deck unit (m0, t1_ms, "
           "t2_ms, b1, off_resonance_hz) and the sequence gradients [events, 3] (flip per rad, "
           "phase per rad, duration per s) summed over voxels; with sequence=False None in "
           "their place (a tissue fit's faster run).")
      .def("hvp", &hvp, py::arg("tissue"), py::arg("directions"), py::arg("cotangents"),
           py::arg("checkpoint_interval") = 0,
           "Forward over reverse along directions [voxels, 5] (deck units): vjp's two results, "
           "then the tissue Hessian times the direction [voxels, 5] and the sequence gradients' "
           "derivatives along it [events, 3].");
}

}  // namespace larmor::python
