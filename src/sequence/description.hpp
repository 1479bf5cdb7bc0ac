// A sequence description: the list of events every front end (operators,
// builders, Pulseq, MRD) produces and the packer consumes.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "epg/event_abi.hpp"

namespace larmor::sequence {

using abi::EventKind;
namespace action = abi::action;

struct Event {
  EventKind kind = EventKind::wait;
  // Free evolution after the instant and its lobes: the gradient-free time to
  // the next event's lobes (Description::lobe_time_after_s adds theirs).
  double duration_s = 0.0;
  double flip_rad = 0.0;   // pulse only
  double phase_rad = 0.0;  // pulse: RF phase; adc: receiver phase
  std::uint32_t action = 0;
  std::int32_t shim_index = 0;
  float saturation = 0.0f;
  double rf_frequency_hz = 0.0;
  std::int32_t slice_profile = 0;  // pulse: 1-based into slice_profiles; 0: instantaneous
  std::int32_t waveform = 0;       // waveform_pulse: 1-based into Description::waveforms
  // adc: 1-based into voxel.residuals_per_m, the sample then records the mean
  // over the voxel (VoxelIntegral); 0: F+_0 alone.
  std::int32_t voxel_weights = 0;
};

// The one crusher moment a description declares: every shift bit dephases by
// it. Diffusion and flow are evaluated against it (docs/physics.md); an
// undeclared moment (0) leaves both terms absent.
struct CrusherGradient {
  double moment_per_m = 0.0;  // |k| of one order, cycles per metre (gamma/2pi * area)
  // Of one lobe: the time every shift bit takes (relaxation and precession run
  // through it) and the shift's own b-value and first moment. 0: instantaneous.
  double duration_s = 0.0;
  // Through-plane flow replaces spins that leave a slice of this thickness by
  // relaxed ones (washout); 0: no washout.
  double slice_thickness_m = 0.0;
  bool declared() const { return moment_per_m > 0.0; }
};

// Shim settings of a transmit array: setting s (a pulse's shim_index s >= 1)
// drives channel c with the complex weight weights[(s - 1) * channels + c].
// shim_index 0 is the scalar transmit field (b1) alone.
struct TransmitShims {
  int channels = 0;
  std::vector<std::complex<double>> weights;
  int settings() const { return channels > 0 ? int(weights.size()) / channels : 0; }
};

// A slice-selective pulse (sequence/slice_profile.hpp): its shape, played
// under a slice-select gradient, is integrated ahead of time across slice
// position into a table over position and effective flip. Positions are in
// units of the sequence's slice thickness; every profile of a description
// samples the same positions (the voxel is simulated once per position).
// A pulse played as written (a Pulseq file's): per sample its complex
// amplitude [rad/s] (scaled so that |sum a dt| is the pulse's flip), its
// duration, and the precession over it at slice position z (in the
// sequence's slice thicknesses) of centre + slope z cycles; then the turns
// about z, of the same form, that take the sequence's frame to the pulse's
// start and back from its end (the gradient and RF-frequency phase the
// description keeps outside the pulse). Its rotation at z is
//   Z(post) prod_n R(a_n dt_n, precession_n) Z(pre)   (src/sequence/slice_profile.cpp).
struct PlayedPulse {
  std::vector<std::complex<double>> amplitude_rad_s;
  std::vector<double> dt_s, centre_cycles, slope_cycles;
  double pre_centre_cycles = 0.0, pre_slope_cycles = 0.0;
  double post_centre_cycles = 0.0, post_slope_cycles = 0.0;
  bool empty() const { return amplitude_rad_s.empty(); }
};

// A pulse played from its waveform at each voxel's own off-resonance, relaxing
// as it plays (EventKind::waveform_pulse; src/sequence/waveform_pulses.hpp).
// Its samples, in the frame of its RF frequency (where a voxel precesses at
// df - rf_frequency_hz), as runs of equal samples: each turns by `angle_rad`
// about the axis at `phase_rad` (the frame's phase at the pulse's start is
// 0) and lasts `dt_s`, acting at its centre. `flip_rad` is the nominal flip
// the angles are written for: an event of flip f turns by angle x f /
// flip_rad (by the angles as written where flip_rad is 0).
struct WaveformRun {
  double angle_rad = 0.0, phase_rad = 0.0, dt_s = 0.0;
  std::int64_t samples = 0;
};
struct PulseWaveform {
  std::vector<WaveformRun> runs;
  double rf_frequency_hz = 0.0;
  double flip_rad = 0.0;
  double duration_s() const;
  std::int64_t samples() const;
};

struct SliceProfileSpec {
  std::string name;              // where it was declared (deck key), for messages
  std::vector<double> waveform;  // real RF amplitude samples, uniform in time
  double time_bandwidth = 4.0;   // of the pulse: bandwidth x duration
  double thickness = 1.0;        // this pulse's slice, in the sequence's slice thicknesses
  double rephase = 0.5;          // share of the slice-select area refocused after the pulse
  int positions = 32;            // slice profile resolution: positions across `extent`
  double extent = 2.0;           // slice thicknesses the positions span (centred)
  int flip_nodes = 129;          // interpolation nodes over [0, max_b1 x the largest flip]
  // Where given, the pulse as played, in place of waveform, time_bandwidth,
  // thickness and rephase.
  PlayedPulse played;
};

// The voxel a weighted sample averages over (docs/physics.md, "The voxel's own
// signal"). Every shift winds the moment u = order_moment_per_m, so at a point
// x of the voxel the transverse magnetisation is sum_k F_k exp(i 2 pi (k u + r).x)
// over signed orders (F_k = F+_k, F_-k = conj(F-_k)), r the moment a sample
// sees beyond whole orders since the last pulse. Its mean over a box of
// `edges_m` centred at `centre_m` weighs F_k by
//   V(k u + r) = exp(i 2 pi m.centre) prod_a sinc(m_a edge_a),   m = k u + r,
// sinc(x) = sin(pi x) / (pi x): F+_0 alone only where u winds whole turns
// across the box and r is zero. With slice profiles the positions run along
// `slice_axis`, each a slab of its width (edges_m[slice_axis] is the slice
// thickness they are measured in).
struct VoxelIntegral {
  std::array<double, 3> order_moment_per_m{};  // u [1/m]
  std::array<double, 3> edges_m{};
  std::array<double, 3> centre_m{};
  int slice_axis = 2;
  // r of each weighted sample [1/m], referred to by Event::voxel_weights.
  std::vector<std::array<double, 3>> residuals_per_m;
  bool declared() const { return !residuals_per_m.empty(); }
};

struct Description {
  std::string name;  // builder or file it came from
  std::vector<Event> events;
  CrusherGradient crusher;
  TransmitShims shims;
  std::vector<SliceProfileSpec> slice_profiles;
  std::vector<PulseWaveform> waveforms;
  VoxelIntegral voxel;
  // Parameters that produced it, written as attributes next to the signals.
  std::map<std::string, double> parameters;

