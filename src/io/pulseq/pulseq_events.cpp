// Pulseq -> larmor events (the rules are in pulseq_events.hpp and
// docs/pulseq.md). Passes: lay the blocks on a time line (their gradients,
// RF pulses and ADCs); decide which pulses reach the voxel; pick each ADC's
// sample at the k-space centre; quantise the moment of every gap between the
// instants (pulseq_moments.cpp).
#include "io/pulseq/pulseq_events.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>

#include "io/pulseq/pulseq_detail.hpp"

namespace larmor::io::pulseq {
namespace {

using detail::BlockGradients;
using detail::Failure;
using detail::Vec3;

constexpr double kTwoPi = 6.283185307179586;
constexpr double kLongestBlockSeconds = 86400.0;
constexpr double kDegrees = 57.29577951308232;
// A selective pulse whose small-tip profile at the voxel is at most this
// fraction of its centre misses the voxel; at least 1 - this, it reaches it.
constexpr double kProfileEdge = 0.02;
// Without a `use` code, pulses of at least this flip refocus.
constexpr double kRefocusingFlipRad = 120.0 / kDegrees;

struct TimedInstant {
  double t = 0.0;  // absolute
  int block_index = 0;
  sequence::Event event;
  int echo_of = -1;       // every_sample: the index of its ADC's echo sample
  Vec3 readout{0, 0, 0};  // adc: 1 on the axes its readout gradient moves along
};

// What a pulse does to the k-space position of the signal that is sampled.
enum class Role { excites, refocuses, none };

struct PulseTrack {
  double t = 0.0;
  Role role = Role::none;  // none: an excitation of another slice
  int block = 0;
};

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s.precision(digits);
  s << std::fixed << v;
  return s.str();
}

Vec3 voxel_from_definitions(const PulseqFile& file, std::string& source, bool& slice_given,
                            std::vector<std::string>& warnings) {
  auto numbers = [&](const char* key) {
    std::vector<double> v;
    const auto it = file.definitions.values.find(key);
    if (it == file.definitions.values.end()) return v;
    std::istringstream in(it->second);
    for (double x; in >> x;) v.push_back(x);
    return v;
  };
  Vec3 voxel{1e-3, 1e-3, 1e-3};
  source = "1 mm default";
  std::vector<double> fov = numbers("FOV");
  std::vector<double> matrix = numbers("Matrix");
  if (matrix.empty()) matrix = numbers("matrix");
  if (matrix.empty()) {
    for (const char* key : {"Nx", "Ny", "Nz"}) {
      const auto n = numbers(key);
      if (n.size() != 1) break;
      matrix.push_back(n[0]);
    }
  }
  for (double f : fov) {
    if (!(f > 0.0 && f <= 1.0)) {
      warnings.push_back(
          "[DEFINITIONS] FOV is not in metres (a value outside 0-1 m): not used for "
          "the voxel size");
      return voxel;
    }
  }
  if (!fov.empty() && !matrix.empty()) {
    const std::size_t axes = std::min({fov.size(), matrix.size(), std::size_t(3)});
    for (std::size_t i = 0; i < axes; ++i) {
      if (matrix[i] >= 1.0) voxel[i] = fov[i] / matrix[i];
    }
    source = "[DEFINITIONS] FOV / matrix";
    if (axes == 3) {
      slice_given = true;
      return voxel;
    }
  }
  // Without a third matrix entry the slice is SliceThickness, else (later)
  // the first selective pulse's profile.
  const std::vector<double> slice = numbers("SliceThickness");
  if (slice.size() == 1 && slice[0] > 0.0 && slice[0] <= 0.1) {
    voxel[2] = slice[0];
    source += ", slice from SliceThickness";
    slice_given = true;
  }
  return voxel;
}

// The pulse power a bound pool reads (rad^2/s), which the ABI keeps in float.
float single_precision_power(double power, int block, const Failure& fail) {
  if (!(power <= double(std::numeric_limits<float>::max()))) {
    fail(block, block, "the RF power (amplitude squared x duration) is beyond single precision");
  }
  return float(power);
}

void note_extensions(const PulseqFile& file, std::vector<std::string>& warnings) {
  for (const auto& entry : file.extension_specs) {
    const std::string& name = entry.second.name;
    if (name == "DELAYS") {
      warnings.push_back("soft delays (DELAYS extension) take the values written in the blocks");
    } else if (name == "RF_SHIMS") {
      warnings.push_back("RF_SHIMS rows are ignored: every pulse uses the scalar transmit field");
    }
  }
}

}  // namespace

