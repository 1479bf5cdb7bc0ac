// Pulseq -> larmor events (the rules are in pulseq_events.hpp and
// docs/pulseq.md): the pipeline, the time line of blocks, and the voxel.
#include "io/pulseq/pulseq_events.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "io/pulseq/pulseq_translation.hpp"

namespace larmor::io::pulseq {
namespace detail {
namespace {

constexpr double kLongestBlockSeconds = 86400.0;

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

double PendingAdc::phase_at(int n) const {
  constexpr double kTwoPi = 6.283185307179586;
  return phase + kTwoPi * frequency_hz * (n + 0.5) * adc->dwell_s +
         (phase_shape != nullptr ? kTwoPi * phase_shape->values[std::size_t(n)] : 0.0);
}

Translation::Translation(const PulseqFile& file, const TranslateOptions& options,
                         TranslationReport& report)
    : file_(file), options_(options), report_(report), fail_{file} {}

sequence::Description Translation::run() {
  report_ = TranslationReport{};
  report_.version = std::to_string(file_.version.major) + "." +
                    std::to_string(file_.version.minor) +
                    (file_.version.revision.empty() ? "" : "." + file_.version.revision);
  report_.blocks = file_.blocks.size();
  if (options_.voxel_size_m) {
    report_.voxel_size_m = *options_.voxel_size_m;
    report_.voxel_source = "option";
  } else {
    slice_given_ = false;
    report_.voxel_size_m =
        voxel_from_definitions(file_, report_.voxel_source, slice_given_, report_.warnings);
  }
  for (double d : report_.voxel_size_m) {
    if (!(d > 0.0 && d < 1.0)) fail_(0, 0, "the voxel size must be between 0 and 1 m");
  }
  if (options_.slice_positions < 1 || options_.slice_positions > 4096) {
    throw PulseqError(file_.path + ": slice positions must lie in [1, 4096]");
  }
  note_extensions(file_, report_.warnings);
  lay_blocks();
  count_instants();
  place_voxel();
  add_pulses();
  add_samples();
  sequence::Description d = quantise_gaps(file_, sorted_track(), options_, report_);
  d.slice_profiles = profiles_;
  d.waveforms = waveforms_;
  return d;
}

void Translation::reserve(const Block& b, long long more) const {
  if (more < 0 || (long long)(instants_.size()) + more > options_.max_instants) {
    fail_(b.id, b.id,
          "the file would translate to more than " + std::to_string(options_.max_instants) +
              " pulses and samples (TranslateOptions::max_instants)");
  }
}

// The time line: every block's gradients, pulses and ADCs, and its duration.
double block_duration(const PulseqFile& file, const Block& b, double events_end,
                      const Failure& fail, bool* overran) {
  double duration = b.duration_s;
  if (!file.version.at_least(1, 4)) {
    double latest = events_end;
    if (b.delay_id != 0) latest = std::max(latest, file.delays.at(b.delay_id).delay_s);
    const double r = file.definitions.block_duration_raster_s;
    duration = std::ceil(latest / r - 1e-9) * r;
  } else if (events_end > duration * (1.0 + 1e-9) + 1e-12) {
    // Files on rasters that are not whole microseconds (tabletop systems)
    // overrun by less than one raster cell; more is an error in the file.
    const auto& defs = file.definitions;
    const double cell =
        std::max({defs.gradient_raster_s, defs.rf_raster_s, defs.block_duration_raster_s});
    if (events_end > duration + cell) {
      fail(b.id, b.id,
           "its events end at " + fixed(events_end * 1e6, 3) + " us, past the block's duration (" +
               fixed(duration * 1e6, 3) + " us)");
    }
    if (overran != nullptr) *overran = true;
    duration = events_end;
  }
  // A block's time becomes event durations; a block longer than a day is a
  // units or typing error.
  if (!(duration <= kLongestBlockSeconds)) {
    fail(b.id, b.id,
         "it lasts " + std::to_string(duration) + " s (its delays and events; more than a day)");
  }
  return duration;
}

void Translation::lay_blocks() {
  pulses_.assign(file_.blocks.size(), std::nullopt);
  bool overrun_noted = false;
  double now = 0.0;
  for (std::size_t bi = 0; bi < file_.blocks.size(); ++bi) {
    const Block& b = file_.blocks[bi];
    BlockGradients g = gradients_of(file_, b, fail_);
    double latest = g.end;
    if (b.delay_id != 0) latest = std::max(latest, file_.delays.at(b.delay_id).delay_s);
    if (b.rf != 0) {
      pulses_[bi] = analyse_pulse(file_, b, g, options_, fail_);
      latest = std::max(latest, pulses_[bi]->rf->delay_s + pulses_[bi]->sampling.duration);
    }
    if (b.adc != 0) {
      const AdcEvent& adc = file_.adc.at(b.adc);
      latest = std::max(latest, adc.delay_s + adc.samples * adc.dwell_s);
      // The receiver demodulates at its phase and frequency offsets (ppm of
      // the Larmor frequency included), the frequency's phase ramp starting
      // at the ADC's start, and by a 1.5 phase shape (turns per sample).
      const bool ppm = adc.phase_ppm != 0.0 || adc.freq_ppm != 0.0;
      const double f0 = ppm ? larmor_frequency_mhz(file_, options_, b.id, fail_) : 0.0;
      PendingAdc pending{bi, &adc, adc.phase_rad + adc.phase_ppm * f0,
                         adc.freq_hz + adc.freq_ppm * f0, nullptr};
      if (adc.phase_shape != 0) {
        pending.phase_shape = &shape_of(file_, adc.phase_shape, b.id, fail_, "ADC phase");
        if (int(pending.phase_shape->values.size()) != adc.samples) {
          fail_(b.id, b.id,
                "the ADC's phase shape has " + std::to_string(pending.phase_shape->values.size()) +
                    " values for " + std::to_string(adc.samples) + " samples");
        }
      }
      pending_adcs_.push_back(pending);
    }
    bool overran = false;
    const double duration = block_duration(file_, b, latest, fail_, &overran);
    if (overran && !overrun_noted) {
      report_.warnings.push_back(
          "block " + std::to_string(b.id) +
          " and others: events end up to one raster cell after the block's duration (" +
          fixed((latest - b.duration_s) * 1e9, 1) +
          " ns here); the block is lengthened to hold them");
      overrun_noted = true;
    }
    starts_.push_back(now);
    gradients_.push_back(std::move(g));
    now += duration;
  }
  end_ = now;
  report_.duration_s = now;
  // Moment vector since t = 0 at any time: whole blocks before it plus its own part.
  block_start_moment_.assign(file_.blocks.size() + 1, Vec3{0, 0, 0});
  for (std::size_t bi = 0; bi < file_.blocks.size(); ++bi) {
    block_start_moment_[bi + 1] = add(gradients_[bi].moment(1e300), block_start_moment_[bi]);
  }
}

// Before any instant is made: how many the file will make (an off-resonant
// pulse is one per sample; every_sample keeps every ADC sample), refused at
// once past the limit with what makes them.
void Translation::count_instants() const {
  long long total = 0, adc_samples = 0;
  const bool every = options_.adc == AdcSampling::every_sample;
  for (std::size_t bi = 0; bi < file_.blocks.size(); ++bi) {
    if (pulses_[bi]) ++total;  // one instant, however many samples it plays
    const Block& b = file_.blocks[bi];
    if (b.adc != 0) {
      // Choosing a readout's sample walks its samples, kept or not.
      const long long samples = file_.adc.at(b.adc).samples;
      if (samples > options_.max_instants) {
        fail_(b.id, b.id,
              "the ADC has " + std::to_string(samples) + " samples, more than the " +
                  std::to_string(options_.max_instants) +
                  " pulses and samples allowed (max_instants in [sequence])");
      }
      const long long n = every ? samples : 1;
      total += n;
      adc_samples += n;
    }
    if (total > options_.max_instants) {
      fail_(file_.blocks.front().id, b.id,
            "up to here the file makes " + std::to_string(total) +
                " pulses and samples, more than the " + std::to_string(options_.max_instants) +
                " allowed (max_instants in [sequence]; each takes about 100 bytes): " +
                std::to_string(adc_samples) + " of them samples");
    }
  }
}

Vec3 Translation::moment_at(std::size_t block_index, double t_abs) const {
  return add(gradients_[block_index].moment(t_abs - starts_[block_index]),
             block_start_moment_[block_index]);
}

// The voxel's slice: that of the first selective excitation (a saturation
// band or a refocusing pulse before it does not place the voxel), else of
// the first selective pulse.
void Translation::place_voxel() {
  const PulseAnalysis* reference = nullptr;
  for (int pass = 0; pass < 2 && reference == nullptr; ++pass) {
    for (const auto& p : pulses_) {
      if (p && p->selective && dot(p->gradient, p->gradient) > 0.0 && (pass == 1 || excites(*p))) {
        reference = &*p;
        break;
      }
    }
  }
  if (reference == nullptr) return;
  const Vec3& grad = reference->gradient;
  const double g2 = dot(grad, grad);
  slice_position_ = scaled(reference->freq / g2, grad);
  report_.slice_position_m = slice_position_;
  report_.slice_normal = scaled(1.0 / std::sqrt(g2), grad);
  if (slice_given_) return;
  // The slice: the full width at half maximum of the small-tip profile over
  // the slice-select gradient.
  const double thickness = reference->half_maximum_width() / std::sqrt(g2);
  int axis = 0;
  for (int a = 1; a < 3; ++a) {
    if (std::fabs(grad[a]) > std::fabs(grad[axis])) axis = a;
  }
  if (thickness > 0.0 && thickness < 0.1) {
    report_.voxel_size_m[axis] = thickness;
    report_.voxel_source += "; slice " + fixed(thickness * 1e3, 2) +
                            " mm: the first selective excitation's profile (FWHM)";
  }
}

}  // namespace detail

sequence::Description to_description(const PulseqFile& file, const TranslateOptions& options,
                                     TranslationReport* report_out) {
  // Filled as the translation goes, so that a refusal still shows what was understood.
  TranslationReport local_report;
  TranslationReport& report = report_out != nullptr ? *report_out : local_report;
  return detail::Translation(file, options, report).run();
}

}  // namespace larmor::io::pulseq
