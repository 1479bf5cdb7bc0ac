// larmor-bench -m rebind: calls per second of turning new numbers for the mrf
// workload's train (flip fractions, RF phases, TR extensions) into packed
// buffers, by building and packing a description afresh vs by value
// rebinding (src/sequence/rebinding.hpp). Each call gets different values.
// Host only; writes JSON (atomically) and a table.

#include <chrono>
#include <cstdio>
#include <sstream>

#include "bench.hpp"
#include "io/text_file.hpp"
#include "sequence/rebinding.hpp"
#include "workloads.hpp"

namespace larmor::benchmarks {
namespace {

// Values for call k: the schedule's, scaled a little differently each call.
void values_for_call(const std::vector<double>& base, int k, std::vector<double>& out) {
  const double f = 1.0 + 1e-4 * double(k % 97);
  for (std::size_t j = 0; j < base.size(); ++j) out[j] = base[j] * f;
}

template <class Call>
double calls_per_second(int repeats, Call&& call) {
  double best = 0.0;
  for (int r = 0; r < repeats; ++r) {
    int calls = 0;
    const auto t0 = std::chrono::steady_clock::now();
    double elapsed = 0.0;
    while (elapsed < 0.25) {  // at least a quarter second per repeat
      for (int i = 0; i < 16; ++i) call(calls++);
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    best = std::max(best, double(calls) / elapsed);
  }
  return best;
}

}  // namespace

int run_rebinding_bench(const BenchArgs& args, const parallel::Communicator& comm) {
  const sequence::MrfParams params = mrf_workload_params(args.schedule);
  const sequence::MrfLayout layout(params);
  const std::vector<double> base = sequence::MrfLayout::arguments(params);
  std::vector<double> values(base.size());
  double checksum = 0.0;  // keeps the work observable

  const double repack = calls_per_second(args.repeats, [&](int k) {
    values_for_call(base, k, values);
    const sequence::PackedSequence p = sequence::pack(layout.description(values));
    checksum += p.flip[1];
  });
  sequence::ValueBinding<sequence::MrfLayout> binding(layout);
  binding.pack(base);  // resolves the map
  if (binding.state() != decltype(binding)::State::bound) {
    throw std::runtime_error("larmor-bench: the mrf train's values could not be bound: " +
                             binding.refusal());
  }
  const double rebind = calls_per_second(args.repeats, [&](int k) {
    values_for_call(base, k, values);
    checksum += binding.pack(values).flip[1];
  });
  if (!comm.is_root()) return 0;

  const std::int64_t events = layout.description(base).events.size();
  std::printf("%-8s %8s %16s %16s %9s\n", "workload", "events", "repack [calls/s]",
              "rebind [calls/s]", "speed-up");
  std::printf("%-8s %8lld %16.0f %16.0f %9.1f\n", "mrf", static_cast<long long>(events), repack,
              rebind, rebind / repack);
  std::ostringstream json;
  json << "{\n  \"machine\": \"" << hostname() << "\",\n  \"date\": \"" << utc_now()
       << "\",\n  \"mode\": \"rebind\",\n  \"results\": [\n"
       << "    {\"workload\": \"mrf\", \"events\": " << events << ", \"arguments\": " << base.size()
       << ", \"repack_calls_per_s\": " << repack << ", \"rebind_calls_per_s\": " << rebind
       << ", \"speedup\": " << rebind / repack << ", \"checksum\": " << checksum << "}\n  ]\n}\n";
  io::write_text_atomically(args.json, json.str());
  std::printf("larmor-bench: wrote %s\n", args.json.c_str());
  return 0;
}

}  // namespace larmor::benchmarks
