// larmor bench: kernel time of the named workloads (docs/performance.md).
// Times the fused kernel alone (tables and tissue uploaded first, a warm-up
// launch, then the best of --repeats), counts the useful flops from the event
// stream, and writes the figures as JSON (atomically) and a table.
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_checks.hpp"
#include "commands.hpp"
#include "common/kokkos_compat.hpp"
#include "epg/adjoint.hpp"
#include "epg/forward.hpp"
#include "io/text_file.hpp"
#include "simulate/device_tissue.hpp"
#include "simulate/memory_budget.hpp"
#include "simulate/simulator.hpp"
#include "simulate/slice_positions.hpp"
#include "workloads.hpp"

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
  cmd->add_option("-m,--mode", args.mode,
                  "forward; jvp (signals and their derivatives along M0, T1, T2, B1, df); vjp "
                  "(adjoint: tissue and per-event sequence gradients of a loss); hvp (the adjoint "
                  "at dual numbers: Hessian-vector products); rebind (host: calls per second of "
                  "packing the mrf train afresh vs rebinding its values); perk (the PERK "
                  "estimator's fused kernel and its adjoint, 200,000 voxels at --scale 1); match "
                  "(dictionary matching: the mrf dictionary against 1,000,000 voxels at --scale 1)")
      ->check(CLI::IsMember({"forward", "jvp", "vjp", "hvp", "rebind", "perk", "match"}));
  cmd->add_option("-j,--json", args.json, "Where the JSON results go");
  cmd->add_option("--schedule", args.schedule, "MRF schedule CSV (for the mrf workload)");
  cmd->add_option("-t,--terms", args.terms,
                  "Declared terms, one run of each workload per value (repeatable): none, all, "
                  "or a comma-separated list of off_resonance, diffusion, flow, transmit, "
                  "second_pool, bound_pool; and two sequence variants: in_phase (every pulse "
                  "at the last pulse's phase: mese's excitation in phase with its refocusing "
                  "pulses) and slice_profile (Hann-sinc slice-selective pulses, 32 positions)");
}

