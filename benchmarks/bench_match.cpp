// larmor bench -m match: dictionary matching (src/estimators/dictionary/) of
// the `mrf` workload: the 1000-TR fingerprinting dictionary over T1 x T2 x B1
// (140,000 atoms at --scale 1) against 1,000,000 noisy voxels (scaled alike);
// the time axis compressed by SVD to the rank keeping 99.999 % of the energy.
// Times the compression, the projection of the signals and the matching, and
// compares the compressed maps with uncompressed matching on a subset.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>

#include "bench.hpp"
#include "estimators/dictionary/dictionary.hpp"
#include "io/text_file.hpp"
#include "simulate/kernel_timing.hpp"
#include "simulate/simulator.hpp"
#include "workloads.hpp"

namespace larmor::benchmarks {

int run_match_bench(const BenchArgs& args, const parallel::Communicator& comm) {
  using clock = std::chrono::steady_clock;
  auto seconds = [](clock::time_point t) {
    return std::chrono::duration<double>(clock::now() - t).count();
  };
  const Workload w = make_workload("mrf", args.schedule);
  simulate::Options options;
  options.max_order = w.max_order;
  const simulate::Simulator sim(w.sequence, options);
  const std::int64_t atoms = std::max<std::int64_t>(8, std::llround(140000 * args.scale));
  const std::int64_t voxels =
      args.voxels > 0 ? args.voxels : std::max<std::int64_t>(1, std::llround(1e6 * args.scale));
  const tissue::Tissue grid = workload_tissue("mrf", atoms);
  auto t0 = clock::now();
  const estimators::dictionary::Dictionary d =
      estimators::dictionary::make_dictionary(sim.run(grid), sim.samples(), grid);
  const double simulate_s = seconds(t0);
  // Voxels: other points of the same ranges (a different stretch of the
  // low-discrepancy sequence), M0 0.8, noise 1 % of M0 per channel.
  tissue::Tissue t = workload_tissue("mrf", atoms + voxels).slice(atoms, atoms + voxels);
  t.m0.uniform = 0.8f;
  std::vector<float> s = sim.run(t);
  std::mt19937 rng(9);
  std::normal_distribution<float> noise(0.0f, 0.008f);
  for (float& x : s) x += noise(rng);
  t0 = clock::now();
  const estimators::dictionary::Dictionary c = estimators::dictionary::compress(d, 0, 0.99999);
  const double compress_s = seconds(t0);
  t0 = clock::now();
  const std::vector<float> sc = estimators::dictionary::project(c, s, voxels);
  const double project_s = seconds(t0);
  t0 = clock::now();
  const estimators::dictionary::MatchResult rc = estimators::dictionary::match(c, sc, voxels);
  const double match_s = seconds(t0);
  // Uncompressed on a subset, for the maps' agreement.
  const std::int64_t subset = std::min<std::int64_t>(voxels, 20000);
  t0 = clock::now();
  const estimators::dictionary::MatchResult r = estimators::dictionary::match(
      d, std::vector<float>(s.begin(), s.begin() + subset * sim.samples() * 2), subset);
  const double full_s = seconds(t0);
  const std::size_t np = d.properties.size();
  std::vector<double> mean_rel(np, 0.0);
  std::int64_t same = 0;
  for (std::int64_t v = 0; v < subset; ++v) {
    same += rc.atom[v] == r.atom[v];
    for (std::size_t p = 0; p < np; ++p) {
      const double a = d.values[std::size_t(rc.atom[v]) * np + p];
      const double b = d.values[std::size_t(r.atom[v]) * np + p];
      mean_rel[p] += std::fabs(a / b - 1.0) / double(subset);
    }
  }
  if (!comm.is_root()) return 0;
  std::printf("match: %lld atoms x %d samples, %lld voxels; rank %d (99.999 %% energy)\n",
              static_cast<long long>(atoms), sim.samples(), static_cast<long long>(voxels),
              c.samples);
  std::printf(
      "match: dictionary %.3f s, compress %.3f s, project %.3f s, match %.3f s "
      "(compressed); uncompressed %.3f s for %lld voxels\n",
      simulate_s, compress_s, project_s, match_s, full_s, static_cast<long long>(subset));
  std::printf("match: compressed vs uncompressed on %lld voxels: same atom %.2f %%",
              static_cast<long long>(subset), 100.0 * double(same) / double(subset));
  for (std::size_t p = 0; p < np; ++p) {
    std::printf(", %s mean |relative difference| %.3f %%", tissue::deck_name(d.properties[p]),
                100 * mean_rel[p]);
  }
  std::printf("\n");
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  std::ostringstream json;
  json << "{\n  \"machine\": \"" << host << "\", \"backend\": \"" << simulate::backend_name()
       << "\", \"workload\": \"mrf-match\",\n  \"atoms\": " << atoms
       << ", \"samples\": " << sim.samples() << ", \"voxels\": " << voxels
       << ", \"rank\": " << c.samples << ",\n  \"compress_s\": " << compress_s
       << ", \"project_s\": " << project_s << ", \"match_s\": " << match_s
       << ", \"uncompressed_subset_s\": " << full_s << ", \"subset\": " << subset
       << ", \"same_atom_fraction\": " << double(same) / double(subset) << "\n}\n";
  io::write_text_atomically(args.json, json.str());
  std::printf("larmor bench: wrote %s\n", args.json.c_str());
  return 0;
}

}  // namespace larmor::benchmarks
