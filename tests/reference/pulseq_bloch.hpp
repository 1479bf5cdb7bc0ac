// A double-precision isochromat Bloch simulation that plays a Pulseq file's
// real waveforms: the reference against which the Pulseq -> EPG translation
// is tested. It is written from the physics and shares no code with the
// translation (src/io/pulseq/pulseq_events.cpp, pulseq_moments.cpp); it
// reads only the parsed data model (pulseq_file.hpp).
//
// Conventions (those of larmor's EPG, see epg_reference.hpp):
//  * Rotating frame at the proton Larmor frequency; each spin carries
//    (Mx, My, Mz) with equilibrium (0, 0, M0).
//  * An RF sample of amplitude a [Hz] and phase p [rad] turns the spin
//    right-handed about (cos p, sin p, 0) at 2 pi a rad/s, so a pulse about +x
//    sends +z to -y. Every RF amplitude is scaled by Tissue::b1.
//  * A spin at r [m] precesses about +z at 2 pi (df + G.r) rad/s, G the
//    physical gradient in Hz/m (M+ = Mx + i My gains exp(+i angle)).
//  * T1/T2 relaxation acts throughout, during RF and gradients too.
//  * An ADC sample is the weighted mean of M+ over the spins times
//    exp(-i (phase + phase_ppm f0 + 2 pi (f (t - t0) + s_n))): the receiver
//    demodulates at the offset frequency f = freq + freq_ppm f0 from the
//    ADC's start t0 (after its delay), and by a 1.5 phase shape s (turns).
//
// Timing: blocks end to end; 1.4+ files state each block's duration, older
// ones take the longest of the block's delay and its events, rounded up to
// the block raster. RF on the default raster holds sample n over the cell
// [n, n+1) x raster; on a time shape the complex envelope is linear between
// the points. Arbitrary gradients on the default raster are piecewise
// constant over their cells, on a time shape piecewise linear; trapezoids are
// exact. RF frequency offsets ramp the phase from the pulse start (before
// 1.5) or its centre (1.5). Of the extensions only ROTATIONS changes the
// physics (physical gradient = R x logical); labels, triggers, soft delays
// (their defaults are in the block durations) and RF shims are ignored, as
// are 1.5 gradients' first/last values and the RF `use`.
//
// Numerics: between breakpoints (block edges, RF cells and sub-steps, every
// gradient corner, every ADC sample) without RF the precession and relaxation
// are exact. During RF each step rotates about the total field with the
// gradient's exact mean over the step, in the frame that turns with the RF
// frequency offset (so a constant-amplitude off-resonant pulse is exact), with
// relaxation split symmetrically around the rotation (second-order accurate).
#pragma once

#include <array>
#include <limits>
#include <vector>

#include "io/pulseq/pulseq_file.hpp"
#include "reference/epg_reference.hpp"

namespace larmor::reference {

struct BlochSample {
  double time_s = 0.0;  // absolute, from the start of the first block
  int block_id = 0;     // the block's id as written in the file
  int adc_sample = 0;   // index within its ADC event
  Complex value;
};

struct BlochOptions {
  // The spins (physical frame, metres); empty: one spin at the origin.
  std::vector<std::array<double, 3>> positions_m;
  // Per-spin weights; empty: equal. Normalised to mean 1.
  std::vector<double> weights;
  // Stop before the first breakpoint past this time: later samples are not made.
  double end_time_s = std::numeric_limits<double>::infinity();
  long long max_samples = -1;  // < 0: all
  int rf_substeps = 1;         // steps per RF raster cell (>= 1)
  // Every spin is turned by each pulse as the spin at centre_m is: this removes
  // the slice profile across the spread of spins, which EPG leaves out by
  // design, and keeps each pulse's real shape, timing, phase and frequency ramp.
  // The gradient's phase across the spins, G.(r - centre_m), accumulated during
  // the pulse is applied as free precession, the part before the pulse's centre
  // (center_s, else the middle of the magnitude's peak plateau, in every
  // version) just before the pulse and the rest just after it; samples taken
  // during a pulse see the spins without it.
  bool rf_uniform_across_spins = false;
  std::array<double, 3> centre_m = {0.0, 0.0, 0.0};  // physical frame, metres
};

// Plays `file` from equilibrium on the spins of `options` with `tissue`'s
// M0, T1, T2, df and b1. Throws std::invalid_argument on input it cannot
// simulate (missing shapes, mismatched lengths, ppm offsets without B0,
// events past their block's end), naming the block or event.
std::vector<BlochSample> simulate_pulseq_bloch(const larmor::io::pulseq::PulseqFile& file,
                                               const Tissue& tissue, const BlochOptions& options);

// n positions s * m / |m|^2 with s = (j + 0.5) / n, j = 0..n-1: m.r spans one
// whole turn, so a moment m dephases the spins evenly over 2 pi.
std::vector<std::array<double, 3>> spins_over_one_turn(const std::array<double, 3>& moment_per_m,
                                                       int n);

// Spins on the midpoints of a counts[0] x counts[1] x counts[2] grid over the
// box of `edges_m` centred at `centre_m`: the voxel a sample averages.
std::vector<std::array<double, 3>> box_positions(const std::array<double, 3>& edges_m,
                                                 const std::array<double, 3>& centre_m,
                                                 const std::array<int, 3>& counts);

// The proton gyromagnetic ratio over 2 pi in MHz/T: ppm x this x B0 is Hz.
inline constexpr double kProtonGammaMHzPerT = 42.577478518;

}  // namespace larmor::reference
