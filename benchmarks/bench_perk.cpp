// larmor-bench -m perk: the `perk` workload (docs/performance.md): the PERK
// estimator with 24 inputs, 256 features and 2 outputs applied to 200,000
// voxels (scaled by --scale or --voxels), forward and adjoint kernels timed
// separately (inputs on the device, a warm-up launch, then the best of
// --repeats). Writes JSON (atomically) and a table.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>

#include "bench.hpp"
#include "estimators/perk/perk_batch.hpp"
#include "estimators/perk/perk_model.hpp"
#include "io/text_file.hpp"
#include "simulate/kernel_timing.hpp"

namespace larmor::benchmarks {

int run_perk_bench(const BenchArgs& args, const parallel::Communicator& comm) {
  const int q = 24, h = 256, l = 2;
  const std::int64_t voxels =
      args.voxels > 0 ? args.voxels : std::max<std::int64_t>(1, std::llround(200000 * args.scale));
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto random_matrix = [&](std::int64_t rows, int cols, float scale) {
    std::vector<float> v(std::size_t(rows) * std::size_t(cols));
    for (float& x : v) x = scale * normal(rng);
    return v;
  };
  // A random model of the workload's size: q signal inputs, two outputs.
  estimators::perk::PerkModel model;
  model.signals = q;
  model.outputs = {tissue::Property::t1, tissue::Property::t2};
  model.features = h;
  model.frequencies = random_matrix(h, q, 1.0f);
  model.weights = random_matrix(l, h, std::sqrt(2.0f / h));
  model.phases = random_matrix(1, h, 1.0f);
  model.offsets = random_matrix(1, l, 1.0f);
  const std::vector<float> inputs = random_matrix(voxels, q, 0.3f);
  const std::vector<float> cotangents = random_matrix(voxels, l, 1.0f);
  estimators::perk::PerkBatch batch(model, inputs, cotangents, voxels);
  auto best_of = [&](auto&& launch) {
    launch();  // warm-up
    std::vector<double> times;
    for (int r = 0; r < args.repeats; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      launch();  // waits for the kernel
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(times.begin(), times.end());
    return std::make_pair(times.front(), times[times.size() / 2]);
  };
  const auto forward = best_of([&] { batch.apply(); });
  const auto adjoint = best_of([&] { batch.adjoint(); });
  // Deterministic calls (larmor fit's): no feature splitting, no atomics.
  const auto forward_det = best_of([&] { batch.apply(true); });
  const auto adjoint_det = best_of([&] { batch.adjoint(true); });
  if (!comm.is_root()) return 0;
  // Useful flops per voxel and feature: Q multiply-adds for the angle, L for
  // the second product (the adjoint: L + Q more).
  const double fwd_flops = 2.0 * voxels * h * (q + l);
  const double adj_flops = 2.0 * voxels * h * (2 * q + 2 * l);
  std::printf("%-6s %10s %6s %8s %7s %12s %12s %12s %12s\n", "kernel", "voxels", "inputs",
              "features", "outputs", "best [ms]", "median [ms]", "ns/voxel", "GFLOP/s");
  std::printf("%-6s %10lld %6d %8d %7d %12.4f %12.4f %12.4f %12.1f\n", "apply",
              static_cast<long long>(voxels), q, h, l, forward.first * 1e3, forward.second * 1e3,
              forward.first * 1e9 / voxels, fwd_flops / forward.first * 1e-9);
  std::printf("%-6s %10lld %6d %8d %7d %12.4f %12.4f %12.4f %12.1f\n", "adjnt",
              static_cast<long long>(voxels), q, h, l, adjoint.first * 1e3, adjoint.second * 1e3,
              adjoint.first * 1e9 / voxels, adj_flops / adjoint.first * 1e-9);
  std::printf("%-6s %10lld %6d %8d %7d %12.4f %12.4f %12.4f %12.1f\n", "apply*",
              static_cast<long long>(voxels), q, h, l, forward_det.first * 1e3,
              forward_det.second * 1e3, forward_det.first * 1e9 / voxels,
              fwd_flops / forward_det.first * 1e-9);
  std::printf("%-6s %10lld %6d %8d %7d %12.4f %12.4f %12.4f %12.1f\n", "adjnt*",
              static_cast<long long>(voxels), q, h, l, adjoint_det.first * 1e3,
              adjoint_det.second * 1e3, adjoint_det.first * 1e9 / voxels,
              adj_flops / adjoint_det.first * 1e-9);
  std::printf("(* deterministic: one team per voxel block over every feature, no atomics)\n");
  std::ostringstream json;
  json << "{\n  \"machine\": \"" << hostname() << "\",\n  \"date\": \"" << utc_now()
       << "\",\n  \"backend\": \"" << simulate::backend_name()
       << "\",\n  \"workload\": \"perk\",\n  \"voxels\": " << voxels << ", \"inputs\": " << q
       << ", \"features\": " << h << ", \"outputs\": " << l
       << ",\n  \"apply_best_s\": " << forward.first << ", \"apply_median_s\": " << forward.second
       << ",\n  \"adjoint_best_s\": " << adjoint.first
       << ", \"adjoint_median_s\": " << adjoint.second
       << ",\n  \"deterministic_apply_best_s\": " << forward_det.first
       << ", \"deterministic_adjoint_best_s\": " << adjoint_det.first << "\n}\n";
  io::write_text_atomically(args.json, json.str());
  std::printf("larmor-bench: wrote %s\n", args.json.c_str());
  return 0;
}

}  // namespace larmor::benchmarks
