// Gradient moments between instants -> shifts and spoiling (the rules are in
// pulseq_events.hpp). A moment is judged by the turns it winds across the
// voxel: at most in_phase_turns keeps the spins in phase, a whole turn or more
// across the crusher direction dephases them. Everything before the first
// pulse acts on equilibrium magnetisation, which has no transverse part.
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "io/pulseq/pulseq_detail.hpp"
#include "sequence/canonical.hpp"

namespace larmor::io::pulseq::detail {
namespace {

double norm(const Vec3& a) { return std::sqrt(dot(a, a)); }

// A gap as large as whole crusher moments but turned by more than this from
// them belongs to a trajectory whose net moment rotates (radial, spiral).
constexpr double kTurnedRad = 10.0 * 3.14159265358979323846 / 180.0;

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

// The most frequent gap moment that dephases (ties: the earliest), counting
// gaps on a grid of cells in_phase_turns wide across the voxel.
Vec3 detected_moment(const std::vector<Vec3>& gaps, std::size_t first, const Vec3& voxel) {
  std::map<std::array<long long, 3>, std::pair<int, std::size_t>> cells;  // count, first gap
  for (std::size_t k = first; k < gaps.size(); ++k) {
    if (turns_across(gaps[k], voxel) <= in_phase_turns) continue;
    std::array<long long, 3> key;
    for (int a = 0; a < 3; ++a) key[a] = std::llround(gaps[k][a] * voxel[a] / in_phase_turns);
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

// A detected crusher is one gap's moment, and the in-phase residuals rounded
// away around it (an echo sampled half a k-space step off centre) belong to
// the same repetition. The moment that whole repetitions wind per order is
// the least-squares fit of each pulse-to-pulse span's moment to its shifts:
// it is what the report (and diffusion) should state. The shifts stand.
void refine_detected_moment(const sequence::InstantForm& form,
                            const std::vector<sequence::Event>& events,
                            const std::vector<Vec3>& gaps, TranslationReport& report) {
  Vec3 weighted{0, 0, 0};
  double squares = 0.0;
  std::size_t k = 0;
  const std::size_t n = events.size();
  while (k < n && events[k].kind != sequence::EventKind::pulse) ++k;
  while (k < n) {
    Vec3 span{0, 0, 0};
    int shifts = 0;
    bool spoiled = false;
    std::size_t next = k;
    do {
      span = add(span, gaps[next]);
      shifts += form.instants[next].after.shifts;
      spoiled = spoiled || form.instants[next].after.spoil;
      ++next;
    } while (next < n && events[next].kind != sequence::EventKind::pulse);
    if (next < n && !spoiled && shifts > 0) {  // the trailing span reaches no pulse
      weighted = add(weighted, scaled(double(shifts), span));
      squares += double(shifts) * shifts;
    }
    k = next;
  }
  if (squares > 0.0) report.crusher_moment = scaled(1.0 / squares, weighted);
}

std::string turns_text(double turns) {
  char text[48];
  std::snprintf(text, sizeof text, "%.3g turns", turns);
  return text;
}

std::string voxel_text(const Vec3& voxel) {
  char text[80];
  std::snprintf(text, sizeof text, "%.3g x %.3g x %.3g mm voxel", voxel[0] * 1e3, voxel[1] * 1e3,
                voxel[2] * 1e3);
  return text;
}

}  // namespace

sequence::Description quantise_gaps(const PulseqFile& file, const std::vector<double>& times,
                                    const std::vector<int>& block_ids,
                                    const std::vector<sequence::Event>& events,
                                    const std::vector<Vec3>& moments,
                                    const std::vector<Vec3>& readout_axes, double end_time,
                                    const Vec3& end_moment, const TranslateOptions& options,
                                    TranslationReport& report) {
  const std::size_t n = events.size();
  const std::string name = file.definitions.name.empty() ? file.path : file.definitions.name;
  const Vec3& voxel = report.voxel_size_m;
  auto turns = [&](const Vec3& m) { return turns_across(m, voxel); };
  sequence::InstantForm form;
  if (n == 0) {
    form.leading.duration_s = end_time;
    return sequence::assemble(form, name);
  }
  std::vector<Vec3> gaps(n);
  for (std::size_t k = 0; k < n; ++k) {
    gaps[k] = minus(k + 1 < n ? moments[k + 1] : end_moment, moments[k]);
  }
  std::size_t first_pulse = n;
  for (std::size_t k = 0; k < n && first_pulse == n; ++k) {
    // A pulse of no flip (one that misses the voxel) leaves it at equilibrium.
    if (events[k].kind == sequence::EventKind::pulse && events[k].flip_rad > 0.0) first_pulse = k;
  }
  for (std::size_t k = 0; k < first_pulse; ++k) gaps[k] = {0, 0, 0};

  // Imaging encoding: an axis whose moment is rewound between two pulses
  // (phase encodes and their rewinders) does not dephase what the next pulse
  // sees; within the span it only encodes k-space, which is not simulated. A
  // readout axis is not encoding: its moment at the echo pairs with the
  // moment before a refocusing pulse (an echo-planar readout's prephaser).
  for (std::size_t p = first_pulse; p < n;) {
    std::size_t next = p + 1;
    bool has_adc = false;
    Vec3 readout{0, 0, 0};
    while (next < n && events[next].kind != sequence::EventKind::pulse) {
      has_adc = true;
      readout = add(readout, readout_axes[next]);
      ++next;
    }
    for (int axis = 0; axis < 3 && has_adc; ++axis) {
      if (readout[axis] > 0.0) continue;
      double net = 0.0, peak = 0.0;
      for (std::size_t k = p; k < next; ++k) {
        net += gaps[k][axis];
        peak = std::max(peak, std::fabs(gaps[k][axis]));
      }
      if (std::fabs(net) * voxel[axis] <= in_phase_turns && peak > 0.0) {
        for (std::size_t k = p; k < next; ++k) gaps[k][axis] = 0.0;
        ++report.encoding_axes_dropped;
      }
    }
    p = next;
  }

  report.crusher_source = "none";
  Vec3 u = declared_moment(file, options, report);
  if (!(norm(u) > 0.0)) {
    // The trailing gap reaches no sample: it does not choose the crusher.
    std::vector<Vec3> sampled(gaps.begin(), gaps.end() - 1);
    u = detected_moment(sampled, first_pulse, voxel);
    if (norm(u) > 0.0) report.crusher_source = "detected";
  }
  report.crusher_moment = u;
  const double uu = dot(u, u);

  form.leading.duration_s = times[0];
  bool have_spoil_direction = false;
  Vec3 spoil_direction{0, 0, 0};
  std::size_t spoil_gap = 0;
  for (std::size_t k = 0; k < n; ++k) {
    sequence::Instant instant;
    instant.event = events[k];
    instant.after.duration_s = (k + 1 < n ? times[k + 1] : end_time) - times[k];
    const Vec3& g = gaps[k];
    const bool trailing = k + 1 == n;
    auto where = [&](std::size_t gap) {
      std::ostringstream s;
      s << file.path << ": blocks " << block_ids[gap] << "-"
        << (gap + 1 == n ? file.blocks.back().id : block_ids[gap + 1])
        << ": the gradient moment between " << describe(events[gap], times[gap]) << " and "
        << (gap + 1 == n ? std::string("the end") : describe(events[gap + 1], times[gap + 1]))
        << " is " << show(gaps[gap]);
      return s.str();
    };
    auto refuse = [&](const std::string& why) { throw PulseqError(where(k) + "; " + why); };
    if (turns(g) <= in_phase_turns) {
      if (norm(g) > 0.0) ++report.in_phase_gaps;
      report.largest_residual_turns = std::max(report.largest_residual_turns, turns(g));
      form.instants.push_back(instant);
      continue;
    }
    const double orders = uu > 0.0 ? dot(g, u) / uu : 0.0;
    const double whole = std::round(orders);
    const Vec3 residual = minus(g, scaled(whole, u));
    const Vec3 across = uu > 0.0 ? minus(residual, scaled(dot(residual, u) / uu, u)) : residual;
    std::ostringstream ratio;
    ratio << orders << " crusher moments " << show(u);
    if (turns(residual) <= in_phase_turns) {
      report.largest_residual_turns = std::max(report.largest_residual_turns, turns(residual));
      if (whole < 0) {
        if (!trailing) {
          refuse("that is " + ratio.str() +
                 ": it dephases against the crusher, and larmor's EPG moves states to higher "
                 "orders only (a reversed or bipolar arrangement)");
        }
      } else if (whole > abi::max_orders) {
        refuse("that is " + ratio.str() + ", more orders than the kernels hold");
      } else {
        instant.after.shifts = int(whole);
        if (whole > 0) ++report.shifted_gaps;
      }
    } else if (turns(across) >= dephased_turns || turns(residual) >= dephased_turns) {
      // Ideal spoiling assumes the dephased states never return: one
      // direction may spoil, but a net moment that turns from gap to gap
      // (radial, spiral) can bring them back.
      const Vec3 off_grid = turns(across) >= dephased_turns ? across : residual;
      const Vec3 unit = scaled(1.0 / norm(off_grid), off_grid);
      if (!have_spoil_direction) {
        spoil_direction = unit;
        spoil_gap = k;
        have_spoil_direction = true;
      } else if (std::fabs(dot(unit, spoil_direction)) < 0.99) {
        refuse("it dephases the voxel in another direction than " + where(spoil_gap) +
               ": the net gradient moment rotates from repetition to repetition (a radial or "
               "spiral trajectory), and EPG follows one dephasing direction");
      }
      instant.after.spoil = true;
      instant.after.shifts = whole > 0 && whole <= abi::max_orders ? int(whole) : 0;
      ++report.spoiled_gaps;
    } else if (!trailing && whole != 0.0 &&
               std::fabs(norm(g) - std::fabs(whole) * norm(u)) <= in_phase_turns * norm(g) &&
               std::fabs(dot(g, u)) < std::cos(kTurnedRad) * norm(g) * norm(u)) {
      refuse("it is as large as " + std::to_string(long(std::fabs(whole))) + " crusher moments " +
             show(u) +
             " but points another way: the net gradient moment rotates from repetition to "
             "repetition (a radial or spiral trajectory), and EPG follows one dephasing direction");
    } else if (!trailing) {
      const double left = turns(residual);
      refuse("beyond " + std::to_string(long(whole)) + " whole crusher moments " + show(u) +
             " it winds " + turns_text(left) + " across the " + voxel_text(voxel) +
             ": neither in phase (at most " + turns_text(in_phase_turns) +
             ") nor dephased (a whole turn or more across the crusher), so EPG, which dephases "
             "by whole crusher moments, cannot represent it (a second crusher area, or a "
             "voxel size that does not match the sequence: see voxel_size_mm)");
    }
    form.instants.push_back(instant);
  }
  if (report.crusher_source == "detected") refine_detected_moment(form, events, gaps, report);
  return sequence::assemble(form, name);
}

}  // namespace larmor::io::pulseq::detail
