#include "sequence/slice_profile.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <thread>

namespace larmor::sequence {

namespace {

constexpr double pi = 3.14159265358979323846;

// A number and its derivative along the flip: the table stores both, and the
// derivative must be the exact one of the integrated rotation.
struct Tangent {
  double v = 0.0, d = 0.0;
};
Tangent operator+(Tangent a, Tangent b) { return {a.v + b.v, a.d + b.d}; }
Tangent operator-(Tangent a, Tangent b) { return {a.v - b.v, a.d - b.d}; }
Tangent operator*(Tangent a, Tangent b) { return {a.v * b.v, a.d * b.v + a.v * b.d}; }
Tangent operator*(double a, Tangent b) { return {a * b.v, a * b.d}; }

using TangentQuaternion = std::array<Tangent, 4>;

// q = r (x) q: r applied after q.
TangentQuaternion compose(const TangentQuaternion& r, const TangentQuaternion& q) {
  return {r[0] * q[0] - r[1] * q[1] - r[2] * q[2] - r[3] * q[3],
          r[0] * q[1] + r[1] * q[0] + r[2] * q[3] - r[3] * q[2],
          r[0] * q[2] - r[1] * q[3] + r[2] * q[0] + r[3] * q[1],
          r[0] * q[3] + r[1] * q[2] - r[2] * q[1] + r[3] * q[0]};
}

// The right-handed turn by |w| about w = (wx, wy, wz), exactly.
TangentQuaternion turn(Tangent wx, Tangent wy, Tangent wz) {
  const Tangent n2 = wx * wx + wy * wy + wz * wz;
  // At no turn the axis is undefined but the derivative is not: q = (1, w/2).
  if (n2.v == 0.0) return {Tangent{1.0, 0.0}, 0.5 * wx, 0.5 * wy, 0.5 * wz};
  const double n = std::sqrt(n2.v);
  const Tangent norm{n, 0.5 * n2.d / n};
  const Tangent c{std::cos(0.5 * n), -0.5 * std::sin(0.5 * n) * norm.d};
  // sin(n/2)/n and its derivative along n.
  const double sinc = std::sin(0.5 * n) / n;
  // Its series below 1e-3, where the closed form cancels.
  const double d_sinc =
      n < 1e-3 ? -n / 24.0 : (0.5 * std::cos(0.5 * n) * n - std::sin(0.5 * n)) / (n * n);
  const Tangent k{sinc, d_sinc * norm.d};
  return {c, k * wx, k * wy, k * wz};
}

void refuse(const SliceProfileSpec& s, const std::string& what) {
  throw std::invalid_argument("slice profile '" + s.name + "': " + what);
}

void validate(const SliceProfileSpec& s) {
  const auto positive = [&](double v, const char* key) {
    if (!std::isfinite(v) || v <= 0.0) refuse(s, std::string(key) + " must be finite and > 0");
  };
  positive(s.time_bandwidth, "time_bandwidth");
  positive(s.thickness, "thickness");
  positive(s.extent, "extent");
  if (!std::isfinite(s.rephase) || s.rephase < 0.0 || s.rephase > 1.0) {
    refuse(s, "rephase must lie in [0, 1]");
  }
  if (s.positions < 1 || s.positions > 4096) refuse(s, "positions must lie in [1, 4096]");
  if (s.flip_nodes < 4 || s.flip_nodes > 4096) refuse(s, "flip_nodes must lie in [4, 4096]");
  if (!s.played.empty()) {
    const PlayedPulse& p = s.played;
    const std::size_t n = p.amplitude_rad_s.size();
    if (n > 1u << 20) refuse(s, "the played pulse has more than 2^20 samples");
    if (p.dt_s.size() != n || p.centre_cycles.size() != n || p.slope_cycles.size() != n) {
      refuse(s, "the played pulse's samples, durations and precessions differ in number");
    }
    std::complex<double> area = 0.0;
    for (std::size_t k = 0; k < n; ++k) {
      if (!std::isfinite(std::abs(p.amplitude_rad_s[k])) || !(p.dt_s[k] >= 0.0) ||
          !std::isfinite(p.dt_s[k]) || !std::isfinite(p.centre_cycles[k]) ||
          !std::isfinite(p.slope_cycles[k])) {
        refuse(s, "the played pulse has a sample that is not finite");
      }
      area += p.amplitude_rad_s[k] * p.dt_s[k];
    }
    if (!(std::abs(area) > 0.0)) refuse(s, "the played pulse has zero area (no flip to scale)");
    if (!std::isfinite(p.pre_centre_cycles + p.pre_slope_cycles + p.post_centre_cycles +
                       p.post_slope_cycles)) {
      refuse(s, "the played pulse's turns before and after it are not finite");
    }
  }
  if (s.waveform.size() > 1u << 20) refuse(s, "waveform has more than 2^20 samples");
  double area = 0.0;
  for (double v : s.waveform) {
    if (!std::isfinite(v)) refuse(s, "waveform has a sample that is not finite");
    area += v;
  }
  if (!s.waveform.empty() && area == 0.0) refuse(s, "waveform has zero area (no flip to scale)");
}

}  // namespace

std::vector<double> hann_windowed_sinc(double time_bandwidth, int samples) {
  std::vector<double> w(std::size_t(std::max(samples, 1)));
  for (std::size_t k = 0; k < w.size(); ++k) {
    const double tau = (double(k) + 0.5) / double(w.size()) - 0.5;  // [-1/2, 1/2]
    const double x = pi * time_bandwidth * tau;
    const double sinc = x == 0.0 ? 1.0 : std::sin(x) / x;
    w[k] = sinc * (0.5 + 0.5 * std::cos(2.0 * pi * tau));
  }
  return w;
}

std::vector<double> pulse_waveform(const SliceProfileSpec& spec) {
  return spec.waveform.empty() ? hann_windowed_sinc(spec.time_bandwidth, 256) : spec.waveform;
}

namespace {

// A played pulse (PlayedPulse) at position z and effective flip: each
// sample's exact rotation, scaled along the flip, between the turns about z.
Quaternion played_pulse_rotation(const PlayedPulse& p, double z, double flip, Quaternion* d_flip) {
  std::complex<double> area = 0.0;
  for (std::size_t k = 0; k < p.amplitude_rad_s.size(); ++k) {
    area += p.amplitude_rad_s[k] * p.dt_s[k];
  }
  const double a = std::abs(area);
  const Tangent scale{flip / a, 1.0 / a};
  const auto about_z = [&](double cycles) {
    return turn(Tangent{}, Tangent{}, Tangent{2.0 * pi * cycles, 0.0});
  };
  TangentQuaternion q = about_z(p.pre_centre_cycles + p.pre_slope_cycles * z);
  for (std::size_t k = 0; k < p.amplitude_rad_s.size(); ++k) {
    const std::complex<double> w = p.amplitude_rad_s[k] * p.dt_s[k];
    const double precession = 2.0 * pi * (p.centre_cycles[k] + p.slope_cycles[k] * z);
    q = compose(turn(w.real() * scale, w.imag() * scale, Tangent{precession, 0.0}), q);
  }
  q = compose(about_z(p.post_centre_cycles + p.post_slope_cycles * z), q);
  if (d_flip != nullptr) *d_flip = {q[0].d, q[1].d, q[2].d, q[3].d};
  return {q[0].v, q[1].v, q[2].v, q[3].v};
}

}  // namespace

Quaternion shaped_pulse_rotation(const SliceProfileSpec& spec, const std::vector<double>& waveform,
                                 double z, double flip, Quaternion* d_flip) {
  if (!spec.played.empty()) return played_pulse_rotation(spec.played, z, flip, d_flip);
  // Time in units of the pulse's duration: the gradient puts position z (of
  // this pulse's slice) at 2 pi TBW z radians per duration off resonance,
  // and the samples' amplitudes are scaled so that their area is the flip.
  double area = 0.0;
  for (double v : waveform) area += v;
  const double offset =
      2.0 * pi * spec.time_bandwidth * z / spec.thickness / double(waveform.size());
  const Tangent scale{flip / area, 1.0 / area};
  TangentQuaternion q{Tangent{1.0, 0.0}, Tangent{}, Tangent{}, Tangent{}};
  for (double v : waveform) q = compose(turn(v * scale, Tangent{}, Tangent{offset, 0.0}), q);
  // The rephasing lobe: a turn about z back by its share of the gradient area.
  const double back = -spec.rephase * offset * double(waveform.size());
  q = compose(turn(Tangent{}, Tangent{}, Tangent{back, 0.0}), q);
  if (d_flip != nullptr) *d_flip = {q[0].d, q[1].d, q[2].d, q[3].d};
  return {q[0].v, q[1].v, q[2].v, q[3].v};
}

void validate_slice_profiles(const Description& d) {
  for (const auto& s : d.slice_profiles) validate(s);
  for (const auto& s : d.slice_profiles) {
    const SliceProfileSpec& first = d.slice_profiles.front();
    if (s.positions != first.positions || s.extent != first.extent) {
      refuse(s, "every slice profile of a sequence samples the same positions: positions " +
                    std::to_string(s.positions) + " and extent " + std::to_string(s.extent) +
                    " differ from '" + first.name + "'");
    }
  }
}

SliceProfileTable build_slice_profile_table(const Description& d) {
  SliceProfileTable t;
  if (d.slice_profiles.empty()) return t;
  validate_slice_profiles(d);
  const SliceProfileSpec& first = d.slice_profiles.front();
  t.profiles = int(d.slice_profiles.size());
  t.positions = first.positions;
  t.extent = first.extent;
  t.flip_nodes = first.flip_nodes;
  for (const auto& s : d.slice_profiles) t.flip_nodes = std::max(t.flip_nodes, s.flip_nodes);
  const double width = t.extent / t.positions;
  for (int j = 0; j < t.positions; ++j) {
    t.position.push_back(-0.5 * t.extent + (j + 0.5) * width);
    t.position_weight.push_back(width);
  }
  // Each profile's flips reach max_b1 x the largest nominal flip that uses it.
  std::vector<double> largest(std::size_t(t.profiles), 0.0);
  for (const auto& e : d.events) {
    if (e.kind == EventKind::pulse && e.slice_profile > 0 && e.slice_profile <= t.profiles) {
      auto& m = largest[std::size_t(e.slice_profile - 1)];
      m = std::max(m, std::abs(e.flip_rad));
    }
  }
  const double entries = double(t.profiles) * t.positions * t.flip_nodes * 8.0;
  if (entries > double(std::numeric_limits<std::int32_t>::max())) {
    refuse(first, "profiles x positions x flip_nodes x 8 do not fit a 32-bit index");
  }
  t.nodes.assign(std::size_t(entries), 0.0f);
  std::vector<std::vector<double>> waveforms;
  for (int p = 0; p < t.profiles; ++p) {
    const auto& spec = d.slice_profiles[std::size_t(p)];
    waveforms.push_back(pulse_waveform(spec));
    const double top =
        largest[std::size_t(p)] > 0.0 ? slice_profile_max_b1 * largest[std::size_t(p)] : 1.0;
    t.max_flip.push_back(top);
    t.flip_step.push_back(top / (t.flip_nodes - 1));
  }
  // Every (profile, position) row on its own: the rows are spread over the
  // host's threads (a file's pulses, played sample by sample at many
  // positions, are thousands of rotations per node).
  const auto fill_row = [&](std::size_t row) {
    const std::size_t p = row / std::size_t(t.positions), j = row % std::size_t(t.positions);
    const auto& spec = d.slice_profiles[p];
    for (int n = 0; n < t.flip_nodes; ++n) {
      Quaternion dq;
      const Quaternion q =
          shaped_pulse_rotation(spec, waveforms[p], t.position[j], n * t.flip_step[p], &dq);
      float* out = &t.nodes[((p * std::size_t(t.positions) + j) * std::size_t(t.flip_nodes) +
                             std::size_t(n)) *
                            8];
      for (int c = 0; c < 4; ++c) {
        out[c] = float(q[std::size_t(c)]);
        out[4 + c] = float(dq[std::size_t(c)]);
      }
    }
  };
  const std::size_t rows = std::size_t(t.profiles) * std::size_t(t.positions);
  const std::size_t workers =
      std::min<std::size_t>(rows, std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  for (std::size_t w = 1; w < workers; ++w) {
    pool.emplace_back([&] {
      for (std::size_t row; (row = next++) < rows;) fill_row(row);
    });
  }
  for (std::size_t row; (row = next++) < rows;) fill_row(row);
  for (auto& thread : pool) thread.join();
  return t;
}

}  // namespace larmor::sequence
