// larmor-bench (docs/performance.md): the named workloads timed through the
// simulator's and the estimators' public APIs. A lab executable beside
// larmor, built with it and not installed; its inputs are paths given at run
// time (the mrf schedule is inputs/mrf-schedule-1000.csv from the source
// tree's root unless --schedule names another).
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench.hpp"
#include "cli/checks.hpp"
#include "cli/process.hpp"
#include "larmor_config.hpp"

namespace {

void add_bench_options(CLI::App& app, larmor::benchmarks::BenchArgs& args) {
  namespace cli = larmor::cli;
  app.add_option("-w,--workload", args.workloads, "mese, spgr3d, mrf, cest (repeatable)");
  app.add_option("-s,--scale", args.scale, "Fraction of each workload's voxel count")
      ->check(cli::finite_number(0.0, false, 1.0, "a fraction of the workload, up to 1"));
  app.add_option("-n,--voxels", args.voxels, "Voxel count (overrides --scale)")
      ->check(cli::whole_count(1ll << 40, "voxels"));
  app.add_option("-r,--repeats", args.repeats, "Timed repeats (best is reported)")
      ->check(CLI::Range(1, 1000));
  app.add_option(
         "-m,--mode", args.mode,
         "forward; jvp (signals and their derivatives along M0, T1, T2, B1, df); vjp "
         "(adjoint: tissue and per-event sequence gradients of a loss); hvp (the adjoint "
         "at dual numbers: Hessian-vector products); rebind (host: calls per second of "
         "packing the mrf train afresh vs rebinding its values); perk (the PERK "
         "estimator's fused kernel and its adjoint, 200,000 voxels at --scale 1); match "
         "(dictionary matching: the mrf dictionary against 1,000,000 voxels at --scale 1); pulseq "
         "(reading, translating and setting up each --seq file against its forward run "
         "of --voxels voxels, 1,000 by default); bloch (the isochromat engine's "
         "isochromat steps per second for RF cells, free intervals and samples, --voxels "
         "voxels of 256 isochromats, 65,536 by default)")
      ->check(CLI::IsMember(
          {"forward", "jvp", "vjp", "hvp", "rebind", "perk", "match", "pulseq", "bloch"}));
  app.add_flag("--tissue-only", args.tissue_only,
               "vjp, hvp: the tissue's derivatives alone, as a tissue fit asks (no per-event "
               "sequence derivatives); reported as mode vjp-tissue or hvp-tissue");
  app.add_option("--seq", args.seq_files, "Pulseq files (--mode pulseq; repeatable)")
      ->check(CLI::ExistingFile);
  app.add_option("-j,--json", args.json, "Where the JSON results go");
  app.add_option("--schedule", args.schedule,
                 "MRF schedule CSV for the mrf workload (inputs/mrf-schedule-1000.csv of the "
                 "working folder by default)");
  app.add_option("-t,--terms", args.terms,
                 "Declared terms, one run of each workload per value (repeatable): none, all, "
                 "or a comma-separated list of off_resonance, diffusion, flow, transmit, "
                 "second_pool, bound_pool; and two sequence variants: in_phase (every pulse "
                 "at the last pulse's phase: mese's excitation in phase with its refocusing "
                 "pulses) and slice_profile (Hann-sinc slice-selective pulses, 32 positions)");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"larmor-bench: time larmor's kernels on the named workloads"};
  app.set_version_flag("--version", std::string(LARMOR_VERSION));
  app.footer("Exit status: 0 done, 1 refused input or failed run, 2 usage error.");
  larmor::benchmarks::BenchArgs args;
  add_bench_options(app, args);
  std::vector<std::string> cli_args = larmor::cli::arguments_for_cli11(argc, argv);
  try {
    app.parse(cli_args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return larmor::cli::run_with_mpi_and_kokkos(argc, argv, "larmor-bench",
                                              "larmor-bench " + args.mode,
                                              [&](const larmor::parallel::Communicator& world) {
                                                return larmor::benchmarks::run_bench(args, world);
                                              });
}
