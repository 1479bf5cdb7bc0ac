// Sequences of the VoxelIntegral tests (tstVoxelIntegral.hpp): samples
// weighted over a voxel that the crushers do not dephase by whole turns.
#pragma once

#include <cmath>

#include "sequence/description.hpp"

namespace larmor::test::voxel_integral {

// A 1 x 2 x 1 mm box off the isocentre whose crusher u winds 0.55 turns
// along z and 0.24 along y, and two residual moments the samples see.
inline void declare_voxel(sequence::Description& d) {
  d.voxel.order_moment_per_m = {0.0, 120.0, 550.0};
  d.voxel.edges_m = {1e-3, 2e-3, 1e-3};
  d.voxel.centre_m = {0.4e-3, -0.3e-3, 1.2e-3};
  d.voxel.residuals_per_m = {{30.0, -10.0, 20.0}, {0.0, 0.0, -40.0}};
}

// An RF-spoiled gradient echo: each repetition's spoiler is one shift.
inline sequence::Description partial_crusher_gre(int repetitions) {
  sequence::Description d;
  d.name = "partial-crusher GRE";
  declare_voxel(d);
  for (int n = 0; n < repetitions; ++n) {
    const double phase = (117.0 * M_PI / 180.0) * 0.5 * n * (n + 1);
    sequence::Event pulse, adc;
    pulse.kind = sequence::EventKind::pulse;
    pulse.flip_rad = 0.45 + 0.02 * n;
    pulse.phase_rad = phase;
    pulse.duration_s = 3e-3;
    adc.kind = sequence::EventKind::adc;
    adc.phase_rad = phase;
    adc.voxel_weights = 1 + n % 2;
    adc.action = sequence::action::shift_after;
    adc.duration_s = 7e-3;
    d.events.push_back(pulse);
    d.events.push_back(adc);
  }
  return d;
}

// A CPMG train whose crushers either side of each refocusing pulse wind a
// fraction of a turn: the echoes of every pathway reach the samples.
inline sequence::Description partial_crusher_cpmg(int echoes) {
  sequence::Description d;
  d.name = "partial-crusher CPMG";
  declare_voxel(d);
  sequence::Event excitation;
  excitation.kind = sequence::EventKind::pulse;
  excitation.flip_rad = M_PI / 2;
  excitation.phase_rad = M_PI / 2;
  excitation.duration_s = 5e-3;
  d.events.push_back(excitation);
  for (int n = 0; n < echoes; ++n) {
    sequence::Event refocus, adc;
    refocus.kind = sequence::EventKind::pulse;
    refocus.flip_rad = 2.6;
    refocus.action = sequence::action::crush_before | sequence::action::crush_after;
    refocus.duration_s = 5e-3;
    adc.kind = sequence::EventKind::adc;
    adc.voxel_weights = 2 - n % 2;
    adc.duration_s = 5e-3;
    d.events.push_back(refocus);
    d.events.push_back(adc);
  }
  return d;
}

}  // namespace larmor::test::voxel_integral
