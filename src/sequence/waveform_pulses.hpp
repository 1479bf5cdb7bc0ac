// Pulses played from their waveforms (EventKind::waveform_pulse): checks, the
// table the kernels integrate (kernels/epg/waveform_pulse.hpp), and the same
// pulses as hard pulses at their samples' centres for the kernels that take
// no waveforms (reverse modes, pooled models): the kernels' integration is
// exactly that sequence of turns and free evolutions, so both agree to
// rounding.
#pragma once

#include <cstdint>
#include <vector>

#include "sequence/description.hpp"

namespace larmor::sequence {

// Throws std::invalid_argument naming the waveform and run whose angle,
// phase or duration is not finite, whose duration is not positive, whose
// sample count is not positive or exceeds the kernels' 32-bit count, or a
// waveform without samples.
void validate_waveforms(const Description& d);

// The host image of the kernels' waveform views (epg::WaveformViews).
struct WaveformTable {
  std::vector<float> runs;                // [run][angle, cos phase, sin phase, dt]
  std::vector<std::int32_t> run_samples;  // [run]
  std::vector<std::int32_t> span;         // [waveform][first run, end run]
  std::vector<float> frame;               // [waveform][rf Hz, cos turn, sin turn, length, flip]
  int waveforms() const { return int(span.size() / 2); }
};
WaveformTable build_waveform_table(const Description& d);

// Whether any event is a waveform pulse.
bool has_waveform_pulses(const Description& d);

// The description with each waveform pulse as one hard pulse per sample, at
// the sample's centre: flip = its angle, phase = the event's + the sample's +
// the RF frequency's ramp since the pulse's start, rf_frequency_hz and
// saturation (angle^2 / dt) for a bound pool. The event's crush_before goes
// to the first, its other actions and its duration to the last; the event
// before gets the first half sample. `origin`, where given, receives for each
// event of the result the index of the event it comes from.
Description expand_waveform_pulses(const Description& d,
                                   std::vector<std::int64_t>* origin = nullptr);

}  // namespace larmor::sequence
