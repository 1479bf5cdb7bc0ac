#include "io/pulseq/pulseq_steps.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <stdexcept>
#include <string>

#include "io/pulseq/pulseq_translation.hpp"

namespace larmor::io::pulseq {
namespace {

using detail::Vec3;
constexpr double kTwoPi = 6.283185307179586;

// A pulse as cells: the envelope (rad/s, the event's phase included) held
// over each cell, and the cells' edges (block-local).
struct PulseCells {
  std::vector<double> edges;                   // cells + 1
  std::vector<std::complex<double>> envelope;  // per cell
  double offset_hz = 0.0, ramp_origin = 0.0;   // block-local
  char use = 'u';                              // the event's Pulseq use
};

PulseCells pulse_cells(const detail::PulseAnalysis& p, double raster, long long max_cells) {
  PulseCells cells;
  const RfEvent& rf = *p.rf;
  const std::complex<double> event_phase = std::polar(1.0, p.event_phase);
  cells.offset_hz = p.freq;
  cells.use = rf.use;
  cells.ramp_origin = rf.delay_s + p.ramp_origin;
  const int n = p.mag->samples;
  if (rf.time_shape == 0) {
    for (int i = 0; i <= n; ++i) cells.edges.push_back(rf.delay_s + i * raster);
    for (int i = 0; i < n; ++i) cells.envelope.push_back(p.sample_value(i) * event_phase);
    return cells;
  }
  // A time shape: the envelope linear between its points, each span cut into
  // raster cells, each cell holding the envelope at its middle.
  const auto& t = p.sampling.t;
  cells.edges.push_back(rf.delay_s + t[0]);
  for (int i = 0; i + 1 < n; ++i) {
    const double span = t[std::size_t(i) + 1] - t[std::size_t(i)];
    const double cells_here = std::max(1.0, std::ceil(span / raster - 1e-9));
    if (double(cells.envelope.size()) + cells_here > double(max_cells)) {
      throw std::length_error("its RF time shape spans more than " + std::to_string(max_cells) +
                              " raster cells");
    }
    const int steps = int(cells_here);
    const auto a = p.sample_value(i), b = p.sample_value(i + 1);
    for (int s = 1; s <= steps; ++s) {
      cells.edges.push_back(rf.delay_s + t[std::size_t(i)] + span * s / steps);
      const double middle = (s - 0.5) / steps;
      cells.envelope.push_back((a + (b - a) * middle) * event_phase);
    }
  }
  return cells;
}

class StepBuilder {
 public:
  StepBuilder(const PulseqFile& file, const StepOptions& options)
      : file_(file), options_(options), fail_{file}, writer_(table_) {
    translate_.b0_t = options.b0_t;
  }

  sequence::StepTable run() {
    double block_start = 0.0;
    for (const Block& b : file_.blocks) {
      if (block_start > options_.end_time_s) break;
      try {
        block_start += play_block(b, block_start);
      } catch (const std::range_error& e) {
        fail_(b.id, b.id, e.what());
      }
    }
    writer_.end_span(block_start);
    try {
      writer_.flush();
    } catch (const std::range_error& e) {
      const int last = file_.blocks.empty() ? 0 : file_.blocks.back().id;
      fail_(last, last, e.what());
    }
    table_.duration_s = block_start;
    sequence::mark_rewound_encodes(table_);
    choose_voxel();
    return std::move(table_);
  }

 private:
  // Plays one block; returns its duration.
  double play_block(const Block& b, double block_start) {
    const detail::BlockGradients g = detail::gradients_of(file_, b, fail_);
    double events_end = g.end;
    std::optional<PulseCells> pulse;
    if (b.rf != 0) {
      const auto analysis = detail::analyse_pulse(file_, b, g, translate_, fail_);
      try {
        pulse = pulse_cells(analysis, file_.definitions.rf_raster_s,
                            options_.max_steps - (long long)table_.steps());
      } catch (const std::length_error& e) {
        fail_(b.id, b.id, e.what());
      }
      place_slice(analysis);
      events_end = std::max(events_end, pulse->edges.back());
    }
    const AdcEvent* adc = b.adc != 0 ? &file_.adc.at(b.adc) : nullptr;
    std::vector<double> sample_times;
    std::vector<std::complex<double>> demodulation;
    if (adc != nullptr) {
      events_end = std::max(events_end, adc->delay_s + adc->samples * adc->dwell_s);
      // A sample count is only a number in the file: bound it before any is made.
      if (double(table_.samples()) + double(adc->samples) >= double(bloch::max_sample_slots) ||
          double(table_.steps()) + double(adc->samples) > double(options_.max_steps)) {
        fail_(b.id, b.id,
              "its ADC's " + std::to_string(adc->samples) + " samples take the file past " +
                  std::to_string(std::min<long long>(bloch::max_sample_slots, options_.max_steps)) +
                  " isochromat steps or samples");
      }
      receiver(b, *adc, sample_times, demodulation);
    }
    const double duration = detail::block_duration(file_, b, events_end, fail_, nullptr);

    std::vector<double> points = {0.0, duration};
    if (pulse) {
      points.insert(points.end(), pulse->edges.begin(), pulse->edges.end());
      // A gradient's corners during the pulse split its cells: the field is
      // then linear over each step, as its mean assumes.
      for (const auto& axis : g.axes) {
        for (const auto& segment : axis.segments) {
          for (double t : {segment.t0, segment.t1}) {
            if (t > pulse->edges.front() && t < pulse->edges.back()) points.push_back(t);
          }
        }
      }
    }
    points.insert(points.end(), sample_times.begin(), sample_times.end());
    for (double& p : points) p = std::clamp(p, 0.0, duration);
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
    if (double(table_.samples()) + double(sample_times.size()) >= double(bloch::max_sample_slots)) {
      fail_(b.id, b.id, "the file has more than 2^24 samples by this block");
    }
    if (double(table_.records.size()) / bloch::step_floats + double(points.size()) >
        double(options_.max_steps)) {
      fail_(b.id, b.id,
            "the file needs more than " + std::to_string(options_.max_steps) +
                " isochromat steps by this block");
    }

    if (pulse) writer_.end_span(block_start + pulse->edges.front());
    std::size_t next_sample = 0;
    Vec3 moment_before = g.moment(0.0);
    for (std::size_t i = 0; i + 1 < points.size(); ++i) {
      const double t0 = points[i], t1 = points[i + 1], dt = t1 - t0;
      const Vec3 moment_after = g.moment(t1);
      const Vec3 moment = detail::minus(moment_after, moment_before);
      moment_before = moment_after;
      const double middle = 0.5 * (t0 + t1);
      if (pulse && middle > pulse->edges.front() && middle < pulse->edges.back()) {
        const auto cell =
            std::size_t(std::upper_bound(pulse->edges.begin(), pulse->edges.end(), middle) -
                        pulse->edges.begin() - 1);
        const std::complex<double> w1 =
            pulse->envelope[std::min(cell, pulse->envelope.size() - 1)] *
            std::polar(1.0, kTwoPi * pulse->offset_hz * (t0 - pulse->ramp_origin));
        writer_.rf(dt, w1.real(), w1.imag(), detail::scaled(1.0 / dt, moment), pulse->offset_hz,
                   pulse->use);
      } else if (dt > 0.0) {
        writer_.free(dt, moment);
      }
      while (next_sample < sample_times.size() && sample_times[next_sample] <= t1) {
        if (block_start + sample_times[next_sample] > options_.end_time_s) break;
        // Sample n of the ADC is the block's n-th sample.
        const int n = int(next_sample);
        if (options_.every_sample || n == adc->samples / 2) {
          const auto& d = demodulation[next_sample];
          writer_.sample(d.real(), d.imag(), block_start + sample_times[next_sample], b.id, n,
                         n == adc->samples / 2);
        }
        ++next_sample;
      }
    }
    return duration;
  }

