// What every larmor executable does around its command once the command line
// is parsed: start MPI (a process no launcher started runs as a world of one
// without Open MPI's network transports), start Kokkos with one GPU per rank
// of a node, run the command as a Kokkos Tools region, and turn an error into
// its message, said once, and exit status 1.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "parallel/communicator.hpp"

namespace larmor::cli {

// The rank a launcher (mpirun, srun) gave this process, read before MPI
// starts so that one process of a job reports a usage error; -1 when none.
int launcher_rank();

// The command line as CLI11's parse(std::vector) takes it (reversed, the
// program's name left out), without Kokkos' own --kokkos-* flags, which are
// Kokkos'.
std::vector<std::string> arguments_for_cli11(int argc, char** argv);

// Prints "<program>: error: <message>" once: by rank 0 for an error every
// rank agreed on ("rank N: ..." on every rank, or a deck's fault, which every
// rank finds), by the rank that met it otherwise.
void report_error(const char* program, std::string message, bool agreed_by_all, int rank,
                  int ranks);

// Runs `command` with MPI and Kokkos started (argc, argv: the process's,
// Kokkos' own --kokkos-* flags included) and returns its status; an
// exception becomes its message (report_error) and status 1. `region` names
// the outermost Kokkos Tools region.
int run_with_mpi_and_kokkos(int& argc, char**& argv, const char* program, const std::string& region,
                            const std::function<int(const parallel::Communicator&)>& command);

}  // namespace larmor::cli
