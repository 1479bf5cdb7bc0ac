#include "sequence/description.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace larmor::sequence {

int Description::sample_count() const {
  return static_cast<int>(std::count_if(events.begin(), events.end(),
                                        [](const Event& e) { return e.kind == EventKind::adc; }));
}

void keep_last_samples(Description& d, int n) {
  int to_drop = d.sample_count() - n;
  if (n <= 0 || to_drop <= 0) return;
  for (Event& e : d.events) {
    if (to_drop == 0) break;
    if (e.kind == EventKind::adc) {
      e.kind = EventKind::wait;
      e.phase_rad = 0.0;
      --to_drop;
    }
  }
}

int Description::declared_winding() const {
  long long w = 0;
  for (const Event& e : events) w += abi::shifts_of(e.action);
  return w > (1ll << 30) ? (1 << 30) : static_cast<int>(w);
}

double Description::lobe_time_after_s(std::size_t i) const {
  if (!(crusher.duration_s > 0.0) || i >= events.size()) return 0.0;
  const std::uint32_t next = events[i + 1 < events.size() ? i + 1 : 0].action;
  return double(abi::lobes_in_interval(events[i].action, next)) * crusher.duration_s;
}

double PulseWaveform::duration_s() const {
  double t = 0.0;
  for (const auto& r : runs) t += r.dt_s * double(r.samples);
  return t;
}

std::int64_t PulseWaveform::samples() const {
  std::int64_t n = 0;
  for (const auto& r : runs) n += r.samples;
  return n;
}

double Description::instant_length_s(std::size_t i) const {
  const Event& e = events[i];
  if (e.kind != EventKind::waveform_pulse || e.waveform < 1 ||
      std::size_t(e.waveform) > waveforms.size()) {
    return 0.0;
  }
  return waveforms[std::size_t(e.waveform - 1)].duration_s();
}

double Description::total_duration_s() const {
  double t = 0.0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    t += instant_length_s(i) + events[i].duration_s + lobe_time_after_s(i);
  }
  return t;
}

std::vector<double> Description::timestamps_s() const {
  std::vector<double> t(events.size());
  double now = 0.0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    t[i] = now;
    now += instant_length_s(i) + events[i].duration_s + lobe_time_after_s(i);
  }
  return t;
}

void place_lobes_within_timing(Description& d, double lobe_s) {
  if (!(lobe_s >= 0.0) || !std::isfinite(lobe_s)) {
    throw std::invalid_argument("sequence '" + d.name + "': the crusher lobe duration " +
                                std::to_string(lobe_s) + " s must be finite and >= 0");
  }
  d.crusher.duration_s = lobe_s;
  const std::size_t n = d.events.size();
  for (std::size_t i = 0; i < n; ++i) {
    Event& e = d.events[i];
    double lobes = d.lobe_time_after_s(i);
    const bool wraps = i + 1 == n && (d.events[0].action & action::crush_before) != 0;
    if (wraps && e.duration_s < lobes) lobes -= lobe_s;
    // A lobe that fills its interval exactly is not refused for rounding.
    if (e.duration_s < lobes * (1.0 - 1e-9)) {
      throw std::invalid_argument(
          "sequence '" + d.name + "', event " + std::to_string(i) + ": its interval of " +
          std::to_string(e.duration_s * 1e3) + " ms to the next event cannot hold the " +
          std::to_string(int(std::lround(lobes / lobe_s))) + " crusher lobe(s) of " +
          std::to_string(lobe_s * 1e3) + " ms that fall inside it");
    }
    e.duration_s = std::max(0.0, e.duration_s - lobes);
  }
}

void Description::append(const Description& other) {
  events.insert(events.end(), other.events.begin(), other.events.end());
  if (!other.waveforms.empty()) {
    const int offset = int(waveforms.size());
    waveforms.insert(waveforms.end(), other.waveforms.begin(), other.waveforms.end());
    for (std::size_t i = events.size() - other.events.size(); i < events.size(); ++i) {
      if (events[i].waveform > 0) events[i].waveform += offset;
    }
  }
  if (!crusher.declared()) crusher = other.crusher;
  if (shims.channels == 0) shims = other.shims;
  if (other.voxel.declared()) {
    // The appended samples keep their weights: their tables follow ours.
    if (voxel.declared() &&
        (voxel.order_moment_per_m != other.voxel.order_moment_per_m ||
         voxel.edges_m != other.voxel.edges_m || voxel.centre_m != other.voxel.centre_m ||
         voxel.slice_axis != other.voxel.slice_axis)) {
      throw std::invalid_argument("sequence '" + name + "': '" + other.name +
                                  "' averages its samples over another voxel");
    }
    const int offset = int(voxel.residuals_per_m.size());
    if (!voxel.declared())
      voxel = VoxelIntegral{other.voxel.order_moment_per_m,
                            other.voxel.edges_m,
                            other.voxel.centre_m,
                            other.voxel.slice_axis,
                            {}};
    voxel.residuals_per_m.insert(voxel.residuals_per_m.end(), other.voxel.residuals_per_m.begin(),
                                 other.voxel.residuals_per_m.end());
    for (std::size_t i = events.size() - other.events.size(); i < events.size(); ++i) {
      if (events[i].voxel_weights > 0) events[i].voxel_weights += offset;
    }
  }
}

