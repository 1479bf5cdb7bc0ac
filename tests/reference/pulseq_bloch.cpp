// Isochromat Bloch reference for Pulseq files; see pulseq_bloch.hpp.
//
// Each block is cut at its breakpoints: its edges, every corner of every
// gradient waveform, the RF cells (and their sub-steps), and every ADC sample.
// Between two consecutive breakpoints every gradient is linear in time, so its
// value at the midpoint is its exact mean over the interval; without RF the
// spin only turns about z, which commutes with relaxation, so the step is
// exact. With RF the field is (w1 cos p(t), w1 sin p(t), wz) with
// p(t) = p0 + 2 pi f (t - t0) for a frequency offset f. In the frame that
// turns about z with the RF phase the field is static,
// (w1 cos p0, w1 sin p0, wz - 2 pi f), so the step is that rotation followed
// by a turn of 2 pi f dt about z, exact for a constant envelope and gradient.
// With rf_uniform_across_spins the field is the voxel centre's for every spin,
// so each step is one matrix applied to all of them.
#include "reference/pulseq_bloch.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "reference/pulseq_bloch_events.hpp"

namespace larmor::reference {
namespace {

using namespace bloch_detail;

// exp(-t/T), T = infinity meaning none.
double decay(double duration_s, double time_constant_s) {
  return std::isinf(time_constant_s) ? 1.0 : std::exp(-duration_s / time_constant_s);
}

// Spins as structure of arrays.
struct Spins {
  std::vector<double> px, py, pz, w;
  std::vector<double> mx, my, mz;
  std::size_t size() const { return px.size(); }
};

Spins make_spins(const BlochOptions& options, double m0) {
  Spins s;
  std::vector<std::array<double, 3>> positions = options.positions_m;
  if (positions.empty()) positions.push_back({0.0, 0.0, 0.0});
  const std::size_t n = positions.size();
  for (const auto& p : positions) {
    s.px.push_back(p[0]);
    s.py.push_back(p[1]);
    s.pz.push_back(p[2]);
  }
  if (options.weights.empty()) {
    s.w.assign(n, 1.0);
  } else {
    if (options.weights.size() != n) {
      throw std::invalid_argument("pulseq_bloch: one weight per spin is needed");
    }
    double sum = 0.0;
    for (double w : options.weights) sum += w;
    if (!(sum > 0.0)) throw std::invalid_argument("pulseq_bloch: weights must sum to > 0");
    for (double w : options.weights) s.w.push_back(w * static_cast<double>(n) / sum);
  }
  s.mx.assign(n, 0.0);
  s.my.assign(n, 0.0);
  s.mz.assign(n, m0);
  return s;
}

// Relaxation factors over one interval.
struct Relaxation {
  double e1, e2, recovery;
  Relaxation(double dt, const Tissue& tissue)
      : e1(decay(dt, tissue.t1_s)),
        e2(decay(dt, tissue.t2_s)),
        recovery(tissue.m0 * (1.0 - decay(dt, tissue.t1_s))) {}
  void apply(double& mx, double& my, double& mz) const {
    mx *= e2;
    my *= e2;
    mz = mz * e1 + recovery;
  }
};

// sin and cos; the steps' angles are mostly tiny, where a Taylor series
// (truncation below double round-off for |a| < 0.1) is much cheaper than libm.
inline void sin_cos(double a, double& s, double& c) {
  if (std::abs(a) < 0.1) {
    // Horner in a^2 with the reciprocal factorial ratios as constants.
    constexpr double s3 = 1.0 / 6, s5 = 1.0 / 20, s7 = 1.0 / 42, s9 = 1.0 / 72;
    constexpr double c2 = 1.0 / 2, c4 = 1.0 / 12, c6 = 1.0 / 30, c8 = 1.0 / 56, c10 = 1.0 / 90;
    const double q = a * a;
    s = a * (1 - q * s3 * (1 - q * s5 * (1 - q * s7 * (1 - q * s9))));
    c = 1 - q * c2 * (1 - q * c4 * (1 - q * c6 * (1 - q * c8 * (1 - q * c10))));
    return;
  }
  s = std::sin(a);
  c = std::cos(a);
}

void turn_about_z(double& mx, double& my, double c, double s) {
  const double x = mx;
  mx = c * x - s * my;
  my = s * x + c * my;
}

// Free precession and relaxation over dt, exact.
void free_step(Spins& s, double dt, const std::array<double, 3>& g, const Tissue& tissue) {
  const Relaxation relax(dt, tissue);
  const double common = kTwoPi * tissue.df_hz * dt;
  const bool uniform = g[0] == 0.0 && g[1] == 0.0 && g[2] == 0.0;
  double c = 0.0, sn = 0.0;
  sin_cos(common, sn, c);
  for (std::size_t j = 0; j < s.size(); ++j) {
    if (!uniform) {
      sin_cos(common + kTwoPi * (g[0] * s.px[j] + g[1] * s.py[j] + g[2] * s.pz[j]) * dt, sn, c);
    }
    turn_about_z(s.mx[j], s.my[j], c, sn);
    relax.apply(s.mx[j], s.my[j], s.mz[j]);
  }
}

// One RF step: relax dt/2, rotate about the field in the frame turning with the
// RF offset, turn that frame back by 2 pi f dt, relax dt/2. With `centre` every
// spin is turned as one there: one rotation, computed once, for all.
void rf_step(Spins& s, double dt, const std::array<double, 3>& g, Complex w1, double freq_hz,
             const Tissue& tissue, const std::array<double, 3>* centre) {
  const Relaxation half(0.5 * dt, tissue);
  const double wx = w1.real(), wy = w1.imag();
  double cf = 1.0, sf = 0.0;
  sin_cos(kTwoPi * freq_hz * dt, sf, cf);
  double nx = 0.0, ny = 0.0, nz = 0.0, c = 1.0, sn = 0.0;  // no field: no turn
  const auto field_at = [&](double px, double py, double pz) {
    const double wz = kTwoPi * (tissue.df_hz + g[0] * px + g[1] * py + g[2] * pz - freq_hz);
    const double rate = std::sqrt(wx * wx + wy * wy + wz * wz);
    if (!(rate > 0.0)) return;
    const double inverse = 1.0 / rate;
    nx = wx * inverse, ny = wy * inverse, nz = wz * inverse;
    sin_cos(rate * dt, sn, c);
  };
  if (centre != nullptr) field_at((*centre)[0], (*centre)[1], (*centre)[2]);
  for (std::size_t j = 0; j < s.size(); ++j) {
    double x = s.mx[j], y = s.my[j], z = s.mz[j];
    half.apply(x, y, z);
    if (centre == nullptr) field_at(s.px[j], s.py[j], s.pz[j]);
    const double along = (nx * x + ny * y + nz * z) * (1.0 - c);
    // Rodrigues: v c + (n x v) sin + n (n.v)(1 - c).
    const double rx = x * c + (ny * z - nz * y) * sn + nx * along;
    const double ry = y * c + (nz * x - nx * z) * sn + ny * along;
    z = z * c + (nx * y - ny * x) * sn + nz * along;
    x = rx;
    y = ry;
    turn_about_z(x, y, cf, sf);
    half.apply(x, y, z);
    s.mx[j] = x;
    s.my[j] = y;
    s.mz[j] = z;
  }
}

// Turns spin j about z by angles[j].
void turn_spins(Spins& s, const std::vector<double>& angles) {
  double c = 1.0, sn = 0.0;
  for (std::size_t j = 0; j < s.size(); ++j) {
    sin_cos(angles[j], sn, c);
    turn_about_z(s.mx[j], s.my[j], c, sn);
  }
}

}  // namespace

std::vector<std::array<double, 3>> spins_over_one_turn(const std::array<double, 3>& moment_per_m,
                                                       int n) {
  const double norm2 = moment_per_m[0] * moment_per_m[0] + moment_per_m[1] * moment_per_m[1] +
                       moment_per_m[2] * moment_per_m[2];
  if (n < 1 || !(norm2 > 0.0) || !std::isfinite(norm2)) {
    throw std::invalid_argument("spins_over_one_turn: needs n >= 1 and a finite non-zero moment");
  }
  std::vector<std::array<double, 3>> positions;
  positions.reserve(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j) {
    const double s = (j + 0.5) / n / norm2;
    positions.push_back({s * moment_per_m[0], s * moment_per_m[1], s * moment_per_m[2]});
  }
  return positions;
}

std::vector<std::array<double, 3>> box_positions(const std::array<double, 3>& edges_m,
                                                 const std::array<double, 3>& centre_m,
                                                 const std::array<int, 3>& counts) {
  std::vector<std::array<double, 3>> positions;
  for (int i = 0; i < counts[0]; ++i) {
    for (int j = 0; j < counts[1]; ++j) {
      for (int k = 0; k < counts[2]; ++k) {
        const int index[3] = {i, j, k};
        std::array<double, 3> x{};
        for (std::size_t a = 0; a < 3; ++a) {
          x[a] = centre_m[a] + ((index[a] + 0.5) / counts[a] - 0.5) * edges_m[a];
        }
        positions.push_back(x);
      }
    }
  }
  return positions;
}

std::vector<BlochSample> simulate_pulseq_bloch(const pq::PulseqFile& file, const Tissue& tissue,
                                               const BlochOptions& options) {
  if (!(tissue.t1_s > 0.0) || !(tissue.t2_s > 0.0)) {
    throw std::invalid_argument("pulseq_bloch: T1 and T2 must be positive (or infinite)");
  }
  if (options.rf_substeps < 1) throw std::invalid_argument("pulseq_bloch: rf_substeps < 1");
  Spins spins = make_spins(options, tissue.m0);
  const double n_spins = static_cast<double>(spins.size());
  const double gradient_raster = file.definitions.gradient_raster_s;
  const bool stated_durations = file.version.at_least(1, 4);

  std::vector<BlochSample> samples;
  const auto full = [&] {
    return options.max_samples >= 0 &&
           static_cast<long long>(samples.size()) >= options.max_samples;
  };
  double block_start = 0.0;
  std::vector<double> points;
  const std::array<double, 3>& centre = options.centre_m;
  std::vector<double> before_centre, after_centre;  // per spin, rad
  for (const pq::Block& block : file.blocks) {
    if (full()) break;
    const std::string name = block_name(block);
    const std::array<Knots, 3> logical = {gradient_knots(file, block.gx, gradient_raster, name),
                                          gradient_knots(file, block.gy, gradient_raster, name),
                                          gradient_knots(file, block.gz, gradient_raster, name)};
    const Matrix rotation = block_rotation(file, block);
    const RfPlay rf = place_rf(file, block, tissue);
    const AdcPlay adc = place_adc(file, block);

    double events_end = std::max(rf.end, adc.end);
    for (const Knots& k : logical) events_end = std::max(events_end, k.end());
    double duration =
        stated_durations ? block.duration_s : derived_duration(file, block, events_end);
    // Files on rasters that are not whole microseconds (tabletop systems) let
    // events overrun their block by less than one raster cell: the block
    // lasts until they end.
    const auto& defs = file.definitions;
    const double cell =
        std::max({defs.gradient_raster_s, defs.rf_raster_s, defs.block_duration_raster_s});
    if (stated_durations && events_end > duration && events_end <= duration + cell) {
      duration = events_end;
    }
    if (events_end > duration + 1e-9 * std::max(1.0, duration)) {
      fail(file, name + ": its events end after the block's duration");
    }

    points.clear();
    points.push_back(0.0);
    points.push_back(duration);
    for (const Knots& k : logical) points.insert(points.end(), k.t.begin(), k.t.end());
    if (rf.present) rf.add_breakpoints(points, options.rf_substeps);
    points.insert(points.end(), adc.times.begin(), adc.times.end());
    for (double& p : points) p = std::clamp(p, 0.0, duration);
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());

    // Uniform RF: the gradient's phase across the spins during the pulse, split
    // at its centre; applied around the pulse's steps.
    const bool uniform_rf = options.rf_uniform_across_spins && rf.present;
    bool turned_before = false;
    if (uniform_rf) {
      const double a = std::clamp(rf.start, 0.0, duration);
      const double b = std::clamp(rf.end, 0.0, duration);
      const double tc = std::clamp(rf.centre, a, b);
      std::array<double, 3> before{}, after{};  // physical moments, 1/m
      for (int l = 0; l < 3; ++l) {
        const double lb = logical[l].integral(a, tc), la = logical[l].integral(tc, b);
        for (int k = 0; k < 3; ++k) {
          before[k] += rotation[k][l] * lb;
          after[k] += rotation[k][l] * la;
        }
      }
      before_centre.resize(spins.size());
      after_centre.resize(spins.size());
      for (std::size_t j = 0; j < spins.size(); ++j) {
        const double d[3] = {spins.px[j] - centre[0], spins.py[j] - centre[1],
                             spins.pz[j] - centre[2]};
        before_centre[j] = kTwoPi * (before[0] * d[0] + before[1] * d[1] + before[2] * d[2]);
        after_centre[j] = kTwoPi * (after[0] * d[0] + after[1] * d[1] + after[2] * d[2]);
      }
    }

    std::size_t next_sample = 0;
    for (std::size_t i = 0; i + 1 < points.size(); ++i) {
      const double t0 = points[i], t1 = points[i + 1];
      if (block_start + t1 > options.end_time_s) return samples;
      const double dt = t1 - t0, mid = 0.5 * (t0 + t1);
      const std::array<double, 3> gl = {logical[0].at(mid), logical[1].at(mid), logical[2].at(mid)};
      std::array<double, 3> g{};
      for (int a = 0; a < 3; ++a) {
        g[a] = rotation[a][0] * gl[0] + rotation[a][1] * gl[1] + rotation[a][2] * gl[2];
      }
      if (rf.present && mid > rf.start && mid < rf.end) {
        const Complex w1 =
            rf.scale * rf.envelope(mid) * std::polar(1.0, kTwoPi * rf.freq_hz * (t0 - rf.origin));
        if (uniform_rf && !turned_before) turn_spins(spins, before_centre);
        turned_before = true;
        rf_step(spins, dt, g, w1, rf.freq_hz, tissue, uniform_rf ? &centre : nullptr);
        const bool last = i + 2 >= points.size() || 0.5 * (t1 + points[i + 2]) >= rf.end;
        if (uniform_rf && last) turn_spins(spins, after_centre);
      } else {
        free_step(spins, dt, g, tissue);
      }
      while (next_sample < adc.times.size() && adc.times[next_sample] <= t1) {
        Complex sum{0.0, 0.0};
        for (std::size_t j = 0; j < spins.size(); ++j) {
          sum += spins.w[j] * Complex(spins.mx[j], spins.my[j]);
        }
        samples.push_back({block_start + adc.times[next_sample], block.id,
                           static_cast<int>(next_sample),
                           sum / n_spins * adc.demodulation[next_sample]});
        ++next_sample;
        if (full()) return samples;
      }
    }
    block_start += duration;
  }
  return samples;
}

}  // namespace larmor::reference
