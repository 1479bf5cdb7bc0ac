// Translation of a Pulseq file into larmor events (docs/pulseq.md).
//
// RF pulses become instantaneous rotations at their centre (flip from the
// modulus of the complex envelope's integral, phase from its argument plus
// the event's phase), except non-selective pulses with a frequency offset,
// which are split into their samples (hard pulses with the offset's phase
// ramp, each carrying its power for a bound pool). ADCs become recorded
// samples (one at the echo centre, or every sample). Gradients are not
// events: the moment vector between consecutive instants is quantised to
// whole multiples of one crusher moment; moments rewound between two pulses
// are imaging encoding and are dropped; a moment with a component of at least
// one crusher moment across the crusher direction spoils. What cannot be
// written this way is refused with the blocks and the reason.
#pragma once

#include <array>
#include <optional>
#include <string>

#include "formats/pulseq/pulseq_file.hpp"
#include "sequence/description.hpp"

namespace larmor::formats::pulseq {

enum class AdcSampling {
  echo_centre,  // one recorded sample per ADC, at sample N/2 (the echo centre)
  every_sample  // every ADC sample recorded, the one at N/2 marked echo_centre
};

// [DEFINITIONS] key larmor writes (and reads) to declare the crusher moment:
// three numbers, the moment vector in 1/m (cycles per metre).
inline constexpr const char* crusher_moment_definition = "LarmorCrusherMoment";

struct TranslateOptions {
  AdcSampling adc = AdcSampling::echo_centre;
  // Declared crusher moment [1/m] per logical axis; when absent, the
  // definition above, else the most frequent non-zero gap moment.
  std::optional<std::array<double, 3>> crusher_moment;
  bool split_all_pulses = false;  // split every pulse into hard pulses
  // Refuse files that would translate to more instants than this (an ADC's
  // sample count, or a split pulse's, is only a number in the file).
  long long max_instants = 1ll << 24;
};

struct TranslationReport {
  std::array<double, 3> crusher_moment{};  // what the quantisation used [1/m]
  std::string crusher_source;              // "option", "definition", "detected", "none"
  int encoding_axes_dropped = 0;           // (pulse-to-pulse span, axis) pairs
  int spoiled_gaps = 0;
  int split_pulses = 0;
};

// Throws PulseqError naming the file, the blocks and the reason.
sequence::Description to_description(const PulseqFile& file, const TranslateOptions& options = {},
                                     TranslationReport* report = nullptr);

}  // namespace larmor::formats::pulseq
