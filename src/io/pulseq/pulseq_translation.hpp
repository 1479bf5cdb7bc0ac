// The translation of a Pulseq file into events, step by step (docs/pulseq.md):
// lay the blocks on a time line; place the voxel; make the pulses' instants
// (a rotation, hard pulses, or a rotation per slice position); keep each ADC's
// sample at the k-space centre; then quantise the moments between the
// instants (pulseq_moments.cpp). Private to src/io/pulseq.
#pragma once

#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "io/pulseq/pulseq_detail.hpp"

namespace larmor::io::pulseq::detail {

// A number with `digits` decimals, for the translation's messages.
inline std::string fixed(double v, int digits) {
  std::ostringstream s;
  s.precision(digits);
  s << std::fixed << v;
  return s.str();
}

// A pulse or a kept sample on the time line.
struct TimedInstant {
  double t = 0.0;  // absolute
  int block_index = 0;
  sequence::Event event;
  int echo_of = -1;        // every_sample: the index of its ADC's echo sample
  Vec3 readout{0, 0, 0};   // adc: 1 on the axes its readout gradient moves along
  bool refocuses = false;  // pulse: reverses the k-space position it acts on
  // Where its moment is taken: its own time, or (a hard pulse of a split
  // selective pulse) the pulse's centre, so that the slice-select gradient
  // acts around the whole pulse as it does around one rotation.
  double moment_time = -1.0;
  // How long the instant lasts: a pulse played from its waveform, its length.
  double length = 0.0;
};

// What a pulse does to the k-space position of the signal that is sampled.
enum class Role { excites, refocuses, none };

struct PulseTrack {
  double t = 0.0;
  Role role = Role::none;  // none: an excitation of another slice
  int block = 0;
};

struct PendingAdc {
  std::size_t block_index = 0;
  const AdcEvent* adc = nullptr;
  double phase = 0.0;         // rad
  double frequency_hz = 0.0;  // demodulation offset
  const Shape* phase_shape = nullptr;
  // The receiver's phase at sample n: the offsets', the frequency's ramp
  // from the ADC's start, the shape's (turns).
  double phase_at(int n) const;
};

// Which sample of an ADC is kept, and why.
struct SampleChoice {
  int echo = 0;
  double turns = 0.0;  // from the k-space centre, across the voxel
  Vec3 k{0, 0, 0};
  Vec3 swept{0, 0, 0}, readout{0, 0, 0};
  std::string how;
  bool dropped = false, encoded = false;
};

class Translation {
 public:
  Translation(const PulseqFile& file, const TranslateOptions& options, TranslationReport& report);
  sequence::Description run();

 private:
  // pulseq_events.cpp
  void lay_blocks();
  void count_instants() const;
  void place_voxel();
  Vec3 moment_at(std::size_t block_index, double t_abs) const;
  void reserve(const Block& b, long long more) const;
  // pulseq_instants.cpp
  void add_pulses();
  bool split(const PulseAnalysis& p) const;
  bool excites(const PulseAnalysis& p) const;
  void add_instant_pulse(std::size_t bi, const PulseAnalysis& p, PulseRecord& record,
                         std::uint32_t bits);
  void add_waveform_pulse(std::size_t bi, const PulseAnalysis& p, PulseRecord& record,
                          std::uint32_t bits);
  int waveform_index(sequence::PulseWaveform w);
  void add_played_pulse(std::size_t bi, const PulseAnalysis& p, PulseRecord& record,
                        std::uint32_t bits);
  int played_profile(std::size_t bi, const PulseAnalysis& p);
  std::vector<SampleChoice> choose_samples() const;
  void add_samples();
  InstantTrack sorted_track() const;

  const PulseqFile& file_;
  const TranslateOptions& options_;
  TranslationReport& report_;
  Failure fail_;
  bool slice_given_ = true;
  std::vector<BlockGradients> gradients_;
  std::vector<double> starts_;
  std::vector<std::optional<PulseAnalysis>> pulses_;
  std::vector<PendingAdc> pending_adcs_;
  std::vector<Vec3> block_start_moment_;
  double end_ = 0.0;
  Vec3 slice_position_{0, 0, 0};
  std::vector<TimedInstant> instants_;
  std::vector<PulseTrack> track_;
  // Played pulses (slice profiles), one per distinct played pulse, found by
  // a digest of its samples.
  std::vector<sequence::SliceProfileSpec> profiles_;
  std::multimap<double, int> profile_of_;
  // Waveform pulses' waveforms, one per distinct waveform, found likewise.
  std::vector<sequence::PulseWaveform> waveforms_;
  std::multimap<double, int> waveform_of_;
  std::map<std::tuple<int, int, int>, double> half_widths_;
};

}  // namespace larmor::io::pulseq::detail