int default_max_order(const Description& d) {
  return std::clamp(d.declared_winding(), abi::min_default_orders - 1, abi::max_default_orders - 1);
}

int resolve_state_count(const Description& d, int max_order) {
  const int cap = max_order >= 0 ? max_order : default_max_order(d);
  if (cap >= abi::max_orders) {
    throw std::invalid_argument("max_order = " + std::to_string(cap) +
                                ": the EPG kernels (larmor::epg::forward) hold orders 0.." +
                                std::to_string(abi::max_orders - 1));
  }
  return cap + 1;
}

std::string automatic_cap_warning(const Description& d, int max_order) {
  if (max_order >= 0) return {};
  const int kept = default_max_order(d);
  // The cap is clamped only above the winding; no sample reaches past the winding.
  if (kept >= d.declared_winding()) return {};
  const int reached = sample_reach_order_count(d) - 1;
  if (reached <= kept) return {};
  const int keep = std::min(reached, abi::max_orders - 1);  // the kernels' most
  return "warning: samples can reach EPG order " + std::to_string(reached) +
         " but the automatic cap keeps orders 0.." + std::to_string(kept) +
         ", so the signal may lose what the higher orders carry; set max_order = " +
         std::to_string(keep) + " ([simulation] in a deck) to keep " +
         (keep == reached ? std::string("them") : std::string("the most the kernels hold"));
}

namespace {

// Per component (F+, F-, Z), the highest order that may matter, -1 for none:
// walking forwards, the highest that may be non-zero; walking backwards, the
// highest that a later sample may read. The two walks mirror each other.
struct OrderBounds {
  int plus = -1, minus = -1, z = -1;

  // One shift moves F+_k to k + 1, F-_k to k - 1, and F-_1 to order 0, whose
  // transverse state is F+_0 and F-_0 at once (which then moves to F+_1).
  // `up`, `down`: the components moving up and down in the walk's direction.
  static void shift(int& up, int& down) {
    const int base = std::max(up, up >= 0 || down >= 0 ? 0 : -1);
    up = base >= 0 ? base + 1 : -1;
    down = down >= 1 ? down - 1 : -1;
  }
  void shift_forward() { shift(plus, minus); }
  void shift_backward() { shift(minus, plus); }
  // A pulse mixes the three components of each order.
  void pulse() { plus = minus = z = std::max({plus, minus, z}); }
  // An ideal spoiler zeroes every F state.
  void spoil() { plus = minus = -1; }
  // A sample reads F+_0, which is F-_0 too (backward walk).
  void sample() {
    plus = std::max(plus, 0);
    minus = std::max(minus, 0);
  }
  // A sample weighted over the voxel reads every order.
  void weighted_sample() { plus = minus = std::numeric_limits<int>::max() / 2; }
};

enum class Step { shift, pulse, sample, weighted_sample, wait, spoil };

// An event's steps in the kernels' order (event_abi.hpp), or in reverse.
template <class Visit>
void for_each_step(const Event& e, bool forward, Visit&& visit) {
  using namespace abi::action;
  const auto shift_if = [&](std::uint32_t bit) {
    if ((e.action & bit) != 0) visit(Step::shift);
  };
  const Step instant = abi::is_rf(e.kind) ? Step::pulse
                       : e.kind == EventKind::adc
                           ? (e.voxel_weights > 0 ? Step::weighted_sample : Step::sample)
                           : Step::wait;
  if (forward) {
    shift_if(crush_before);
    visit(instant);
    shift_if(crush_after);
    shift_if(shift_after);
    if ((e.action & spoil_after) != 0) visit(Step::spoil);
  } else {
    if ((e.action & spoil_after) != 0) visit(Step::spoil);
    shift_if(shift_after);
    shift_if(crush_after);
    visit(instant);
    shift_if(crush_before);
  }
}

}  // namespace

int sample_reach_order_count(const Description& d) {
  // A truncation at N orders drops the F+ states a shift pushes to order N.
  // That loses nothing a sample sees unless, after that shift, F+_N may be
  // non-zero (forward walk) and may be read (backward walk).
  std::vector<int> nonzero_after;  // forward bound on F+ after each shift
  OrderBounds ahead;
  ahead.z = 0;  // equilibrium: Z_0 only
  for (const Event& e : d.events) {
    for_each_step(e, true, [&](Step step) {
      if (step == Step::shift) ahead.shift_forward(), nonzero_after.push_back(ahead.plus);
      if (step == Step::pulse) ahead.pulse();
      if (step == Step::spoil) ahead.spoil();
    });
  }
  OrderBounds read;
  int highest = 0;
  std::size_t shift = nonzero_after.size();
  for (auto e = d.events.rbegin(); e != d.events.rend(); ++e) {
    for_each_step(*e, false, [&](Step step) {
      if (step == Step::shift) {
        highest = std::max(highest, std::min(nonzero_after[--shift], read.plus));
        read.shift_backward();
      }
      if (step == Step::pulse) read.pulse();
      if (step == Step::sample) read.sample();
      if (step == Step::weighted_sample) read.weighted_sample();
      if (step == Step::spoil) read.spoil();
    });
  }
  return highest + 1;
}

}  // namespace larmor::sequence
