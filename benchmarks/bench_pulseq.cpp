// larmor-bench -m pulseq --seq FILE.seq ...: what a Pulseq file costs before
// its run, against the run. Per file: reading it, translating it (voxel,
// pulses, samples, spans), setting up the simulator (packing, slice-profile
// tables, voxel weights) and the forward run of --voxels voxels (a grid of T1,
// T2 and B1) on the default backend. Writes JSON (atomically) and a table.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>

#include "bench.hpp"
#include "io/pulseq/pulseq_events.hpp"
#include "simulate/simulator.hpp"

namespace larmor::benchmarks {
namespace {

using clock = std::chrono::steady_clock;

double seconds_since(clock::time_point t0) {
  return std::chrono::duration<double>(clock::now() - t0).count();
}

tissue::Tissue grid_tissue(std::int64_t voxels) {
  tissue::Tissue t;
  t.voxels = voxels;
  for (std::int64_t v = 0; v < voxels; ++v) {
    t.t1_s.map.push_back(float(0.3 + 2.7 * double(v % 17) / 16.0));
    t.t2_s.map.push_back(float(0.02 + 0.3 * double(v % 13) / 12.0));
    t.b1.map.push_back(float(0.7 + 0.6 * double(v % 7) / 6.0));
  }
  return t;
}

}  // namespace

int run_pulseq_bench(const BenchArgs& args, const parallel::Communicator& comm) {
  if (args.seq_files.empty()) {
    throw std::invalid_argument("larmor bench -m pulseq: give the Pulseq files with --seq");
  }
  const std::int64_t voxels = args.voxels > 0 ? args.voxels : 1000;
  const tissue::Tissue tissue = grid_tissue(voxels);
  std::ostringstream rows;
  if (comm.is_root()) {
    std::printf("%-36s %8s %7s %8s %9s %11s %9s %10s\n", "file", "events", "samples", "profiles",
                "read [s]", "translate [s]", "setup [s]", "run [s]");
  }
  for (const std::string& path : args.seq_files) {
    double read = 1e300, translate = 1e300, setup = 1e300, run = 1e300;
    std::size_t events = 0, profiles = 0;
    int samples = 0;
    for (int r = 0; r < args.repeats; ++r) {
      auto t0 = clock::now();
      const auto file = io::pulseq::PulseqFile::read(path);
      read = std::min(read, seconds_since(t0));
      t0 = clock::now();
      io::pulseq::TranslateOptions options;
      options.longest_t2_s = 0.32;  // the grid's longest
      const sequence::Description d = io::pulseq::to_description(file, options);
      translate = std::min(translate, seconds_since(t0));
      t0 = clock::now();
      const simulate::Simulator sim(d);
      setup = std::min(setup, seconds_since(t0));
      t0 = clock::now();
      const auto signals = sim.run(tissue);
      run = std::min(run, seconds_since(t0));
      events = d.events.size();
      samples = sim.samples();
      profiles = d.slice_profiles.size();
    }
    const std::string name = path.substr(path.find_last_of('/') + 1);
    if (comm.is_root()) {
      std::printf("%-36s %8zu %7d %8zu %9.4f %11.4f %9.4f %10.4f\n", name.c_str(), events, samples,
                  profiles, read, translate, setup, run);
    }
    rows << (rows.tellp() > 0 ? ",\n" : "") << "    {\"file\": \"" << name
         << "\", \"events\": " << events << ", \"samples\": " << samples
         << ", \"slice_profiles\": " << profiles << ", \"voxels\": " << voxels
         << ", \"read_s\": " << read << ", \"translate_s\": " << translate
         << ", \"setup_s\": " << setup << ", \"run_s\": " << run << "}";
  }
  if (comm.is_root()) write_results_json(args.json, "pulseq", rows.str());
  return 0;
}

}  // namespace larmor::benchmarks