sequence::Description to_description(const PulseqFile& file, const TranslateOptions& options,
                                     TranslationReport* report_out) {
  const Failure fail{file};
  // Filled as the translation goes, so that a refusal still shows what was understood.
  TranslationReport local_report;
  TranslationReport& report = report_out != nullptr ? *report_out : local_report;
  report = TranslationReport{};
  report.version = std::to_string(file.version.major) + "." + std::to_string(file.version.minor) +
                   (file.version.revision.empty() ? "" : "." + file.version.revision);
  report.blocks = file.blocks.size();
  bool slice_given = true;
  if (options.voxel_size_m) {
    report.voxel_size_m = *options.voxel_size_m;
    report.voxel_source = "option";
  } else {
    slice_given = false;
    report.voxel_size_m =
        voxel_from_definitions(file, report.voxel_source, slice_given, report.warnings);
  }
  for (double d : report.voxel_size_m) {
    if (!(d > 0.0 && d < 1.0)) fail(0, 0, "the voxel size must be between 0 and 1 m");
  }
  note_extensions(file, report.warnings);

  std::vector<TimedInstant> instants;
  std::vector<BlockGradients> gradients;
  std::vector<double> starts;
  std::vector<std::optional<detail::PulseAnalysis>> pulses(file.blocks.size());
  std::vector<PulseTrack> track;  // pulses that reach the voxel, for the k-space position
  struct PendingAdc {
    std::size_t block_index;
    const AdcEvent* adc;
    double phase;
  };
  std::vector<PendingAdc> pending_adcs;
  bool overrun_noted = false;
  double now = 0.0;
  auto reserve = [&](const Block& b, long long more) {
    if (more < 0 || (long long)(instants.size()) + more > options.max_instants) {
      fail(b.id, b.id,
           "the file would translate to more than " + std::to_string(options.max_instants) +
               " pulses and samples (TranslateOptions::max_instants)");
    }
  };
  auto split = [&](const detail::PulseAnalysis& p) {
    return options.split_all_pulses || (p.freq != 0.0 && !p.selective);
  };
  auto excites = [&](const detail::PulseAnalysis& p) {
    const char use = p.rf->use;
    return use == 'e' ||
           (use != 'r' && use != 'i' && use != 's' && std::abs(p.area) < kRefocusingFlipRad);
  };

  // The time line: every block's gradients, pulses and ADCs, and its duration.
  for (std::size_t bi = 0; bi < file.blocks.size(); ++bi) {
    const Block& b = file.blocks[bi];
    BlockGradients g = detail::gradients_of(file, b, fail);
    double latest = g.end;
    if (b.delay_id != 0) latest = std::max(latest, file.delays.at(b.delay_id).delay_s);
    if (b.rf != 0) {
      pulses[bi] = detail::analyse_pulse(file, b, g, options, fail);
      latest = std::max(latest, pulses[bi]->rf->delay_s + pulses[bi]->sampling.duration);
    }
    if (b.adc != 0) {
      const AdcEvent& adc = file.adc.at(b.adc);
      latest = std::max(latest, adc.delay_s + adc.samples * adc.dwell_s);
      const bool ppm = adc.phase_ppm != 0.0;
      const double phase =
          adc.phase_rad +
          (ppm ? adc.phase_ppm * detail::larmor_frequency_mhz(file, options, b.id, fail) : 0.0);
      pending_adcs.push_back({bi, &adc, phase});
    }
    double duration = b.duration_s;
    if (!file.version.at_least(1, 4)) {
      const double r = file.definitions.block_duration_raster_s;
      duration = std::ceil(latest / r - 1e-9) * r;
    } else if (latest > duration * (1.0 + 1e-9) + 1e-12) {
      // Files on rasters that are not whole microseconds (tabletop systems)
      // overrun by less than one raster cell; more is an error in the file.
      const auto& defs = file.definitions;
      const double cell =
          std::max({defs.gradient_raster_s, defs.rf_raster_s, defs.block_duration_raster_s});
      if (latest > duration + cell) {
        fail(b.id, b.id,
             "its events end at " + fixed(latest * 1e6, 3) + " us, past the block's duration (" +
                 fixed(duration * 1e6, 3) + " us)");
      }
      if (!overrun_noted) {
        report.warnings.push_back(
            "block " + std::to_string(b.id) +
            " and others: events end up to one raster cell after the block's duration (" +
            fixed((latest - duration) * 1e9, 1) +
            " ns here); the block is lengthened to hold them");
        overrun_noted = true;
      }
      duration = latest;
    }
    // A block's time becomes event durations; a block longer than a day is a
    // units or typing error.
    if (!(duration <= kLongestBlockSeconds)) {
      fail(b.id, b.id,
           "it lasts " + std::to_string(duration) + " s (its delays and events; more than a day)");
    }
    starts.push_back(now);
    gradients.push_back(std::move(g));
    now += duration;
  }

  // The voxel's slice: that of the first selective excitation (a saturation
  // band or a refocusing pulse before it does not place the voxel), else of
  // the first selective pulse.
  const detail::PulseAnalysis* reference_pulse = nullptr;
  for (int pass = 0; pass < 2 && reference_pulse == nullptr; ++pass) {
    for (const auto& p : pulses) {
      if (p && p->selective && !split(*p) && detail::dot(p->gradient, p->gradient) > 0.0 &&
          (pass == 1 || excites(*p))) {
        reference_pulse = &*p;
        break;
      }
    }
  }
  Vec3 slice_position{0, 0, 0};
  if (reference_pulse != nullptr) {
    const Vec3& grad = reference_pulse->gradient;
    const double g2 = detail::dot(grad, grad);
    slice_position = detail::scaled(reference_pulse->freq / g2, grad);
    report.slice_position_m = slice_position;
    report.slice_normal = detail::scaled(1.0 / std::sqrt(g2), grad);
    if (!slice_given) {
      // The slice: the full width at half maximum of the small-tip profile
      // over the slice-select gradient.
      const double thickness = reference_pulse->half_maximum_width() / std::sqrt(g2);
      int axis = 0;
      for (int a = 1; a < 3; ++a) {
        if (std::fabs(grad[a]) > std::fabs(grad[axis])) axis = a;
      }
      if (thickness > 0.0 && thickness < 0.1) {
        report.voxel_size_m[axis] = thickness;
        report.voxel_source += "; slice " + fixed(thickness * 1e3, 2) +
                               " mm: the first selective excitation's profile (FWHM)";
      }
    }
  }

  std::map<std::tuple<int, int, int>, double> half_widths;
  int b1_fixed_pulses = 0;
  // Pulses: a selective one reaches the voxel as its small-tip profile at
  // the voxel's offset says; off-resonant non-selective ones are split.
  for (std::size_t bi = 0; bi < file.blocks.size(); ++bi) {
    if (!pulses[bi]) continue;
    const detail::PulseAnalysis& p = *pulses[bi];
    const Block& b = file.blocks[bi];
    const RfEvent& rf = *p.rf;
    const detail::Sampling& s = p.sampling;
    PulseRecord record;
    record.block = b.id;
    record.time_s = starts[bi] + rf.delay_s + p.centre;
    record.flip_deg = std::abs(p.area) * kDegrees;
    record.phase_deg = (p.event_phase + std::arg(p.area)) * kDegrees;
    record.use = rf.use;
    const bool fixed_b1 = options.b1_fixed_uses.find(rf.use) != std::string::npos;
    const std::uint32_t pulse_bits = fixed_b1 ? sequence::action::b1_fixed : 0u;
    if (fixed_b1) ++b1_fixed_pulses;
    if (p.selective && !split(p)) {
      const double offset = detail::dot(p.gradient, slice_position) - p.freq;
      const double profile = p.profile_at(offset);
      if (profile <= kProfileEdge) {
        record.how = "misses the voxel: it excites a slice " + fixed(offset, 1) +
                     " Hz away (profile there " + fixed(100 * profile, 2) + " %)";
        ++report.missed_pulses;
        report.pulses.push_back(record);
        // Kept as a pulse of no flip: each repetition's moments are then
        // judged on their own, as they are in the voxel's own slice.
        reserve(b, 1);
        TimedInstant in;
        in.t = record.time_s;
        in.block_index = int(bi);
        in.event.kind = sequence::EventKind::pulse;
        instants.push_back(in);
        track.push_back({in.t, Role::none, b.id});
        continue;
      }
      if (profile < 1.0 - kProfileEdge) {
        fail(b.id, b.id,
             "the RF pulse (" + fixed(record.flip_deg, 1) +
                 " deg) puts the voxel on the edge of its slice: its profile there is " +
                 fixed(100 * profile, 1) + " % of the centre's (" + fixed(offset, 1) +
                 " Hz off), a partial flip that one instantaneous rotation cannot represent");
      }
    }
    if (split(p)) {
      reserve(b, p.mag->samples);
      ++report.split_pulses;
      record.how = "split into " + std::to_string(p.mag->samples) + " hard pulses (" +
                   fixed(p.freq, 1) + " Hz off resonance)";
      for (int n = 0; n < p.mag->samples; ++n) {
        const std::complex<double> w1 = p.sample_value(n);
        TimedInstant in;
        in.t = starts[bi] + rf.delay_s + s.t[n];
        in.block_index = int(bi);
        in.event.kind = sequence::EventKind::pulse;
        in.event.flip_rad = std::abs(w1) * s.w[n];
        in.event.phase_rad =
            p.event_phase + std::arg(w1) + kTwoPi * p.freq * (s.t[n] - p.ramp_origin);
        in.event.rf_frequency_hz = p.selective ? 0.0 : p.freq;
        in.event.saturation = single_precision_power(std::norm(w1) * s.w[n], b.id, fail);
        in.event.action = pulse_bits;
        instants.push_back(in);
      }
    } else {
      reserve(b, 1);
      // Pulses of one shape share a bandwidth: measured once per shape.
      const auto key = std::make_tuple(rf.mag_shape, rf.phase_shape, rf.time_shape);
      auto width = half_widths.find(key);
      if (width == half_widths.end())
        width = half_widths.emplace(key, 0.5 * p.half_maximum_width()).first;
      if (width->second > 0.0 && (report.narrowest_half_bandwidth_hz == 0.0 ||
                                  width->second < report.narrowest_half_bandwidth_hz)) {
        report.narrowest_half_bandwidth_hz = width->second;
      }
      record.how = p.selective ? "instant (slice-selective)" : "instant";
      if (fixed_b1) record.how += ", not scaled by B1";
      TimedInstant in;
      in.t = record.time_s;
      in.block_index = int(bi);
      in.event.kind = sequence::EventKind::pulse;
      in.event.flip_rad = std::abs(p.area);
      in.event.phase_rad = p.event_phase + std::arg(p.area) +
                           (p.selective ? kTwoPi * p.freq * (p.centre - p.ramp_origin) : 0.0);
      in.event.saturation = single_precision_power(p.power, b.id, fail);
      in.event.action = pulse_bits;
      instants.push_back(in);
      const char use = rf.use;
      const bool refocuses = use == 'r' || use == 'i' ||
                             (use != 'e' && use != 's' && std::abs(p.area) >= kRefocusingFlipRad);
      track.push_back({in.t, refocuses ? Role::refocuses : Role::excites, b.id});
    }
    report.pulses.push_back(record);
  }
  if (!options.b1_fixed_uses.empty() && b1_fixed_pulses == 0) {
    std::string uses;
    for (const auto& r : report.pulses) {
      if (uses.find(r.use) == std::string::npos) uses += r.use;
    }
    throw PulseqError(file.path + ": pulses of RF use '" + options.b1_fixed_uses +
                      "' were to be left unscaled by B1 (inversion_b1_scaled = false), but no "
                      "pulse states that use (the file's pulses state '" +
                      uses + "'; 'u': undeclared, as before Pulseq 1.5)");
  }
  report.duration_s = now;

  // Moment vector since t = 0 at any time: whole blocks before it plus its own part.
  std::vector<Vec3> block_start_moment(file.blocks.size() + 1, Vec3{0, 0, 0});
  for (std::size_t bi = 0; bi < file.blocks.size(); ++bi) {
    block_start_moment[bi + 1] = detail::add(gradients[bi].moment(1e300), block_start_moment[bi]);
  }
  auto moment_at = [&](std::size_t bi, double t_abs) {
    return detail::add(gradients[bi].moment(t_abs - starts[bi]), block_start_moment[bi]);
  };
  auto instant_moment = [&](const TimedInstant& in) { return moment_at(in.block_index, in.t); };

  // ADCs: the sample at the k-space centre. k is the moment since the last
  // excitation, reversed by each refocusing pulse (the echo's own pathway).
  std::vector<Vec3> track_moment;
  std::size_t track_block = 0;  // the pulses come in time order
  for (const PulseTrack& p : track) {
    while (track_block + 1 < starts.size() && starts[track_block + 1] <= p.t) ++track_block;
    track_moment.push_back(moment_at(track_block, p.t));
  }
  std::size_t next_pulse = 0;
  Vec3 base_k{0, 0, 0}, base_m{0, 0, 0};
  bool excited = false;
  int other_slice = 0;  // the block of the last pulse, when it excited another slice
  if (pending_adcs.empty()) {
    fail(file.blocks.empty() ? 0 : file.blocks.front().id,
         file.blocks.empty() ? 0 : file.blocks.back().id,
         "the file has no ADC, so there is no signal to simulate");
  }
  for (const PendingAdc& p : pending_adcs) {
    const Block& b = file.blocks[p.block_index];
    const AdcEvent& adc = *p.adc;
    const double first = starts[p.block_index] + adc.delay_s;
    auto time_of = [&](int n) { return first + (n + 0.5) * adc.dwell_s; };
    while (next_pulse < track.size() && track[next_pulse].t <= time_of(0)) {
      const Vec3& m = track_moment[next_pulse];
      if (track[next_pulse].role == Role::none) {
        other_slice = track[next_pulse].block;
        ++next_pulse;
        continue;
      }
      other_slice = 0;
      if (track[next_pulse].role == Role::excites) {
        base_k = {0, 0, 0};
        excited = true;
      } else {
        base_k = detail::scaled(-1.0, detail::add(base_k, detail::minus(m, base_m)));
      }
      base_m = m;
      ++next_pulse;
    }
    AdcRecord record;
    record.block = b.id;
    record.samples = adc.samples;
    record.time_s = first;
    int echo = adc.samples / 2;
    const bool readout =
        gradients[p.block_index].on_during(adc.delay_s, adc.delay_s + adc.samples * adc.dwell_s);
    // What the readout sweeps from its first sample to its last.
    const Vec3 swept = detail::minus(moment_at(p.block_index, time_of(adc.samples - 1)),
                                     moment_at(p.block_index, time_of(0)));
    if (other_slice != 0) {
      record.how = "dropped: it follows the excitation of another slice (block " +
                   std::to_string(other_slice) + "), whose signal it records";
      ++report.dropped_adcs;
      report.adcs.push_back(record);
      continue;
    }
    if (!excited) {
      record.how = "sample N/2 (before any excitation: no signal yet)";
    } else if (!readout) {
      record.how = "sample N/2 (no readout gradient)";
    } else {
      // Phase encodes: axes held constant through the readout and rewound
      // before the next pulse encode k-space and do not move the echo.
      const Vec3 span_end = next_pulse < track.size() ? track_moment[next_pulse]
                                                      : block_start_moment[file.blocks.size()];
      const Vec3 net = detail::minus(span_end, base_m);
      record.swept_per_m = swept;
      Vec3 keep{1, 1, 1};
      for (int a = 0; a < 3; ++a) {
        const double d = report.voxel_size_m[a];
        if (std::fabs(net[a]) * d <= in_phase_turns && std::fabs(swept[a]) * d <= in_phase_turns) {
          keep[a] = 0.0;
        }
      }
      double best = std::numeric_limits<double>::infinity();
      Vec3 best_k{0, 0, 0};
      for (int n = 0; n < adc.samples; ++n) {
        Vec3 k = detail::add(base_k, detail::minus(moment_at(p.block_index, time_of(n)), base_m));
        for (int a = 0; a < 3; ++a) k[a] *= keep[a];
        const double turns = detail::turns_across(k, report.voxel_size_m);
        if (turns < best) {
          best = turns;
          echo = n;
          best_k = k;
        }
      }
      if (best > in_phase_turns) {
        record.how = "dropped: its k-space trajectory comes no closer to the centre than (" +
                     fixed(best_k[0], 1) + ", " + fixed(best_k[1], 1) + ", " + fixed(best_k[2], 1) +
                     ") 1/m, " + fixed(best, 3) +
                     " turns across the voxel (an encoded line, not the voxel's echo)";
        ++report.dropped_adcs;
        report.adcs.push_back(record);
        continue;
      }
      record.how = "k-space centre";
    }
    record.kept_sample = echo;
    record.time_s = time_of(echo);
    report.adcs.push_back(record);
    const bool every = options.adc == AdcSampling::every_sample;
    reserve(b, every ? adc.samples : 1);
    const int echo_index = int(instants.size()) + (every ? echo : 0);
    Vec3 readout_axes{0, 0, 0};
    if (readout) {
      for (int a = 0; a < 3; ++a) {
        readout_axes[a] = std::fabs(swept[a]) * report.voxel_size_m[a] > in_phase_turns ? 1.0 : 0.0;
      }
    }
    for (int n = every ? 0 : echo; n < (every ? adc.samples : echo + 1); ++n) {
      TimedInstant in;
      in.readout = readout_axes;
      in.t = time_of(n);
      in.block_index = int(p.block_index);
      in.event.kind = sequence::EventKind::adc;
      in.event.phase_rad = p.phase;
      in.event.action = n == echo ? sequence::action::echo_centre : 0u;
      in.echo_of = every && n != echo ? echo_index : -1;
      instants.push_back(in);
    }
  }
  if (report.dropped_adcs == int(pending_adcs.size())) {
    fail(file.blocks.front().id, file.blocks.back().id,
         "no ADC passes within " + fixed(in_phase_turns, 2) +
             " turns across the voxel of the k-space centre (the first, block " +
             std::to_string(report.adcs.front().block) + ", is " + report.adcs.front().how +
             "), so no sample is the voxel's own signal: the readouts sample encoded lines, or "
             "a rephaser does not rewind what the slice select or a crusher wound");
  }

  // Moments before sorting: every_sample keeps the readout's encoding out of
  // its samples (each takes its echo's moment).
  std::vector<Vec3> own_moment(instants.size());
  for (std::size_t i = 0; i < instants.size(); ++i) own_moment[i] = instant_moment(instants[i]);
  for (std::size_t i = 0; i < instants.size(); ++i) {
    if (instants[i].echo_of >= 0) own_moment[i] = own_moment[std::size_t(instants[i].echo_of)];
  }
  std::vector<std::size_t> order(instants.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return instants[a].t < instants[b].t; });
  std::vector<double> times;
  std::vector<int> block_ids;
  std::vector<sequence::Event> events;
  std::vector<Vec3> moments, readouts;
  for (std::size_t i : order) {
    readouts.push_back(instants[i].readout);
    const TimedInstant& in = instants[i];
    times.push_back(in.t);
    block_ids.push_back(file.blocks[in.block_index].id);
    events.push_back(in.event);
    moments.push_back(own_moment[i]);
  }
  sequence::Description d =
      detail::quantise_gaps(file, times, block_ids, events, moments, readouts, now,
                            block_start_moment[file.blocks.size()], options, report);
  return d;
}

}  // namespace larmor::io::pulseq