  // The voxel: given, else from the file's definitions; along the slice axis
  // (where the file does not state it) the slice and its tails.
  void choose_voxel() {
    table_.every_sample = options_.every_sample;
    if (options_.voxel_size_m) {
      table_.voxel_size_m = *options_.voxel_size_m;
      table_.voxel_source = "option";
      return;
    }
    bool slice_given = false;
    std::vector<std::string> warnings;
    table_.voxel_size_m =
        detail::voxel_from_definitions(file_, table_.voxel_source, slice_given, warnings);
    const double thickness = table_.slice_thickness_m;
    if (slice_given || !(thickness > 0.0 && thickness < 0.1)) return;
    std::size_t axis = 0;
    for (std::size_t a = 1; a < 3; ++a) {
      if (std::fabs(table_.slice_normal[a]) > std::fabs(table_.slice_normal[axis])) axis = a;
    }
    table_.voxel_size_m[axis] = 2.0 * thickness;
    table_.sample_scale = 2.0;
    table_.voxel_source += "; along " + std::string(1, char('x' + axis)) +
                           " twice the first selective pulse's slice (FWHM " +
                           detail::fixed(thickness * 1e3, 2) + " mm)";
  }

  // The first slice-selective pulse's slice.
  void place_slice(const detail::PulseAnalysis& p) {
    const double g2 = detail::dot(p.gradient, p.gradient);
    if (placed_ || !p.selective || !(g2 > 0.0)) return;
    placed_ = true;
    table_.slice_position_m = detail::scaled(p.freq / g2, p.gradient);
    table_.slice_normal = detail::scaled(1.0 / std::sqrt(g2), p.gradient);
    table_.slice_thickness_m = p.half_maximum_width() / std::sqrt(g2);
  }

  // The ADC's sample times (block-local) and the receiver's demodulation.
  void receiver(const Block& b, const AdcEvent& adc, std::vector<double>& times,
                std::vector<std::complex<double>>& demodulation) const {
    if (adc.samples < 0 || (adc.samples > 0 && !(adc.dwell_s > 0.0))) {
      fail_(b.id, b.id, "its ADC needs a positive dwell and a non-negative sample count");
    }
    const bool ppm = adc.phase_ppm != 0.0 || adc.freq_ppm != 0.0;
    const double f0 = ppm ? detail::larmor_frequency_mhz(file_, translate_, b.id, fail_) : 0.0;
    detail::PendingAdc pending{0, &adc, adc.phase_rad + adc.phase_ppm * f0,
                               adc.freq_hz + adc.freq_ppm * f0, nullptr};
    if (adc.phase_shape != 0) {
      pending.phase_shape = &detail::shape_of(file_, adc.phase_shape, b.id, fail_, "ADC phase");
      if (int(pending.phase_shape->values.size()) != adc.samples) {
        fail_(b.id, b.id, "the ADC's phase shape does not have one value per sample");
      }
    }
    for (int n = 0; n < adc.samples; ++n) {
      times.push_back(adc.delay_s + (n + 0.5) * adc.dwell_s);
      demodulation.push_back(std::polar(1.0, -pending.phase_at(n)));
    }
  }

  const PulseqFile& file_;
  const StepOptions& options_;
  detail::Failure fail_;
  TranslateOptions translate_;
  sequence::StepTable table_;
  sequence::StepTableWriter writer_;
  bool placed_ = false;
};

}  // namespace

sequence::StepTable to_step_table(const PulseqFile& file, const StepOptions& options) {
  return StepBuilder(file, options).run();
}

}  // namespace larmor::io::pulseq
