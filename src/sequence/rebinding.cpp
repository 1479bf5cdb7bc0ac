#include "sequence/rebinding.hpp"

#include <cmath>
#include <cstring>
#include <sstream>

namespace larmor::sequence {
namespace {

using Tangent = Dual<double, 1>;

// One buffer's map from the two passes; `field` names it in a refusal.
std::string recover(const std::vector<const Tangent*>& ones,
                    const std::vector<const Tangent*>& counting, std::size_t argument_count,
                    const char* field, AffineMap& map) {
  const std::size_t n = ones.size();
  map.source.assign(n, -1);
  map.offset.assign(n, 0.0);
  map.scale.assign(n, 0.0);
  for (std::size_t e = 0; e < n; ++e) {
    const double scale = ones[e]->tangent[0];
    map.offset[e] = ones[e]->value;
    if (scale == 0.0) {
      if (counting[e]->tangent[0] != 0.0) {
        return std::string("event ") + std::to_string(e) + "'s " + field +
               " draws on several arguments whose scales cancel";
      }
      continue;
    }
    const double position = counting[e]->tangent[0] / scale;  // source index + 1
    const double whole = std::round(position);
    if (!(std::fabs(position - whole) <= 1e-9 * std::fabs(position)) || whole < 1.0 ||
        whole > double(argument_count)) {
      std::ostringstream s;
      s << "event " << e << "'s " << field << " draws on more than one argument (recovered index "
        << position - 1.0 << ")";
      return s.str();
    }
    map.source[e] = std::int32_t(whole) - 1;
    map.scale[e] = scale;
  }
  return {};
}

double value_at(const AffineMap& m, std::size_t e, const std::vector<double>& args) {
  return m.source[e] < 0 ? m.offset[e] : m.offset[e] + m.scale[e] * args[std::size_t(m.source[e])];
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b, std::size_t& at) {
  if (a.size() != b.size()) {
    at = std::min(a.size(), b.size());
    return false;
  }
  for (at = 0; at < a.size(); ++at) {
    if (std::memcmp(&a[at], &b[at], sizeof(T)) != 0) return false;
  }
  return true;
}

}  // namespace

std::string recover_maps(const std::vector<ValueEvent<Tangent>>& ones,
                         const std::vector<ValueEvent<Tangent>>& counting,
                         std::size_t argument_count, ValueMaps& maps) {
  if (ones.size() != counting.size()) return "the two passes gave different event counts";
  for (std::size_t e = 0; e < ones.size(); ++e) {
    if (ones[e].kind != counting[e].kind || ones[e].action != counting[e].action) {
      return "event " + std::to_string(e) + " changes kind or action with the arguments";
    }
  }
  const std::pair<Tangent ValueEvent<Tangent>::*, AffineMap ValueMaps::*> fields[] = {
      {&ValueEvent<Tangent>::duration_s, &ValueMaps::duration},
      {&ValueEvent<Tangent>::flip_rad, &ValueMaps::flip},
      {&ValueEvent<Tangent>::phase_rad, &ValueMaps::phase}};
  const char* names[] = {"duration", "flip", "phase"};
  for (int f = 0; f < 3; ++f) {
    std::vector<const Tangent*> a, b;
    for (std::size_t e = 0; e < ones.size(); ++e) {
      a.push_back(&(ones[e].*fields[f].first));
      b.push_back(&(counting[e].*fields[f].first));
    }
    const std::string why = recover(a, b, argument_count, names[f], maps.*fields[f].second);
    if (!why.empty()) return why;
  }
  return {};
}

void rebuild_values(const ValueMaps& maps, const std::vector<double>& args, const std::string& name,
                    PackedSequence& target) {
  const std::size_t n = maps.duration.source.size();
  double now = 0.0;
  std::size_t sample = 0;
  for (std::size_t e = 0; e < n; ++e) {
    const double duration = value_at(maps.duration, e, args);
    const double flip = value_at(maps.flip, e, args);
    const double phase = value_at(maps.phase, e, args);
    if (!std::isfinite(duration) || duration < 0.0 || !std::isfinite(flip) ||
        !std::isfinite(phase)) {
      throw std::invalid_argument("sequence '" + name + "', event " + std::to_string(e) +
                                  ": rebound duration must be finite and >= 0, flip and phase "
                                  "finite");
    }
    target.duration[e] = static_cast<float>(duration);
    target.flip[e] = static_cast<float>(flip);
    target.phase[e] = phase;
    if (target.output_index[e] >= 0) target.sample_times_s[sample++] = now;
    now += duration;
  }
}

std::string first_difference(const PackedSequence& a, const PackedSequence& b) {
  std::size_t at = 0;
  auto report = [&](const char* what) { return std::string(what) + " " + std::to_string(at); };
  if (!same_bits(a.duration, b.duration, at)) return report("duration of event");
  if (!same_bits(a.flip, b.flip, at)) return report("flip of event");
  if (!same_bits(a.phase, b.phase, at)) return report("phase of event");
  if (!same_bits(a.kind, b.kind, at)) return report("kind of event");
  if (!same_bits(a.action, b.action, at)) return report("action of event");
  if (!same_bits(a.output_index, b.output_index, at)) return report("output index of event");
  if (!same_bits(a.sample_times_s, b.sample_times_s, at)) return report("time of sample");
  return {};
}

std::vector<double> verification_point(const std::vector<double>& args) {
  std::vector<double> point(args.size());
  for (std::size_t j = 0; j < args.size(); ++j) {
    // Moved up by a different small fraction per argument (never zero).
    const double size = std::fabs(args[j]) > 1e-3 ? std::fabs(args[j]) : 1e-3;
    point[j] = args[j] + 1e-3 * double(1 + j % 7) * size;
  }
  return point;
}

}  // namespace larmor::sequence
