#include "tissue/tissue.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace larmor::tissue {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

enum class Range { positive, non_negative, finite, fraction };

struct PropertyInfo {
  Property property;
  const char* deck_name;
  const char* si_units;
  double to_si;
  double identity;
  Range range;
};

// One row per property, in the order of Property.
constexpr PropertyInfo kProperties[] = {
    {Property::m0, "m0", "1", 1.0, 1.0, Range::non_negative},
    {Property::t1, "t1_ms", "s", 1e-3, kInfinity, Range::positive},
    {Property::t2, "t2_ms", "s", 1e-3, kInfinity, Range::positive},
    {Property::b1, "b1", "1", 1.0, 1.0, Range::non_negative},
    {Property::off_resonance, "off_resonance_hz", "Hz", 1.0, 0.0, Range::finite},
    {Property::diffusion, "adc_um2_ms", "m^2/s", 1e-9, 0.0, Range::non_negative},
    {Property::velocity, "velocity_cm_s", "m/s", 1e-2, 0.0, Range::finite},
    {Property::pool_fraction, "pool_fraction", "1", 1.0, 0.0, Range::fraction},
    {Property::pool_t1, "pool_t1_ms", "s", 1e-3, kInfinity, Range::positive},
    {Property::pool_t2, "pool_t2_ms", "s", 1e-3, kInfinity, Range::positive},
    {Property::pool_exchange, "pool_exchange_hz", "1/s", 1.0, 0.0, Range::non_negative},
    {Property::bound_fraction, "bound_fraction", "1", 1.0, 0.0, Range::fraction},
    {Property::bound_t1, "bound_t1_ms", "s", 1e-3, kInfinity, Range::positive},
    {Property::bound_exchange, "bound_exchange_hz", "1/s", 1.0, 0.0, Range::non_negative},
    {Property::t2_prime, "t2_prime_ms", "s", 1e-3, kInfinity, Range::positive},
};
static_assert(sizeof(kProperties) / sizeof(kProperties[0]) == all_properties.size(),
              "one row per property");

const PropertyInfo& info(Property p) {
  const auto& row = kProperties[static_cast<int>(p)];
  if (row.property != p) throw std::logic_error("tissue property table out of order");
  return row;
}

bool acceptable(Range r, float v) {
  switch (r) {
    case Range::positive:
      return !std::isnan(v) && v > 0.0f;  // infinity: no relaxation
    case Range::non_negative:
      return std::isfinite(v) && v >= 0.0f;
    case Range::finite:
      return std::isfinite(v);
    case Range::fraction:
      return v >= 0.0f && v < 1.0f;
  }
  return false;
}

const char* requirement(Range r) {
  switch (r) {
    case Range::positive:
      return "must be a positive number";
    case Range::non_negative:
      return "must be finite and non-negative";
    case Range::fraction:
      return "must be a fraction in [0, 1)";
    default:
      return "must be finite";
  }
}

}  // namespace

const char* deck_name(Property p) { return info(p).deck_name; }
const char* units(Property p) { return info(p).si_units; }
double to_si(Property p) { return info(p).to_si; }
double identity_si(Property p) { return info(p).identity; }

PropertyValues& Tissue::operator[](Property p) {
  PropertyValues* values[] = {&m0,
                              &t1_s,
                              &t2_s,
                              &b1,
                              &df_hz,
                              &adc_m2_s,
                              &velocity_m_s,
                              &pool_fraction,
                              &pool_t1_s,
                              &pool_t2_s,
                              &pool_exchange_hz,
                              &bound_fraction,
                              &bound_t1_s,
                              &bound_exchange_hz,
                              &t2_prime_s};
  static_assert(sizeof(values) / sizeof(values[0]) == all_properties.size(), "one per property");
  return *values[static_cast<int>(p)];
}

const PropertyValues& Tissue::operator[](Property p) const { return const_cast<Tissue&>(*this)[p]; }

bool Tissue::has_frequency_spread() const {
  if (!t2_prime_s.is_map()) return std::isfinite(t2_prime_s.uniform);
  return std::any_of(t2_prime_s.map.begin(), t2_prime_s.map.end(),
                     [](float v) { return std::isfinite(v); });
}

Tissue::Implausible Tissue::count_implausible() const {
  Implausible out;
  for (std::int64_t i = 0; i < voxels; ++i) {
    if (t2_s.at(i) > t1_s.at(i)) ++out.t2_above_t1;
    const float b = b1.at(i);
    if (b < 0.3f || b > 2.0f) ++out.b1_outside;
  }
  return out;
}

