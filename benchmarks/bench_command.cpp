// larmor-bench: kernel time of the named workloads (docs/performance.md).
// Times the fused kernel alone (tables and tissue uploaded first, a warm-up
// launch, then the best of --repeats), counts the useful flops from the event
// stream, and writes the figures as JSON (atomically) and a table.
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <sstream>

#include "bench.hpp"
#include "io/text_file.hpp"
#include "simulate/kernel_timing.hpp"
#include "simulate/simulator.hpp"
#include "workloads.hpp"

namespace larmor::benchmarks {

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

void write_results_json(const std::string& path, const std::string& mode, const std::string& rows) {
  std::ostringstream json;
  json << "{\n  \"machine\": \"" << hostname() << "\",\n  \"date\": \"" << utc_now()
       << "\",\n  \"mode\": \"" << mode << "\",\n  \"backend\": \"" << simulate::backend_name()
       << "\",\n  \"results\": [\n"
       << rows << "\n  ]\n}\n";
  io::write_text_atomically(path, json.str());
  std::printf("larmor-bench: wrote %s\n", path.c_str());
}

namespace {

struct Result {
  std::string workload;
  std::int64_t voxels = 0, events = 0;
  int samples = 0, states = 0, repeats = 0;  // states: those the kernels step
  double best_s = 0, median_s = 0, flops = 0;
  std::string layout;
  std::string mode;
  std::string terms;
};

Result bench_one(const std::string& name, const std::string& terms, const BenchArgs& args) {
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

  // The tables and the tissue are uploaded once; the kernel alone is timed,
  // over all chunks.
  const simulate::KernelMode mode = args.mode == "jvp"   ? simulate::KernelMode::jvp
                                    : args.mode == "vjp" ? simulate::KernelMode::vjp
                                    : args.mode == "hvp" ? simulate::KernelMode::hvp
                                                         : simulate::KernelMode::forward;
  const bool reverse = mode == simulate::KernelMode::vjp || mode == simulate::KernelMode::hvp;
  const bool tissue_only = reverse && args.tissue_only;
  simulate::TimedLaunch launch(sim, tissue, mode, 0, !tissue_only);
  auto run_all = [&] {
    const auto t0 = std::chrono::steady_clock::now();
    launch.run();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  run_all();  // warm-up
  std::vector<double> times;
  for (int r = 0; r < args.repeats; ++r) times.push_back(run_all());
  std::sort(times.begin(), times.end());
  const bool on_axis = launch.on_axis();

  Result res;
  res.workload = name;
  res.voxels = voxels;
  res.events = sim.events();
  res.samples = sim.samples();
  res.states = sim.kernel_states();
  res.repeats = args.repeats;
  res.best_s = times.front();
  res.median_s = times[times.size() / 2];
  res.flops =
      simulate::flops_per_voxel(sim.packed(), sim.kernel_states(), on_axis) * double(voxels);
  const simulate::LaunchLayout shape = launch.layout();
  // orders per thread x lanes / threads per group x groups per team
  res.layout = std::to_string(shape.orders_per_thread) + "x" + std::to_string(shape.lanes) + "/" +
               std::to_string(shape.group_threads) + "x" + std::to_string(shape.groups);
  if (on_axis) res.layout += "/axis";
  if (tissue.has_second_pool() || tissue.has_bound_pool()) res.layout = "pooled";
  // Waveform pulses run in a layout of their own (docs/kernels.md).
  if (sim.waveform_table().waveforms() > 0) res.layout = "waveforms";
  res.mode = args.mode + (tissue_only ? "-tissue" : "");
  if (args.mode != "forward") res.layout = res.mode + (on_axis ? "/axis" : "");
  res.terms = terms;
  return res;
}

}  // namespace

int run_bench(const BenchArgs& args, const parallel::Communicator& comm) {
  if (args.mode == "rebind") return run_rebinding_bench(args, comm);
  if (args.mode == "perk") return run_perk_bench(args, comm);
  if (args.mode == "match") return run_match_bench(args, comm);
  if (args.mode == "pulseq") return run_pulseq_bench(args, comm);
  if (args.mode == "bloch") return run_bloch_bench(args, comm);
  if (comm.size() > 1 && comm.is_root()) {
    std::fprintf(stderr, "larmor-bench: timing rank 0 only; run the bench on one rank\n");
  }
  const int threads = simulate::backend_concurrency();
  std::vector<Result> results;
  for (const auto& name : args.workloads) {
    for (const auto& terms : args.terms) results.push_back(bench_one(name, terms, args));
  }
  if (!comm.is_root()) return 0;

  std::ostringstream json;
  json << "{\n  \"machine\": \"" << hostname() << "\",\n  \"date\": \"" << utc_now()
       << "\",\n  \"backend\": \"" << simulate::backend_name()
       << "\",\n  \"concurrency\": " << threads << ",\n  \"results\": [\n";
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
  std::printf("larmor-bench: wrote %s\n", args.json.c_str());
  return 0;
}

}  // namespace larmor::benchmarks
