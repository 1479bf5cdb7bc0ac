#include "phase_timer.hpp"

#include <unistd.h>

#include <algorithm>
#include <sstream>

#include "io/text_file.hpp"

namespace larmor::drivers {
namespace {
std::chrono::steady_clock::time_point& process_start() {
  static std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  return start;
}
}  // namespace

void mark_process_start() { process_start() = std::chrono::steady_clock::now(); }

double seconds_since_process_start() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - process_start()).count();
}

PhaseTimer::PhaseTimer(const parallel::Communicator& comm, bool synchronise)
    : comm_(comm), synchronise_(synchronise), last_(Clock::now()) {}

void PhaseTimer::end_phase(const std::string& name, const std::string& kind) {
  const auto work_end = Clock::now();
  Phase p{name, kind, std::chrono::duration<double>(work_end - last_).count(), 0.0};
  if (synchronise_) {
    comm_.barrier();
    p.wait = std::chrono::duration<double>(Clock::now() - work_end).count();
  }
  phases_.push_back(p);
  last_ = Clock::now();
}

void PhaseTimer::add_phase(const std::string& name, const std::string& kind, double seconds) {
  phases_.push_back({name, kind, seconds, 0.0});
}

void PhaseTimer::write_json(const std::string& path, const std::string& command,
                            const std::string& extra_json_fields) const {
  // Every rank has the same phases in the same order (the drivers are SPMD).
  std::vector<double> mine;
  for (const Phase& p : phases_) {
    mine.push_back(p.seconds);
    mine.push_back(p.wait);
  }
  const auto gathered = comm_.gather_rows(mine.data(), 1, mine.size() * sizeof(double));
  if (!comm_.is_root() || path.empty()) return;
  const auto* all = reinterpret_cast<const double*>(gathered.bytes.data());
  const int ranks = comm_.size();
  const std::size_t stride = mine.size();
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  std::ostringstream json;
  json.precision(6);
  json << "{\n  \"command\": \"" << command << "\", \"ranks\": " << ranks << ", \"machine\": \""
       << host << "\"" << extra_json_fields << ",\n  \"phases\": [\n";
  for (std::size_t i = 0; i < phases_.size(); ++i) {
    // elapsed: work and the barrier after it, the phase's length on the
    // critical path (the same on every rank up to the barrier's exit skew).
    double mx = 0.0, mn = 1e300, sum = 0.0, elapsed = 0.0;
    std::ostringstream per_rank, per_rank_wait;
    for (int r = 0; r < ranks; ++r) {
      const double s = all[std::size_t(r) * stride + 2 * i];
      const double w = all[std::size_t(r) * stride + 2 * i + 1];
      mx = std::max(mx, s);
      mn = std::min(mn, s);
      sum += s;
      elapsed = std::max(elapsed, s + w);
      per_rank << (r ? ", " : "") << s;
      per_rank_wait << (r ? ", " : "") << w;
    }
    json << "    {\"name\": \"" << phases_[i].name << "\", \"kind\": \"" << phases_[i].kind
         << "\", \"elapsed_s\": " << elapsed << ", \"max_s\": " << mx << ", \"min_s\": " << mn
         << ", \"mean_s\": " << sum / ranks << ", \"per_rank_s\": [" << per_rank.str()
         << "], \"per_rank_wait_s\": [" << per_rank_wait.str() << "]}"
         << (i + 1 < phases_.size() ? ",\n" : "\n");
  }
  json << "  ]\n}\n";
  io::write_text_atomically(path, json.str());
}

}  // namespace larmor::drivers