  int sample_count() const;      // number of adc events
  int declared_winding() const;  // total shift bits over the stream
  // The time the crusher lobes take between event i's instant and the next
  // event's: its own crush_after and shift_after lobes and the next event's
  // crush_before lobe (the last event's holds the first event's, as a
  // repeated period does). 0 without a lobe duration.
  double lobe_time_after_s(std::size_t i) const;
  // The time event i's instant itself takes: a waveform pulse's length, else 0.
  double instant_length_s(std::size_t i) const;
  // Durations, lobes and waveform pulses, from the first instant.
  double total_duration_s() const;
  // Timestamp of event i's instant: the durations and lobes before it.
  std::vector<double> timestamps_s() const;
  void append(const Description& other);
};

// Declares crusher lobes of `lobe_s` that take their time out of the
// durations around them, so every instant keeps its time: builders and Pulseq
// files state instant-to-instant timing (an echo spacing stays the echo
// spacing). Throws std::invalid_argument naming the event whose interval is
// too short for the lobes inside it. A last event too short for the first
// event's crush_before lobe keeps its duration (the period grows by it).
void place_lobes_within_timing(Description& d, double lobe_s);

// Turns every adc event but the last `n` into a wait of the same duration and
// actions: the physics is unchanged and only the last n samples are recorded
// (a steady-state image of a long train without its transient). n <= 0 or at
// least the sample count: unchanged.
void keep_last_samples(Description& d, int n);

// The order cap. `max_order` is the highest EPG order kept (orders 0..max_order,
// max_order + 1 states), as in the EPG literature and epgpy; the kernels take
// the state count. The automatic cap is the declared winding (the highest
// order the shifts can reach), clamped to [7, 63]; an explicit cap (>= 0)
// wins. resolve_state_count throws when the states exceed the kernel limit.
int default_max_order(const Description& d);
int resolve_state_count(const Description& d, int max_order /* < 0: automatic */);

// Where the automatic cap (max_order < 0) drops orders a sample can reach
// (sample_reach_order_count): one line naming the orders reachable, the orders
// kept and the max_order that keeps them; empty otherwise.
std::string automatic_cap_warning(const Description& d, int max_order);

// Orders that give every sample of a run from equilibrium exactly: one more than the highest order
// an F+ state reaches (at a shift) while it may be non-zero and may still return to order 0 by a
// later sample; the least such count where the stream leaves no gaps between the orders it fills.
// Only shifts couple orders, each by one, so a state that cannot climb back down in the shifts left
// is never read, and truncating above it drops nothing a sample sees (docs/physics.md, "Orders that
// reach a sample"). A 2n-echo CPMG train with a crusher either side of each refocusing pulse needs
// 2n of its 4n + 1 orders. Not for carried states: a steady-state period's final state is read by
// the next period.
int sample_reach_order_count(const Description& d);

}  // namespace larmor::sequence
