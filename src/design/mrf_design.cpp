#include "design/mrf_design.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "epg/adjoint.hpp"

namespace larmor::design {

namespace {

constexpr double deg = 3.14159265358979323846 / 180.0;

double unit(double v, double lo, double hi) { return std::clamp((v - lo) / (hi - lo), 0.0, 1.0); }

}  // namespace

void MrfDesignSpace::validate() const {
  if (start.schedule.empty()) throw std::invalid_argument("design: the starting train has no rows");
  if (!flips && !repetition_times) {
    throw std::invalid_argument("design: nothing to optimise (optimise flip and/or tr)");
  }
  if (flips && !(flip_min_deg >= 0.0 && flip_max_deg > flip_min_deg && flip_max_deg <= 180.0)) {
    throw std::invalid_argument("design: flip bounds must satisfy 0 <= min < max <= 180 degrees");
  }
  if (!(start.nominal_flip_deg > 0.0)) {
    throw std::invalid_argument("design: the nominal flip angle must be positive");
  }
  if (repetition_times) {
    if (!(tr_min_s > 0.0 && tr_max_s > tr_min_s)) {
      throw std::invalid_argument("design: TR bounds must satisfy 0 < min < max");
    }
    for (std::size_t n = 0; n < rows(); ++n) {
      const double te = start.base_te_s + start.schedule[n].te_extension_s;
      if (!(te < tr_min_s)) {
        throw std::invalid_argument(
            "design: row " + std::to_string(n + 1) + " has TE " + std::to_string(te * 1e3) +
            " ms, not below the smallest TR allowed (" + std::to_string(tr_min_s * 1e3) + " ms)");
      }
    }
  }
}

std::vector<double> MrfDesignSpace::encode(const sequence::MrfParams& p) const {
  std::vector<double> x;
  x.reserve(size());
  if (flips) {
    for (const auto& r : p.schedule) {
      x.push_back(unit(r.flip_fraction * p.nominal_flip_deg, flip_min_deg, flip_max_deg));
    }
  }
  if (repetition_times) {
    for (const auto& r : p.schedule)
      x.push_back(unit(p.base_tr_s + r.tr_extension_s, tr_min_s, tr_max_s));
  }
  return x;
}

sequence::MrfParams MrfDesignSpace::decode(const std::vector<double>& x) const {
  if (x.size() != size()) throw std::invalid_argument("design: wrong number of variables");
  sequence::MrfParams p = start;
  std::size_t i = 0;
  if (flips) {
    for (auto& r : p.schedule) {
      r.flip_fraction =
          (flip_min_deg + x[i++] * (flip_max_deg - flip_min_deg)) / p.nominal_flip_deg;
    }
  }
  if (repetition_times) {
    for (auto& r : p.schedule)
      r.tr_extension_s = tr_min_s + x[i++] * (tr_max_s - tr_min_s) - p.base_tr_s;
  }
  return p;
}

std::vector<double> MrfDesignSpace::chain(const sequence::Description& train,
                                          const std::vector<double>& event_gradients) const {
  constexpr int columns = epg::sequence_gradient::count;
  // Row n's excitation is the n-th pulse after the inversion; its TR is set
  // by the duration of the n-th sample's interval (TR - TE).
  std::vector<std::size_t> pulses, samples;
  for (std::size_t e = 0; e < train.events.size(); ++e) {
    if (train.events[e].kind == abi::EventKind::pulse) pulses.push_back(e);
    if (train.events[e].kind == abi::EventKind::adc) samples.push_back(e);
  }
  if (start.inversion && !pulses.empty()) pulses.erase(pulses.begin());
  if (pulses.size() != rows() || samples.size() != rows() ||
      event_gradients.size() != train.events.size() * columns) {
    throw std::logic_error("design: the train's events do not match its schedule rows");
  }
  std::vector<double> g;
  g.reserve(size());
  if (flips) {
    for (std::size_t n = 0; n < rows(); ++n) {
      g.push_back(event_gradients[pulses[n] * columns + epg::sequence_gradient::flip] * deg *
                  (flip_max_deg - flip_min_deg));
    }
  }
  if (repetition_times) {
    for (std::size_t n = 0; n < rows(); ++n) {
      g.push_back(event_gradients[samples[n] * columns + epg::sequence_gradient::duration] *
                  (tr_max_s - tr_min_s));
    }
  }
  return g;
}

}  // namespace larmor::design
