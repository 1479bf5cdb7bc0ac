// larmor-bench (docs/performance.md): the named workloads timed through the
// simulator's and the estimators' public APIs. main.cpp registers the
// options and calls run_bench.
#pragma once

#include <string>
#include <vector>

#include "parallel/communicator.hpp"

namespace larmor::benchmarks {

struct BenchArgs {
  std::vector<std::string> workloads = {"mese", "spgr3d"};
  double scale = 1.0;    // fraction of the workload's voxel count
  long long voxels = 0;  // overrides scale when > 0
  int repeats = 5;
  std::string mode = "forward";  // or jvp, vjp, hvp, rebind, perk, match, pulseq, bloch
  std::string json = "larmor-bench.json";
  std::string schedule = "inputs/mrf-schedule-1000.csv";  // for mrf, from the working folder
  std::vector<std::string> terms = {"none"};              // declared terms, one run per entry
  std::vector<std::string> seq_files;                     // --mode pulseq: the files timed
  bool tissue_only = false;  // vjp, hvp: no sequence derivatives (as a tissue fit runs)
};

// Where and when a result was measured, for every mode's JSON: the host's
// name and the UTC time (ISO 8601).
std::string hostname();
std::string utc_now();
// Writes {machine, date, mode, backend, results: [rows]} to `path` atomically
// and says so (rows: JSON objects separated by commas).
void write_results_json(const std::string& path, const std::string& mode, const std::string& rows);

// Runs the mode's bench; rank 0 prints the table and writes the JSON.
int run_bench(const BenchArgs& args, const parallel::Communicator& comm);
// --mode rebind (bench_rebinding.cpp).
int run_rebinding_bench(const BenchArgs& args, const parallel::Communicator& comm);
// --mode perk (bench_perk.cpp).
int run_perk_bench(const BenchArgs& args, const parallel::Communicator& comm);
// --mode match (bench_match.cpp).
int run_match_bench(const BenchArgs& args, const parallel::Communicator& comm);
// --mode pulseq (bench_pulseq.cpp).
int run_pulseq_bench(const BenchArgs& args, const parallel::Communicator& comm);
// --mode bloch (bench_bloch.cpp).
int run_bloch_bench(const BenchArgs& args, const parallel::Communicator& comm);

}  // namespace larmor::benchmarks
