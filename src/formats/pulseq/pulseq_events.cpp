// Pulseq -> larmor events (the rules are in pulseq_events.hpp and
// docs/pulseq.md). Three passes: lay the blocks on a time line and collect
// the instants (RF centres or samples, ADC samples); integrate the gradient
// moment vector up to every instant; quantise the moment of every gap.
#include "formats/pulseq/pulseq_events.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <sstream>

#include "formats/pulseq/pulseq_detail.hpp"

namespace larmor::formats::pulseq {
namespace {

constexpr double kTwoPi = 6.283185307179586;
constexpr double kGammaMHzPerT = 42.577478518;  // 1H
constexpr double kLongestBlockSeconds = 86400.0;
using Vec3 = std::array<double, 3>;
using Mat3 = std::array<Vec3, 3>;

double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
double norm(const Vec3& a) { return std::sqrt(dot(a, a)); }
Vec3 axpy(double s, const Vec3& x, const Vec3& y) {
  return {s * x[0] + y[0], s * x[1] + y[1], s * x[2] + y[2]};
}
Vec3 apply(const Mat3& r, const Vec3& v) { return {dot(r[0], v), dot(r[1], v), dot(r[2], v)}; }

struct Failure {
  const PulseqFile& file;
  [[noreturn]] void operator()(int first_block, int last_block, const std::string& why) const {
    std::ostringstream s;
    s << file.path << ": block" << (first_block == last_block ? " " : "s ") << first_block;
    if (first_block != last_block) s << "-" << last_block;
    s << ": " << why;
    throw PulseqError(s.str());
  }
};

// A gradient waveform piece, linear in block-local time.
struct Segment {
  double t0, t1, g0, g1;  // s, Hz/m
};

double moment_until(const std::vector<Segment>& segments, double t) {
  double m = 0.0;
  for (const Segment& s : segments) {
    if (t <= s.t0 || s.t1 <= s.t0) continue;
    const double end = std::min(t, s.t1);
    const double g_end = s.g0 + (s.g1 - s.g0) * (end - s.t0) / (s.t1 - s.t0);
    m += 0.5 * (s.g0 + g_end) * (end - s.t0);
  }
  return m;
}

// Sample times (block-local, from the event's start) and quadrature weights of
// a shape on the default raster (cell centres) or on a time shape.
struct Sampling {
  std::vector<double> t, w;
  double duration = 0.0;
};

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

struct BlockGradients {
  std::array<std::vector<Segment>, 3> axes;
  Mat3 rotation{{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
  double end = 0.0;  // latest gradient end in the block
};

BlockGradients gradients_of(const PulseqFile& file, const Block& b, const Failure& fail) {
  BlockGradients out;
  const int ids[3] = {b.gx, b.gy, b.gz};
  for (int axis = 0; axis < 3; ++axis) {
    if (ids[axis] == 0) continue;
    auto& segs = out.axes[axis];
    if (const TrapEvent* t = file.find_trap(ids[axis])) {
      const double a = t->amplitude_hz_per_m, t0 = t->delay_s;
      segs.push_back({t0, t0 + t->rise_s, 0.0, a});
      segs.push_back({t0 + t->rise_s, t0 + t->rise_s + t->flat_s, a, a});
      segs.push_back({t0 + t->rise_s + t->flat_s, t0 + t->rise_s + t->flat_s + t->fall_s, a, 0.0});
      out.end = std::max(out.end, t0 + t->rise_s + t->flat_s + t->fall_s);
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
        segs.push_back({t0 + s.t[n] - 0.5 * s.w[n], t0 + s.t[n] + 0.5 * s.w[n], v, v});
      }
    } else {
      for (int n = 0; n + 1 < shape.samples; ++n) {
        segs.push_back(
            {t0 + s.t[n], t0 + s.t[n + 1], a * shape.values[n], a * shape.values[n + 1]});
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
        const double w = v[0], x = v[1], y = v[2], z = v[3];
        out.rotation = {{{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                         {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                         {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}}};
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

Vec3 block_moment(const BlockGradients& g, double t_local) {
  const Vec3 logical = {moment_until(g.axes[0], t_local), moment_until(g.axes[1], t_local),
                        moment_until(g.axes[2], t_local)};
  return apply(g.rotation, logical);
}

bool gradient_on_during(const BlockGradients& g, double t0, double t1) {
  for (const auto& segs : g.axes) {
    for (const Segment& s : segs) {
      if (s.t1 > t0 && s.t0 < t1 && (s.g0 != 0.0 || s.g1 != 0.0)) return true;
    }
  }
  return false;
}

struct TimedInstant {
  double t = 0.0;  // absolute
  int block_index = 0;
  sequence::Event event;
};

double larmor_frequency_mhz(const PulseqFile& file, int block, const Failure& fail) {
  const auto it = file.definitions.values.find("B0");
  double b0 = 0.0;
  if (it == file.definitions.values.end() || !(std::istringstream(it->second) >> b0) ||
      !(b0 > 0.0)) {
    fail(block, block, "a frequency or phase in ppm needs a positive B0 in [DEFINITIONS]");
  }
  return kGammaMHzPerT * b0;
}

// The pulse power a bound pool reads (rad^2/s), which the ABI keeps in float.
float single_precision_power(double power, int block, const Failure& fail) {
  if (!(power <= double(std::numeric_limits<float>::max()))) {
    fail(block, block, "the RF power (amplitude squared x duration) is beyond single precision");
  }
  return float(power);
}

}  // namespace

sequence::Description to_description(const PulseqFile& file, const TranslateOptions& options,
                                     TranslationReport* report_out) {
  const Failure fail{file};
  const bool v15 = file.version.at_least(1, 5);
  std::vector<TimedInstant> instants;
  std::vector<BlockGradients> gradients;
  std::vector<double> starts;
  TranslationReport report;
  double now = 0.0;
  auto reserve = [&](const Block& b, long long more) {
    if (more < 0 || (long long)(instants.size()) + more > options.max_instants) {
      fail(b.id, b.id,
           "the file would translate to more than " + std::to_string(options.max_instants) +
               " pulses and samples (TranslateOptions::max_instants)");
    }
  };
  for (std::size_t bi = 0; bi < file.blocks.size(); ++bi) {
    const Block& b = file.blocks[bi];
    BlockGradients g = gradients_of(file, b, fail);
    double latest = g.end;
    if (b.delay_id != 0) latest = std::max(latest, file.delays.at(b.delay_id).delay_s);
    if (b.rf != 0) {
      const RfEvent& rf = file.rf.at(b.rf);
      const Shape& mag = shape_of(file, rf.mag_shape, b.id, fail, "RF magnitude");
      const Shape* phase =
          rf.phase_shape != 0 ? &shape_of(file, rf.phase_shape, b.id, fail, "RF phase") : nullptr;
      if (phase != nullptr && phase->samples != mag.samples) {
        fail(b.id, b.id,
             "RF " + std::to_string(rf.id) +
                 ": magnitude and phase shapes differ "
                 "in length");
      }
      const Sampling s = sampling_of(file, mag.samples, rf.time_shape, file.definitions.rf_raster_s,
                                     b.id, fail, "RF");
      latest = std::max(latest, rf.delay_s + s.duration);
      const bool ppm = rf.freq_ppm != 0.0 || rf.phase_ppm != 0.0;
      const double f0 = ppm ? larmor_frequency_mhz(file, b.id, fail) : 0.0;
      const double freq = rf.freq_hz + rf.freq_ppm * f0;
      const double event_phase = rf.phase_rad + rf.phase_ppm * f0;
      // Centre: given (1.5), else the middle of the magnitude's peak plateau.
      double centre = rf.center_s;
      if (std::isfinite(centre) &&
          !(centre >= 0.0 && centre <= s.duration * (1.0 + 1e-9) + 1e-12)) {
        fail(b.id, b.id,
             "RF " + std::to_string(rf.id) + ": its center (" + std::to_string(centre * 1e6) +
                 " us) lies outside the pulse (0 to " + std::to_string(s.duration * 1e6) + " us)");
      }
      double peak = 0.0;
      for (double v : mag.values) peak = std::max(peak, std::fabs(v));
      if (!std::isfinite(centre)) {
        int first = -1, last = -1;
        for (int n = 0; n < mag.samples; ++n) {
          if (std::fabs(mag.values[n]) >= peak * (1.0 - 1e-9)) {
            if (first < 0) first = n;
            last = n;
          }
        }
        centre = first < 0 ? 0.5 * s.duration : 0.5 * (s.t[first] + s.t[last]);
      }
      // Phase of the frequency offset's ramp: from the pulse start before
      // 1.5, from its centre in 1.5.
      const double ramp_origin = v15 ? centre : 0.0;
      const bool selective =
          gradient_on_during(g, rf.delay_s, rf.delay_s + std::max(s.duration, 1e-12));
      const bool split = options.split_all_pulses || (freq != 0.0 && !selective);
      auto sample_value = [&](int n) {
        const double ph = phase != nullptr ? kTwoPi * phase->values[n] : 0.0;
        return std::polar(kTwoPi * rf.amplitude_hz * mag.values[n], ph);  // rad/s
      };
      if (split) {
        reserve(b, mag.samples);
        ++report.split_pulses;
        for (int n = 0; n < mag.samples; ++n) {
          const std::complex<double> w1 = sample_value(n);
          TimedInstant in;
          in.t = now + rf.delay_s + s.t[n];
          in.block_index = int(bi);
          in.event.kind = sequence::EventKind::pulse;
          in.event.flip_rad = std::abs(w1) * s.w[n];
          in.event.phase_rad = event_phase + std::arg(w1) + kTwoPi * freq * (s.t[n] - ramp_origin);
          in.event.rf_frequency_hz = selective ? 0.0 : freq;
          in.event.saturation = single_precision_power(std::norm(w1) * s.w[n], b.id, fail);
          instants.push_back(in);
        }
      } else {
        reserve(b, 1);
        std::complex<double> area = 0.0;
        double power = 0.0;
        for (int n = 0; n < mag.samples; ++n) {
          area += sample_value(n) * s.w[n];
          power += std::norm(sample_value(n)) * s.w[n];
        }
        TimedInstant in;
        in.t = now + rf.delay_s + centre;
        in.block_index = int(bi);
        in.event.kind = sequence::EventKind::pulse;
        in.event.flip_rad = std::abs(area);
        in.event.phase_rad = event_phase + std::arg(area) +
                             (selective ? kTwoPi * freq * (centre - ramp_origin) : 0.0);
        in.event.saturation = single_precision_power(power, b.id, fail);
        instants.push_back(in);
      }
    }
    if (b.adc != 0) {
      const AdcEvent& adc = file.adc.at(b.adc);
      latest = std::max(latest, adc.delay_s + adc.samples * adc.dwell_s);
      const bool ppm = adc.phase_ppm != 0.0;
      const double phase =
          adc.phase_rad + (ppm ? adc.phase_ppm * larmor_frequency_mhz(file, b.id, fail) : 0.0);
      const int centre = adc.samples / 2;
      const bool every = options.adc == AdcSampling::every_sample;
      reserve(b, every ? adc.samples : 1);
      for (int n = every ? 0 : centre; n < (every ? adc.samples : centre + 1); ++n) {
        TimedInstant in;
        in.t = now + adc.delay_s + (n + 0.5) * adc.dwell_s;
        in.block_index = int(bi);
        in.event.kind = sequence::EventKind::adc;
        in.event.phase_rad = phase;
        in.event.action = n == centre ? sequence::action::echo_centre : 0u;
        instants.push_back(in);
      }
    }
    double duration = b.duration_s;
    if (!file.version.at_least(1, 4)) {
      const double r = file.definitions.block_duration_raster_s;
      duration = std::ceil(latest / r - 1e-9) * r;
    } else if (latest > duration * (1.0 + 1e-9) + 1e-12) {
      fail(b.id, b.id, "its events run past the block's duration");
    }
    // A block's time becomes event durations; a block longer than a day is a
    // units or typing error (a delay of 8.9e97 us put every later block's
    // instants at one double-precision time, and the translation's durations
    // came out negative or not finite).
    if (!(duration <= kLongestBlockSeconds)) {
      fail(b.id, b.id,
           "it lasts " + std::to_string(duration) + " s (its delays and events; more than a day)");
    }
    starts.push_back(now);
    gradients.push_back(std::move(g));
    now += duration;
  }
  std::stable_sort(instants.begin(), instants.end(),
                   [](const TimedInstant& a, const TimedInstant& b) { return a.t < b.t; });

  // Moment vector at every instant: the moments of whole blocks before it
  // plus the part of its own block up to it.
  std::vector<Vec3> block_start_moment(file.blocks.size() + 1, Vec3{0, 0, 0});
  for (std::size_t bi = 0; bi < file.blocks.size(); ++bi) {
    const Vec3 whole = block_moment(gradients[bi], 1e300);
    block_start_moment[bi + 1] = axpy(1.0, whole, block_start_moment[bi]);
  }
  std::vector<double> times;
  std::vector<int> block_ids;
  std::vector<sequence::Event> events;
  std::vector<Vec3> moments;
  for (const TimedInstant& in : instants) {
    const int bi = in.block_index;
    times.push_back(in.t);
    block_ids.push_back(file.blocks[bi].id);
    events.push_back(in.event);
    moments.push_back(
        axpy(1.0, block_moment(gradients[bi], in.t - starts[bi]), block_start_moment[bi]));
  }
  sequence::Description d =
      detail::quantise_gaps(file, times, block_ids, events, moments, now,
                            block_start_moment[file.blocks.size()], options, report);
  if (report_out != nullptr) *report_out = report;
  return d;
}

}  // namespace larmor::formats::pulseq
