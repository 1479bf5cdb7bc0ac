// Translation of a Pulseq file into larmor events (docs/pulseq.md).
//
// The simulated voxel sits in the slice of the first slice-selective pulse.
// RF pulses that reach it become instantaneous rotations at their centre
// (flip from the modulus of the complex envelope's integral, phase from its
// argument plus the event's phase); pulses that excite another slice miss it;
// non-selective pulses with a frequency offset are split into their samples.
// Each ADC with a readout gradient keeps the sample where the k-space
// trajectory (the moment since the last excitation, reversed by refocusing
// pulses) is closest to the centre, and is dropped when that is not within
// the in-phase tolerance (an EPI line away from the centre). Gradients are
// not events: the moment between consecutive instants is judged by the turns
// it winds across the voxel, then written as whole crusher moments, an ideal
// spoil, or refused with the blocks and the reason.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "io/pulseq/pulseq_file.hpp"
#include "sequence/description.hpp"

namespace larmor::io::pulseq {

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
  // definition above, else the most frequent gap moment that dephases.
  std::optional<std::array<double, 3>> crusher_moment;
  // The simulated voxel's edges [m] along the gradient axes; when absent, the
  // file's FOV divided by its matrix ([DEFINITIONS]), else 1 mm each. A moment
  // m winds sum_i |m_i| d_i turns across it: that decides what dephases.
  std::optional<std::array<double, 3>> voxel_size_m;
  // Main field [T] for ppm offsets; when absent, [DEFINITIONS] B0.
  std::optional<double> b0_t;
  // Which pulses are played as hard pulses (relaxation and off-resonance act
  // during them) rather than as one rotation at their centre: every pulse;
  // pulses that are not slice-selective and either last longer than
  // long_pulse_s or are off resonance (the default); only the off-resonant
  // ones, which one rotation cannot represent.
  enum class Splitting { all, long_pulses, off_resonant };
  Splitting split = Splitting::long_pulses;
  double long_pulse_s = 1e-3;
  // Slice-selective pulses act as their own waveform under their own
  // gradient at each of slice_positions positions across two slice
  // thicknesses (the voxel's slice and its tails); false: as one rotation at
  // the slice's centre, the ideal slab.
  bool slice_profile = true;
  int slice_positions = 128;
  // RF uses (Pulseq 1.5 letters: e r i s p o) whose pulses B1 does not scale
  // (action::b1_fixed), "i" for ideal inversions; a file with none of them is
  // refused rather than run with every pulse scaled.
  std::string b1_fixed_uses;
  // Refuse files that would translate to more instants than this (an ADC's
  // sample count, or a split pulse's, is only a number in the file).
  long long max_instants = 1ll << 24;
  // The longest T2 [s] of the run's tissue (every pool): a gap after which
  // transverse magnetisation has decayed below transverse_floor of itself in
  // every voxel spoils, whatever its moment. Absent: no gap is judged so.
  std::optional<double> longest_t2_s;
};

// A residual moment that winds at most this many turns across the voxel
// leaves its spins in phase (it changes a box voxel's signal by at most
// 1 - sinc(1/20), 0.4 %); one that winds a whole turn or more dephases it.
inline constexpr double in_phase_turns = 0.05;
// A span's moment off whole orders spoils (ideally) where a state it
// dephases keeps at most this fraction of itself at any later order (the
// largest |mean over the voxel of exp(i 2 pi (m + k u).x)|), times what T2
// leaves of it over the span (longest_t2_s).
inline constexpr double spoiled_leftover = 0.05;
// Transverse magnetisation below this fraction of itself is gone (a gap of
// -ln(1e-6) T2 = 13.8 T2 spoils).
inline constexpr double transverse_floor = 1e-6;

// What the translation understood, for `larmor inspect` and the start of a run.
struct PulseRecord {
  int block = 0;
  double time_s = 0.0;  // centre
  double flip_deg = 0.0, phase_deg = 0.0;
  char use = 'u';
  std::string how;  // "instant", "split into N hard pulses", "misses the voxel (...)"
};

struct AdcRecord {
  int block = 0;
  double time_s = 0.0;  // kept sample (or the ADC's start when dropped)
  int samples = 0;
  int kept_sample = -1;                 // -1: dropped
  std::array<double, 3> swept_per_m{};  // moment the readout sweeps from first to last sample
  std::string how;  // "k-space centre", "sample N/2 (no readout gradient)", why dropped
};

struct TranslationReport {
  std::string version;
  std::size_t blocks = 0;
  double duration_s = 0.0;
  std::array<double, 3> voxel_size_m{};
  std::string voxel_source;                  // "option", "definitions (FOV / matrix)", "default"
  std::array<double, 3> crusher_moment{};    // what the quantisation used [1/m]
  std::string crusher_source;                // "option", "definition", "detected", "none"
  std::array<double, 3> slice_position_m{};  // the voxel's position along the slice normal
  std::array<double, 3> slice_normal{};      // unit; zero without a selective pulse
  int encoding_axes_dropped = 0;             // (pulse-to-pulse span, axis) pairs
  int shifted_gaps = 0, in_phase_gaps = 0, spoiled_gaps = 0;
  int relaxed_gaps = 0;                 // spoiled because T2 has decayed (longest_t2_s)
  int weighted_samples = 0;             // recorded as the voxel's mean over orders
  double largest_residual_turns = 0.0;  // the largest span moment rounded away, across the voxel
  double largest_drift_turns = 0.0;     // what those add up to at a pulse
  double largest_spoil_leftover = 0.0;  // the most an ideally spoiled state keeps in the voxel
  double largest_sample_residual_turns = 0.0;  // a sample's moment beyond whole orders
  // Half the half-maximum width of the narrowest pulse that acts as one
  // rotation [Hz]: off-resonance beyond it is not rotated as EPG assumes.
  double narrowest_half_bandwidth_hz = 0.0;
  int waveform_pulses = 0, missed_pulses = 0, dropped_adcs = 0;
  std::vector<PulseRecord> pulses;
  std::vector<AdcRecord> adcs;
  std::vector<std::string> warnings;  // reader warnings and the translation's assumptions
};

// The report as text, one line per item (pulses and ADCs up to `detail_rows`
// each, then a count).
std::string format_report(const TranslationReport& report, int detail_rows = 12);

// Throws PulseqError naming the file, the blocks and the reason.
sequence::Description to_description(const PulseqFile& file, const TranslateOptions& options = {},
                                     TranslationReport* report = nullptr);

}  // namespace larmor::io::pulseq
