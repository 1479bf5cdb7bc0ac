// The _larmor extension module: the runtime larmor's kernels need (Kokkos on
// the build's default host execution space, MPI where a reader takes a
// communicator), and C++ errors as Python exceptions with the same messages:
// std::invalid_argument (and pybind11's other argument errors) as
// ValueError, a deck's error as larmor.DeckError (a RuntimeError), the rest
// as RuntimeError.
#include <cstdlib>
#include <memory>

#include "app/deck.hpp"
#include "bindings.hpp"
#include "larmor_config.hpp"
#include "parallel/communicator.hpp"
#include "simulate/default_backend.hpp"

namespace larmor::python {

namespace {
std::unique_ptr<parallel::MpiSession>& mpi_lifetime() {
  static std::unique_ptr<parallel::MpiSession> mpi;
  return mpi;
}
bool& kokkos_started() {
  static bool started = false;
  return started;
}
}  // namespace

std::mutex& run_mutex() {
  static std::mutex m;
  return m;
}

void ensure_kokkos() {
  if (simulate::default_backend::initialized()) return;
  if (kokkos_started()) {
    throw std::runtime_error(
        "larmor: Kokkos was finalised at interpreter exit and cannot start again");
  }
  simulate::default_backend::initialize();
  kokkos_started() = true;
}

void ensure_mpi() {
  if (!mpi_lifetime()) {
    int argc = 0;
    char** argv = nullptr;
    mpi_lifetime() = std::make_unique<parallel::MpiSession>(&argc, &argv);
  }
}

void finalize_runtime() {
  std::lock_guard<std::mutex> lock(run_mutex());
  release_dictionaries();
  if (simulate::default_backend::initialized()) simulate::default_backend::finalize();
  mpi_lifetime().reset();  // finalises MPI only where this module initialised it
}

}  // namespace larmor::python

PYBIND11_MODULE(_larmor, m) {
  namespace lp = larmor::python;
  namespace py = pybind11;
  m.doc() = "larmor: extended phase graph simulation, derivatives and estimation for MRI";
  m.attr("__version__") = LARMOR_VERSION;
  py::register_exception<larmor::app::DeckError>(m, "DeckError", PyExc_RuntimeError);
  m.def("_finalize", &lp::finalize_runtime,
        "Finalises Kokkos (and MPI where larmor started it); registered with atexit.");
  m.def(
      "backend",
      []() {
        lp::ensure_kokkos();
        return std::string(larmor::simulate::default_backend::name());
      },
      "The Kokkos execution space runs use (initialises Kokkos).");
  m.def(
      "threads",
      []() {
        lp::ensure_kokkos();
        return larmor::simulate::default_backend::concurrency();
      },
      "Threads of the execution space (OMP_NUM_THREADS where set).");
  lp::register_sequence(m);
  lp::register_tissue(m);
  lp::register_simulate(m);
  lp::register_estimators(m);
}
