// Gradient waveforms and shape sampling for the translation: each block's
// gradients as piecewise-linear pieces with running moments, so that the
// moment at any instant is a binary search, not a sum over the waveform.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "io/pulseq/pulseq_detail.hpp"

namespace larmor::io::pulseq::detail {

void Failure::operator()(int first_block, int last_block, const std::string& why) const {
  std::ostringstream s;
  s << file.path << ": block" << (first_block == last_block ? " " : "s ") << first_block;
  if (first_block != last_block) s << "-" << last_block;
  s << ": " << why;
  throw PulseqError(s.str());
}

void AxisWaveform::add(double t0, double t1, double g0, double g1) {
  const double before = cumulative.empty() ? 0.0 : cumulative.back();
  segments.push_back({t0, t1, g0, g1});
  cumulative.push_back(before + 0.5 * (g0 + g1) * std::max(0.0, t1 - t0));
}

double AxisWaveform::moment_until(double t) const {
  // The first piece that ends after t; everything before it is whole.
  const auto it = std::upper_bound(segments.begin(), segments.end(), t,
                                   [](double v, const Segment& s) { return v < s.t1; });
  const std::size_t i = std::size_t(it - segments.begin());
  double m = i > 0 ? cumulative[i - 1] : 0.0;
  if (i < segments.size()) {
    const Segment& s = segments[i];
    if (t > s.t0 && s.t1 > s.t0) {
      const double g_end = s.g0 + (s.g1 - s.g0) * (t - s.t0) / (s.t1 - s.t0);
      m += 0.5 * (s.g0 + g_end) * (t - s.t0);
    }
  }
  return m;
}

double AxisWaveform::value_at(double t) const {
  const auto it = std::upper_bound(segments.begin(), segments.end(), t,
                                   [](double v, const Segment& s) { return v < s.t1; });
  if (it == segments.end() || t < it->t0 || !(it->t1 > it->t0)) return 0.0;
  return it->g0 + (it->g1 - it->g0) * (t - it->t0) / (it->t1 - it->t0);
}

namespace {
Vec3 apply(const Mat3& r, const Vec3& v) { return {dot(r[0], v), dot(r[1], v), dot(r[2], v)}; }
}  // namespace

Vec3 BlockGradients::moment(double t_local) const {
  return apply(rotation, {axes[0].moment_until(t_local), axes[1].moment_until(t_local),
                          axes[2].moment_until(t_local)});
}

Vec3 BlockGradients::gradient(double t_local) const {
  return apply(rotation,
               {axes[0].value_at(t_local), axes[1].value_at(t_local), axes[2].value_at(t_local)});
}

bool BlockGradients::on_during(double t0, double t1) const {
  for (const AxisWaveform& axis : axes) {
    for (const AxisWaveform::Segment& s : axis.segments) {
      if (s.t1 > t0 && s.t0 < t1 && (s.g0 != 0.0 || s.g1 != 0.0)) return true;
    }
  }
  return false;
}

Sampling sampling_of(const PulseqFile& file, int samples, int time_shape, double raster, int block,
                     const Failure& fail, const char* what) {
  Sampling s;
  s.t.resize(samples);
  s.w.assign(samples, raster);
  if (time_shape == 0) {
    for (int n = 0; n < samples; ++n) s.t[n] = (n + 0.5) * raster;
    s.duration = samples * raster;
    return s;
  }
  const Shape* shape = file.find_shape(time_shape);
  if (shape == nullptr || shape->samples != samples) {
    fail(block, block,
         std::string(what) + ": time shape " + std::to_string(time_shape) +
             " is missing or does not match the waveform's sample count");
  }
  for (int n = 0; n < samples; ++n) {
    s.t[n] = shape->values[n] * raster;
    if (n > 0 && !(s.t[n] > s.t[n - 1])) {
      fail(block, block,
           std::string(what) + ": time shape " + std::to_string(time_shape) + " is not increasing");
    }
  }
  for (int n = 0; n < samples; ++n) {
    const double lo = n > 0 ? s.t[n - 1] : s.t[n];
    const double hi = n + 1 < samples ? s.t[n + 1] : s.t[n];
    s.w[n] = samples == 1 ? raster : 0.5 * (hi - lo);
  }
  s.duration = s.t.back();
  return s;
}

const Shape& shape_of(const PulseqFile& file, int id, int block, const Failure& fail,
                      const char* what) {
  const Shape* shape = file.find_shape(id);
  if (shape == nullptr || shape->samples <= 0) {
    fail(block, block, std::string(what) + ": shape " + std::to_string(id) + " is missing");
  }
  return *shape;
}

BlockGradients gradients_of(const PulseqFile& file, const Block& b, const Failure& fail) {
  BlockGradients out;
  const int ids[3] = {b.gx, b.gy, b.gz};
  for (int axis = 0; axis < 3; ++axis) {
    if (ids[axis] == 0) continue;
    AxisWaveform& w = out.axes[axis];
    if (const TrapEvent* t = file.find_trap(ids[axis])) {
      const double a = t->amplitude_hz_per_m, t0 = t->delay_s;
      const double t1 = t0 + t->rise_s, t2 = t1 + t->flat_s, t3 = t2 + t->fall_s;
      w.add(t0, t1, 0.0, a);
      w.add(t1, t2, a, a);
      w.add(t2, t3, a, 0.0);
      out.end = std::max(out.end, t3);
      continue;
    }
    const GradientEvent* g = file.find_gradient(ids[axis]);
    if (g == nullptr) fail(b.id, b.id, "gradient " + std::to_string(ids[axis]) + " is missing");
    const Shape& shape = shape_of(file, g->shape, b.id, fail, "gradient");
    const Sampling s = sampling_of(file, shape.samples, g->time_shape,
                                   file.definitions.gradient_raster_s, b.id, fail, "gradient");
    const double a = g->amplitude_hz_per_m, t0 = g->delay_s;
    if (g->time_shape == 0) {
      // Default raster: each sample holds for its cell.
      for (int n = 0; n < shape.samples; ++n) {
        const double v = a * shape.values[n];
        w.add(t0 + s.t[n] - 0.5 * s.w[n], t0 + s.t[n] + 0.5 * s.w[n], v, v);
      }
    } else {
      for (int n = 0; n + 1 < shape.samples; ++n) {
        w.add(t0 + s.t[n], t0 + s.t[n + 1], a * shape.values[n], a * shape.values[n + 1]);
      }
    }
    out.end = std::max(out.end, t0 + s.duration);
  }
  // ROTATIONS extension: the block's gradients are rotated (quaternion or
  // 3x3 matrix, both as written by Pulseq 1.5).
  for (int id = b.ext, guard = 0; id != 0 && guard < 1000; ++guard) {
    const auto row = file.extensions.find(id);
    if (row == file.extensions.end()) break;
    const auto spec = file.extension_specs.find(row->second.type);
    if (spec != file.extension_specs.end() && spec->second.name == "ROTATIONS") {
      const auto r = spec->second.rows.find(row->second.ref);
      if (r == spec->second.rows.end()) {
        fail(b.id, b.id, "ROTATIONS row " + std::to_string(row->second.ref) + " is missing");
      }
      const auto& v = r->second.values;
      if (v.size() == 4) {
        const double qw = v[0], x = v[1], y = v[2], z = v[3];
        out.rotation = {{{1 - 2 * (y * y + z * z), 2 * (x * y - qw * z), 2 * (x * z + qw * y)},
                         {2 * (x * y + qw * z), 1 - 2 * (x * x + z * z), 2 * (y * z - qw * x)},
                         {2 * (x * z - qw * y), 2 * (y * z + qw * x), 1 - 2 * (x * x + y * y)}}};
      } else if (v.size() == 9) {
        out.rotation = {{{v[0], v[1], v[2]}, {v[3], v[4], v[5]}, {v[6], v[7], v[8]}}};
      } else {
        fail(b.id, b.id, "ROTATIONS rows need 4 (quaternion) or 9 (matrix) values");
      }
    }
    id = row->second.next;
  }
  return out;
}

}  // namespace larmor::io::pulseq::detail
