// Slice-selective pulses, integrated ahead of time.
//
// A shaped pulse played under its slice-select gradient rotates the
// magnetisation at slice position z by a rotation that depends on z and on
// the pulse's amplitude. Amplitude enters only as flip x transmit scale, and
// the RF phase only turns the rotation about z, so one table per pulse shape
// over (position, effective flip) serves every voxel and every phase. The
// table holds the rotation's unit quaternion and its derivative along the
// flip at evenly spaced flips; kernels read it back by cubic Hermite
// interpolation (kernels/epg/slice_profile.hpp). A voxel is simulated once
// per position and its signal is the position-weighted sum (docs/physics.md
// "Slice-selective pulses").
#pragma once

#include <array>
#include <string>
#include <vector>

#include "sequence/description.hpp"

namespace larmor::sequence {

// The largest B1 (transmit scale) the tables cover: flips reach this times a
// pulse's nominal flip. A voxel beyond it is refused.
inline constexpr double slice_profile_max_b1 = 2.0;

// A rotation as a unit quaternion (w, x, y, z): the right-handed turn by angle
// a about the unit axis n is (cos a/2, n sin a/2). In EPG terms a = w + i z and
// b = x + i y are its Cayley-Klein parameters (docs/physics.md).
using Quaternion = std::array<double, 4>;

// A Hann-windowed sinc of `time_bandwidth` zero crossings over the pulse,
// sampled at `samples` midpoints.
std::vector<double> hann_windowed_sinc(double time_bandwidth, int samples);

// The pulse's waveform: its own samples, or the Hann-windowed sinc.
std::vector<double> pulse_waveform(const SliceProfileSpec& spec);

// The rotation of the pulse at position z (sequence slice thicknesses) and
// effective flip `flip` [rad] at RF phase 0, by composing the exact rotation of
// each waveform sample (piecewise-constant amplitude under a constant
// gradient), then the rephasing lobe. `d_flip`, if given, receives its
// derivative along the flip.
Quaternion shaped_pulse_rotation(const SliceProfileSpec& spec, const std::vector<double>& waveform,
                                 double z, double flip, Quaternion* d_flip = nullptr);

struct SliceProfileTable {
  int profiles = 0;
  int positions = 1;
  int flip_nodes = 0;
  double extent = 1.0;
  std::vector<double> position;         // centres, slice thicknesses
  std::vector<double> position_weight;  // their widths: a voxel's signal is sum w_j s_j
  std::vector<double> flip_step;        // per profile: radians between nodes
  std::vector<double> max_flip;         // per profile: the last node
  // [profile][position][node][w, x, y, z, dw, dx, dy, dz] (derivatives per radian).
  std::vector<float> nodes;
};

// Refuses a description's profiles that cannot be built (sizes, waveform,
// positions not shared), each by its name; integrates nothing.
void validate_slice_profiles(const Description& d);

// Validates the description's profiles (validate_slice_profiles) and builds
// their tables. An empty table (profiles == 0) when no pulse is
// slice-selective.
SliceProfileTable build_slice_profile_table(const Description& d);

}  // namespace larmor::sequence
