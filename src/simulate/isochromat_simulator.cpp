#include "simulate/isochromat_simulator.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace larmor::simulate {
namespace {

constexpr double kPi = 3.14159265358979323846;
const char* const kAxes[3] = {"x", "y", "z"};

// Isochromats on the midpoints that sum a winding of W turns to the voxel's
// mean within `accuracy`: more than W (no alias), and enough that the
// midpoint rule's error, about (pi W / n)^2 / 6 of the mean, whose size is at
// most 1 / (pi W) past a third of a turn, stays below the accuracy.
int isochromats_for(double turns, double accuracy) {
  if (!(turns > 0.0)) return 1;
  const double precise = turns < 1.0 / kPi ? kPi * turns / std::sqrt(6.0 * accuracy)
                                           : std::sqrt(kPi * turns / (6.0 * accuracy));
  const double needed = std::max(std::floor(turns) + 1.0, std::ceil(precise));
  return needed > 2.0e9 ? 2000000000 : std::max(1, int(needed));
}

std::string format(const char* pattern, double a, double b = 0.0, double c = 0.0) {
  char text[256];
  std::snprintf(text, sizeof text, pattern, a, b, c);
  return text;
}

}  // namespace

IsochromatPlan plan_isochromats(const sequence::StepTable& table,
                                const IsochromatSettings& settings) {
  if (!(settings.accuracy > 0.0 && settings.accuracy < 1.0)) {
    throw std::invalid_argument("isochromat accuracy must lie between 0 and 1");
  }
  IsochromatPlan plan;
  // How many spans a coherence lives: all of them, or as many as T2 leaves it
  // above the accuracy.
  plan.lives_spans = std::max(1, table.spans);
  if (settings.longest_t2_s && table.shortest_span_s > 0.0) {
    const double life = *settings.longest_t2_s * std::log(1.0 / settings.accuracy);
    const double spans = std::ceil(life / table.shortest_span_s);
    if (spans < double(plan.lives_spans)) plan.lives_spans = std::max(1, int(spans));
  }
  std::array<int, 3> needed{1, 1, 1};
  for (std::size_t a = 0; a < 3; ++a) {
    const double edge = settings.voxel_size_m[a];
    plan.windings_turns[a] = edge * (double(plan.lives_spans) * table.largest_span_moment_per_m[a] +
                                     table.largest_swing_per_m[a]);
    needed[a] = isochromats_for(plan.windings_turns[a], settings.accuracy);
  }
  const double total = double(needed[0]) * needed[1] * needed[2];
  std::string why;
  if (settings.isochromats) {
    // The requested count shared between the winding axes, in proportion
    // to what each needs.
    const double requested = double(std::max<std::int64_t>(1, *settings.isochromats));
    int axes = 0;
    for (int n : needed) axes += n > 1 ? 1 : 0;
    const double scale = axes == 0 ? 1.0 : std::pow(requested / total, 1.0 / axes);
    for (std::size_t a = 0; a < 3; ++a) {
      plan.counts[a] = needed[a] > 1 ? std::max(1, int(std::lround(needed[a] * scale)))
                                     : (axes == 0 && a == 2 ? int(requested) : 1);
    }
    why = format("isochromats = %.0f requested", requested) +
          format(" (the windings ask for %.0f)", total);
    for (std::size_t a = 0; a < 3; ++a) {
      if (plan.counts[a] >= needed[a]) continue;
      plan.warning += std::string(plan.warning.empty() ? "" : "; ") + "along " + kAxes[a] +
                      format(" %.0f isochromats for windings up to %.1f turns", plan.counts[a],
                             plan.windings_turns[a]) +
                      (plan.counts[a] <= plan.windings_turns[a]
                           ? format(": coherences wound past %.0f turns alias", plan.counts[a])
                           : format(" sum them with an error above %.0e", settings.accuracy));
    }
    if (!plan.warning.empty()) {
      plan.warning = "isochromats = " + std::to_string(std::int64_t(requested)) +
                     " is fewer than the accuracy needs: " + plan.warning;
    }
  } else {
    if (total > double(settings.max_isochromats)) {
      throw std::invalid_argument(
          "the isochromat engine needs " + format("%.3g", total) +
          " isochromats per voxel (windings across the voxel of " +
          format("%.1f, %.1f, %.1f turns along x, y, z", plan.windings_turns[0],
                 plan.windings_turns[1], plan.windings_turns[2]) +
          " over " + std::to_string(plan.lives_spans) + " pulse-to-pulse spans), more than " +
          std::to_string(settings.max_isochromats) +
          ": give [simulation] isochromats = N to run with fewer, less accurately, or a smaller "
          "voxel");
    }
    plan.counts = needed;
    why = format("accuracy %.0e", settings.accuracy);
  }
  plan.report = "isochromats " + std::to_string(plan.counts[0]) + " x " +
                std::to_string(plan.counts[1]) + " x " + std::to_string(plan.counts[2]) +
                " per voxel (" + why + "; windings across the voxel up to ";
  for (std::size_t a = 0; a < 3; ++a) {
    plan.report +=
        format("%.2f", plan.windings_turns[a]) + " turns along " + kAxes[a] + (a < 2 ? ", " : "");
  }
  plan.report += " over " + std::to_string(plan.lives_spans) + " pulse-to-pulse span" +
                 (plan.lives_spans == 1 ? "" : "s") + ")";
  return plan;
}

