// Gradient moments between instants -> shifts and spoiling (the rules are in
// pulseq_events.hpp). Everything before the first pulse acts on equilibrium
// magnetisation, which has no transverse part, so it is not quantised.
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "formats/pulseq/pulseq_detail.hpp"
#include "sequence/canonical.hpp"

namespace larmor::formats::pulseq::detail {
namespace {

using Vec3 = std::array<double, 3>;
double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
double norm(const Vec3& a) { return std::sqrt(dot(a, a)); }
Vec3 minus(const Vec3& a, const Vec3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
Vec3 scaled(double s, const Vec3& a) { return {s * a[0], s * a[1], s * a[2]}; }

std::string show(const Vec3& v) {
  char text[96];
  std::snprintf(text, sizeof text, "(%.6g, %.6g, %.6g) 1/m", v[0], v[1], v[2]);
  return text;
}

std::string describe(const sequence::Event& e, double t) {
  char text[64];
  std::snprintf(text, sizeof text, "%s at %.6g ms",
                e.kind == sequence::EventKind::pulse ? "the RF pulse" : "the ADC sample", t * 1e3);
  return text;
}

Vec3 declared_moment(const PulseqFile& file, const TranslateOptions& options,
                     TranslationReport& report) {
  if (options.crusher_moment) {
    report.crusher_source = "option";
    return *options.crusher_moment;
  }
  const auto it = file.definitions.values.find(crusher_moment_definition);
  if (it == file.definitions.values.end()) return {0, 0, 0};
  std::istringstream in(it->second);
  Vec3 u{};
  std::string extra;
  if (!(in >> u[0] >> u[1] >> u[2]) || (in >> extra) || !(norm(u) > 0.0) ||
      !std::isfinite(norm(u))) {
    throw PulseqError(file.path + ": [DEFINITIONS] " + crusher_moment_definition +
                      " needs three finite numbers, not all zero (the moment in 1/m)");
  }
  report.crusher_source = "definition";
  return u;
}

// The most frequent non-zero gap moment (ties: the earliest), counting gaps
// on a grid of cells `tol` wide.
Vec3 detected_moment(const std::vector<Vec3>& gaps, std::size_t first, double tol) {
  std::map<std::array<long long, 3>, std::pair<int, std::size_t>> cells;  // count, first gap
  for (std::size_t k = first; k < gaps.size(); ++k) {
    if (norm(gaps[k]) <= tol) continue;
    std::array<long long, 3> key;
    for (int a = 0; a < 3; ++a) key[a] = std::llround(gaps[k][a] / tol);
    auto& cell = cells.try_emplace(key, 0, k).first->second;
    ++cell.first;
  }
  Vec3 best{0, 0, 0};
  int best_count = 0;
  std::size_t best_first = gaps.size();
  for (const auto& [key, cell] : cells) {
    if (cell.first > best_count || (cell.first == best_count && cell.second < best_first)) {
      best_count = cell.first;
      best_first = cell.second;
      best = gaps[cell.second];
    }
  }
  return best;
}

}  // namespace

sequence::Description quantise_gaps(const PulseqFile& file, const std::vector<double>& times,
                                    const std::vector<int>& block_ids,
                                    const std::vector<sequence::Event>& events,
                                    const std::vector<Vec3>& moments, double end_time,
                                    const Vec3& end_moment, const TranslateOptions& options,
                                    TranslationReport& report) {
  const std::size_t n = events.size();
  const std::string name = file.definitions.name.empty() ? file.path : file.definitions.name;
  sequence::InstantForm form;
  if (n == 0) {
    form.leading.duration_s = end_time;
    return sequence::assemble(form, name);
  }
  std::vector<Vec3> gaps(n);
  double largest = 0.0;
  for (std::size_t k = 0; k < n; ++k) {
    gaps[k] = minus(k + 1 < n ? moments[k + 1] : end_moment, moments[k]);
    for (double v : gaps[k]) largest = std::max(largest, std::fabs(v));
  }
  const double tol = 1e-4 * largest;
  std::size_t first_pulse = n;
  for (std::size_t k = 0; k < n && first_pulse == n; ++k) {
    if (events[k].kind == sequence::EventKind::pulse) first_pulse = k;
  }
  for (std::size_t k = 0; k < first_pulse; ++k) gaps[k] = {0, 0, 0};

  // Imaging encoding: an axis whose moment is rewound between two pulses
  // (phase encodes, balanced readouts) does not dephase what the next pulse
  // sees; within the span it only encodes k-space, which is not simulated.
  for (std::size_t p = first_pulse; p < n;) {
    std::size_t next = p + 1;
    bool has_adc = false;
    while (next < n && events[next].kind != sequence::EventKind::pulse) {
      has_adc = true;
      ++next;
    }
    for (int axis = 0; axis < 3 && has_adc; ++axis) {
      double net = 0.0, peak = 0.0;
      for (std::size_t k = p; k < next; ++k) {
        net += gaps[k][axis];
        peak = std::max(peak, std::fabs(gaps[k][axis]));
      }
      if (std::fabs(net) <= tol && peak > tol) {
        for (std::size_t k = p; k < next; ++k) gaps[k][axis] = 0.0;
        ++report.encoding_axes_dropped;
      }
    }
    p = next;
  }

  report.crusher_source = "none";
  Vec3 u = declared_moment(file, options, report);
  if (!(norm(u) > 0.0)) {
    u = detected_moment(gaps, first_pulse, tol);
    if (norm(u) > 0.0) report.crusher_source = "detected";
  }
  report.crusher_moment = u;
  const double uu = dot(u, u);

  form.leading.duration_s = times[0];
  for (std::size_t k = 0; k < n; ++k) {
    sequence::Instant instant;
    instant.event = events[k];
    instant.after.duration_s = (k + 1 < n ? times[k + 1] : end_time) - times[k];
    const Vec3& g = gaps[k];
    const bool trailing = k + 1 == n;
    if (norm(g) > tol) {
      const int last_block = trailing ? file.blocks.back().id : block_ids[k + 1];
      auto refuse = [&](const std::string& why) {
        std::ostringstream s;
        s << file.path << ": blocks " << block_ids[k] << "-" << last_block
          << ": the gradient moment between " << describe(events[k], times[k]) << " and "
          << (trailing ? std::string("the end") : describe(events[k + 1], times[k + 1])) << " is "
          << show(g) << "; " << why;
        throw PulseqError(s.str());
      };
      if (!(uu > 0.0)) refuse("no crusher moment is declared to quantise it");
      const double orders = dot(g, u) / uu;
      const double whole = std::round(orders);
      const Vec3 residual = minus(g, scaled(whole, u));
      const Vec3 across = minus(residual, scaled(dot(residual, u) / uu, u));
      std::ostringstream ratio;
      ratio << orders << " crusher moments " << show(u);
      if (norm(residual) <= 1e-3 * std::sqrt(uu)) {
        if (whole < 0) {
          if (!trailing) {
            refuse("that is " + ratio.str() +
                   ", a negative number of orders (a reversed or bipolar arrangement "
                   "the one declared crusher moment cannot express)");
          }
        } else if (whole > abi::max_orders) {
          refuse("that is " + ratio.str() + ", more orders than the kernels hold");
        } else {
          instant.after.shifts = int(whole);
        }
      } else if (norm(across) >= std::sqrt(uu)) {
        instant.after.spoil = true;
        instant.after.shifts = whole > 0 && whole <= abi::max_orders ? int(whole) : 0;
        ++report.spoiled_gaps;
      } else if (!trailing) {
        refuse("that is " + ratio.str() +
               ", not a whole number: larmor's EPG dephases by whole multiples of one crusher "
               "moment, so a second crusher area cannot be represented");
      }
    }
    form.instants.push_back(instant);
  }
  return sequence::assemble(form, name);
}

}  // namespace larmor::formats::pulseq::detail
