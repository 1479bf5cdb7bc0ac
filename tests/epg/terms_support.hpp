// Helpers of the Terms tests (tstTerms.hpp): references, runs on the backend
// TEST_EXECSPACE names, and the checks the tests share.
#pragma once

#include <gtest/gtest.h>
#include <cmath>
#include <complex>
#include <random>
#include <vector>

#include "epg/forward_support.hpp"

namespace larmor::test {

namespace terms {

inline sequence::Event pulse(double flip_deg, double phase_deg, std::uint32_t act = 0,
                             double duration_s = 0.0, int shim = 0) {
  sequence::Event e;
  e.kind = abi::EventKind::pulse;
  e.flip_rad = flip_deg * M_PI / 180.0;
  e.phase_rad = phase_deg * M_PI / 180.0;
  e.action = act;
  e.duration_s = duration_s;
  e.shim_index = shim;
  return e;
}

inline sequence::Event readout(double phase_deg = 0.0) {
  sequence::Event e;
  e.kind = abi::EventKind::adc;
  e.phase_rad = phase_deg * M_PI / 180.0;
  return e;
}

// One voxel without relaxation, the given ADC and velocity.
inline tissue::Tissue still_voxel(double adc_m2_s, double velocity_m_s) {
  tissue::Tissue t;
  t.voxels = 1;
  t.adc_m2_s.uniform = float(adc_m2_s);
  t.velocity_m_s.uniform = float(velocity_m_s);
  return t;
}

inline Complex first_sample(const sequence::Description& d, const tissue::Tissue& t) {
  const auto s = run_on_backend(d, t, 0);
  return {s[0], s[1]};
}

// Excitation with a crusher, a gap, a refocusing pulse with a crusher, and the
// echo at once: a pulsed-gradient spin echo whose lobes start Delta + tau
// apart.
inline sequence::Description spin_echo(double gap_s, double moment_per_m, double lobe_s) {
  sequence::Description d;
  d.name = "pgse";
  d.events = {pulse(90, 0, abi::action::crush_after, gap_s),
              pulse(180, 90, abi::action::crush_after), readout()};
  d.crusher.moment_per_m = moment_per_m;
  d.crusher.duration_s = lobe_s;
  return d;
}

// Excitation and a crusher, a 90 that stores the pattern in Z_1 (transverse
// states spoiled) for the mixing time, a 90 and a crusher, the echo.
inline sequence::Description stimulated_echo(double mixing_s, double moment_per_m, double lobe_s) {
  sequence::Description d;
  d.name = "pgste";
  d.events = {pulse(90, 0, abi::action::crush_after),
              pulse(90, 0, abi::action::spoil_after, mixing_s),
              pulse(90, 0, abi::action::crush_after), readout()};
  d.crusher.moment_per_m = moment_per_m;
  d.crusher.duration_s = lobe_s;
  return d;
}

// Stejskal and Tanner (J Chem Phys 42:288, 1965): two lobes of duration delta
// and area q / gamma whose starts are Delta apart give b = q^2 (Delta - delta/3).
inline double stejskal_tanner_b(double q, double delta_s, double big_delta_s) {
  return q * q * (big_delta_s - delta_s / 3.0);
}

}  // namespace terms

namespace terms {

// An FISP train with every term declared: a crusher with lobes, a slice for
// washout, three shim settings cycled pulse by pulse (dynamic shimming, with
// the scalar field every fourth pulse).
inline sequence::Description declared_train(int repetitions, unsigned seed) {
  sequence::MrfParams mrf;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int n = 0; n < repetitions; ++n) {
    mrf.schedule.push_back(
        {0.1 + 0.9 * u(rng), n % 3 ? 0.0 : 90.0 * u(rng), 2e-3 * u(rng), 1e-3 * u(rng)});
  }
  auto d = sequence::build_mrf(mrf);
  d.crusher.moment_per_m = 3000.0;
  d.crusher.duration_s = 0.002;
  d.crusher.slice_thickness_m = 0.005;
  d.shims.channels = 3;
  for (int s = 0; s < 3; ++s) {
    for (int c = 0; c < 3; ++c)
      d.shims.weights.push_back(std::polar(0.4 + 0.3 * u(rng), 6.0 * u(rng)));
  }
  int n = 0;
  for (auto& e : d.events) {
    if (e.kind == abi::EventKind::pulse) e.shim_index = n++ % 4;
  }
  return d;
}

// random_tissue with per-voxel ADC, velocity and three transmit channels.
inline tissue::Tissue declared_tissue(int voxels, unsigned seed) {
  tissue::Tissue t = random_tissue(voxels, seed);
  std::mt19937 rng(seed + 1000);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  t.transmit_channels = 3;
  for (int v = 0; v < voxels; ++v) {
    t.adc_m2_s.map.push_back(float(0.3e-9 + 2.7e-9 * u(rng)));
    t.velocity_m_s.map.push_back(float(0.04 * (u(rng) - 0.5)));
    for (int c = 0; c < 3; ++c) {
      t.transmit.push_back(std::polar(float(0.5 + 0.5 * u(rng)), float(6.0 * u(rng))));
    }
  }
  return t;
}

}  // namespace terms

}  // namespace larmor::test