namespace {

// A coherence dephases only while transverse, where T2 decays it: one older
// than T2 ln(2 / accuracy) holds less than half the accuracy.
double longest_dephasing_s(double duration_s, double t2_s, double accuracy) {
  return std::min(duration_s, t2_s * std::log(2.0 / accuracy));
}

}  // namespace

FrequencySpread IsochromatSimulator::frequency_spread(double t2_s, double t2_prime_s) const {
  if (std::isinf(t2_prime_s)) return {};
  const double accuracy = settings_.accuracy;
  return lorentzian_spread(longest_dephasing_s(table_.duration_s, t2_s, accuracy) / t2_prime_s,
                           accuracy);
}

std::int64_t IsochromatSimulator::most_frequency_offsets(const tissue::Tissue& tissue,
                                                         std::int64_t* all) const {
  if (all != nullptr) *all = tissue.voxels;
  if (!tissue.has_frequency_spread()) return 1;
  const double accuracy = settings_.accuracy;
  std::int64_t most = 1, sum = 0;
  for (std::int64_t v = 0; v < tissue.voxels; ++v) {
    const double t2_prime = tissue.t2_prime_s.at(v), t2 = tissue.t2_s.at(v);
    const double dephasing = longest_dephasing_s(table_.duration_s, t2, accuracy);
    const auto offsets = std::isinf(t2_prime)
                             ? std::int64_t(1)
                             : std::int64_t(lorentzian_spread_size(dephasing / t2_prime, accuracy));
    const double total = double(plan_.size()) * double(offsets);
    if (total > double(settings_.max_isochromats)) {
      throw std::invalid_argument(
          "t2_prime_ms = " + format("%g", 1e3 * t2_prime) + " with up to " +
          format("%g", 1e3 * dephasing) + " ms of dephasing needs " + std::to_string(offsets) +
          " frequency offsets (accuracy " + format("%g", accuracy) + "), times " +
          std::to_string(plan_.size()) + " isochromats per voxel: " + format("%.3g", total) +
          " isochromats per voxel, more than " + std::to_string(settings_.max_isochromats) +
          "; a coarser isochromat_accuracy needs fewer (the offsets grow as 1 / accuracy)");
    }
    most = std::max(most, offsets);
    sum += offsets;
    if (all == nullptr && !tissue.t2_prime_s.is_map() && !tissue.t2_s.is_map()) break;
  }
  if (all != nullptr) *all = sum;
  return most;
}

std::string isochromat_tissue_refusal(const tissue::Tissue& tissue) {
  if (tissue.has_second_pool() || tissue.has_bound_pool()) {
    return "pooled tissue (a second or bound pool) is simulated by the EPG engine only";
  }
  if (!tissue.adc_m2_s.is_identity_in(0.0f)) return "diffusion is simulated by the EPG engine only";
  if (!tissue.velocity_m_s.is_identity_in(0.0f)) return "flow is simulated by the EPG engine only";
  if (tissue.transmit_channels > 0) return "transmit arrays are simulated by the EPG engine only";
  return {};
}

IsochromatSimulator::IsochromatSimulator(sequence::StepTable table,
                                         const IsochromatSettings& settings)
    : table_(std::move(table)), settings_(settings), plan_(plan_isochromats(table_, settings)) {
  if (settings_.keep_encodes) sequence::keep_encodes(table_);
}

void IsochromatSimulator::run(const tissue::Tissue& tissue, float* signals, float* mz,
                              const double* centres_m) const {
  run_into<Kokkos::DefaultExecutionSpace>(tissue, signals, mz, centres_m);
}

std::vector<double> IsochromatSimulator::kspace(const tissue::Tissue& tissue,
                                                const double* centres_m,
                                                std::int64_t batch_voxels) const {
  if (!settings_.keep_encodes) {
    throw std::logic_error("IsochromatSimulator::kspace: the settings take the encodes out");
  }
  const std::size_t samples = table_.samples();
  std::vector<double> sum(samples * 2, 0.0);
  const std::int64_t batch = std::max<std::int64_t>(1, batch_voxels);
  std::vector<float> signals;
  for (std::int64_t first = 0; first < tissue.voxels; first += batch) {
    const std::int64_t n = std::min(batch, tissue.voxels - first);
    const tissue::Tissue part = tissue.slice(first, first + n);
    signals.assign(std::size_t(n) * samples * 2, 0.0f);
    run(part, signals.data(), nullptr, centres_m + std::size_t(first) * 3);
    for (std::int64_t v = 0; v < n; ++v) {
      const float* row = signals.data() + std::size_t(v) * samples * 2;
      for (std::size_t i = 0; i < samples * 2; ++i) sum[i] += double(row[i]);
    }
  }
  return sum;
}

}  // namespace larmor::simulate
