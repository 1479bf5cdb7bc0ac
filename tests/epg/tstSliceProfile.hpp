// Shaped pulses on one backend. Slice-selective pulses: a spin-echo train whose excitation and
// refocusing pulses are shaped (kernels/epg/slice_profile.hpp) against an
// isochromat run across slice position that integrates each pulse by
// Runge-Kutta (tests/reference/slice_reference.hpp); forward-mode tangents
// against central differences of that reference; a transmit array's field;
// refusals by name.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include "epg/derivatives_support.hpp"
#include "epg/forward_support.hpp"
#include "epg/hessian_support.hpp"
#include "epg/slice_profile_support.hpp"
#include "epg/steady_state_support.hpp"
#include "sequence/waveform_pulses.hpp"

namespace larmor::test {

TEST(TEST_CATEGORY, slice_selective_pulses_match_isochromats_integrated_across_the_slice) {
  for (bool crushers : {true, false}) {
    SCOPED_TRACE(crushers ? "crushers" : "no crushers");
    const auto d = slice_profile::spin_echo_train(12, crushers);
    tissue::Tissue t = random_tissue(5, 701);
    t.b1.map[0] = 1.97f;  // near the tables' last flip
    const auto got = run_on_backend(d, t, 0);
    const int samples = 3;
    double largest = 0.0;
    for (std::int64_t v = 0; v < t.voxels; ++v) {
      const auto expected = reference::simulate_across_slice(d, voxel_of(t, v), 64);
      ASSERT_EQ(int(expected.size()), samples);
      for (int n = 0; n < samples; ++n) {
        largest = std::max(largest, std::abs(expected[std::size_t(n)]));
        // Float kernel, Hermite read-back (~1e-7) and the four Runge-Kutta
        // steps per waveform sample of the reference (~1e-8).
        EXPECT_NEAR(sample(got, samples, v, n).real(), expected[std::size_t(n)].real(), 2e-5)
            << "voxel " << v << " echo " << n;
        EXPECT_NEAR(sample(got, samples, v, n).imag(), expected[std::size_t(n)].imag(), 2e-5)
            << "voxel " << v << " echo " << n;
      }
    }
    // The profile matters far beyond the tolerance: the same train with
    // instantaneous pulses (over the slice's unit thickness) differs by more
    // than a hundred times it.
    sequence::Description hard = d;
    hard.slice_profiles.clear();
    for (auto& e : hard.events) e.slice_profile = 0;
    const auto instantaneous = run_on_backend(hard, t, 0);
    double change = 0.0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      change = std::max(change, double(std::abs(got[i] - instantaneous[i])));
    }
    EXPECT_GT(change, 100 * 2e-5);
    EXPECT_GT(largest, 0.05);
  }
}

// The steady state of a gradient-spoiled (FISP-like) period with a shaped
// excitation: each slice position carries and settles its own states; the
// voxel's samples are the positions' summed. Against the isochromat run of
// the period repeated 200 times (q^200 < 1e-9 from its fixed point), which
// integrates the pulse by Runge-Kutta at every position.
TEST(TEST_CATEGORY, slice_selective_steady_state_is_the_repeated_isochromat_train) {
  sequence::Description period;
  period.name = "slice-selective FISP period";
  sequence::SliceProfileSpec excitation;
  excitation.name = "excitation";
  excitation.positions = 8;
  period.slice_profiles = {excitation};
  sequence::Event pulse, adc;
  pulse.kind = sequence::EventKind::pulse;
  pulse.flip_rad = 0.9;
  pulse.phase_rad = 0.4;
  pulse.slice_profile = 1;
  pulse.duration_s = 0.004;
  adc.kind = sequence::EventKind::adc;
  adc.action = sequence::action::shift_after;
  adc.duration_s = 0.016;
  period.events = {pulse, adc};
  tissue::Tissue t = random_tissue(2, 704);
  t.t1_s.map = {0.12f, 0.2f};   // E1 cos(flip) well below 1 at every position
  t.t2_s.map = {0.02f, 0.03f};  // orders past 16 decay below 1e-7 within a few periods
  std::vector<float> settled;
  const auto report = steady::run(period, t, 1e-8, settled, 16);
  ASSERT_EQ(report.unconverged, 0);
  constexpr int repeats = 200;
  const auto train = steady::repeated(period, repeats);
  for (std::int64_t v = 0; v < t.voxels; ++v) {
    EXPECT_GT(report.repetitions[std::size_t(v)], 10);
    const auto expected = reference::simulate_across_slice(train, voxel_of(t, v), 64);
    ASSERT_EQ(int(expected.size()), repeats);
    const Complex want = expected.back();
    EXPECT_GT(std::abs(want), 0.05);
    EXPECT_NEAR(sample(settled, 1, v, 0).real(), want.real(), 2e-5) << "voxel " << v;
    EXPECT_NEAR(sample(settled, 1, v, 0).imag(), want.imag(), 2e-5) << "voxel " << v;
  }
}

