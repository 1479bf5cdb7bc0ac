// Slice-selective pulses on one backend: a spin-echo train whose excitation and
// refocusing pulses are shaped (kernels/epg/slice_profile.hpp) against an
// isochromat run across slice position that integrates each pulse by
// Runge-Kutta (tests/reference/slice_reference.hpp); forward-mode tangents
// against central differences of that reference; a transmit array's field;
// refusals by name.
#pragma once

#include <gtest/gtest.h>

#include "epg/derivatives_support.hpp"
#include "epg/forward_support.hpp"
#include "epg/hessian_support.hpp"
#include "epg/slice_profile_support.hpp"
#include "epg/steady_state_support.hpp"

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

}  // namespace larmor::test
