// Pulses played from their waveforms on one backend (kernels/epg/
// waveform_pulse.hpp): each voxel integrates the waveform at its own
// relaxation and off-resonance. Against the double-precision EPG of the same
// pulses as hard pulses at their samples (tests/reference/epg_reference.hpp),
// a continuous off-resonant saturation against the Bloch equations' steady
// state, forward mode against central differences, and reverse mode (which
// runs the hard pulses and folds their gradients back) against both.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include "epg/derivatives_support.hpp"
#include "epg/forward_support.hpp"
#include "epg/steady_state_support.hpp"
#include "sequence/waveform_pulses.hpp"

namespace larmor::test {
namespace waveform {

constexpr double kPi = 3.14159265358979323846;

// A Gaussian-like pulse of `samples` samples of `dt` whose angles add to
// about `flip`, its phase swept across it, `rf_hz` off resonance.
inline sequence::PulseWaveform shaped(int samples, double dt, double flip, double rf_hz) {
  sequence::PulseWaveform w;
  w.rf_frequency_hz = rf_hz;
  double sum = 0.0;
  for (int n = 0; n < samples; ++n) {
    const double x = (n + 0.5) / samples - 0.5;
    const double a = std::exp(-18.0 * x * x);
    w.runs.push_back({a, 0.6 * x, dt, 1});
    sum += a;
  }
  for (auto& r : w.runs) r.angle_rad *= flip / sum;
  w.flip_rad = flip;
  return w;
}

// A train that mixes every state: an excitation, a shaped off-resonant pulse
// between crushers, a long on-resonance block pulse (one run of 2000
// samples), samples after each, and a second use of the shaped waveform at
// another flip and phase (the event's flip scales it).
inline sequence::Description train() {
  sequence::Description d;
  d.name = "waveform train";
  d.waveforms.push_back(shaped(60, 20e-6, 2.0, 250.0));
  sequence::PulseWaveform block;
  block.runs.push_back({0.5 * kPi / 2000, 0.2, 1e-6, 2000});
  block.flip_rad = 0.5 * kPi;
  d.waveforms.push_back(block);
  const auto event = [&](sequence::EventKind kind, double duration, std::uint32_t bits) {
    sequence::Event e;
    e.kind = kind;
    e.duration_s = duration;
    e.action = bits;
    d.events.push_back(e);
    return d.events.size() - 1;
  };
  using K = sequence::EventKind;
  namespace a = sequence::action;
  std::size_t i = event(K::pulse, 2e-3, a::crush_after);
  d.events[i].flip_rad = 1.2;
  d.events[i].phase_rad = 0.3;
  i = event(K::waveform_pulse, 3e-3, a::crush_before | a::crush_after);
  d.events[i].waveform = 1;
  d.events[i].flip_rad = 2.0;
  event(K::adc, 1e-3, 0);
  i = event(K::waveform_pulse, 0.5e-3, a::crush_before);
  d.events[i].waveform = 2;
  d.events[i].flip_rad = 0.5 * kPi;
  event(K::adc, 2e-3, a::shift_after);
  i = event(K::waveform_pulse, 1e-3, a::crush_before);
  d.events[i].waveform = 1;
  d.events[i].flip_rad = 1.1;
  d.events[i].phase_rad = -0.7;
  event(K::adc, 1e-3, 0);
  return d;
}

}  // namespace waveform

TEST(TEST_CATEGORY, waveform_pulses_match_their_samples_as_hard_pulses) {
  const auto d = waveform::train();
  const tissue::Tissue t = random_tissue(7, 811);
  const auto got = run_on_backend(d, t, 0);
  simulate::Simulator sim(d);
  EXPECT_EQ(sim.events(), std::int64_t(d.events.size()));  // one event per pulse
  const int samples = sim.samples();
  double largest = 0.0;
  for (std::int64_t v = 0; v < t.voxels; ++v) {
    const auto expected = reference::simulate(d, voxel_of(t, v), sim.states());
    for (int n = 0; n < samples; ++n) {
      largest = std::max(largest, std::abs(expected[std::size_t(n)]));
      EXPECT_LT(std::abs(sample(got, samples, v, n) - expected[std::size_t(n)]), 2e-6)
          << "voxel " << v << " sample " << n;
    }
  }
  EXPECT_GT(largest, 0.05);
}

// Continuous RF at offset D and amplitude w1 settles the Bloch equations in
// the RF frame at Mz = M0 (1 + (D T2)^2) / (1 + (D T2)^2 + w1^2 T1 T2) and
// |Mxy| = w1 T2 Mz / sqrt(1 + (D T2)^2), D = 2 pi (df - rf): a 3 s
// saturation on the 1 us raster (3 million samples, one event) that lasts
// twelve T1. The second sample reads Mz after spoiling and a 90 degree pulse.
TEST(TEST_CATEGORY, a_long_saturation_settles_at_the_bloch_steady_state) {
  constexpr double dt = 1e-6, length = 3.0, rf_hz = -300.0, w1 = 2 * waveform::kPi * 100.0;
  sequence::Description d;
  d.name = "continuous saturation";
  sequence::PulseWaveform w;
  w.runs.push_back({w1 * dt, 0.0, dt, std::int64_t(std::llround(length / dt))});
  w.rf_frequency_hz = rf_hz;
  d.waveforms.push_back(w);
  sequence::Event sat;
  sat.kind = sequence::EventKind::waveform_pulse;
  sat.waveform = 1;
  d.events.push_back(sat);
  sequence::Event adc;
  adc.kind = sequence::EventKind::adc;
  adc.action = sequence::action::spoil_after;
  d.events.push_back(adc);
  sequence::Event flip;
  flip.kind = sequence::EventKind::pulse;
  flip.flip_rad = 0.5 * waveform::kPi;
  flip.action = sequence::action::b1_fixed;
  d.events.push_back(flip);
  adc.action = 0;
  d.events.push_back(adc);
  tissue::Tissue t;
  t.voxels = 4;
  t.t1_s.map = {0.25f, 0.2f, 0.15f, 0.25f};
  t.t2_s.map = {0.05f, 0.002f, 0.02f, 0.1f};
  t.b1.map = {1.0f, 0.8f, 1.3f, 1.0f};
  t.df_hz.map = {0.0f, 40.0f, -300.0f, 200.0f};  // the third on the RF's frequency
  t.m0.map = {1.0f, 0.7f, 1.2f, 1.0f};
  const auto start = std::chrono::steady_clock::now();
  const auto got = run_on_backend(d, t, 0);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("3 s saturation, %d voxels: %.3f s\n", int(t.voxels), seconds);
  for (std::int64_t v = 0; v < t.voxels; ++v) {
    const double t1 = t.t1_s.at(v), t2 = t.t2_s.at(v), m0 = t.m0.at(v);
    const double w = w1 * t.b1.at(v), dw = 2 * waveform::kPi * (t.df_hz.at(v) - rf_hz);
    const double q = 1 + dw * dw * t2 * t2;
    const double mz = q / (q + w * w * t1 * t2);
    const double mxy = w * t2 * mz / std::sqrt(q);
    EXPECT_NEAR(std::abs(sample(got, 2, v, 0)), m0 * mxy, 1e-4 * m0) << "voxel " << v;
    // After the spoiler the 90 degree pulse about x turns Z into -i F+.
    EXPECT_NEAR(sample(got, 2, v, 1).imag(), -m0 * mz, 1e-4 * m0) << "voxel " << v;
    EXPECT_NEAR(sample(got, 2, v, 1).real(), 0.0, 1e-5) << "voxel " << v;
  }
}

TEST(TEST_CATEGORY, waveform_pulse_tangents_match_central_differences) {
  expect_tissue_jvp_matches_differences(waveform::train(), random_tissue(3, 812), 0);
}

// Reverse mode runs the hard pulses and folds their gradients onto the
// waveform pulses: against forward mode (the dot-product identity) and
// against central differences of each event's flip, phase and duration.
TEST(TEST_CATEGORY, waveform_pulse_gradients_fold_back_onto_their_events) {
  const auto d = waveform::train();
  const tissue::Tissue t = random_tissue(3, 813);
  expect_dot_product_identity(d, t);
  EXPECT_GT(expect_sequence_gradients_match_differences(d, t, 0, single_pool_reference(), 1e-4),
            10);
}

// The steady-state solve carries states through a waveform pulse: a period of
// an off-resonant shaped pulse, a 30 degree excitation and a sample settles
// where the double-precision EPG of the period repeated as often does.
TEST(TEST_CATEGORY, a_period_with_a_waveform_pulse_settles_where_its_repetition_does) {
  sequence::Description d = steady::period(30.0, 0.01, 0.004, abi::action::shift_after);
  d.waveforms.push_back(waveform::shaped(60, 20e-6, 3.0, 800.0));
  sequence::Event mt;
  mt.kind = sequence::EventKind::waveform_pulse;
  mt.waveform = 1;
  mt.flip_rad = 3.0;
  mt.duration_s = 1e-3;
  mt.action = sequence::action::crush_after;
  d.events.insert(d.events.begin(), mt);
  const tissue::Tissue t = random_tissue(4, 814);
  std::vector<float> settled;
  const auto report = steady::run(d, t, 1e-7, settled, 16);
  ASSERT_EQ(report.unconverged, 0);
  for (int v = 0; v < t.voxels; ++v) {
    const int p = report.repetitions[std::size_t(v)];
    ASSERT_GT(p, 3);
    const auto straight = reference::simulate(steady::repeated(d, p), voxel_of(t, v), 16);
    const Complex want = straight[std::size_t(p - 1)];
    EXPECT_LT(std::abs(sample(settled, 1, v, 0) - want), 1e-5)
        << "voxel " << v << ", period " << p << ": got " << sample(settled, 1, v, 0) << ", want "
        << want;
  }
}

TEST(TEST_CATEGORY, kernels_without_waveforms_refuse_them_by_name) {
  const auto d = waveform::train();
  simulate::Simulator sim(d);
  const auto table = epg::make_event_table<typename TEST_EXECSPACE::memory_space>(
      sim.packed().ref(), sim.kernel_states(), sim.samples());
  EXPECT_EQ(table.waveforms, 2);
  try {
    epg::check_waveforms(table.waveforms, 0, "larmor::epg::forward");
    FAIL() << "a run without the waveforms launched";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("2 waveforms"), std::string::npos) << e.what();
  }
}

}  // namespace larmor::test
