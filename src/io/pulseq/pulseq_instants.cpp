// The instants of a Pulseq file (docs/pulseq.md): each RF pulse as one
// rotation at its centre, played from its waveform, or played across the slice's
// positions; each ADC's sample at the k-space centre of the echo it records.
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <sstream>

#include "io/pulseq/pulseq_translation.hpp"

namespace larmor::io::pulseq::detail {
namespace {

constexpr double kTwoPi = 6.283185307179586;
constexpr double kDegrees = 57.29577951308232;
// A selective pulse whose small-tip profile at the voxel is at most this
// fraction of its centre misses the voxel; at least 1 - this, it reaches it.
constexpr double kProfileEdge = 0.02;
// Without a `use` code, pulses of at least this flip refocus.
constexpr double kRefocusingFlipRad = 120.0 / kDegrees;
// Slice thicknesses the positions of a played pulse span (its slice and a
// thickness of tails either side).
constexpr double kSliceExtent = 2.0;
// Flips a played pulse's table holds (up to twice its flip): the cubic
// Hermite read-back between them is good to about 1e-7.
constexpr int kPlayedFlipNodes = 33;

// The pulse power a bound pool reads (rad^2/s), which the ABI keeps in float.
float single_precision_power(double power, int block, const Failure& fail) {
  if (!(power <= double(std::numeric_limits<float>::max()))) {
    fail(block, block, "the RF power (amplitude squared x duration) is beyond single precision");
  }
  return float(power);
}

double wrapped(double angle) { return std::remainder(angle, kTwoPi); }

}  // namespace

bool Translation::split(const PulseAnalysis& p) const {
  using S = TranslateOptions::Splitting;
  if (options_.split == S::all) return true;
  if (p.selective) return false;
  return p.freq != 0.0 ||
         (options_.split == S::long_pulses && p.sampling.duration > options_.long_pulse_s);
}

bool Translation::excites(const PulseAnalysis& p) const {
  const char use = p.rf->use;
  return use == 'e' ||
         (use != 'r' && use != 'i' && use != 's' && std::abs(p.area) < kRefocusingFlipRad);
}

// Pulses: a selective one reaches the voxel as its profile at the voxel's
// offset says; split pulses become hard pulses; the others one rotation.
void Translation::add_pulses() {
  int b1_fixed_pulses = 0;
  const bool sliced = options_.slice_profile && dot(report_.slice_normal, report_.slice_normal) > 0;
  for (std::size_t bi = 0; bi < file_.blocks.size(); ++bi) {
    if (!pulses_[bi]) continue;
    const PulseAnalysis& p = *pulses_[bi];
    const Block& b = file_.blocks[bi];
    const RfEvent& rf = *p.rf;
    PulseRecord record;
    record.block = b.id;
    record.time_s = starts_[bi] + rf.delay_s + p.centre;
    record.flip_deg = std::abs(p.area) * kDegrees;
    record.phase_deg = (p.event_phase + std::arg(p.area)) * kDegrees;
    record.use = rf.use;
    const bool fixed_b1 = options_.b1_fixed_uses.find(rf.use) != std::string::npos;
    const std::uint32_t bits = fixed_b1 ? sequence::action::b1_fixed : 0u;
    if (fixed_b1) ++b1_fixed_pulses;
    const char use = rf.use;
    const bool refocuses = use == 'r' || use == 'i' ||
                           (use != 'e' && use != 's' && std::abs(p.area) >= kRefocusingFlipRad);
    Role role = refocuses ? Role::refocuses : Role::excites;
    const bool played = sliced && p.selective && !split(p);
    if (p.selective) {
      const double offset = dot(p.gradient, slice_position_) - p.freq;
      const double profile = p.profile_at(offset);
      if (profile <= kProfileEdge) {
        record.how = "misses the voxel: it excites a slice " + fixed(offset, 1) +
                     " Hz away (profile there " + fixed(100 * profile, 2) + " %)";
        ++report_.missed_pulses;
        role = Role::none;
        if (!played) {
          // Kept as a pulse of no flip: each repetition's moments are then
          // judged on their own, as they are in the voxel's own slice.
          report_.pulses.push_back(record);
          reserve(b, 1);
          TimedInstant in;
          in.t = record.time_s;
          in.block_index = int(bi);
          in.event.kind = sequence::EventKind::pulse;
          instants_.push_back(in);
          track_.push_back({in.t, Role::none, b.id});
          continue;
        }
      } else if (profile < 1.0 - kProfileEdge && !played) {
        fail_(b.id, b.id,
              "the RF pulse (" + fixed(record.flip_deg, 1) +
                  " deg) puts the voxel on the edge of its slice: its profile there is " +
                  fixed(100 * profile, 1) + " % of the centre's (" + fixed(offset, 1) +
                  " Hz off), a partial flip that one instantaneous rotation cannot represent "
                  "(slice_profile = true plays it across the slice)");
      }
    }
    const std::size_t made_before = instants_.size();
    if (played) {
      add_played_pulse(bi, p, record, bits);
    } else if (split(p)) {
      add_waveform_pulse(bi, p, record, bits);
    } else {
      add_instant_pulse(bi, p, record, bits);
    }
    for (std::size_t i = made_before; i < instants_.size(); ++i) {
      instants_[i].refocuses = role == Role::refocuses;
    }
    track_.push_back({record.time_s, role, b.id});
    if (fixed_b1) record.how += ", not scaled by B1";
    report_.pulses.push_back(record);
  }
  if (!options_.b1_fixed_uses.empty() && b1_fixed_pulses == 0) {
    std::string uses;
    for (const auto& r : report_.pulses) {
      if (uses.find(r.use) == std::string::npos) uses += r.use;
    }
    throw PulseqError(file_.path + ": pulses of RF use '" + options_.b1_fixed_uses +
                      "' were to be left unscaled by B1 (inversion_b1_scaled = false), but no "
                      "pulse states that use (the file's pulses state '" +
                      uses + "'; 'u': undeclared, as before Pulseq 1.5)");
  }
}

// One rotation at the pulse's centre.
void Translation::add_instant_pulse(std::size_t bi, const PulseAnalysis& p, PulseRecord& record,
                                    std::uint32_t bits) {
  const Block& b = file_.blocks[bi];
  const RfEvent& rf = *p.rf;
  reserve(b, 1);
  // Pulses of one shape share a bandwidth: measured once per shape.
  const auto key = std::make_tuple(rf.mag_shape, rf.phase_shape, rf.time_shape);
  auto width = half_widths_.find(key);
  if (width == half_widths_.end()) {
    width = half_widths_.emplace(key, 0.5 * p.half_maximum_width()).first;
  }
  if (width->second > 0.0 && (report_.narrowest_half_bandwidth_hz == 0.0 ||
                              width->second < report_.narrowest_half_bandwidth_hz)) {
    report_.narrowest_half_bandwidth_hz = width->second;
  }
  record.how = p.selective ? "instant (slice-selective, ideal slab)" : "instant";
  TimedInstant in;
  in.t = record.time_s;
  in.block_index = int(bi);
  in.event.kind = sequence::EventKind::pulse;
  in.event.flip_rad = std::abs(p.area);
  in.event.phase_rad = p.event_phase + std::arg(p.area) +
                       (p.selective ? kTwoPi * p.freq * (p.centre - p.ramp_origin) : 0.0);
  in.event.saturation = single_precision_power(p.power, b.id, fail_);
  in.event.action = bits;
  instants_.push_back(in);
}

// A pulse played from its waveform: one instant at the pulse's start that
// lasts its length, whose samples each voxel integrates at its own
// off-resonance (sequence::PulseWaveform). Off resonance the samples are
// written in the frame of the RF frequency (the event's phase holds the
// ramp's phase at the start); a selective pulse acts at its slice's centre,
// where the RF is on resonance, and its gradient acts around the whole pulse
// (moments at its centre), as around one rotation. Pulses of equal samples
// share a waveform.
void Translation::add_waveform_pulse(std::size_t bi, const PulseAnalysis& p, PulseRecord& record,
                                     std::uint32_t bits) {
  const Block& b = file_.blocks[bi];
  const RfEvent& rf = *p.rf;
  const Sampling& s = p.sampling;
  const bool off_resonance = p.freq != 0.0 && !p.selective;
  const std::size_t samples = std::size_t(p.mag->samples);
  // Cells of the RF raster: a sample each, or with a time shape the
  // piecewise-linear waveform between its points at the cells' centres.
  std::vector<std::complex<double>> cell;
  double cell_s = s.w[0], start_rel = s.t[0] - 0.5 * s.w[0];  // from the RF event's delay
  if (rf.time_shape == 0 || samples < 2) {
    for (std::size_t n = 0; n < samples; ++n) cell.push_back(p.sample_value(int(n)));
  } else {
    const double span = s.t.back() - s.t.front(), raster = file_.definitions.rf_raster_s;
    const double cells_wanted = std::max(1.0, std::round(span / raster));
    if (!(cells_wanted <= double(options_.max_instants))) {
      fail_(b.id, b.id,
            "the RF pulse's time shape spans " + std::to_string(span) + " s, " +
                std::to_string(cells_wanted) + " cells of the RF raster: more than the " +
                std::to_string(options_.max_instants) + " allowed (max_instants in [sequence])");
    }
    const long long cells = (long long)(cells_wanted);
    cell_s = span / double(cells);
    start_rel = s.t.front();
    std::size_t k = 0;
    for (long long j = 0; j < cells; ++j) {
      const double t = s.t.front() + (double(j) + 0.5) * cell_s;
      while (k + 2 < samples && s.t[k + 1] < t) ++k;
      const double f = (t - s.t[k]) / (s.t[k + 1] - s.t[k]);
      const std::complex<double> lo = p.sample_value(int(k)), hi = p.sample_value(int(k + 1));
      cell.push_back(lo == hi ? lo : lo + (hi - lo) * f);
    }
  }
  sequence::PulseWaveform w;
  w.rf_frequency_hz = off_resonance ? p.freq : 0.0;
  w.flip_rad = std::abs(p.area);
  double length = 0.0;
  for (std::size_t n = 0; n < cell.size(); ++n) {
    const std::complex<double> a = cell[n];
    const double dt = rf.time_shape == 0 ? s.w[n] : cell_s;
    sequence::WaveformRun run{std::abs(a) * dt, std::abs(a) > 0.0 ? std::arg(a) : 0.0, dt, 1};
    length += dt;
    if (!w.runs.empty()) {
      sequence::WaveformRun& last = w.runs.back();
      if (last.angle_rad == run.angle_rad && last.phase_rad == run.phase_rad &&
          last.dt_s == run.dt_s) {
        ++last.samples;
        continue;
      }
    }
    w.runs.push_back(run);
  }
  reserve(b, 1);
  TimedInstant in;
  in.t = starts_[bi] + rf.delay_s + start_rel;
  in.length = length;
  in.moment_time = starts_[bi] + rf.delay_s + p.centre;
  in.block_index = int(bi);
  in.event.kind = sequence::EventKind::waveform_pulse;
  in.event.flip_rad = w.flip_rad;
  in.event.phase_rad =
      p.event_phase +
      wrapped(kTwoPi * p.freq * ((p.selective ? p.centre : start_rel) - p.ramp_origin));
  in.event.rf_frequency_hz = w.rf_frequency_hz;
  in.event.saturation = single_precision_power(p.power, b.id, fail_);
  in.event.action = bits;
  const std::size_t runs = w.runs.size();
  in.event.waveform = waveform_index(std::move(w));
  instants_.push_back(in);
  ++report_.waveform_pulses;
  record.how = "played from its waveform (" + std::to_string(cell.size()) + " samples in " +
               std::to_string(runs) + (runs == 1 ? " run, " : " runs, ") +
               (off_resonance ? fixed(p.freq, 1) + " Hz off resonance"
                : p.selective ? std::string("at the slice's centre")
                              : fixed(s.duration * 1e3, 2) + " ms long") +
               ")";
}

// The 1-based index of a waveform equal to `w`, added if new; candidates are
// those of equal digest.
int Translation::waveform_index(sequence::PulseWaveform w) {
  const auto same = [&](const sequence::PulseWaveform& o) {
    if (o.rf_frequency_hz != w.rf_frequency_hz || o.flip_rad != w.flip_rad ||
        o.runs.size() != w.runs.size()) {
      return false;
    }
    for (std::size_t r = 0; r < o.runs.size(); ++r) {
      if (o.runs[r].angle_rad != w.runs[r].angle_rad ||
          o.runs[r].phase_rad != w.runs[r].phase_rad || o.runs[r].dt_s != w.runs[r].dt_s ||
          o.runs[r].samples != w.runs[r].samples) {
        return false;
      }
    }
    return true;
  };
  double digest = w.rf_frequency_hz + w.flip_rad;
  for (const sequence::WaveformRun& r : w.runs) {
    digest += r.angle_rad * double(r.samples) + r.phase_rad + r.dt_s * 1e6;
  }
  const auto [first, last] = waveform_of_.equal_range(digest);
  for (auto it = first; it != last; ++it) {
    if (same(waveforms_[std::size_t(it->second - 1)])) return it->second;
  }
  waveforms_.push_back(std::move(w));
  const int index = int(waveforms_.size());
  waveform_of_.emplace(digest, index);
  return index;
}

// A slice-selective pulse played at each slice position: its own waveform
// under its own gradient, a table per distinct pulse (sequence::PlayedPulse).
void Translation::add_played_pulse(std::size_t bi, const PulseAnalysis& p, PulseRecord& record,
                                   std::uint32_t bits) {
  const Block& b = file_.blocks[bi];
  reserve(b, 1);
  const int profile = played_profile(bi, p);
  if (record.how.empty()) record.how = "played across the slice";
  record.how += " (profile " + std::to_string(profile) + ")";
  TimedInstant in;
  in.t = record.time_s;
  in.block_index = int(bi);
  in.event.kind = sequence::EventKind::pulse;
  in.event.flip_rad = std::abs(p.area);
  in.event.phase_rad = p.event_phase + kTwoPi * p.freq * (p.centre - p.ramp_origin);
  in.event.saturation = single_precision_power(p.power, b.id, fail_);
  in.event.action = bits;
  in.event.slice_profile = profile;
  instants_.push_back(in);
}

int Translation::played_profile(std::size_t bi, const PulseAnalysis& p) {
  const Block& b = file_.blocks[bi];
  const RfEvent& rf = *p.rf;
  const Sampling& s = p.sampling;
  const BlockGradients& g = gradients_[bi];
  const Vec3& r0 = slice_position_;
  const Vec3& normal = report_.slice_normal;
  int axis = 0;
  for (int a = 1; a < 3; ++a) {
    if (std::fabs(normal[a]) > std::fabs(normal[axis])) axis = a;
  }
  const double thickness = report_.voxel_size_m[std::size_t(axis)];
  sequence::PlayedPulse played;
  for (int n = 0; n < p.mag->samples; ++n) {
    const Vec3 grad = g.gradient(rf.delay_s + s.t[std::size_t(n)]);
    const double dt = s.w[std::size_t(n)];
    played.amplitude_rad_s.push_back(p.sample_value(n));
    played.dt_s.push_back(dt);
    played.centre_cycles.push_back((dot(grad, r0) - p.freq) * dt);
    played.slope_cycles.push_back(dot(grad, normal) * thickness * dt);
  }
  // What the description keeps outside the pulse: the gradient's moment and
  // the RF frequency's phase from the pulse's start to its centre and from
  // its centre to its end.
  const double start = rf.delay_s, centre = rf.delay_s + p.centre, end = rf.delay_s + s.duration;
  const Vec3 lead = minus(g.moment(centre), g.moment(start));
  const Vec3 trail = minus(g.moment(end), g.moment(centre));
  played.pre_centre_cycles = p.freq * (centre - start) - dot(lead, r0);
  played.pre_slope_cycles = -dot(lead, normal) * thickness;
  played.post_centre_cycles = p.freq * (end - centre) - dot(trail, r0);
  played.post_slope_cycles = -dot(trail, normal) * thickness;
  // Pulses played alike share a table (the kernels turn it by each pulse's
  // phase, which it leaves out).
  const auto same = [&](const sequence::PlayedPulse& q) {
    return q.amplitude_rad_s == played.amplitude_rad_s && q.dt_s == played.dt_s &&
           q.centre_cycles == played.centre_cycles && q.slope_cycles == played.slope_cycles &&
           q.pre_centre_cycles == played.pre_centre_cycles &&
           q.pre_slope_cycles == played.pre_slope_cycles &&
           q.post_centre_cycles == played.post_centre_cycles &&
           q.post_slope_cycles == played.post_slope_cycles;
  };
  double digest = played.pre_slope_cycles + played.post_slope_cycles;
  for (std::size_t n = 0; n < played.dt_s.size(); ++n) {
    digest += std::abs(played.amplitude_rad_s[n]) * played.dt_s[n] + played.slope_cycles[n];
  }
  const auto [first, last] = profile_of_.equal_range(digest);
  for (auto it = first; it != last; ++it) {
    if (same(profiles_[std::size_t(it->second - 1)].played)) return it->second;
  }
  sequence::SliceProfileSpec spec;
  spec.name = file_.path + ": block " + std::to_string(b.id) + ", RF " + std::to_string(rf.id);
  spec.positions = options_.slice_positions;
  spec.extent = kSliceExtent;
  spec.flip_nodes = kPlayedFlipNodes;
  spec.played = std::move(played);
  profiles_.push_back(std::move(spec));
  const int index = int(profiles_.size());
  profile_of_.emplace(digest, index);
  return index;
}

// ADCs: the sample at the k-space centre. k is the moment since the last
// excitation, reversed by each refocusing pulse (the echo's own pathway).
std::vector<SampleChoice> Translation::choose_samples() const {
  std::vector<Vec3> track_moment;
  std::size_t track_block = 0;  // the pulses come in time order
  for (const PulseTrack& p : track_) {
    while (track_block + 1 < starts_.size() && starts_[track_block + 1] <= p.t) ++track_block;
    track_moment.push_back(moment_at(track_block, p.t));
  }
  std::vector<SampleChoice> choices;
  std::size_t next_pulse = 0;
  Vec3 base_k{0, 0, 0}, base_m{0, 0, 0};
  bool excited = false;
  int other_slice = 0;  // the block of the last pulse, when it excited another slice
  for (const PendingAdc& p : pending_adcs_) {
    const AdcEvent& adc = *p.adc;
    const double first = starts_[p.block_index] + adc.delay_s;
    const auto time_of = [&](int n) { return first + (n + 0.5) * adc.dwell_s; };
    while (next_pulse < track_.size() && track_[next_pulse].t <= time_of(0)) {
      const Vec3& m = track_moment[next_pulse];
      if (track_[next_pulse].role == Role::none) {
        other_slice = track_[next_pulse].block;
        ++next_pulse;
        continue;
      }
      other_slice = 0;
      if (track_[next_pulse].role == Role::excites) {
        base_k = {0, 0, 0};
        excited = true;
      } else {
        base_k = scaled(-1.0, add(base_k, minus(m, base_m)));
      }
      base_m = m;
      ++next_pulse;
    }
    SampleChoice c;
    c.echo = adc.samples / 2;
    const bool readout =
        gradients_[p.block_index].on_during(adc.delay_s, adc.delay_s + adc.samples * adc.dwell_s);
    // What the readout sweeps from its first sample to its last.
    c.swept = minus(moment_at(p.block_index, time_of(adc.samples - 1)),
                    moment_at(p.block_index, time_of(0)));
    if (readout) {
      for (int a = 0; a < 3; ++a) {
        c.readout[a] = std::fabs(c.swept[a]) * report_.voxel_size_m[a] > in_phase_turns ? 1.0 : 0.0;
      }
    }
    if (other_slice != 0) {
      c.how = "dropped: it follows the excitation of another slice (block " +
              std::to_string(other_slice) + "), whose signal it records";
      c.dropped = true;
    } else if (!excited) {
      c.how = "sample N/2 (before any excitation: no signal yet)";
    } else if (!readout) {
      c.how = "sample N/2 (no readout gradient)";
    } else {
      // Phase encodes: axes held constant through the readout and rewound
      // before the next pulse encode k-space and do not move the echo.
      const Vec3 span_end = next_pulse < track_.size() ? track_moment[next_pulse]
                                                       : block_start_moment_[file_.blocks.size()];
      const Vec3 net = minus(span_end, base_m);
      Vec3 keep{1, 1, 1};
      for (int a = 0; a < 3; ++a) {
        const double d = report_.voxel_size_m[a];
        if (std::fabs(net[a]) * d <= in_phase_turns &&
            std::fabs(c.swept[a]) * d <= in_phase_turns) {
          keep[a] = 0.0;
        }
      }
      c.turns = std::numeric_limits<double>::infinity();
      for (int n = 0; n < adc.samples; ++n) {
        Vec3 k = add(base_k, minus(moment_at(p.block_index, time_of(n)), base_m));
        for (int a = 0; a < 3; ++a) k[a] *= keep[a];
        const double turns = turns_across(k, report_.voxel_size_m);
        if (turns < c.turns) {
          c.turns = turns;
          c.echo = n;
          c.k = k;
        }
      }
      c.encoded = c.turns > in_phase_turns;
      c.how = c.encoded ? "dropped: its k-space trajectory comes no closer to the centre than (" +
                              fixed(c.k[0], 1) + ", " + fixed(c.k[1], 1) + ", " + fixed(c.k[2], 1) +
                              ") 1/m, " + fixed(c.turns, 3) +
                              " turns across the voxel (an encoded line, not the voxel's echo)"
                        : "k-space centre";
      c.dropped = c.encoded;
    }
    choices.push_back(c);
  }
  return choices;
}

void Translation::add_samples() {
  if (pending_adcs_.empty()) {
    fail_(file_.blocks.empty() ? 0 : file_.blocks.front().id,
          file_.blocks.empty() ? 0 : file_.blocks.back().id,
          "the file has no ADC, so there is no signal to simulate");
  }
  std::vector<SampleChoice> choices = choose_samples();
  // Where no readout reaches the centre of k-space (an echo the gradients
  // leave off centre), each keeps its sample nearest it: the voxel's mean
  // there, exactly as weighted.
  const bool none_reach =
      std::none_of(choices.begin(), choices.end(),
                   [](const SampleChoice& c) { return !c.dropped; }) &&
      std::any_of(choices.begin(), choices.end(), [](const SampleChoice& c) { return c.encoded; });
  if (none_reach) {
    for (SampleChoice& c : choices) {
      if (!c.encoded) continue;
      c.dropped = false;
      c.how = "nearest the k-space centre: " + fixed(c.turns, 3) +
              " turns across the voxel from it (no readout reaches it)";
    }
    report_.warnings.push_back(
        "no readout passes within " + fixed(in_phase_turns, 2) +
        " turns of the k-space centre: each keeps its sample nearest it, the voxel's mean there");
  }
  const bool every = options_.adc == AdcSampling::every_sample;
  for (std::size_t i = 0; i < pending_adcs_.size(); ++i) {
    const PendingAdc& p = pending_adcs_[i];
    const SampleChoice& c = choices[i];
    const AdcEvent& adc = *p.adc;
    const Block& b = file_.blocks[p.block_index];
    const double first = starts_[p.block_index] + adc.delay_s;
    const auto time_of = [&](int n) { return first + (n + 0.5) * adc.dwell_s; };
    AdcRecord record;
    record.block = b.id;
    record.samples = adc.samples;
    record.time_s = first;
    record.how = c.how;
    if (dot(c.readout, c.readout) > 0.0) record.swept_per_m = c.swept;
    if (c.dropped) {
      ++report_.dropped_adcs;
      report_.adcs.push_back(record);
      continue;
    }
    record.kept_sample = c.echo;
    record.time_s = time_of(c.echo);
    report_.adcs.push_back(record);
    reserve(b, every ? adc.samples : 1);
    const int echo_index = int(instants_.size()) + (every ? c.echo : 0);
    for (int n = every ? 0 : c.echo; n < (every ? adc.samples : c.echo + 1); ++n) {
      TimedInstant in;
      in.readout = c.readout;
      in.t = time_of(n);
      in.block_index = int(p.block_index);
      in.event.kind = sequence::EventKind::adc;
      in.event.phase_rad = p.phase_at(n);
      in.event.action = n == c.echo ? sequence::action::echo_centre : 0u;
      in.echo_of = every && n != c.echo ? echo_index : -1;
      instants_.push_back(in);
    }
  }
  if (report_.dropped_adcs == int(pending_adcs_.size())) {
    fail_(file_.blocks.front().id, file_.blocks.back().id,
          "every ADC is dropped (the first, block " + std::to_string(report_.adcs.front().block) +
              ", is " + report_.adcs.front().how + "), so no sample is the voxel's own signal");
  }
}

// The instants in time order with their moments; every_sample keeps the
// readout's encoding out of its samples (each takes its echo's moment).
InstantTrack Translation::sorted_track() const {
  std::vector<Vec3> own_moment(instants_.size());
  for (std::size_t i = 0; i < instants_.size(); ++i) {
    const TimedInstant& in = instants_[i];
    own_moment[i] =
        moment_at(std::size_t(in.block_index), in.moment_time >= 0.0 ? in.moment_time : in.t);
  }
  for (std::size_t i = 0; i < instants_.size(); ++i) {
    if (instants_[i].echo_of >= 0) own_moment[i] = own_moment[std::size_t(instants_[i].echo_of)];
  }
  std::vector<std::size_t> order(instants_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return instants_[a].t < instants_[b].t; });
  InstantTrack out;
  for (std::size_t i : order) {
    const TimedInstant& in = instants_[i];
    out.readout_axes.push_back(in.readout);
    out.times.push_back(in.t);
    out.lengths.push_back(in.length);
    out.block_ids.push_back(file_.blocks[std::size_t(in.block_index)].id);
    out.events.push_back(in.event);
    out.moments.push_back(own_moment[i]);
    out.excites.push_back(in.event.kind == sequence::EventKind::pulse && !in.refocuses);
  }
  out.end_time = end_;
  out.end_moment = block_start_moment_[file_.blocks.size()];
  out.slice_profiles = !profiles_.empty();
  return out;
}

}  // namespace larmor::io::pulseq::detail
