#include "cli/process.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

#include "app/deck.hpp"
#include "common/kokkos_compat.hpp"
#include "simulate/default_backend.hpp"

namespace larmor::cli {

namespace {

// Ranks sharing a node take distinct GPUs, unless the user chose a device.
std::vector<std::string> kokkos_arguments(int argc, char** argv,
                                          const parallel::Communicator& world) {
  std::vector<std::string> args(argv, argv + argc);
#if defined(KOKKOS_ENABLE_CUDA)
  bool chosen = false;
  for (const auto& a : args)
    chosen |= a.rfind("--kokkos-device", 0) == 0 || a.rfind("--kokkos-num-devices", 0) == 0;
  int devices = 0;
  if (!chosen && cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0) {
    MPI_Comm node;
    MPI_Comm_split_type(world.comm(), MPI_COMM_TYPE_SHARED, world.rank(), MPI_INFO_NULL, &node);
    int local_rank = 0;
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_free(&node);
    args.push_back("--kokkos-device-id=" + std::to_string(local_rank % devices));
  }
#else
  (void)world;
#endif
  return args;
}

// A process no launcher started is an MPI world of one: Open MPI need not
// load its network transports (UCX calibrates its clock by sleeping) nor
// look for a server to spawn into. A user's own settings win.
void start_a_singleton_alone() {
  setenv("OMPI_MCA_pml", "ob1", 0);
  setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
}

}  // namespace

std::vector<std::string> arguments_for_cli11(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = argc - 1; i >= 1; --i) {
    const std::string a = argv[i];
    if (a.rfind("--kokkos-", 0) != 0) args.push_back(a);
  }
  return args;
}

int launcher_rank() {
  for (const char* name :
       {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "MV2_COMM_WORLD_RANK", "SLURM_PROCID"}) {
    if (const char* value = std::getenv(name)) return std::atoi(value);
  }
  return -1;
}

void report_error(const char* program, std::string message, bool agreed_by_all, int rank,
                  int ranks) {
  const bool agreed =
      agreed_by_all || (message.rfind("rank ", 0) == 0 && message.find(": ") != std::string::npos);
  if (!agreed_by_all && agreed && ranks == 1) message = message.substr(message.find(": ") + 2);
  if (agreed && rank != 0) return;
  if (ranks == 1 || agreed) {
    std::fprintf(stderr, "%s: error: %s\n", program, message.c_str());
  } else {
    std::fprintf(stderr, "%s (rank %d): error: %s\n", program, rank, message.c_str());
  }
}

int run_with_mpi_and_kokkos(int& argc, char**& argv, const char* program, const std::string& region,
                            const std::function<int(const parallel::Communicator&)>& command) {
  if (launcher_rank() < 0) start_a_singleton_alone();
  parallel::MpiSession mpi(&argc, &argv);
  parallel::Communicator world;
  std::vector<std::string> kokkos_args = kokkos_arguments(argc, argv, world);
  std::vector<char*> kokkos_argv;
  for (auto& a : kokkos_args) kokkos_argv.push_back(a.data());
  simulate::default_backend::state_unbound_threads();
  int kokkos_argc = static_cast<int>(kokkos_argv.size());
  kokkos_argv.push_back(nullptr);
  Kokkos::ScopeGuard kokkos(kokkos_argc, kokkos_argv.data());

  try {
    // Kokkos Tools see the command as the outermost region.
    const kx::ScopedRegion scoped(region);
    return command(world);
  } catch (const app::DeckError& e) {
    report_error(program, e.what(), true, world.rank(), world.size());
  } catch (const std::exception& e) {
    report_error(program, e.what(), false, world.rank(), world.size());
  }
  return 1;
}

}  // namespace larmor::cli
