#include "tissue/tissue.hpp"

#include <cmath>
#include <stdexcept>

namespace larmor::tissue {

const char* deck_name(Property p) {
  switch (p) {
    case Property::m0:
      return "m0";
    case Property::t1:
      return "t1_ms";
    case Property::t2:
      return "t2_ms";
    case Property::b1:
      return "b1";
    case Property::off_resonance:
      return "off_resonance_hz";
    case Property::diffusion:
      return "adc_um2_ms";
    case Property::velocity:
      return "velocity_cm_s";
  }
  return "?";
}

const char* units(Property p) {
  switch (p) {
    case Property::t1:
    case Property::t2:
      return "s";
    case Property::off_resonance:
      return "Hz";
    case Property::diffusion:
      return "m^2/s";
    case Property::velocity:
      return "m/s";
    default:
      return "1";
  }
}

double to_si(Property p) {
  switch (p) {
    case Property::t1:
    case Property::t2:
      return 1e-3;
    case Property::diffusion:
      return 1e-9;  // um^2/ms
    case Property::velocity:
      return 1e-2;  // cm/s
    default:
      return 1.0;
  }
}

double identity_si(Property p) {
  switch (p) {
    case Property::m0:
    case Property::b1:
      return 1.0;
    case Property::off_resonance:
    case Property::diffusion:
    case Property::velocity:
      return 0.0;
    default:
      return std::numeric_limits<double>::infinity();
  }
}

PropertyValues& Tissue::operator[](Property p) {
  switch (p) {
    case Property::m0:
      return m0;
    case Property::t1:
      return t1_s;
    case Property::t2:
      return t2_s;
    case Property::b1:
      return b1;
    case Property::off_resonance:
      return df_hz;
    case Property::diffusion:
      return adc_m2_s;
    case Property::velocity:
      return velocity_m_s;
  }
  throw std::logic_error("unknown tissue property");
}

const PropertyValues& Tissue::operator[](Property p) const { return const_cast<Tissue&>(*this)[p]; }

namespace {
bool acceptable(Property p, float v) {
  switch (p) {
    case Property::t1:
    case Property::t2:
      return !std::isnan(v) && v > 0.0f;  // infinity: no relaxation
    case Property::m0:
    case Property::b1:
    case Property::diffusion:
      return std::isfinite(v) && v >= 0.0f;
    case Property::off_resonance:
    case Property::velocity:
      return std::isfinite(v);
  }
  return false;
}
const char* requirement(Property p) {
  switch (p) {
    case Property::t1:
    case Property::t2:
      return "must be a positive number";
    case Property::m0:
    case Property::b1:
    case Property::diffusion:
      return "must be finite and non-negative";
    default:
      return "must be finite";
  }
}
}  // namespace

void Tissue::validate(const std::string& source) const {
  if (voxels < 0) throw std::invalid_argument(source + ": negative voxel count");
  for (Property p : all_properties) {
    const PropertyValues& v = (*this)[p];
    const double scale = 1.0 / to_si(p);  // report in deck units
    if (v.is_map()) {
      if (std::int64_t(v.map.size()) != voxels) {
        throw std::invalid_argument(source + ": map '" + deck_name(p) + "' has " +
                                    std::to_string(v.map.size()) + " values for " +
                                    std::to_string(voxels) + " voxels");
      }
      for (std::size_t i = 0; i < v.map.size(); ++i) {
        if (!acceptable(p, v.map[i])) {
          throw std::invalid_argument(source + ": " + deck_name(p) + " at voxel " +
                                      std::to_string(i) + " is " +
                                      std::to_string(v.map[i] * scale) + "; it " + requirement(p));
        }
      }
    } else if (!acceptable(p, v.uniform)) {
      throw std::invalid_argument(source + ": " + deck_name(p) + " = " +
                                  std::to_string(v.uniform * scale) + "; it " + requirement(p));
    }
  }
  if (transmit_channels < 0 || transmit.size() != std::size_t(transmit_channels > 0 ? voxels : 0) *
                                                      std::size_t(transmit_channels)) {
    throw std::invalid_argument(source + ": transmit maps hold " + std::to_string(transmit.size()) +
                                " values for " + std::to_string(voxels) + " voxels x " +
                                std::to_string(transmit_channels) + " channels");
  }
  for (std::size_t i = 0; i < transmit.size(); ++i) {
    if (!std::isfinite(transmit[i].real()) || !std::isfinite(transmit[i].imag())) {
      throw std::invalid_argument(
          source + ": transmit field of channel " +
          std::to_string(i % std::size_t(transmit_channels)) + " at voxel " +
          std::to_string(i / std::size_t(transmit_channels)) + " is not finite");
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
