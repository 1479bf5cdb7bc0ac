// larmor-bench -m match: dictionary matching (src/estimators/dictionary/) of
// the `mrf` workload: the 1000-TR fingerprinting dictionary over T1 x T2 x B1
// (140,000 atoms at --scale 1) simulated into device memory, its time axis
// compressed there to the rank keeping 99.999 % of the energy, against
// 1,000,000 noisy voxels (scaled alike) that reach the matcher in chunks
// through its staging buffers, as a reader would deliver them. Times each
// phase (dictionary, compression, transfer, projection, matching: a timed
// matcher), compares the compressed maps with uncompressed matching on a
// subset, and times the voxels again through an overlapped matcher fed by a
// copy from host memory (a reader at memory speed) against the copy and the
// phases one after the other.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <thread>

#include "bench.hpp"
#include "estimators/dictionary/dictionary.hpp"
#include "io/text_file.hpp"
#include "simulate/kernel_timing.hpp"
#include "simulate/simulator.hpp"
#include "workloads.hpp"

namespace larmor::benchmarks {
namespace {

// A standard normal deviate from a counter (splitmix64 and Box-Muller):
// reproducible, and cheap enough to add noise to a billion samples.
float normal_from(std::uint64_t counter) {
  auto mix = [](std::uint64_t z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  const std::uint64_t a = mix(2 * counter), b = mix(2 * counter + 1);
  const double u1 = (double(a >> 11) + 1.0) * 0x1.0p-53, u2 = double(b >> 11) * 0x1.0p-53;
  return float(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
}

// out[i] = signals[i] + sigma * N(0, 1) at counter first + i, over the host's
// cores.
void add_noise(const std::vector<float>& signals, float sigma, std::uint64_t first, float* out) {
  const std::size_t n = signals.size();
  const unsigned workers = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < workers; ++w) {
    pool.emplace_back([&, w]() {
      const std::size_t b = n * w / workers, e = n * (w + 1) / workers;
      for (std::size_t i = b; i < e; ++i) out[i] = signals[i] + sigma * normal_from(first + i);
    });
  }
  for (auto& t : pool) t.join();
}

// Each chunk copied from host memory into a staging buffer while the device
// matches the chunk before. Every chunk holds the first chunk's signals (in
// full chunks), so every result is checked against the timed pass's `timed`.
struct OverlappedPass {
  double read_s = 0.0, total_s = 0.0;
  std::int64_t differing = 0;
};
OverlappedPass overlapped_pass(const estimators::dictionary::Dictionary& c, std::int64_t chunk,
                               std::int64_t voxels, int samples,
                               const std::vector<float>& first_chunk,
                               const estimators::dictionary::MatchResult& timed) {
  namespace dict = estimators::dictionary;
  using clock = std::chrono::steady_clock;
  OverlappedPass out;
  dict::Matcher overlapped(c, chunk);
  dict::MatchResult ro;
  ro.resize(voxels);
  const auto t0 = clock::now();
  for (std::int64_t v0 = 0; v0 < voxels; v0 += overlapped.chunk_voxels()) {
    const std::int64_t count = std::min(overlapped.chunk_voxels(), voxels - v0);
    const auto r0 = clock::now();
    std::memcpy(overlapped.staging(), first_chunk.data(),
                sizeof(float) * std::size_t(count) * samples * 2);
    out.read_s += std::chrono::duration<double>(clock::now() - r0).count();
    overlapped.match_staged(count, ro, v0);
  }
  overlapped.finish();
  out.total_s = std::chrono::duration<double>(clock::now() - t0).count();
  for (std::int64_t v = 0; v < voxels; ++v) {
    const std::int64_t same_voxel = v % overlapped.chunk_voxels();
    out.differing += same_voxel < std::int64_t(first_chunk.size() / (samples * 2)) &&
                     ro.atom[v] != timed.atom[same_voxel];
  }
  return out;
}

}  // namespace

int run_match_bench(const BenchArgs& args, const parallel::Communicator& comm) {
  namespace dict = estimators::dictionary;
  using clock = std::chrono::steady_clock;
  auto seconds = [](clock::time_point t) {
    return std::chrono::duration<double>(clock::now() - t).count();
  };
  const Workload w = make_workload("mrf", args.schedule);
  simulate::Options options;
  options.max_order = w.max_order;
  const simulate::Simulator sim(w.sequence, options);
  const int samples = sim.samples();
  const std::int64_t atoms = std::max<std::int64_t>(8, std::llround(140000 * args.scale));
  const std::int64_t voxels =
      args.voxels > 0 ? args.voxels : std::max<std::int64_t>(1, std::llround(1e6 * args.scale));
  const tissue::Tissue grid = workload_tissue("mrf", atoms);
  sim.run(grid.slice(0, std::min<std::int64_t>(atoms, 64)));  // backend and kernels warm
  auto t0 = clock::now();
  const dict::Dictionary d = dict::simulate_dictionary(sim, grid);
  const double dictionary_s = seconds(t0);
  t0 = clock::now();
  const dict::Dictionary c = dict::compress(d, 0, 0.99999);
  const double compress_s = seconds(t0);
  t0 = clock::now();
  dict::Matcher matcher(c, 0, dict::MatchPhases::timed);
  const double staging_s = seconds(t0);
  // Voxels: other points of the same ranges (a different stretch of the
  // low-discrepancy sequence), M0 0.8, noise 1 % of M0 per channel; each
  // chunk simulated and staged (untimed: it stands for the read), then
  // matched. The first voxels are kept for the uncompressed comparison.
  const tissue::Tissue all = workload_tissue("mrf", atoms + voxels);
  const std::int64_t subset = std::min<std::int64_t>(voxels, 20000);
  std::vector<float> kept(std::size_t(subset) * samples * 2);
  // The first chunk's signals, in ordinary host memory, stand for every
  // chunk's read in the overlapped pass.
  std::vector<float> first_chunk;
  dict::MatchResult rc;
  rc.resize(voxels);
  for (std::int64_t v0 = 0; v0 < voxels; v0 += matcher.chunk_voxels()) {
    const std::int64_t count = std::min(matcher.chunk_voxels(), voxels - v0);
    tissue::Tissue t = all.slice(atoms + v0, atoms + v0 + count);
    t.m0.uniform = 0.8f;
    add_noise(sim.run(t), 0.008f, std::uint64_t(v0) * samples * 2, matcher.staging());
    if (v0 < subset) {
      const std::int64_t k = std::min(subset - v0, count);
      std::memcpy(kept.data() + std::size_t(v0) * samples * 2, matcher.staging(),
                  sizeof(float) * std::size_t(k) * samples * 2);
    }
    if (v0 == 0) first_chunk.assign(matcher.staging(), matcher.staging() + count * samples * 2);
    matcher.match_staged(count, rc, v0);
  }
  matcher.finish();
  const dict::MatchTimings& phase = matcher.timings();
  const double total_s =
      dictionary_s + compress_s + phase.transfer_s + phase.project_s + phase.match_s;
  const OverlappedPass over =
      overlapped_pass(c, matcher.chunk_voxels(), voxels, samples, first_chunk, rc);
  const double read_s = over.read_s, overlapped_s = over.total_s;
  const std::int64_t differing = over.differing;
  // Uncompressed on the subset, for the maps' agreement.
  t0 = clock::now();
  const dict::MatchResult r = dict::match(d, kept, subset);
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
  std::printf(
      "match: %lld atoms x %d samples, %lld voxels in chunks of %lld; rank %d (%.5f %% "
      "of the energy)\n",
      static_cast<long long>(atoms), samples, static_cast<long long>(voxels),
      static_cast<long long>(matcher.chunk_voxels()), c.samples, 100 * c.energy_kept);
  std::printf(
      "match: dictionary %.3f s, compress %.3f s, transfer %.3f s, project %.3f s, match %.3f s: "
      "%.3f s (staging buffer %.3f s); uncompressed %.3f s for %lld voxels\n",
      dictionary_s, compress_s, phase.transfer_s, phase.project_s, phase.match_s, total_s,
      staging_s, full_s, static_cast<long long>(subset));
  std::printf(
      "match: overlapped with a read from host memory: %.3f s; read %.3f s + transfer, project and "
      "match %.3f s one after the other; %lld voxel(s) matched differently\n",
      overlapped_s, read_s, phase.transfer_s + phase.project_s + phase.match_s,
      static_cast<long long>(differing));
  std::printf("match: compressed vs uncompressed on %lld voxels: same atom %.2f %%",
              static_cast<long long>(subset), 100.0 * double(same) / double(subset));
  for (std::size_t p = 0; p < np; ++p) {
    std::printf(", %s mean |relative difference| %.3f %%", tissue::deck_name(d.properties[p]),
                100 * mean_rel[p]);
  }
  std::printf("\n");
  std::ostringstream json;
  json << "{\n  \"machine\": \"" << hostname() << "\", \"date\": \"" << utc_now()
       << "\", \"backend\": \"" << simulate::backend_name()
       << "\", \"workload\": \"mrf-match\",\n  \"atoms\": " << atoms << ", \"samples\": " << samples
       << ", \"voxels\": " << voxels << ", \"chunk_voxels\": " << matcher.chunk_voxels()
       << ", \"rank\": " << c.samples << ", \"energy_kept\": " << c.energy_kept
       << ",\n  \"dictionary_s\": " << dictionary_s << ", \"compress_s\": " << compress_s
       << ", \"transfer_s\": " << phase.transfer_s << ", \"project_s\": " << phase.project_s
       << ", \"match_s\": " << phase.match_s << ", \"total_s\": " << total_s
       << ", \"staging_s\": " << staging_s << ",\n  \"overlapped_s\": " << overlapped_s
       << ", \"overlapped_read_s\": " << read_s << ", \"overlapped_differing\": " << differing
       << ",\n  \"uncompressed_subset_s\": " << full_s << ", \"subset\": " << subset
       << ", \"same_atom_fraction\": " << double(same) / double(subset);
  for (std::size_t p = 0; p < np; ++p) {
    json << ", \"" << tissue::deck_name(d.properties[p])
         << "_mean_relative_difference\": " << mean_rel[p];
  }
  json << "\n}\n";
  io::write_text_atomically(args.json, json.str());
  std::printf("larmor-bench: wrote %s\n", args.json.c_str());
  return 0;
}

}  // namespace larmor::benchmarks
