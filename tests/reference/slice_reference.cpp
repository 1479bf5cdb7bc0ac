#include "reference/slice_reference.hpp"

#include <cmath>
#include <stdexcept>

#include "sequence/slice_profile.hpp"

namespace larmor::reference {

namespace {
using Vec = std::array<double, 3>;
constexpr double kPi = 3.14159265358979323846;

Vec cross(const Vec& a, const Vec& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
}  // namespace

Rotation shaped_pulse_matrix(const larmor::sequence::SliceProfileSpec& s,
                             const std::vector<double>& waveform, double z, double flip_rad,
                             double phase_rad, int steps) {
  double area = 0.0;
  for (double v : waveform) area += v;
  const double n = double(waveform.size());
  const double off = 2.0 * kPi * s.time_bandwidth * z / s.thickness;  // rad per duration
  const double h = 1.0 / (n * steps);
  const double back = -s.rephase * off, cb = std::cos(back), sb = std::sin(back);
  Rotation r{};
  for (int column = 0; column < 3; ++column) {
    Vec m{0.0, 0.0, 0.0};
    m[std::size_t(column)] = 1.0;
    for (double v : waveform) {
      const double w1 = flip_rad * v * n / area;
      const Vec w{w1 * std::cos(phase_rad), w1 * std::sin(phase_rad), off};
      for (int k = 0; k < steps; ++k) {
        const Vec k1 = cross(w, m);
        Vec t;
        for (int i = 0; i < 3; ++i) t[i] = m[i] + 0.5 * h * k1[i];
        const Vec k2 = cross(w, t);
        for (int i = 0; i < 3; ++i) t[i] = m[i] + 0.5 * h * k2[i];
        const Vec k3 = cross(w, t);
        for (int i = 0; i < 3; ++i) t[i] = m[i] + h * k3[i];
        const Vec k4 = cross(w, t);
        for (int i = 0; i < 3; ++i) m[i] += h / 6.0 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
      }
    }
    r[0][std::size_t(column)] = cb * m[0] - sb * m[1];
    r[1][std::size_t(column)] = sb * m[0] + cb * m[1];
    r[2][std::size_t(column)] = m[2];
  }
  return r;
}

std::vector<Complex> simulate_across_slice(const larmor::sequence::Description& d,
                                           const Tissue& tissue, int n_isochromats) {
  if (d.slice_profiles.empty()) throw std::invalid_argument("reference: no slice profiles");
  const int positions = d.slice_profiles.front().positions;
  const double extent = d.slice_profiles.front().extent, width = extent / positions;
  std::vector<std::vector<double>> waveforms;
  for (const auto& s : d.slice_profiles) waveforms.push_back(larmor::sequence::pulse_waveform(s));
  std::vector<Complex> sum;
  for (int j = 0; j < positions; ++j) {
    const double z = -0.5 * extent + (j + 0.5) * width;
    const auto pulse = [&](std::size_t i) {
      const auto& e = d.events[i];
      // A transmit array's field scales the RF and turns its phase.
      const Complex b = transmit_field(d, tissue, e.shim_index);
      const double b1 = (e.action & larmor::sequence::action::b1_fixed) != 0 ? 1.0 : tissue.b1;
      const double flip = e.flip_rad * b1 * std::abs(b), phase = e.phase_rad + std::arg(b);
      if (e.slice_profile == 0) {
        // The instantaneous pulse as a shaped pulse of one sample at the centre.
        larmor::sequence::SliceProfileSpec hard;
        return shaped_pulse_matrix(hard, {1.0}, 0.0, flip, phase, 64);
      }
      const std::size_t p = std::size_t(e.slice_profile - 1);
      return shaped_pulse_matrix(d.slice_profiles[p], waveforms[p], z, flip, phase);
    };
    const auto samples = simulate_isochromats(d, tissue, n_isochromats, pulse);
    sum.resize(samples.size(), Complex(0.0));
    for (std::size_t k = 0; k < samples.size(); ++k) sum[k] += width * samples[k];
  }
  return sum;
}

}  // namespace larmor::reference