TEST(TEST_CATEGORY, slice_selective_tangents_match_central_differences) {
  const auto d = slice_profile::spin_echo_train(8);
  const tissue::Tissue t = random_tissue(3, 702);
  const simulate::Simulator sim(d);
  const int samples = sim.samples(), directions = epg::tissue_tangent_count;
  std::vector<float> signals(std::size_t(t.voxels * samples * 2));
  std::vector<float> tangents(std::size_t(t.voxels * directions * samples * 2));
  sim.run_tissue_jvp_into<TEST_EXECSPACE>(t, signals.data(), tangents.data());
  for (std::int64_t v = 0; v < t.voxels; ++v) {
    const reference::Tissue r = voxel_of(t, v);
    // B1 moves every pulse's flip (through the tables), T2 and df the echoes.
    for (int direction :
         {epg::tissue_direction::t2, epg::tissue_direction::b1, epg::tissue_direction::df}) {
      reference::Tissue up = r, down = r;
      double h = 0.0;
      if (direction == epg::tissue_direction::t2) {
        h = 1e-5 * r.t2_s;
        up.t2_s += h;
        down.t2_s -= h;
      } else if (direction == epg::tissue_direction::b1) {
        h = 1e-5;
        up.b1 += h;
        down.b1 -= h;
      } else {
        h = 1e-3;
        up.df_hz += h;
        down.df_hz -= h;
      }
      const auto plus = reference::simulate_across_slice(d, up, 64);
      const auto minus = reference::simulate_across_slice(d, down, 64);
      for (int n = 0; n < samples; ++n) {
        const Complex fd = (plus[std::size_t(n)] - minus[std::size_t(n)]) / (2.0 * h);
        const std::size_t i =
            ((std::size_t(v) * directions + std::size_t(direction)) * samples + n) * 2;
        const double scale = std::max(1.0, std::abs(fd));
        EXPECT_NEAR(tangents[i], fd.real(), 2e-4 * scale) << v << " " << direction << " " << n;
        EXPECT_NEAR(tangents[i + 1], fd.imag(), 2e-4 * scale) << v << " " << direction << " " << n;
      }
    }
  }
}

// Reverse mode through slice-selective pulses: the tables' slope along the
// flip, the general rotation's adjoint, the cotangents spread over the slice
// positions and their gradients summed. Against forward mode (the dot
// product identity: the same tables, differentiated by dual numbers), the
// checkpoint interval, and central differences of the isochromat run for
// every event's flip, phase and duration.
TEST(TEST_CATEGORY, slice_selective_gradients_match_forward_mode_and_central_differences) {
  const auto d = slice_profile::spin_echo_train(8);
  const tissue::Tissue t = random_tissue(3, 706);
  expect_dot_product_identity(d, t);
  expect_vjp_independent_of_the_interval(d, t);
  // The forward-mode test's 2e-4 per sample (above: the read-back's
  // derivative against the Runge-Kutta pulses), summed over the loss's
  // voxels x samples cotangents of size <= 1 in both parts.
  const double tolerance = 2e-4 * 2.0 * double(t.voxels) * d.sample_count();
  EXPECT_EQ(
      expect_sequence_gradients_match_differences(d, t, 0, across_slice_reference(), tolerance),
      4 * 3 + 3 * 2);
}

