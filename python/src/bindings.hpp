// Shared pieces of the Python module (_larmor): the runtime (Kokkos, MPI),
// the lock every run takes, and the registration functions of each part.
#pragma once

#include <mutex>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

namespace larmor::python {

namespace py = pybind11;

// Kokkos is initialised on the first call that needs it (honouring
// OMP_NUM_THREADS) and finalised by finalize_runtime, which the package
// registers with atexit.
void ensure_kokkos();
// MPI is needed only to read a deck's tissue (its readers take a
// communicator); initialised then, unless the host application (mpi4py, say)
// already did, and finalised with Kokkos.
void ensure_mpi();
void finalize_runtime();
// Device memory of the dictionaries still alive, given back before Kokkos ends.
void release_dictionaries();

// Runs are serialised: the OpenMP backend takes one launch at a time, and
// the GIL is released while a run holds this lock.
std::mutex& run_mutex();

void register_sequence(py::module_& m);
void register_tissue(py::module_& m);
void register_simulate(py::module_& m);
void register_estimators(py::module_& m);

}  // namespace larmor::python
