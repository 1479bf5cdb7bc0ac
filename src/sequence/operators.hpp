// Composable operators: the vocabulary every builder and module emits.
//
// Each operator appends one event to a description. `then_s` is the free
// evolution that follows the operator's instant and its crusher lobes (a
// declared lobe duration adds its own time: Description::lobe_time_after_s).
// `b1_scaled = false` makes a pulse's flip the nominal one in every voxel (an
// inversion modelled as ideal whatever B1 is): it keeps every fast path and
// adds nothing to dS/dB1. A module written outside the
// library (a T2 preparation, say) uses the same operators, or appends Events
// directly, and reaches the kernels unchanged.
#pragma once

#include <complex>
#include <vector>

#include "sequence/description.hpp"

namespace larmor::sequence {

inline constexpr double deg = 3.14159265358979323846 / 180.0;

// Hard pulses (Excitation, Refocusing) rotate at their instant. With a
// duration_s > 0 the pulse is a rectangular hard pulse of that length centred
// on the instant (the timing is unchanged: `then_s` still follows the
// instant), and carries its power integral, omega1^2 duration = flip_rad^2 /
// duration_s (rad^2/s), in `saturation` for a bound pool (docs/physics.md,
// "Bound-pool lineshapes"). 0: instantaneous, no power integral. A negative
// or non-finite duration throws std::invalid_argument.

// An RF pulse that tips magnetisation; no gradients around it.
struct Excitation {
  double flip_deg = 90.0;
  double phase_deg = 0.0;
  double then_s = 0.0;
  std::uint32_t extra_action = 0;  // e.g. spoil_after for an inversion
  double duration_s = 0.0;         // rectangular hard pulse (see above); 0: instantaneous
  bool b1_scaled = true;
};

// A refocusing pulse between two equal crushers: one operator, because the
// crushers only make sense around the pulse they protect.
struct Refocusing {
  double flip_deg = 180.0;
  double phase_deg = 90.0;
  double then_s = 0.0;
  bool crushers = true;
  double duration_s = 0.0;  // rectangular hard pulse (see above); 0: instantaneous
  bool b1_scaled = true;
};

// What the gradients do after a readout.
enum class AfterReadout { nothing, shift, spoil };

struct Readout {
  double phase_deg = 0.0;  // receiver phase
  double then_s = 0.0;
  bool echo_centre = true;
  AfterReadout after = AfterReadout::nothing;
};

// An unbalanced gradient: dephase by one order.
struct Dephase {
  double then_s = 0.0;
};

// Ideal spoiling of all transverse states.
struct Spoil {
  double then_s = 0.0;
};

// Free evolution alone.
struct Delay {
  double then_s = 0.0;
};

// A shaped (non-selective) RF pulse as hard pulses: the complex waveform
// `shape` (any units) is split into its samples, each an instantaneous pulse
// of flip flip_deg |s_i| / |sum s| at phase phase_deg + arg s_i, a sample
// spacing dt = duration_s / N apart with dt / 2 before the first and after
// the last (then `then_s`), so relaxation and off-resonance act during the
// pulse. The small-tip area of the whole pulse is flip_deg. Accurate to
// O(dt^2) against the Bloch equations (tests/epg/tstBuilders.hpp).
//
// An RF frequency offset (an off-resonant saturation pulse, for instance)
// adds its phase ramp, 360 f (t_i - duration / 2) degrees, to each sample, and
// every sample carries the offset in rf_frequency_hz and its power
// omega1^2 dt = flip_i^2 / dt (rad^2/s) in `saturation`, for a bound pool. The
// ramp needs samples short against the offset: f dt << 1.
struct ShapedPulse {
  std::vector<std::complex<double>> shape;
  double flip_deg = 90.0;
  double duration_s = 1e-3;
  double phase_deg = 0.0;
  double then_s = 0.0;
  double frequency_offset_hz = 0.0;
  bool b1_scaled = true;
};

Description& operator<<(Description& d, const Excitation& op);
Description& operator<<(Description& d, const ShapedPulse& op);
Description& operator<<(Description& d, const Refocusing& op);
Description& operator<<(Description& d, const Readout& op);
Description& operator<<(Description& d, const Dephase& op);
Description& operator<<(Description& d, const Spoil& op);
Description& operator<<(Description& d, const Delay& op);

}  // namespace larmor::sequence
