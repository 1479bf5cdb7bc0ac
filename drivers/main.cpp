// larmor: one executable, subcommands under drivers/. main parses the command
// line first (--help, --version and usage errors answer at once, and inspect
// runs, without starting MPI or Kokkos), then owns MPI and Kokkos (in that
// order), maps each rank to a GPU, and turns every error into a message and
// the documented exit status: 0 done, 1 refused input or failed run, 2 usage
// error, 128+N for signal N (io/temporary_files.cpp).
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/deck.hpp"
#include "cli_checks.hpp"
#include "commands.hpp"
#include "common/kokkos_compat.hpp"
#include "io/temporary_files.hpp"
#include "larmor_config.hpp"
#include "parallel/communicator.hpp"
#include "phase_timer.hpp"
#include "simulate/default_backend.hpp"

namespace {

// Ranks sharing a node take distinct GPUs, unless the user chose a device.
std::vector<std::string> kokkos_arguments(int argc, char** argv,
                                          const larmor::parallel::Communicator& world) {
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

// The rank a launcher gave this process, read before MPI starts so that one
// process of an mpirun or srun job reports a usage error.
int launcher_rank() {
  for (const char* name :
       {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "MV2_COMM_WORLD_RANK", "SLURM_PROCID"}) {
    if (const char* value = std::getenv(name)) return std::atoi(value);
  }
  return -1;
}

// A process no launcher started is an MPI world of one: Open MPI need not
// load its network transports (UCX calibrates its clock by sleeping) nor
// look for a server to spawn into. A user's own settings win.
void start_a_singleton_alone() {
  setenv("OMPI_MCA_pml", "ob1", 0);
  setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
}

// An error's message, said once: by rank 0 for errors every rank agreed on
// ("rank N: ..." on every rank, or a deck's fault, which every rank finds),
// by the rank that met it otherwise.
void report_error(std::string message, bool agreed_by_all, int rank, int ranks) {
  const bool agreed =
      agreed_by_all || (message.rfind("rank ", 0) == 0 && message.find(": ") != std::string::npos);
  if (!agreed_by_all && agreed && ranks == 1) message = message.substr(message.find(": ") + 2);
  if (agreed && rank != 0) return;
  if (ranks == 1 || agreed) {
    std::fprintf(stderr, "larmor: error: %s\n", message.c_str());
  } else {
    std::fprintf(stderr, "larmor (rank %d): error: %s\n", rank, message.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  larmor::drivers::mark_process_start();
  // Before anything is written: an interrupted run leaves no temporary file.
  larmor::io::remove_temporaries_on_interrupt();
  const bool launched = launcher_rank() >= 0;
  const int rank_before_mpi = launched ? launcher_rank() : 0;

  CLI::App app{"larmor: extended phase graph simulation and estimation for MRI"};
  app.require_subcommand(1);
  app.allow_extras(false);
  app.set_version_flag("--version", std::string(LARMOR_VERSION));
  app.footer("Exit status: 0 done, 1 refused input or failed run, 2 usage error, 128+N signal N.");
  larmor::drivers::SimulateArgs simulate_args;
  larmor::drivers::BenchArgs bench_args;
  larmor::drivers::add_simulate(app, simulate_args);
  larmor::drivers::add_bench(app, bench_args);
  larmor::drivers::DesignArgs design_args;
  larmor::drivers::add_design(app, design_args);
  larmor::drivers::ExportArgs export_args;
  larmor::drivers::add_export(app, export_args);
  larmor::drivers::InspectArgs inspect_args;
  larmor::drivers::add_inspect(app, inspect_args);
  larmor::drivers::PhantomArgs phantom_args;
  larmor::drivers::add_phantom(app, phantom_args);
  larmor::drivers::FitArgs fit_args;
  larmor::drivers::add_fit(app, fit_args);

  // Kokkos' own flags are for Kokkos; hide them from CLI11.
  std::vector<std::string> cli_args;
  for (int i = argc - 1; i >= 1; --i) {
    const std::string a = argv[i];
    if (a.rfind("--kokkos-", 0) != 0) cli_args.push_back(a);
  }
  // A mistyped command gets a suggestion rather than "a subcommand is required".
  if (!cli_args.empty()) {
    const std::string& word = cli_args.back();  // cli_args is reversed
    if (word.front() != '-' &&
        app.get_subcommands([&](CLI::App* c) { return c->get_name() == word; }).empty()) {
      std::string names, closest;
      std::size_t best = 3;
      for (const CLI::App* c : app.get_subcommands({})) {
        names += (names.empty() ? "" : ", ") + c->get_name();
        const std::size_t d = larmor::drivers::edit_distance(word, c->get_name());
        if (d < best) {
          best = d;
          closest = c->get_name();
        }
      }
      if (rank_before_mpi == 0) {
        std::fprintf(
            stderr, "larmor: unknown command '%s'%s (commands: %s; larmor --help)\n", word.c_str(),
            closest.empty() ? "" : ("; did you mean '" + closest + "'?").c_str(), names.c_str());
      }
      return 2;
    }
  }
  try {
    app.parse(cli_args);
  } catch (const CLI::ParseError& e) {
    // --help and --version are successes (CLI11's code 0); every other
    // parse error, whatever CLI11's own code for its kind, is a usage error.
    const int code = rank_before_mpi == 0 ? app.exit(e) : e.get_exit_code();
    return code == 0 ? 0 : 2;
  }

  if (app.got_subcommand("inspect")) {
    try {
      return larmor::drivers::run_inspect(inspect_args, rank_before_mpi == 0);
    } catch (const std::exception& e) {
      report_error(e.what(), true, rank_before_mpi, 1);
      return 1;
    }
  }

  if (!launched) start_a_singleton_alone();
  larmor::parallel::MpiSession mpi(&argc, &argv);
  larmor::parallel::Communicator world;
  std::vector<std::string> kargs = kokkos_arguments(argc, argv, world);
  std::vector<char*> kargv;
  for (auto& a : kargs) kargv.push_back(a.data());
  larmor::simulate::default_backend::state_unbound_threads();
  int kargc = static_cast<int>(kargv.size());
  kargv.push_back(nullptr);
  Kokkos::ScopeGuard kokkos(kargc, kargv.data());

  int status = 0;
  try {
    // Kokkos Tools see the command as the outermost region.
    const auto commands = app.get_subcommands();
    const larmor::kx::ScopedRegion region(
        commands.empty() ? std::string("larmor") : "larmor " + commands.front()->get_name());
    if (app.got_subcommand("simulate"))
      status = larmor::drivers::run_simulate(simulate_args, world);
    if (app.got_subcommand("bench")) status = larmor::drivers::run_bench(bench_args, world);
    if (app.got_subcommand("design")) status = larmor::drivers::run_design(design_args, world);
    if (app.got_subcommand("export")) status = larmor::drivers::run_export(export_args, world);
    if (app.got_subcommand("phantom")) status = larmor::drivers::run_phantom(phantom_args, world);
    if (app.got_subcommand("fit")) status = larmor::drivers::run_fit(fit_args, world);
  } catch (const larmor::app::DeckError& e) {
    report_error(e.what(), true, world.rank(), world.size());
    status = 1;
  } catch (const std::exception& e) {
    report_error(e.what(), false, world.rank(), world.size());
    status = 1;
  }
  return status;
}
