// larmor: one executable, subcommands under drivers/. main parses the command
// line first (--help, --version and usage errors answer at once, and inspect
// runs, without starting MPI or Kokkos), then runs the command inside MPI and
// Kokkos (cli/process.hpp), every error a message and the documented exit
// status: 0 done, 1 refused input or failed run, 2 usage
// error, 128+N for signal N (io/temporary_files.cpp).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/checks.hpp"
#include "cli/process.hpp"
#include "commands.hpp"
#include "io/temporary_files.hpp"
#include "larmor_config.hpp"
#include "phase_timer.hpp"

int main(int argc, char** argv) {
  larmor::drivers::mark_process_start();
  // Before anything is written: an interrupted run leaves no temporary file.
  larmor::io::remove_temporaries_on_interrupt();
  const int rank_before_mpi = std::max(larmor::cli::launcher_rank(), 0);

  CLI::App app{"larmor: extended phase graph simulation and estimation for MRI"};
  app.require_subcommand(1);
  app.allow_extras(false);
  app.set_version_flag("--version", std::string(LARMOR_VERSION));
  app.footer("Exit status: 0 done, 1 refused input or failed run, 2 usage error, 128+N signal N.");
  larmor::drivers::SimulateArgs simulate_args;
  larmor::drivers::add_simulate(app, simulate_args);
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

  std::vector<std::string> cli_args = larmor::cli::arguments_for_cli11(argc, argv);
  // A mistyped command gets a suggestion rather than "a subcommand is required".
  if (!cli_args.empty()) {
    const std::string& word = cli_args.back();  // cli_args is reversed
    if (word.front() != '-' &&
        app.get_subcommands([&](CLI::App* c) { return c->get_name() == word; }).empty()) {
      std::string names, closest;
      std::size_t best = 3;
      for (const CLI::App* c : app.get_subcommands({})) {
        names += (names.empty() ? "" : ", ") + c->get_name();
        const std::size_t d = larmor::cli::edit_distance(word, c->get_name());
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
      larmor::cli::report_error("larmor", e.what(), true, rank_before_mpi, 1);
      return 1;
    }
  }

  const std::string command = app.get_subcommands().front()->get_name();
  return larmor::cli::run_with_mpi_and_kokkos(argc, argv, "larmor", "larmor " + command,
                                              [&](const larmor::parallel::Communicator& world) {
                                                using namespace larmor::drivers;
                                                if (command == "simulate")
                                                  return run_simulate(simulate_args, world);
                                                if (command == "design")
                                                  return run_design(design_args, world);
                                                if (command == "export")
                                                  return run_export(export_args, world);
                                                if (command == "phantom")
                                                  return run_phantom(phantom_args, world);
                                                return run_fit(fit_args, world);
                                              });
}
