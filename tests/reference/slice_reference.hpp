// Slice-selective pulses for the references: the shaped pulse by Runge-Kutta
// integration of the Bloch equation, and an isochromat run across slice
// position that plays it (no tables, no EPG, no quaternions).
#pragma once

#include <vector>

#include "reference/epg_reference.hpp"
#include "sequence/description.hpp"

namespace larmor::reference {

// dM/dt = w x M through the pulse, w = (w1 cos p, w1 sin p, offset), the
// waveform held over each sample (`steps` Runge-Kutta steps per sample), then
// the rephasing turn about z; integrated on the three basis vectors.
Rotation shaped_pulse_matrix(const larmor::sequence::SliceProfileSpec& spec,
                             const std::vector<double>& waveform, double z, double flip_rad,
                             double phase_rad, int steps = 4);

// Samples of `d` summed over the slice positions of its profiles (each
// weighted by its width), each position an isochromat run whose
// slice-selective pulses are integrated at flip x B1 x |transmit field| and
// the pulse's phase turned by the field's.
std::vector<Complex> simulate_across_slice(const larmor::sequence::Description& d,
                                           const Tissue& tissue, int n_isochromats);

}  // namespace larmor::reference
