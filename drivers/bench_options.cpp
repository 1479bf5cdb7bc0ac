// larmor bench: the subcommand's options. The bench itself is the
// larmor_benchmarks library (benchmarks/).
#include "cli_checks.hpp"
#include "commands.hpp"

namespace larmor::drivers {

void add_bench(CLI::App& app, BenchArgs& args) {
  CLI::App* cmd = app.add_subcommand("bench", "Time the fused kernel on the named workloads");
  cmd->add_option("-w,--workload", args.workloads, "mese, spgr3d, mrf (repeatable)");
  cmd->add_option("-s,--scale", args.scale, "Fraction of each workload's voxel count")
      ->check(finite_number(0.0, false, 1.0, "a fraction of the workload, up to 1"));
  cmd->add_option("-n,--voxels", args.voxels, "Voxel count (overrides --scale)")
      ->check(whole_count(1ll << 40, "voxels"));
  cmd->add_option("-r,--repeats", args.repeats, "Timed repeats (best is reported)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option(
         "-m,--mode", args.mode,
         "forward; jvp (signals and their derivatives along M0, T1, T2, B1, df); vjp "
         "(adjoint: tissue and per-event sequence gradients of a loss); hvp (the adjoint "
         "at dual numbers: Hessian-vector products); rebind (host: calls per second of "
         "packing the mrf train afresh vs rebinding its values); perk (the PERK "
         "estimator's fused kernel and its adjoint, 200,000 voxels at --scale 1); match "
         "(dictionary matching: the mrf dictionary against 1,000,000 voxels at --scale 1); pulseq "
         "(reading, translating and setting up each --seq file against its forward run "
         "of --voxels voxels, 1,000 by default)")
      ->check(CLI::IsMember({"forward", "jvp", "vjp", "hvp", "rebind", "perk", "match", "pulseq"}));
  cmd->add_option("--seq", args.seq_files, "Pulseq files (--mode pulseq; repeatable)")
      ->check(CLI::ExistingFile);
  cmd->add_option("-j,--json", args.json, "Where the JSON results go");
  cmd->add_option("--schedule", args.schedule, "MRF schedule CSV (for the mrf workload)");
  cmd->add_option("-t,--terms", args.terms,
                  "Declared terms, one run of each workload per value (repeatable): none, all, "
                  "or a comma-separated list of off_resonance, diffusion, flow, transmit, "
                  "second_pool, bound_pool; and two sequence variants: in_phase (every pulse "
                  "at the last pulse's phase: mese's excitation in phase with its refocusing "
                  "pulses) and slice_profile (Hann-sinc slice-selective pulses, 32 positions)");
}

}  // namespace larmor::drivers