void Tissue::validate(const std::string& source, const std::vector<std::int64_t>* names) const {
  if (voxels < 0) throw std::invalid_argument(source + ": negative voxel count");
  // A voxel as the user knows it: its index in the volume where there is one.
  auto voxel = [&](std::size_t i) {
    if (names != nullptr && i < names->size()) {
      return "voxel " + std::to_string((*names)[i]) + " of the volume (linear index)";
    }
    return "voxel " + std::to_string(i);
  };
  for (Property p : all_properties) {
    const PropertyValues& v = (*this)[p];
    const PropertyInfo& row = info(p);
    const double scale = 1.0 / row.to_si;  // report in deck units
    if (v.is_map()) {
      if (std::int64_t(v.map.size()) != voxels) {
        throw std::invalid_argument(source + ": map '" + row.deck_name + "' has " +
                                    std::to_string(v.map.size()) + " values for " +
                                    std::to_string(voxels) + " voxels");
      }
      for (std::size_t i = 0; i < v.map.size(); ++i) {
        if (!acceptable(row.range, v.map[i])) {
          throw std::invalid_argument(source + ": " + row.deck_name + " at " + voxel(i) + " is " +
                                      std::to_string(v.map[i] * scale) + "; it " +
                                      requirement(row.range));
        }
      }
    } else if (!acceptable(row.range, v.uniform)) {
      throw std::invalid_argument(source + ": " + row.deck_name + " = " +
                                  std::to_string(v.uniform * scale) + "; it " +
                                  requirement(row.range));
    }
  }
  // A second pool needs its own relaxation; the free pool keeps a share.
  if (has_second_pool() &&
      (pool_t1_s.is_identity_in(INFINITY) || pool_t2_s.is_identity_in(INFINITY))) {
    throw std::invalid_argument(source +
                                ": pool_fraction is given, so pool_t1_ms and pool_t2_ms "
                                "(the second pool's relaxation) are needed too");
  }
  if (has_bound_pool() && !(bound_t2_s > 0.0 && std::isfinite(bound_t2_s))) {
    throw std::invalid_argument(source + ": bound_t2_us must be positive and finite");
  }
  for (std::int64_t i = 0; i < voxels; ++i) {
    if (pool_fraction.at(i) + bound_fraction.at(i) >= 1.0f) {
      throw std::invalid_argument(source + ": pool_fraction + bound_fraction at " + voxel(i) +
                                  " leaves no free water (must be below 1)");
    }
    if (!pool_fraction.is_map() && !bound_fraction.is_map()) break;  // uniform: once
  }
  if (transmit_channels < 0 || transmit.size() != std::size_t(transmit_channels > 0 ? voxels : 0) *
                                                      std::size_t(transmit_channels)) {
    throw std::invalid_argument(source + ": transmit maps hold " + std::to_string(transmit.size()) +
                                " values for " + std::to_string(voxels) + " voxels x " +
                                std::to_string(transmit_channels) + " channels");
  }
  for (std::size_t i = 0; i < transmit.size(); ++i) {
    if (!std::isfinite(transmit[i].real()) || !std::isfinite(transmit[i].imag())) {
      throw std::invalid_argument(source + ": transmit field of channel " +
                                  std::to_string(i % std::size_t(transmit_channels)) + " at " +
                                  voxel(i / std::size_t(transmit_channels)) + " is not finite");
    }
  }
}

Tissue Tissue::slice(std::int64_t begin, std::int64_t end) const {
  if (begin < 0 || end < begin || end > voxels) {
    throw std::out_of_range("tissue slice [" + std::to_string(begin) + ", " + std::to_string(end) +
                            ") outside " + std::to_string(voxels));
  }
  Tissue t;
  t.voxels = end - begin;
  t.bound_lineshape = bound_lineshape;
  t.bound_t2_s = bound_t2_s;
  for (Property p : all_properties) {
    const PropertyValues& src = (*this)[p];
    PropertyValues& dst = t[p];
    dst.uniform = src.uniform;
    if (src.is_map()) dst.map.assign(src.map.begin() + begin, src.map.begin() + end);
  }
  t.transmit_channels = transmit_channels;
  if (transmit_channels > 0) {
    t.transmit.assign(transmit.begin() + begin * transmit_channels,
                      transmit.begin() + end * transmit_channels);
  }
  return t;
}

}  // namespace larmor::tissue