// Forward over reverse through the same pulses: its values are the
// reverse sweep's, its tissue and sequence Hessian-vector products the mixed
// central differences of the isochromat run.
TEST(TEST_CATEGORY, slice_selective_hvp_matches_mixed_central_differences) {
  const auto d = slice_profile::spin_echo_train(8);
  const tissue::Tissue t = random_tissue(2, 707);
  expect_hvp_values_are_the_vjp(d, t);
  const double tolerance = 2e-4 * 2.0 * double(t.voxels) * d.sample_count();
  expect_tissue_hvp_matches_differences(d, t, 0, across_slice_reference(), tolerance);
  EXPECT_EQ(expect_sequence_hvp_matches_differences(d, t, 0, across_slice_reference(), tolerance),
            4 * 3 + 3 * 2);
}

// A transmit array with slice-selective pulses: each pulse's shim setting
// scales its flip (through the tables) and turns its phase, voxel by voxel.
// Against the isochromat run whose Runge-Kutta pulses take the same field;
// forward-mode tangents along B1 against its central differences; reverse
// mode against forward mode and the isochromats' differences; a field that
// takes a voxel past the tables is refused naming the voxel and setting.
TEST(TEST_CATEGORY, slice_selective_pulses_take_the_transmit_arrays_field) {
  auto d = slice_profile::spin_echo_train(12);
  d.shims.channels = 2;
  d.shims.weights = {{0.6, 0.1}, {0.3, -0.2}, {0.2, 0.4}, {0.5, 0.0}};  // two settings
  int pulses = 0;
  for (auto& e : d.events) {
    if (e.kind == sequence::EventKind::pulse) e.shim_index = 1 + (pulses++ % 2);
  }
  tissue::Tissue t = random_tissue(4, 704);
  t.transmit_channels = 2;
  std::mt19937 rng(705);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int i = 0; i < t.voxels * t.transmit_channels; ++i) {
    t.transmit.push_back(std::polar(float(0.5 + 0.6 * u(rng)), float(6.0 * u(rng))));
  }
  const auto got = run_on_backend(d, t, 0);
  const simulate::Simulator sim(d);
  const int samples = sim.samples(), directions = epg::tissue_tangent_count;
  std::vector<float> signals(std::size_t(t.voxels * samples * 2));
  std::vector<float> tangents(std::size_t(t.voxels * directions * samples * 2));
  sim.run_tissue_jvp_into<TEST_EXECSPACE>(t, signals.data(), tangents.data());
  tissue::Tissue no_array = t;
  no_array.transmit.clear();
  no_array.transmit_channels = 0;
  const auto without = run_on_backend(d, no_array, 0);
  double change = 0.0;
  for (std::int64_t v = 0; v < t.voxels; ++v) {
    const reference::Tissue r = voxel_of(t, v);
    const auto expected = reference::simulate_across_slice(d, r, 64);
    reference::Tissue up = r, down = r;
    const double h = 1e-5;
    up.b1 += h;
    down.b1 -= h;
    const auto plus = reference::simulate_across_slice(d, up, 64);
    const auto minus = reference::simulate_across_slice(d, down, 64);
    for (int n = 0; n < samples; ++n) {
      const Complex x = expected[std::size_t(n)];
      EXPECT_NEAR(sample(got, samples, v, n).real(), x.real(), 2e-5) << "voxel " << v << " " << n;
      EXPECT_NEAR(sample(got, samples, v, n).imag(), x.imag(), 2e-5) << "voxel " << v << " " << n;
      change = std::max(
          change, double(std::abs(sample(got, samples, v, n) - sample(without, samples, v, n))));
      const Complex fd = (plus[std::size_t(n)] - minus[std::size_t(n)]) / (2.0 * h);
      const std::size_t i =
          ((std::size_t(v) * directions + epg::tissue_direction::b1) * samples + n) * 2;
      const double scale = std::max(1.0, std::abs(fd));
      EXPECT_NEAR(tangents[i], fd.real(), 2e-4 * scale) << "voxel " << v << " " << n;
      EXPECT_NEAR(tangents[i + 1], fd.imag(), 2e-4 * scale) << "voxel " << v << " " << n;
    }
  }
  EXPECT_GT(change, 100 * 2e-5);  // the field matters far beyond the tolerance
  // Reverse mode through the field (each voxel's own gain and phase turn
  // the table's flip and the pulse's axis): against forward mode, and the
  // event gradients against the isochromats' central differences (the
  // tolerance of slice_selective_gradients_match_...).
  expect_dot_product_identity(d, t);
  EXPECT_EQ(expect_sequence_gradients_match_differences(d, t, 0, across_slice_reference(),
                                                        2e-4 * 2.0 * double(t.voxels) * samples),
            4 * 3 + 3 * 2);
  t.b1.map[1] = 1.4f;
  t.transmit[2] = std::polar(5.0f, 0.3f);  // voxel 1, channel 0: past the tables
  try {
    run_on_backend(d, t, 0);
    ADD_FAILURE() << "a field past the tables was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("voxel 1, shim setting"), std::string::npos) << e.what();
  }
}