namespace {

// Flops the kernel does for one voxel over the stream, per live order: the
// complex kernels a rotation (65) for a pulse and a free evolution (15) for an
// interval; the on-axis kernels (`on_axis`) a real rotation (14: a and b take
// three multiplies and two adds each, c two of each), their intervals riding
// in the next rotation's coefficients (deferred relaxation). Counting the
// complex work for an on-axis run would report more than the FP32 peak.
double flops_per_voxel(const sequence::PackedSequence& p, int orders, bool on_axis) {
  const double rotation = on_axis ? 14.0 : 65.0, interval = on_axis ? 0.0 : 15.0;
  double flops = 0.0;
  int shifts = 0;
  for (std::int64_t i = 0; i < p.size(); ++i) {
    shifts += abi::shifts_of(p.action[std::size_t(i)]);
    const double live = std::min(shifts + 1, orders);
    if (p.kind[std::size_t(i)] == std::uint8_t(abi::EventKind::pulse)) flops += rotation * live;
    if (p.duration[std::size_t(i)] > 0.0f) flops += interval * live;
  }
  return flops;
}

struct Result {
  std::string workload;
  std::int64_t voxels = 0, events = 0;
  int samples = 0, states = 0, repeats = 0;  // states: those the kernels step
  double best_s = 0, median_s = 0, flops = 0;
  std::string layout;
  std::string mode;
  std::string terms;
};

std::string hostname() {
  char buf[256] = {0};
  gethostname(buf, sizeof(buf) - 1);
  return buf;
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

Result bench_one(const std::string& name, const std::string& terms, const BenchArgs& args) {
  using Exec = Kokkos::DefaultExecutionSpace;
  using Mem = Exec::memory_space;
  Workload w = make_workload(name, args.schedule);
  const std::int64_t voxels =
      args.voxels > 0 ? args.voxels
                      : std::max<std::int64_t>(1, std::llround(double(w.full_voxels) * args.scale));
  simulate::Options opts;
  opts.max_order = w.max_order;
  tissue::Tissue tissue = workload_tissue(name, voxels);
  declare_terms(terms, w.sequence, tissue);
  simulate::Simulator sim(w.sequence, opts);
  tissue.validate("bench tissue");

  // Signals (and tangents) of a chunk stay within 2 GiB; the kernel is timed
  // over all chunks.
  const bool jvp = args.mode == "jvp", hvp = args.mode == "hvp";
  const bool vjp = args.mode == "vjp" || hvp;  // hvp: the reverse sweep at dual numbers
  const int interval = epg::default_checkpoint_interval(int(sim.events()));
  const std::int64_t adjoint_state_bytes =
      std::int64_t(double((sim.events() + interval - 1) / interval + interval) *
                   epg::reverse_state_floats(sim.kernel_states(), tissue.has_second_pool() ? 2 : 1,
                                             tissue.has_bound_pool() ? 1 : 0) *
                   4);
  // Slice-selective pulses run each voxel once per slice position.
  const auto slice = simulate::upload_slice_profiles<Mem>(sim.slice_profiles());
  const int positions = slice.active() ? slice.positions : 1;
  simulate::check_slice_tissue(sim.slice_profiles(), tissue, sim.description());
  const std::int64_t per_voxel =
      std::int64_t(sim.samples()) * 8 * (jvp ? 1 + epg::tissue_tangent_count : 1) * positions +
      (vjp ? adjoint_state_bytes * (hvp ? 2 : 1) * positions : 0);
  // The reverse sweep runs one thread per voxel: as many as its budget holds.
  const double budget =
      vjp ? simulate::reverse_memory_budget<Exec>() : double(std::int64_t(2) << 30);
  const std::int64_t chunk =
      std::max<std::int64_t>(1, std::min<std::int64_t>(voxels, std::int64_t(budget / per_voxel)));
  // Forward runs, forward mode and the adjoint take the real-subspace path
  // where the simulator would (forward over reverse keeps the complex one).
  bool on_axis = false;
  if (args.mode == "vjp") on_axis = sim.reverse_real_path_refusal(tissue).empty();
  const auto& stream = args.mode == "forward" || jvp ? sim.forward_stream(tissue, &on_axis)
                                                     : (on_axis ? sim.axis_packed() : sim.packed());
  auto table = epg::make_event_table<Mem>(stream.ref(), sim.kernel_states(), sim.samples(),
                                          epg::live_orders_rule<Exec>(sim.trims_orders()));
  table.on_axis = on_axis;
  std::vector<epg::TissueViews<Mem>> chunks;
  for (std::int64_t b = 0; b < voxels; b += chunk) {
    chunks.push_back(
        simulate::upload_tissue<Mem>(tissue, b, std::min(chunk, voxels - b), sim.description()));
    if (positions > 1) {
      chunks.back().slice = slice;
      chunks.back().voxels *= positions;
    }
  }
  Kokkos::View<float***, Kokkos::LayoutRight, Mem> signals("larmor::bench_signals",
                                                           chunk * positions, sim.samples(), 2);
  Kokkos::View<float***, Kokkos::LayoutRight, Mem> summed(
      "larmor::bench_summed", positions > 1 ? chunk : 0, sim.samples(), 2);
  Kokkos::View<float****, Kokkos::LayoutRight, Mem> tangents(
      "larmor::bench_tangents", jvp ? chunk * positions : 0, epg::tissue_tangent_count,
      sim.samples(), 2);
  // The adjoint's loss: the sum of the real parts (any cotangent costs the
  // same). The reverse sweeps take each slice position as a voxel of its own.
  const std::int64_t reverse_rows = vjp ? chunk * positions : 0;
  Kokkos::View<float***, Kokkos::LayoutRight, Mem> cotangents("larmor::bench_cotangents",
                                                              reverse_rows, sim.samples(), 2);
  Kokkos::deep_copy(cotangents, 1.0f);
  Kokkos::View<float**, Kokkos::LayoutRight, Mem> tissue_gradients(
      "larmor::bench_tissue_gradients", reverse_rows, epg::tissue_tangent_count);
  Kokkos::View<float**, Kokkos::LayoutRight, Mem> sequence_gradients(
      "larmor::bench_sequence_gradients", vjp ? sim.events() : 0, epg::sequence_gradient::count);
  // Forward over reverse along T1 (any direction costs the same).
  Kokkos::View<float**, Kokkos::LayoutRight, Mem> directions(
      "larmor::bench_directions", hvp ? reverse_rows : 0, epg::tissue_tangent_count);
  Kokkos::deep_copy(Kokkos::subview(directions, Kokkos::ALL, epg::tissue_direction::t1), 1.0f);
  Kokkos::View<float**, Kokkos::LayoutRight, Mem> tissue_hvp(
      "larmor::bench_tissue_hvp", hvp ? reverse_rows : 0, epg::tissue_tangent_count);
  Kokkos::View<float**, Kokkos::LayoutRight, Mem> sequence_hvp(
      "larmor::bench_sequence_hvp", hvp ? sim.events() : 0, epg::sequence_gradient::count);
  Exec exec;
  const epg::LaunchOptions& launch = sim.launch_settings().kernels;
  auto run_all = [&] {
    exec.fence();
    const auto t0 = std::chrono::steady_clock::now();
    for (const auto& c : chunks) {
      if (jvp) {
        epg::simulate_tissue_jvp(exec, table, c, signals, tangents, launch);
      } else if (hvp) {
        epg::simulate_tissue_hvp(exec, table, c, directions, cotangents, tissue_gradients,
                                 sequence_gradients, tissue_hvp, sequence_hvp, interval, launch);
      } else if (vjp) {
        epg::simulate_tissue_vjp(exec, table, c, cotangents, tissue_gradients, sequence_gradients,
                                 interval, launch);
      } else {
        epg::simulate_forward(exec, table, c, signals, {}, launch);
      }
      // The positions' signals summed into the voxel's (forward and jvp signals).
      if (positions > 1 && !vjp) {
        simulate::sum_slice_positions(exec, signals.data(), summed.data(), c.voxels / positions,
                                      std::int64_t(sim.samples()) * 2, sim.slice_profiles());
      }
    }
    exec.fence();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  run_all();  // warm-up
  std::vector<double> times;
  for (int r = 0; r < args.repeats; ++r) times.push_back(run_all());
  std::sort(times.begin(), times.end());

  Result res;
  res.workload = name;
  res.voxels = voxels;
  res.events = sim.events();
  res.samples = sim.samples();
  res.states = sim.kernel_states();
  res.repeats = args.repeats;
  res.best_s = times.front();
  res.median_s = times[times.size() / 2];
  res.flops = flops_per_voxel(sim.packed(), sim.kernel_states(), on_axis) * double(voxels);
  const epg::LaunchShape shape =
      epg::choose_launch_shape<Exec>(sim.kernel_states(), int(chunk), on_axis, launch);
  // orders per thread x lanes / threads per group x groups per team
  res.layout = std::to_string(shape.orders_per_thread) + "x" + std::to_string(shape.lanes) + "/" +
               std::to_string(shape.group_threads) + "x" + std::to_string(shape.groups);
  if (on_axis) res.layout += "/axis";
  if (tissue.has_second_pool() || tissue.has_bound_pool()) res.layout = "pooled";
  if (args.mode != "forward") res.layout = args.mode + (on_axis ? "/axis" : "");
  res.mode = args.mode;
  res.terms = terms;
  return res;
}

}  // namespace

int run_bench(const BenchArgs& args, const parallel::Communicator& comm) {
  if (args.mode == "rebind") return run_rebinding_bench(args, comm);
  if (args.mode == "perk") return run_perk_bench(args, comm);
  if (args.mode == "match") return run_match_bench(args, comm);
  if (comm.size() > 1 && comm.is_root()) {
    std::fprintf(stderr, "larmor bench: timing rank 0 only; run the bench on one rank\n");
  }
  const int threads = Kokkos::DefaultExecutionSpace().concurrency();
  std::vector<Result> results;
  for (const auto& name : args.workloads) {
    for (const auto& terms : args.terms) results.push_back(bench_one(name, terms, args));
  }
  if (!comm.is_root()) return 0;

  std::ostringstream json;
  json << "{\n  \"machine\": \"" << hostname() << "\",\n  \"date\": \"" << utc_now()
       << "\",\n  \"backend\": \"" << kx::backend_name() << "\",\n  \"concurrency\": " << threads
       << ",\n  \"results\": [\n";
  std::printf("%-8s %-14s %10s %8s %7s %6s %9s %12s %12s %14s %10s\n", "workload", "terms",
              "voxels", "events", "samples", "states", "layout", "best [s]", "ns/ev/vox",
              "ev*vox/s", "GFLOP/s");
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    const double ev = double(r.events) * double(r.voxels);
    const double ns = r.best_s * 1e9 / ev;
    const double gflops = r.flops / r.best_s * 1e-9;
    std::printf("%-8s %-14s %10lld %8lld %7d %6d %9s %12.6f %12.4f %14.4g %10.2f\n",
                r.workload.c_str(), r.terms.c_str(), static_cast<long long>(r.voxels),
                static_cast<long long>(r.events), r.samples, r.states, r.layout.c_str(), r.best_s,
                ns, ev / r.best_s, gflops);
    json << "    {\"workload\": \"" << r.workload << "\", \"terms\": \"" << r.terms
         << "\", \"voxels\": " << r.voxels << ", \"events\": " << r.events
         << ", \"samples\": " << r.samples << ", \"states\": " << r.states
         << ", \"repeats\": " << r.repeats << ", \"best_s\": " << r.best_s
         << ", \"median_s\": " << r.median_s << ", \"ns_per_event_voxel\": " << ns
         << ", \"event_voxels_per_s\": " << ev / r.best_s
         << ", \"us_per_voxel\": " << r.best_s * 1e6 / double(r.voxels) << ", \"layout\": \""
         << r.layout << "\", \"mode\": \"" << r.mode << "\", \"flops\": " << r.flops
         << ", \"gflop_per_s\": " << gflops << "}" << (i + 1 < results.size() ? ",\n" : "\n");
  }
  json << "  ]\n}\n";
  io::write_text_atomically(args.json, json.str());
  std::printf("larmor bench: wrote %s\n", args.json.c_str());
  return 0;
}

}  // namespace larmor::drivers
