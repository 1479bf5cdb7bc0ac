// Gradient moments between instants -> shifts, sample weights and spoiling
// (the rules are in pulseq_events.hpp and docs/pulseq.md). The moment u of one
// EPG order is chosen among the moments the file repeats; every span from
// pulse to pulse then winds whole orders of u, each sample records the voxel's
// mean with the moment it sees beyond them (sequence::VoxelIntegral), and what
// a span leaves beyond whole orders at its closing pulse is either in phase
// (dropped, and the drift it adds up to kept within the same bound), spoils
// across u, or is refused with the numbers that decide.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>

#include "io/pulseq/pulseq_detail.hpp"
#include "sequence/canonical.hpp"
#include "sequence/voxel_integral.hpp"

namespace larmor::io::pulseq::detail {
namespace {

double norm(const Vec3& a) { return std::sqrt(dot(a, a)); }

// A span as large as whole orders but turned by more than this from them
// belongs to a trajectory whose net moment rotates (radial, spiral).
constexpr double kTurnedRad = 10.0 * 3.14159265358979323846 / 180.0;
// Candidates for u: at most this many of the most frequent moments.
constexpr int kCandidates = 12;
// A moment below this many turns across the voxel is no candidate for u.
constexpr double kSmallestOrderTurns = 1e-3;
// A sample records F+_0 alone where its weights differ from (1, 0, 0, ...) by
// less than this summed over the orders it may read: float round-off.
constexpr double kUnweightedBound = 1e-6;

std::string show(const Vec3& v) {
  char text[96];
  std::snprintf(text, sizeof text, "(%.6g, %.6g, %.6g) 1/m", v[0], v[1], v[2]);
  return text;
}

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", v);
  return text;
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

std::string describe(const sequence::Event& e, double t) {
  char text[64];
  std::snprintf(text, sizeof text, "%s at %.6g ms",
                abi::is_rf(e.kind) ? "the RF pulse" : "the ADC sample", t * 1e3);
  return text;
}

Vec3 declared_moment(const PulseqFile& file, const TranslateOptions& options, std::string& source) {
  if (options.crusher_moment) {
    source = "option";
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
  source = "definition";
  return u;
}

// The gaps after encoding is taken out, and where the pulses and samples are.
struct Gaps {
  std::vector<Vec3> moment;
  std::size_t first_pulse = 0;
  std::size_t n = 0;
  bool pulse(std::size_t k) const { return abi::is_rf(kinds[k]); }
  std::vector<sequence::EventKind> kinds;
};

// Imaging encoding: an axis whose moment is rewound between two pulses
// (phase encodes and their rewinders) does not dephase what the next pulse
// sees; within the span it only encodes k-space, which is not simulated. A
// readout axis is not encoding: its moment at the echo pairs with the moment
// before a refocusing pulse (an echo-planar readout's prephaser).
Gaps gaps_without_encoding(const InstantTrack& in, const Vec3& voxel, TranslationReport& report) {
  Gaps g;
  g.n = in.events.size();
  g.moment.resize(g.n);
  for (std::size_t k = 0; k < g.n; ++k) {
    g.kinds.push_back(in.events[k].kind);
    g.moment[k] = minus(k + 1 < g.n ? in.moments[k + 1] : in.end_moment, in.moments[k]);
  }
  g.first_pulse = g.n;
  for (std::size_t k = 0; k < g.n && g.first_pulse == g.n; ++k) {
    // A pulse of no flip (one that misses the voxel) leaves it at equilibrium.
    if (g.pulse(k) && in.events[k].flip_rad > 0.0) g.first_pulse = k;
  }
  for (std::size_t k = 0; k < g.first_pulse; ++k) g.moment[k] = {0, 0, 0};
  for (std::size_t p = g.first_pulse; p < g.n;) {
    std::size_t next = p + 1;
    bool has_adc = false;
    Vec3 readout{0, 0, 0};
    while (next < g.n && !g.pulse(next)) {
      has_adc = true;
      readout = add(readout, in.readout_axes[next]);
      ++next;
    }
    for (int axis = 0; axis < 3 && has_adc; ++axis) {
      if (readout[axis] > 0.0) continue;
      double net = 0.0, peak = 0.0;
      for (std::size_t k = p; k < next; ++k) {
        net += g.moment[k][axis];
        peak = std::max(peak, std::fabs(g.moment[k][axis]));
      }
      // Encodes are rewound exactly; a small net is a moment that dephases.
      if (std::fabs(net) * voxel[axis] <= kSmallestOrderTurns && peak > 0.0) {
        for (std::size_t k = p; k < next; ++k) g.moment[k][axis] = 0.0;
        ++report.encoding_axes_dropped;
      }
    }
    p = next;
  }
  return g;
}

// Candidates for u, most frequent first: every gap's moment and every span's
// (pulse to pulse) that winds more than kSmallestOrderTurns, counted on a grid
// of cells that wide across the voxel, each in both signs.
std::vector<Vec3> candidate_moments(const Gaps& g, const Vec3& voxel) {
  std::map<std::array<long long, 3>, std::pair<int, Vec3>> cells;
  const auto count = [&](const Vec3& m) {
    if (turns_across(m, voxel) <= kSmallestOrderTurns) return;
    std::array<long long, 3> key;
    for (int a = 0; a < 3; ++a) key[a] = std::llround(m[a] * voxel[a] / kSmallestOrderTurns);
    auto& cell = cells.try_emplace(key, 0, m).first->second;
    ++cell.first;
  };
  Vec3 span{0, 0, 0};
  // The trailing gap reaches no sample: it proposes nothing.
  for (std::size_t k = g.first_pulse; k + 1 < g.n; ++k) {
    count(g.moment[k]);
    span = add(span, g.moment[k]);
    if (g.pulse(k + 1)) {
      count(span);
      span = {0, 0, 0};
    }
  }
  std::vector<std::pair<int, Vec3>> ranked;
  for (const auto& [key, cell] : cells) ranked.push_back(cell);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<Vec3> out;
  for (const auto& [count_of, m] : ranked) {
    if (int(out.size()) >= 2 * kCandidates) break;
    out.push_back(m);
    out.push_back(scaled(-1.0, m));
  }
  return out;
}

// What one choice of u makes of the gaps.
struct Plan {
  Vec3 u{0, 0, 0};
  std::string refusal;  // empty: the file translates
  sequence::InstantForm form;
  std::vector<int> sample_table;  // per instant: 1-based residual, 0: F+_0 alone
  std::vector<Vec3> residuals;
  int harmful_spoils = 0;  // spoils a refocusing pulse follows before a sample
  long long shifts = 0;
  // Report figures.
  int shifted = 0, in_phase = 0, spoiled = 0, relaxed = 0, weighted = 0;
  double largest_residual = 0.0, largest_drift = 0.0, largest_leftover = 0.0;
  double largest_sample_residual = 0.0;
};

struct Walk;

class Planner {
 public:
  Planner(const PulseqFile& file, const InstantTrack& in, const Gaps& gaps,
          const TranslateOptions& options, const Vec3& voxel, const Vec3& centre, int slice_axis)
      : file_(file), in_(in), gaps_(gaps), options_(options), voxel_(voxel) {
    integral_.edges_m = voxel;
    integral_.centre_m = centre;
    integral_.slice_axis = slice_axis;
  }

  Plan plan(const Vec3& u) const;

 private:
  void trailing_gap(Plan& p, const Walk& walk, sequence::Gap& gap) const;
  void sample_gap(Plan& p, Walk& walk, std::size_t k, sequence::Gap& gap) const;
  bool close_span(Plan& p, Walk& walk, std::size_t k, sequence::Gap& gap) const;
  double turns(const Vec3& m) const { return turns_across(m, voxel_); }
  // The most a state dephased by m (once or twice, as spoilers repeat) can
  // keep of itself in the voxel at any later order of u: the largest
  // |mean over the voxel of exp(i 2 pi (n m + k u).x)|.
  double leftover(const Vec3& m, const Vec3& u) const {
    sequence::VoxelIntegral v = integral_;
    v.centre_m = {0, 0, 0};
    const int reach = dot(u, u) > 0.0 ? abi::max_default_orders : 0;
    double most = 0.0;
    for (int n = 1; n <= 2; ++n) {
      for (int k = -reach; k <= reach; ++k) {
        const Vec3 moment = add(scaled(double(n), m), scaled(double(k), u));
        most = std::max(most, std::abs(sequence::voxel_transform(v, moment)));
      }
    }
    return most;
  }
  // Whether a sample with residual r and orders up to `reach` needs weights.
  bool weighted(const Vec3& u, const Vec3& r, long long reach) const;
  std::string where(std::size_t gap, const Vec3& moment) const;

  const PulseqFile& file_;
  const InstantTrack& in_;
  const Gaps& gaps_;
  const TranslateOptions& options_;
  Vec3 voxel_;
  sequence::VoxelIntegral integral_;
};

bool Planner::weighted(const Vec3& u, const Vec3& r, long long reach) const {
  // Each slice position weighs its own slab, which no order leaves alone.
  if (in_.slice_profiles) return true;
  sequence::VoxelIntegral v = integral_;
  double off = std::abs(sequence::voxel_transform(v, r) - 1.0);
  const bool crusher = norm(u) > 0.0;
  for (long long k = 1; crusher && k <= reach && off <= kUnweightedBound; ++k) {
    off += std::abs(sequence::voxel_transform(v, add(scaled(double(k), u), r)));
    off += std::abs(sequence::voxel_transform(v, add(scaled(-double(k), u), r)));
  }
  return off > kUnweightedBound;
}

std::string Planner::where(std::size_t gap, const Vec3& moment) const {
  const std::size_t n = gaps_.n;
  std::ostringstream s;
  s << file_.path << ": blocks " << in_.block_ids[gap] << "-"
    << (gap + 1 == n ? file_.blocks.back().id : in_.block_ids[gap + 1])
    << ": the gradient moment between " << describe(in_.events[gap], in_.times[gap]) << " and "
    << (gap + 1 == n ? std::string("the end") : describe(in_.events[gap + 1], in_.times[gap + 1]))
    << " is " << show(moment);
  return s.str();
}

// Where a candidate's walk over the gaps stands.
struct Walk {
  // Moment wound since the span's pulse, the shifts given to it, and the
  // drift: the residuals rounded away at pulses since the last spoiling.
  Vec3 wound{0, 0, 0}, drift{0, 0, 0};
  long long given = 0;
  double span_time = 0.0;
  bool span_spoiled = false;
  std::optional<Vec3> spoil_direction;
  std::size_t spoil_gap = 0;
  std::map<std::array<long long, 3>, int> tables;  // residual -> its weights (1-based)
};

Plan Planner::plan(const Vec3& u) const {
  Plan p;
  p.u = u;
  const std::size_t n = gaps_.n;
  p.sample_table.assign(n, 0);
  p.form.leading.duration_s = in_.times.empty() ? in_.end_time : in_.times[0];
  const double t2 = options_.longest_t2_s.value_or(0.0);
  Walk walk;
  for (std::size_t k = 0; k < n; ++k) {
    sequence::Instant instant;
    instant.event = in_.events[k];
    // A pulse played from its waveform takes its length at its instant.
    const double duration =
        (k + 1 < n ? in_.times[k + 1] : in_.end_time) - in_.times[k] - in_.lengths[k];
    if (duration < -1e-12) {
      throw PulseqError(file_.path + ": block " + std::to_string(in_.block_ids[k]) +
                        ": the RF pulse played from its waveform lasts until " +
                        std::to_string((in_.times[k] + in_.lengths[k]) * 1e3) + " ms, past " +
                        (k + 1 < n ? describe(in_.events[k + 1], in_.times[k + 1])
                                   : std::string("the end of the sequence")) +
                        ", which the EPG path cannot overlap with it");
    }
    instant.after.duration_s = std::max(0.0, duration);
    if (k >= gaps_.first_pulse) {
      walk.wound = add(walk.wound, gaps_.moment[k]);
      if (k + 1 == n) {
        trailing_gap(p, walk, instant.after);
      } else {
        walk.span_time += duration;
        // Transverse magnetisation that has decayed below transverse_floor in
        // every voxel of the run is gone, whatever the gradients did.
        if (t2 > 0.0 && duration > -t2 * std::log(transverse_floor)) {
          if (!walk.span_spoiled) ++p.relaxed;
          walk.span_spoiled = true;
          instant.after.spoil = true;
        }
        if (!gaps_.pulse(k + 1)) {
          sample_gap(p, walk, k, instant.after);
        } else {
          if (!walk.span_spoiled && !close_span(p, walk, k, instant.after)) return p;
          if (walk.span_spoiled) walk.drift = {0, 0, 0};
          p.shifts += walk.given + instant.after.shifts;
          walk.wound = {0, 0, 0};
          walk.given = 0;
          walk.span_time = 0.0;
          walk.span_spoiled = false;
        }
      }
    }
    p.form.instants.push_back(instant);
  }
  return p;
}

// The gap after the last instant reaches no sample; its whole orders and
// spoiling matter only to a state carried on (a repeated period), so
// nothing in it is refused.
void Planner::trailing_gap(Plan& p, const Walk& walk, sequence::Gap& gap) const {
  const Vec3& u = p.u;
  const double uu = dot(u, u);
  const long long whole = uu > 0.0 ? std::llround(dot(walk.wound, u) / uu) : 0;
  const Vec3 residual = minus(walk.wound, scaled(double(std::max(whole, walk.given)), u));
  if (whole > walk.given && whole <= abi::max_orders && turns(residual) <= in_phase_turns) {
    gap.shifts = int(whole - walk.given);
  } else if (turns(residual) > in_phase_turns && leftover(residual, u) <= spoiled_leftover) {
    gap.spoil = true;
  }
}

// The gap before a sample: the shifts the moment has reached by then, and
// the moment the sample sees beyond them (its voxel weights).
void Planner::sample_gap(Plan& p, Walk& walk, std::size_t k, sequence::Gap& gap) const {
  const Vec3& u = p.u;
  const double uu = dot(u, u);
  const long long whole = uu > 0.0 ? std::llround(dot(walk.wound, u) / uu) : 0;
  if (!walk.span_spoiled && whole > walk.given) {
    gap.shifts = int(whole - walk.given);
    walk.given = whole;
  }
  const Vec3 r =
      walk.span_spoiled ? Vec3{0, 0, 0} : minus(walk.wound, scaled(double(walk.given), u));
  p.largest_sample_residual = std::max(p.largest_sample_residual, turns(r));
  if (!weighted(u, r, p.shifts + walk.given + 1)) return;
  std::array<long long, 3> key;
  for (int a = 0; a < 3; ++a) key[a] = std::llround(r[a] * 1e6);
  auto it = walk.tables.find(key);
  if (it == walk.tables.end()) {
    p.residuals.push_back(r);
    it = walk.tables.emplace(key, int(p.residuals.size())).first;
  }
  p.sample_table[k + 1] = it->second;
  ++p.weighted;
}

// The span closes at the pulse after gap k: whole orders, and what is left
// rounded away, spoiled or refused (false, with the refusal in the plan).
bool Planner::close_span(Plan& p, Walk& walk, std::size_t k, sequence::Gap& gap) const {
  const Vec3& u = p.u;
  const double uu = dot(u, u);
  const Vec3& wound = walk.wound;
  const long long whole = uu > 0.0 ? std::llround(dot(wound, u) / uu) : 0;
  const long long total = std::max(whole, walk.given);
  const Vec3 residual = minus(wound, scaled(double(total), u));
  const auto refuse = [&](const std::string& why) {
    p.refusal = where(k, wound) + "; " + why;
    return false;
  };
  if (total > abi::max_orders) {
    return refuse("that is " + std::to_string(total) + " crusher moments " + show(u) +
                  ", more orders than the kernels hold");
  }
  gap.shifts = int(total - walk.given);
  if (turns(residual) <= in_phase_turns) {
    walk.drift = add(walk.drift, residual);
    p.largest_residual = std::max(p.largest_residual, turns(residual));
    p.largest_drift = std::max(p.largest_drift, turns(walk.drift));
    if (total > 0) ++p.shifted;
    if (total == 0 && norm(wound) > 0.0) ++p.in_phase;
    if (turns(walk.drift) <= in_phase_turns) return true;
    return refuse("beyond " + std::to_string(total) + " crusher moments " + show(u) +
                  " it leaves " + show(residual) +
                  ", and with what earlier spans left the voxel's phase has drifted by " +
                  show(walk.drift) + ", " + turns_text(turns(walk.drift)) + " across the " +
                  voxel_text(voxel_) + " (at most " + turns_text(in_phase_turns) +
                  " may be rounded away): declare the moment that repeats "
                  "(crusher_moment_per_m) or the voxel (voxel_size_mm)");
  }
  const double t2 = options_.longest_t2_s.value_or(0.0);
  const double kept = leftover(residual, u) * (t2 > 0.0 ? std::exp(-walk.span_time / t2) : 1.0);
  if (kept <= spoiled_leftover) {
    // Ideal spoiling assumes the dephased states never return: spoilers may
    // dephase along one direction, but a net moment that turns from span to
    // span (radial, spiral) can bring them back.
    const Vec3 unit = scaled(1.0 / norm(residual), residual);
    if (!walk.spoil_direction) {
      walk.spoil_direction = unit;
      walk.spoil_gap = k;
    } else if (std::fabs(dot(unit, *walk.spoil_direction)) < 0.99) {
      return refuse("it dephases the voxel in another direction than " +
                    where(walk.spoil_gap, gaps_.moment[walk.spoil_gap]) +
                    ": the net gradient moment rotates from repetition to repetition (a radial "
                    "or spiral trajectory), and EPG follows one dephasing direction");
    }
    gap.spoil = true;
    ++p.spoiled;
    p.largest_leftover = std::max(p.largest_leftover, kept);
    walk.drift = {0, 0, 0};
    // A spoiled span ahead of a pulse that does not excite loses what that
    // pulse would refocus.
    if (!in_.excites[k + 1]) ++p.harmful_spoils;
    return true;
  }
  const double size = uu > 0.0 ? norm(wound) / std::sqrt(uu) : 0.0;
  if (std::round(size) >= 1.0 &&
      std::fabs(norm(wound) - std::round(size) * std::sqrt(uu)) <= in_phase_turns * norm(wound) &&
      std::fabs(dot(wound, u)) < std::cos(kTurnedRad) * norm(wound) * std::sqrt(uu)) {
    return refuse("it is as large as " + std::to_string(long(std::round(size))) +
                  " crusher moments " + show(u) +
                  " but points another way: the net gradient moment rotates from repetition to "
                  "repetition (a radial or spiral trajectory), and EPG follows one dephasing "
                  "direction");
  }
  const Vec3 across = uu > 0.0 ? minus(residual, scaled(dot(residual, u) / uu, u)) : residual;
  const double along = uu > 0.0 ? dot(residual, u) / uu : 0.0;
  return refuse("beyond " + std::to_string(total) + " whole crusher moments " + show(u) +
                " it winds " + turns_text(turns(residual)) + " across the " + voxel_text(voxel_) +
                " (" + number(along) + " of an order along the crusher and " +
                turns_text(turns(across)) + " across it, after which a state can keep " +
                number(100.0 * kept) + " % of itself): neither within " +
                turns_text(in_phase_turns) + " of whole orders nor a spoiler (at most " +
                number(100.0 * spoiled_leftover) +
                " % kept), so EPG, which follows one repeated moment, cannot represent it (two "
                "crusher areas, or a voxel size that does not match the sequence: see "
                "voxel_size_mm)");
}

// A drift below this many turns changes a sample by at most 1 - sinc(0.01),
// 0.02 %: candidates that keep within it round away nothing that matters.
constexpr double kNegligibleDriftTurns = 0.01;

// Candidates that translate rank by the spans they spoil ideally (what a
// later pulse could bring back is lost; whole orders lose nothing), first
// those a refocusing pulse closes, then by the drift they round away where it
// matters, then by the orders they need.
bool better(const Plan& a, const Plan& b) {
  if (a.harmful_spoils != b.harmful_spoils) return a.harmful_spoils < b.harmful_spoils;
  if (a.spoiled != b.spoiled) return a.spoiled < b.spoiled;
  const double da = std::max(a.largest_drift, kNegligibleDriftTurns);
  const double db = std::max(b.largest_drift, kNegligibleDriftTurns);
  if (da != db) return da < db;
  return a.shifts < b.shifts;
}

}  // namespace

sequence::Description quantise_gaps(const PulseqFile& file, const InstantTrack& in,
                                    const TranslateOptions& options, TranslationReport& report) {
  const std::size_t n = in.events.size();
  const std::string name = file.definitions.name.empty() ? file.path : file.definitions.name;
  const Vec3& voxel = report.voxel_size_m;
  report.crusher_source = "none";
  if (n == 0) {
    sequence::InstantForm form;
    form.leading.duration_s = in.end_time;
    return sequence::assemble(form, name);
  }
  const Gaps gaps = gaps_without_encoding(in, voxel, report);
  int slice_axis = 2;
  for (int a = 0; a < 3; ++a) {
    if (std::fabs(report.slice_normal[a]) > std::fabs(report.slice_normal[slice_axis])) {
      slice_axis = a;
    }
  }
  const Planner planner(file, in, gaps, options, voxel, report.slice_position_m, slice_axis);
  std::string source;
  const Vec3 declared = declared_moment(file, options, source);
  std::optional<Plan> chosen;
  if (norm(declared) > 0.0) {
    chosen = planner.plan(declared);
    report.crusher_source = source;
  } else {
    std::vector<Vec3> candidates = candidate_moments(gaps, voxel);
    candidates.push_back({0, 0, 0});
    std::optional<Plan> first_refused;
    for (const Vec3& u : candidates) {
      Plan p = planner.plan(u);
      if (!p.refusal.empty()) {
        if (!first_refused) first_refused = std::move(p);
        continue;
      }
      if (!chosen || better(p, *chosen)) chosen = std::move(p);
    }
    if (!chosen) chosen = std::move(first_refused);
    if (norm(chosen->u) > 0.0) report.crusher_source = "detected";
  }
  const Plan& p = *chosen;
  report.crusher_moment = p.u;
  if (!p.refusal.empty()) throw PulseqError(p.refusal);
  report.shifted_gaps = p.shifted;
  report.in_phase_gaps = p.in_phase;
  report.spoiled_gaps = p.spoiled;
  report.relaxed_gaps = p.relaxed;
  report.weighted_samples = p.weighted;
  report.largest_residual_turns = p.largest_residual;
  report.largest_drift_turns = p.largest_drift;
  report.largest_spoil_leftover = p.largest_leftover;
  report.largest_sample_residual_turns = p.largest_sample_residual;
  sequence::InstantForm form = p.form;
  for (std::size_t k = 0; k < n; ++k) form.instants[k].event.voxel_weights = p.sample_table[k];
  sequence::Description d = sequence::assemble(form, name);
  if (!p.residuals.empty()) {
    d.voxel.order_moment_per_m = p.u;
    d.voxel.edges_m = voxel;
    d.voxel.centre_m = report.slice_position_m;
    d.voxel.slice_axis = slice_axis;
    d.voxel.residuals_per_m = p.residuals;
  }
  return d;
}

}  // namespace larmor::io::pulseq::detail