TEST(TEST_CATEGORY, slice_selective_pulses_are_refused_where_unsupported) {
  const auto d = slice_profile::spin_echo_train(4);
  const simulate::Simulator sim(d);
  const auto refuses = [](const auto& run, const char* text) {
    try {
      run();
      ADD_FAILURE() << "accepted; expected '" << text << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  tissue::Tissue t = random_tissue(2, 703);
  std::vector<float> out(std::size_t(t.voxels * sim.samples() * 2));
  std::vector<float> w(out.size(), 1.0f), tissue_grad(std::size_t(t.voxels * 5));
  std::vector<float> sequence_grad(std::size_t(sim.events() * 3));
  tissue::Tissue pooled_reverse = t;
  pooled_reverse.bound_fraction.uniform = 0.1f;
  pooled_reverse.bound_t1_s.uniform = 1.0f;
  refuses(
      [&] {
        sim.run_tissue_vjp_into<TEST_EXECSPACE>(pooled_reverse, w.data(), tissue_grad.data(),
                                                sequence_grad.data());
      },
      "a pooled model");
  tissue::Tissue pooled_steady = t;
  pooled_steady.bound_fraction.uniform = 0.1f;
  pooled_steady.bound_t1_s.uniform = 1.0f;
  refuses([&] { sim.run_steady_state_into<TEST_EXECSPACE>(pooled_steady, out.data(), {}); },
          "not supported with a pooled model");
  tissue::Tissue strong = t;
  strong.b1.map[1] = 2.5f;
  refuses([&] { sim.run_into<TEST_EXECSPACE>(strong, out.data()); }, "exceeds the tables' range");
  tissue::Tissue pooled = t;
  pooled.bound_fraction.uniform = 0.1f;
  pooled.bound_t1_s.uniform = 1.0f;
  refuses([&] { sim.run_into<TEST_EXECSPACE>(pooled, out.data()); }, "a pooled model");
  EXPECT_NE(sim.real_path_refusal(t).find("slice-selective"), std::string::npos);
}

// Pulses played from their waveforms (kernels/epg/waveform_pulse.hpp): each
// voxel integrates the waveform at its own relaxation and off-resonance.
// Against the double-precision EPG of the same pulses as hard pulses at their
// samples (tests/reference/epg_reference.hpp), a continuous off-resonant
// saturation against the Bloch equations' steady state, forward mode against
// central differences, reverse mode (which runs the hard pulses and folds
// their gradients back) against both, and the steady-state solve.

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
