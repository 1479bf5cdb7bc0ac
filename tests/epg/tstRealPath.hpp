// The real-subspace path on one backend (kernels/epg/impl/axis_state.hpp): trains
// whose states stay on one axis run on the on-axis states when the simulator
// takes the path, and give the complex double-precision reference's samples to
// float round-off; LARMOR_REAL_PATH routes them through either kernel, and the
// path is refused by name for what leaves the axis.
#pragma once

#include <gtest/gtest.h>

#include "epg/derivatives_support.hpp"
#include "epg/forward_support.hpp"
#include "epg/real_path_support.hpp"

namespace larmor::test {

TEST(TEST_CATEGORY, real_path_matches_the_reference_and_the_complex_kernel) {
  sequence::MeseParams cp;  // Carr-Purcell: excitation in phase with the refocusing
  cp.echoes = 24;
  cp.refocusing_deg = 140.0;
  cp.excitation_phase_deg = cp.refocusing_phase_deg;
  const tissue::Tissue t = random_tissue(37, 501, false);  // part-empty lanes and groups
  // Random kinds and actions: pulses with every shift bit and the spoiler
  // around them (the host relaxes in the pulse's pass, ahead of its shifts).
  for (const auto& d : {real_path::half_turn_train(60, 502), sequence::build_mese(cp),
                        on_axis_train(503, 0.7, 80)}) {
    for (int orders : {8, 24, 64, 97}) {
      SCOPED_TRACE(d.name + ", orders " + std::to_string(orders));
      const EveryOrder every_order;  // the buckets and groups each count takes
      simulate::Options o;
      o.max_order = orders - 1;  // `orders` counts states (0..orders-1)
      const simulate::Simulator sim(d, o);
      const real_path::RealPathSetting on("on");
      ASSERT_EQ(sim.real_path_refusal(t), "");
      expect_matches_reference(d, t, orders);
      const auto axis = run_on_backend(d, t, orders);
      const real_path::RealPathSetting off("off");
      const auto complex = run_on_backend(d, t, orders);
      const double tol = float_tolerance(std::int64_t(d.events.size()));
      for (std::size_t i = 0; i < axis.size(); ++i) ASSERT_NEAR(axis[i], complex[i], tol) << i;
    }
  }
}

// Every compiled device layout runs the on-axis states (the default on-axis
// layout differs from the complex one's, so each must hold every order count).
TEST(TEST_CATEGORY, every_compiled_device_layout_runs_the_axis_states) {
  if (kx::is_host_space_v<TEST_EXECSPACE>) GTEST_SKIP() << "layouts are chosen on device backends";
  sequence::MeseParams cp;
  cp.echoes = 12;
  cp.refocusing_deg = 140.0;
  cp.excitation_phase_deg = cp.refocusing_phase_deg;
  const real_path::RealPathSetting on("on");
  const EveryOrder every_order;
  for_each_device_layout(
      [&] {
        for (int orders : {5, 24, 64}) {
          SCOPED_TRACE("orders = " + std::to_string(orders));
          expect_matches_reference(real_path::half_turn_train(40, 600 + orders),
                                   random_tissue(37, 620 + orders, false), orders);
          expect_matches_reference(sequence::build_mese(cp), random_tissue(19, 640 + orders, false),
                                   orders);
          // Three voxels: a team narrower than a warp, which keeps the group
          // counts of the launch shape (a full warp fixes them at compile time).
          expect_matches_reference(real_path::half_turn_train(40, 660 + orders),
                                   random_tissue(3, 680 + orders, false), orders);
        }
      },
      /*on_axis=*/true);
}

// LARMOR_REAL_SCALAR=1: the host's on-axis runs take one train per thread
// instead of SIMD lanes of eight; the samples are the reference's either way,
// in every order bucket (97 orders: the 128 bucket).
TEST(TEST_CATEGORY, one_train_at_a_time_matches_the_simd_lanes) {
  if (!kx::is_host_space_v<TEST_EXECSPACE>) GTEST_SKIP() << "the host's SIMD lanes";
  const real_path::RealPathSetting on("on");
  const auto d = real_path::half_turn_train(50, 660);
  const tissue::Tissue t = random_tissue(11, 661, false);
  const EveryOrder every_order;
  for (int orders : {8, 40, 97}) {
    SCOPED_TRACE("orders = " + std::to_string(orders));
    const auto lanes = run_on_backend(d, t, orders);
    ::setenv("LARMOR_REAL_SCALAR", "1", 1);
    epg::LaunchOptions scalar_options;
    scalar_options.real_scalar = true;
    ASSERT_EQ(epg::choose_launch_shape<TEST_EXECSPACE>(orders, 11, true, scalar_options).lanes, 1);
    ASSERT_GT(epg::choose_launch_shape<TEST_EXECSPACE>(orders, 11, false, scalar_options).lanes, 1);
    expect_matches_reference(d, t, orders);
    const auto scalar = run_on_backend(d, t, orders);
    ::unsetenv("LARMOR_REAL_SCALAR");
    const double tol = float_tolerance(std::int64_t(d.events.size()));
    for (std::size_t i = 0; i < lanes.size(); ++i) ASSERT_NEAR(scalar[i], lanes[i], tol) << i;
  }
  ::setenv("LARMOR_REAL_SCALAR", "yes", 1);
  EXPECT_THROW(run_on_backend(d, t, 8), std::invalid_argument);
  ::unsetenv("LARMOR_REAL_SCALAR");
}

// Forward mode on the axis states: the tangents along M0, T1, T2 and B1 stay
// on the axis and the one along df is carried off it (axis_state.hpp); all
// five against central differences of the complex reference (df at 0 +- 1
// mHz), for a half-turn train and a Carr-Purcell echo train, with part-empty
// lanes and orders that reach the end of the state.
TEST(TEST_CATEGORY, real_path_jvp_matches_central_differences) {
  sequence::MeseParams cp;
  cp.echoes = 16;
  cp.refocusing_deg = 150.0;
  cp.excitation_phase_deg = cp.refocusing_phase_deg;
  const tissue::Tissue t = random_tissue(5, 680, false);
  const real_path::RealPathSetting on("on");
  // A device holds two orders per thread on the axis; one by request.
  const bool device = !kx::is_host_space_v<TEST_EXECSPACE>;
  for (const char* layout : {"", "1x1"}) {
    if (*layout != '\0' && !device) continue;
    if (*layout != '\0') ::setenv("LARMOR_EPG_LAYOUT", layout, 1);
    for (const auto& d : {real_path::half_turn_train(40, 681), sequence::build_mese(cp)}) {
      for (int orders : {6, 24}) {
        SCOPED_TRACE(d.name + ", orders " + std::to_string(orders) + ", layout '" + layout + "'");
        simulate::Options o;
        o.max_order = orders - 1;  // `orders` counts states (0..orders-1)
        ASSERT_EQ(simulate::Simulator(d, o).real_path_refusal(t), "");
        expect_tissue_jvp_matches_differences(d, t, orders);
      }
    }
    ::unsetenv("LARMOR_EPG_LAYOUT");
  }
  if (device) {  // not a compiled forward-mode layout
    ::setenv("LARMOR_EPG_LAYOUT", "4x1", 1);
    std::vector<float> s(5 * 16 * 2), g(5 * 5 * 16 * 2);
    simulate::Options o;
    o.max_order = 23;
    EXPECT_THROW(simulate::Simulator(sequence::build_mese(cp), o)
                     .run_tissue_jvp_into<TEST_EXECSPACE>(t, s.data(), g.data()),
                 std::invalid_argument);
    ::unsetenv("LARMOR_EPG_LAYOUT");
  }
}

// The reverse sweep on the axis states (axis_adjoint.hpp): every event's
// flip, phase and duration gradient against central differences of the
// complex reference (flips a half turn round, a zero flip on the axis a half
// turn round, samples at any phase, spoilers and every shift bit), the tissue
// gradients against forward mode (the dot-product identity), both against the
// complex kernels' on the original stream, and the checkpoint interval
// changing nothing. Orders 6, 24 and 64 fill the device's groups partly and
// wholly, and take the host's 16, 32 and 64 order blocks; 97 orders, and the plain layout by
// request, run the complex kernels on the rewritten table, whose flip gradients the simulator
// carries back the same way.
TEST(TEST_CATEGORY, real_path_vjp_matches_differences_and_the_complex_kernel) {
  constexpr double pi = 3.14159265358979323846;
  auto train = on_axis_train(700, 0.7, 60);
  for (auto& e : train.events) {
    if (e.kind != abi::EventKind::pulse) continue;
    e.flip_rad = 0.0;
    e.phase_rad = 0.7 + pi;
    break;
  }
  sequence::MeseParams cp;
  cp.echoes = 12;
  cp.refocusing_deg = 150.0;
  cp.excitation_phase_deg = cp.refocusing_phase_deg;
  const tissue::Tissue t = random_tissue(5, 701, false);
  for (const auto& d : {train, real_path::half_turn_train(40, 702), sequence::build_mese(cp)}) {
    const auto w = random_cotangents(std::size_t(t.voxels) * d.sample_count() * 2, 703);
    const double tol = float_tolerance(std::int64_t(d.events.size()));
    for (int orders : {6, 24, 64, 97, -24}) {
      const bool plain = orders < 0;  // LARMOR_ADJOINT_LAYOUT=plain
      orders = std::abs(orders);
      const EveryOrder every_order;
      SCOPED_TRACE(d.name + ", orders " + std::to_string(orders) + (plain ? ", plain" : ""));
      const ScopedSetting layout("LARMOR_ADJOINT_LAYOUT", plain ? "plain" : "");
      simulate::Options o;
      o.max_order = orders - 1;  // `orders` counts states (0..orders-1)
      const real_path::RealPathSetting on("on");
      ASSERT_EQ(simulate::Simulator(d, o).reverse_real_path_refusal(t), "");
      EXPECT_GT(expect_sequence_gradients_match_differences(d, t, orders), 40);
      const auto axis = run_vjp(d, t, orders, w);
      const real_path::RealPathSetting off("off");
      const auto complex = run_vjp(d, t, orders, w);
      for (const auto* pair : {&axis.tissue, &axis.sequence}) {
        const auto& want = pair == &axis.tissue ? complex.tissue : complex.sequence;
        double scale = 1e-3;
        for (float g : want) scale = std::max(scale, double(std::abs(g)));
        for (std::size_t i = 0; i < want.size(); ++i) {
          ASSERT_NEAR((*pair)[i], want[i], tol * scale) << i;
        }
      }
    }
    const real_path::RealPathSetting on("on");
    expect_dot_product_identity(d, t);
    expect_dot_product_identity(d, t, false);  // a tissue fit's run on the axis
    expect_vjp_independent_of_the_interval(d, t);
  }
}

// The host's reverse sweep on the axis holds eight voxels in SIMD lanes per
// thread; LARMOR_REAL_SCALAR=1 holds one. 19 voxels fill two blocks and leave
// five lanes of the third empty; orders 6, 24 and 64 take the 16, 32 and 64
// order blocks, and an interval of 7 events replays from checkpoints. Both
// give the complex kernels' gradients to float round-off, voxel by voxel.
TEST(TEST_CATEGORY, reverse_sweep_lanes_match_one_train_and_the_complex_kernel) {
  if (!kx::is_host_space_v<TEST_EXECSPACE>) GTEST_SKIP() << "the host's SIMD lanes";
  sequence::MeseParams cp;
  cp.echoes = 10;
  cp.refocusing_deg = 140.0;
  cp.excitation_phase_deg = cp.refocusing_phase_deg;
  const tissue::Tissue t = random_tissue(19, 731, false);
  const EveryOrder every_order;
  for (const auto& d : {real_path::half_turn_train(30, 732), sequence::build_mese(cp)}) {
    const auto w = random_cotangents(std::size_t(t.voxels) * d.sample_count() * 2, 733);
    const double tol = float_tolerance(std::int64_t(d.events.size()));
    for (int orders : {6, 24, 64}) {
      for (int interval : {0, 7}) {
        SCOPED_TRACE(d.name + ", orders " + std::to_string(orders) + ", interval " +
                     std::to_string(interval));
        VjpResult complex;
        {
          const real_path::RealPathSetting off("off");
          complex = run_vjp(d, t, orders, w, interval);
        }
        const real_path::RealPathSetting on("on");
        simulate::Options o;
        o.max_order = orders - 1;  // `orders` counts states (0..orders-1)
        ASSERT_EQ(simulate::Simulator(d, o).reverse_real_path_refusal(t), "");
        const auto lanes = run_vjp(d, t, orders, w, interval);
        VjpResult scalar;
        {
          const ScopedSetting one("LARMOR_REAL_SCALAR", "1");
          scalar = run_vjp(d, t, orders, w, interval);
        }
        for (const VjpResult* got : std::initializer_list<const VjpResult*>{&lanes, &scalar}) {
          for (const bool tissue : {true, false}) {
            const auto& want = tissue ? complex.tissue : complex.sequence;
            const auto& have = tissue ? got->tissue : got->sequence;
            double scale = 1e-3;
            for (float g : want) scale = std::max(scale, double(std::abs(g)));
            for (std::size_t i = 0; i < want.size(); ++i) {
              ASSERT_NEAR(have[i], want[i], tol * scale)
                  << (got == &lanes ? "lanes, " : "one train, ")
                  << (tissue ? "tissue " : "sequence ") << i;
            }
          }
        }
      }
    }
  }
  const real_path::RealPathSetting on("on");
  const ScopedSetting wrong("LARMOR_REAL_SCALAR", "yes");
  const auto d = real_path::half_turn_train(10, 734);
  const auto w = random_cotangents(std::size_t(t.voxels) * d.sample_count() * 2, 735);
  EXPECT_THROW(run_vjp(d, t, 8, w), std::invalid_argument);
}

TEST(TEST_CATEGORY, real_path_is_refused_for_what_leaves_the_axis) {
  const auto d = real_path::half_turn_train(20, 511);
  const simulate::Simulator sim(d);
  const real_path::RealPathSetting on("on");
  tissue::Tissue t = random_tissue(4, 512, false);
  EXPECT_EQ(sim.real_path_refusal(t), "");
  tissue::Tissue off_resonant = random_tissue(4, 512, true);
  EXPECT_NE(sim.real_path_refusal(off_resonant).find("off-resonance"), std::string::npos);
  tissue::Tissue pooled = t;
  pooled.bound_fraction.uniform = 0.1f;
  pooled.bound_t1_s.uniform = 1.0f;
  EXPECT_NE(sim.real_path_refusal(pooled).find("pooled"), std::string::npos);
  // The classic CPMG: a quarter turn between excitation and refocusing.
  const simulate::Simulator mese(sequence::build_mese({}));
  EXPECT_NE(mese.real_path_refusal(t).find("leave the axis"), std::string::npos);
  // A pulse of zero flip off the axis: the forward run keeps the axis, the
  // reverse sweep does not (its flip gradient turns about the pulse's axis).
  auto zero_flip = d;
  sequence::Event pulse;
  for (const auto& e : d.events) {
    if (e.kind == abi::EventKind::pulse) pulse = e;
  }
  ASSERT_EQ(pulse.kind, abi::EventKind::pulse);
  pulse.flip_rad = 0.0;
  pulse.phase_rad += 0.5;
  zero_flip.events.insert(zero_flip.events.begin() + 3, pulse);
  const simulate::Simulator with_zero_flip(zero_flip);
  EXPECT_EQ(with_zero_flip.real_path_refusal(t), "");
  EXPECT_NE(with_zero_flip.reverse_real_path_refusal(t).find("event 3: a pulse of zero flip"),
            std::string::npos);
  // By default the path is taken at every size, one voxel included.
  ::unsetenv("LARMOR_REAL_PATH");
  tissue::Tissue one = random_tissue(1, 513, false);
  EXPECT_EQ(sim.real_path_refusal(one), "");
  const tissue::Tissue big = random_tissue(400, 514, false);
  EXPECT_EQ(sim.real_path_refusal(big), "");
  // The setting is read once, when a simulator is made: off routes its runs
  // through the complex kernels, a value out of its set is refused, and
  // Options::launch sets it without the environment.
  {
    const real_path::RealPathSetting off("off");
    EXPECT_EQ(sim.real_path_refusal(one), "");
    EXPECT_EQ(simulate::Simulator(d).real_path_refusal(one), "LARMOR_REAL_PATH=off");
  }
  {
    const real_path::RealPathSetting wrong("sometimes");
    EXPECT_THROW(simulate::Simulator{d}, std::invalid_argument);
  }
  simulate::Options explicit_off;
  explicit_off.launch = simulate::LaunchSettings{};
  explicit_off.launch->real_path = simulate::RealPathMode::off;
  EXPECT_EQ(simulate::Simulator(d, explicit_off).real_path_refusal(one), "LARMOR_REAL_PATH=off");
}

}  // namespace larmor::test
