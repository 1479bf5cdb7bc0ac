// Tissue properties per voxel, with the identity value at which each has no
// effect. A property is either uniform or a per-voxel map; the kernels only
// pay for maps that were given.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tissue/lineshape.hpp"

namespace larmor::tissue {

// The first five are also the directions of the tissue derivatives
// (epg::tissue_direction). Diffusion and velocity are declared terms that the
// kernels evaluate only where given; the pool properties select a pooled
// model (a second free pool exchanging with the first: myelin water; a bound
// pool for magnetisation transfer; or both). See docs/physics.md.
enum class Property {
  m0,
  t1,
  t2,
  b1,
  off_resonance,
  diffusion,
  velocity,
  pool_fraction,  // second free pool's share of M0
  pool_t1,
  pool_t2,
  pool_exchange,   // rate from the first free pool to the second [1/s]
  bound_fraction,  // bound pool's share of M0
  bound_t1,
  bound_exchange,  // rate from the free pool it touches to the bound pool [1/s]
  t2_prime,        // intra-voxel frequency spread (Lorentzian): T2* = 1 / (1/T2 + 1/T2')
};
inline constexpr std::array<Property, 15> all_properties = {Property::m0,
                                                            Property::t1,
                                                            Property::t2,
                                                            Property::b1,
                                                            Property::off_resonance,
                                                            Property::diffusion,
                                                            Property::velocity,
                                                            Property::pool_fraction,
                                                            Property::pool_t1,
                                                            Property::pool_t2,
                                                            Property::pool_exchange,
                                                            Property::bound_fraction,
                                                            Property::bound_t1,
                                                            Property::bound_exchange,
                                                            Property::t2_prime};

// Name used in decks and files ("t1_ms" etc. carry their unit in the name).
const char* deck_name(Property p);
const char* units(Property p);
// Factor from deck units to the kernels' SI units (ms -> s for T1 and T2).
double to_si(Property p);
// The value at which the property has no effect.
double identity_si(Property p);

struct PropertyValues {
  float uniform = 0.0f;    // SI
  std::vector<float> map;  // SI, one per voxel; empty means uniform
  bool is_map() const { return !map.empty(); }
  // Uniform at `identity`: the property has no effect and costs nothing.
  bool is_identity_in(float identity) const { return map.empty() && uniform == identity; }
  float at(std::int64_t voxel) const { return map.empty() ? uniform : map[std::size_t(voxel)]; }
};

struct Tissue {
  std::int64_t voxels = 0;
  PropertyValues m0{1.0f, {}};
  PropertyValues t1_s{std::numeric_limits<float>::infinity(), {}};
  PropertyValues t2_s{std::numeric_limits<float>::infinity(), {}};
  PropertyValues b1{1.0f, {}};
  PropertyValues df_hz{0.0f, {}};
  PropertyValues adc_m2_s{0.0f, {}};      // apparent diffusion coefficient
  PropertyValues velocity_m_s{0.0f, {}};  // along the crusher's axis (through-plane)
  // Pooled models (identity: no second pool, no bound pool).
  PropertyValues pool_fraction{0.0f, {}};
  PropertyValues pool_t1_s{std::numeric_limits<float>::infinity(), {}};
  PropertyValues pool_t2_s{std::numeric_limits<float>::infinity(), {}};
  PropertyValues pool_exchange_hz{0.0f, {}};
  PropertyValues bound_fraction{0.0f, {}};
  PropertyValues bound_t1_s{std::numeric_limits<float>::infinity(), {}};
  PropertyValues bound_exchange_hz{0.0f, {}};
  // The Lorentzian spread of frequencies within a voxel (reversible decay,
  // T2'); the isochromat engine plays it, EPG refuses it.
  PropertyValues t2_prime_s{std::numeric_limits<float>::infinity(), {}};
  // The bound pool's absorption lineshape and T2 (model constants).
  Lineshape bound_lineshape = Lineshape::super_lorentzian;
  double bound_t2_s = 12e-6;

  bool has_second_pool() const { return !pool_fraction.is_identity_in(0.0f); }
  bool has_bound_pool() const { return !bound_fraction.is_identity_in(0.0f); }
  // A finite T2' at some voxel (a map of infinities spreads nothing).
  bool has_frequency_spread() const;
  // Per-channel complex transmit fields of a transmit array, relative to the
  // nominal field: transmit[voxel * transmit_channels + channel]. Empty: one
  // channel, the scalar b1 only. Combined per pulse by the sequence's shim
  // weights (sequence::TransmitShims); b1 still scales the result.
  int transmit_channels = 0;
  std::vector<std::complex<float>> transmit;

  PropertyValues& operator[](Property p);
  const PropertyValues& operator[](Property p) const;

  // Refuses NaN, and negative or zero values where they are unphysical (T1,
  // T2 > 0; M0, B1, ADC, exchange rates >= 0; fractions in [0, 1) with a free
  // share left; off-resonance, velocity and transmit fields finite; a second
  // pool's T1 and T2 given with its fraction), naming `source`, the property
  // and the first bad voxel.
  // Voxels whose values are valid but unlikely in tissue, for warnings: T2
  // above T1, or B1 outside 0.3-2.
  struct Implausible {
    std::int64_t t2_above_t1 = 0, b1_outside = 0;
  };
  Implausible count_implausible() const;
  // `names`: the volume's linear index of each voxel, for messages.
  void validate(const std::string& source, const std::vector<std::int64_t>* names = nullptr) const;

  // Voxels [begin, end) as a tissue of their own (uniform stays uniform).
  Tissue slice(std::int64_t begin, std::int64_t end) const;
};

}  // namespace larmor::tissue
