// larmor-bench -m bloch: the isochromat engine's rate per kind of step, in
// isochromat steps per second, through its public run (upload, kernel,
// results back): a table of RF cells (1 us, under a slice gradient), one of
// free intervals (10 us, each with a gradient moment) and one of samples
// (each after a 10 us free interval), each over --voxels voxels (65,536 by
// default) of 256 isochromats. Writes JSON (atomically) and a table.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "bench.hpp"
#include "simulate/isochromat_simulator.hpp"

namespace larmor::benchmarks {
namespace {

using clock = std::chrono::steady_clock;
constexpr std::int64_t kIsochromats = 256;

// Steps of one kind (and one sample at the end, so that the run has a result).
sequence::StepTable table_of(const std::string& kind) {
  sequence::StepTable table;
  sequence::StepTableWriter writer(table);
  // A 90 degree pulse first, so that free intervals and samples have
  // transverse magnetisation to turn.
  if (kind != "rf") writer.rf(1e-6, 2.0 * 3.14159265358979 * 2.5e5, 0.0, {0.0, 0.0, 0.0}, 0.0);
  if (kind == "rf") {
    for (int i = 0; i < 2048; ++i) writer.rf(1e-6, 2e3, 1e3, {0.0, 0.0, 2e5}, 0.0);
  } else if (kind == "free") {
    for (int i = 0; i < 2048; ++i) {
      writer.free(1e-5, {0.0, 0.0, 20.0});
      writer.flush();  // one step each: the writer would merge them
    }
  } else {
    for (int i = 0; i < 255; ++i) {
      writer.free(1e-5, {0.0, 0.0, 20.0});
      writer.sample(1.0, 0.0, 1e-5 * (i + 1), 1, i, false);
    }
  }
  writer.free(1e-5, {0.0, 0.0, 20.0});
  writer.sample(1.0, 0.0, 0.0, 1, 0, false);
  return table;
}

}  // namespace

int run_bloch_bench(const BenchArgs& args, const parallel::Communicator& comm) {
  const std::int64_t voxels = args.voxels > 0 ? args.voxels : 65536;
  tissue::Tissue tissue;
  tissue.voxels = voxels;
  for (std::int64_t v = 0; v < voxels; ++v) {
    tissue.t1_s.map.push_back(float(0.3 + 2.7 * double(v % 17) / 16.0));
    tissue.t2_s.map.push_back(float(0.02 + 0.3 * double(v % 13) / 12.0));
    tissue.df_hz.map.push_back(float(double(v % 11) - 5.0));
  }
  std::ostringstream rows;
  if (comm.is_root()) {
    std::printf("%-8s %8s %10s %12s %10s %22s %12s\n", "steps", "count", "voxels", "isochromats",
                "time [s]", "isochromat steps / s", "mean |last|");
  }
  for (const std::string kind : {"rf", "free", "sample"}) {
    simulate::IsochromatSettings settings;
    settings.isochromats = kIsochromats;
    const simulate::IsochromatSimulator engine(table_of(kind), settings);
    const auto& table = engine.table();
    const std::size_t counted = kind == "rf"     ? table.rf_steps
                                : kind == "free" ? table.free_steps
                                                 : table.samples();
    std::vector<float> signals(std::size_t(voxels) * table.samples() * 2);
    double best = 1e300;
    for (int r = 0; r < args.repeats; ++r) {
      const auto t0 = clock::now();
      engine.run(tissue, signals.data(), nullptr);
      best = std::min(best, std::chrono::duration<double>(clock::now() - t0).count());
    }
    const double rate = double(counted) * double(engine.plan().size()) * double(voxels) / best;
    // The last sample's mean magnitude over the voxels: a check that the
    // steps ran (the same on every backend to float rounding).
    double last = 0.0;
    const std::size_t n = table.samples();
    for (std::int64_t v = 0; v < voxels; ++v) {
      const float* s = &signals[(std::size_t(v) * n + n - 1) * 2];
      last += std::hypot(double(s[0]), double(s[1])) / double(voxels);
    }
    if (comm.is_root()) {
      std::printf("%-8s %8zu %10lld %12lld %10.4f %22.3e %12.6f\n", kind.c_str(), counted,
                  static_cast<long long>(voxels), static_cast<long long>(engine.plan().size()),
                  best, rate, last);
    }
    rows << (rows.tellp() > 0 ? ",\n" : "") << "    {\"steps\": \"" << kind
         << "\", \"count\": " << counted << ", \"table_steps\": " << table.steps()
         << ", \"voxels\": " << voxels << ", \"isochromats\": " << engine.plan().size()
         << ", \"seconds\": " << best << ", \"isochromat_steps_per_s\": " << rate
         << ", \"mean_last_magnitude\": " << last << "}";
  }
  if (comm.is_root()) write_results_json(args.json, "bloch", rows.str());
  return 0;
}

}  // namespace larmor::benchmarks
