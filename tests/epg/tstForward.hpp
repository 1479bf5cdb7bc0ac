// The fused forward kernel against independently derived values, on one
// backend.
//
// Tolerances: the kernel computes in float, the reference in double. Each event
// adds at most a few float roundings (eps = 6e-8) per state, and the rotation
// and evolution are contractions, so the error of a sample is bounded by a
// small multiple of eps times the number of events before it, relative to M0.
// We use 8 eps per event (plus 1e-6 for the flip polynomial) and compare
// against max(1, |s|) scales.
#pragma once

#include <gtest/gtest.h>

#include "epg/forward_support.hpp"
#include "epg/impl/pending_interval.hpp"
#include "epg/impl/renamed_shifts.hpp"
#include "simulate/impl/device_tissue.hpp"

namespace larmor::test {

TEST(TEST_CATEGORY, mese_matches_reference) {
  sequence::MeseParams p;
  p.echoes = 24;
  p.refocusing_deg = 150.0;  // non-ideal refocusing: stimulated echoes matter
  expect_matches_reference(sequence::build_mese(p), random_tissue(13, 1), 0);
}

TEST(TEST_CATEGORY, spgr_matches_reference) {
  sequence::SpgrParams p;
  p.repetitions = 150;
  p.flip_deg = 20.0;
  expect_matches_reference(sequence::build_spgr(p), random_tissue(9, 2), 0);
}

TEST(TEST_CATEGORY, bssfp_matches_reference) {
  sequence::BssfpParams p;
  p.dummy_repetitions = 60;
  p.repetitions = 20;
  p.phase_increments_deg = {0.0, 180.0, 90.0};
  expect_matches_reference(sequence::build_bssfp(p), random_tissue(11, 3), 0);
}

TEST(TEST_CATEGORY, mrf_matches_reference) {
  sequence::MrfParams p;
  std::mt19937 rng(4);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int n = 0; n < 120; ++n) {
    p.schedule.push_back(
        {0.1 + 0.9 * u(rng), n % 2 ? 0.0 : 180.0 * u(rng), 2e-3 * u(rng), 1e-3 * u(rng)});
  }
  expect_matches_reference(sequence::build_mrf(p), random_tissue(10, 5), 0);
}

// Every action bit, every kind, random phases and intervals, and order counts
// that are not multiples of any layout's block: truncation must be the
// reference's exactly. With and without off resonance: the forward kernels
// fold the free evolution since the last pulse into the next rotation, whose
// c2 is complex only where a voxel precesses.
TEST(TEST_CATEGORY, random_streams_match_reference_at_any_order_count) {
  const sequence::Description d = random_stream(7, 160, 0.45);
  for (int orders : {1, 3, 8, 13, 64, 97}) {
    for (bool off_resonance : {true, false}) {
      SCOPED_TRACE("orders = " + std::to_string(orders) +
                   (off_resonance ? ", off resonance" : ", on resonance"));
      expect_matches_reference(d, random_tissue(5, 8 + orders, off_resonance), orders);
    }
  }
}

// The train kernel (simulate_train: the table compiled into steps, each
// voxel's scalars computed once per step) and the general event loop, each
// forced, against the reference: pulses and samples with and without shifts
// and spoilers between them, samples without a pulse before them, RF
// spoiling's phases, off resonance, and order counts that pad the blocks.
TEST(TEST_CATEGORY, the_train_kernel_and_the_event_loop_match_reference) {
  const sequence::Description random = random_stream(21, 140, 0.4, 0.2);
  std::mt19937 rng(22);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  sequence::MrfParams mrf;
  for (int n = 0; n < 90; ++n) {
    mrf.schedule.push_back(
        {0.1 + 0.9 * u(rng), n % 3 ? 0.0 : 180.0 * u(rng), 3e-3 * u(rng), 1e-3 * u(rng)});
  }
  sequence::SpgrParams spgr;
  spgr.repetitions = 80;
  spgr.flip_deg = 25.0;
  const EveryOrder every_order;
  for (const auto& d : {random, sequence::build_mrf(mrf), sequence::build_spgr(spgr)}) {
    simulate::Simulator sim(d);
    const auto table = epg::make_event_table<typename TEST_EXECSPACE::memory_space>(
        sim.packed().ref(), sim.kernel_states(), sim.samples());
    ASSERT_GT(table.train_steps, 0) << d.name << " is not compiled into a train";
    for (const char* mode : {"on", "off"}) {
      const ScopedSetting train("LARMOR_EPG_TRAIN", mode);
      for (int orders : {1, 3, 13, 64, 97}) {
        for (bool off_resonance : {true, false}) {
          SCOPED_TRACE(d.name + ", LARMOR_EPG_TRAIN=" + mode + ", orders = " +
                       std::to_string(orders) + (off_resonance ? ", off resonance" : ""));
          expect_matches_reference(d, random_tissue(7, 3 + orders, off_resonance), orders);
        }
      }
    }
  }
}

// Only tables whose forward runs may take the train kernel carry its step
// list: forward runs on devices, or anywhere with LARMOR_EPG_TRAIN=on; never
// the real-subspace rewrite or a switched-off kernel. A table built without
// it has none, and a forward run over it forced onto the train kernel still
// runs (the event loop) and matches one that took it. Automatically, only a
// train whose shifts the kernel renames takes it: a gradient echo's, not a
// spin echo's.
TEST(TEST_CATEGORY, only_tables_the_train_kernel_may_run_carry_its_steps) {
  using Exec = TEST_EXECSPACE;
  using Train = epg::LaunchOptions::Train;
  const auto rule = [](Train train, bool on_axis) {
    epg::LaunchOptions o;
    o.train = train;
    return epg::train_steps_rule<Exec>(o, on_axis);
  };
  const auto compiled = epg::TrainSteps::compile, skipped = epg::TrainSteps::skip;
  EXPECT_EQ(rule(Train::automatic, false), kx::is_host_space_v<Exec> ? skipped : compiled);
  EXPECT_EQ(rule(Train::on, false), compiled);
  EXPECT_EQ(rule(Train::off, false), skipped);
  for (Train train : {Train::automatic, Train::on, Train::off})
    EXPECT_EQ(rule(train, true), skipped);

  sequence::SpgrParams p;
  p.repetitions = 30;
  simulate::Simulator sim(sequence::build_spgr(p));
  const auto with = epg::make_event_table<typename Exec::memory_space>(
      sim.packed().ref(), sim.kernel_states(), sim.samples(), epg::LiveOrders::filled, compiled);
  const auto without = epg::make_event_table<typename Exec::memory_space>(
      sim.packed().ref(), sim.kernel_states(), sim.samples(), epg::LiveOrders::filled, skipped);
  EXPECT_EQ(with.train_steps, p.repetitions);
  EXPECT_EQ(with.train_single_shift_steps, p.repetitions - 1);  // the first has no spoiler before
  EXPECT_TRUE(epg::train_renames_shifts(with));
  EXPECT_EQ(without.train_steps, 0);
  EXPECT_EQ(without.train.extent(0), 0u);
  EXPECT_FALSE(epg::train_renames_shifts(without));
  // A spin-echo train crushes on both sides of each refocusing pulse: no
  // step but the excitation's shifts once before its pulse only.
  sequence::MeseParams m;
  m.echoes = 8;
  simulate::Simulator spin_echoes(sequence::build_mese(m));
  const auto mese = epg::make_event_table<typename Exec::memory_space>(
      spin_echoes.packed().ref(), spin_echoes.kernel_states(), spin_echoes.samples(),
      epg::LiveOrders::filled, compiled);
  EXPECT_GE(mese.train_steps, m.echoes);
  EXPECT_LE(mese.train_single_shift_steps, 1);
  EXPECT_FALSE(epg::train_renames_shifts(mese));

  const tissue::Tissue t = random_tissue(9, 31);
  const auto views =
      simulate::upload_tissue<typename Exec::memory_space>(t, 0, t.voxels, sim.description());
  epg::LaunchOptions forced;
  forced.train = Train::on;
  Kokkos::View<float***, Kokkos::LayoutRight, typename Exec::memory_space> a("a", t.voxels,
                                                                             sim.samples(), 2),
      b("b", t.voxels, sim.samples(), 2);
  epg::simulate_forward(Exec(), with, views, a, {}, forced);
  epg::simulate_forward(Exec(), without, views, b, {}, forced);
  const auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
  const auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
  for (int v = 0; v < t.voxels; ++v) {
    for (int n = 0; n < sim.samples(); ++n) {
      for (int c = 0; c < 2; ++c)
        EXPECT_NEAR(ha(v, n, c), hb(v, n, c), float_tolerance(2 * p.repetitions));
    }
  }
  EXPECT_GT(std::abs(ha(0, p.repetitions - 1, 0)) + std::abs(ha(0, p.repetitions - 1, 1)), 1e-3f);
}

// Shifts by renaming registers (renamed_shifts.hpp, the train kernel's
// common step on devices) against StateBlock::shift, which moves the rows:
// a block of four orders, alone in its group, through runs of four steps
// (shift, then the pulse's rotation with the evolution folded in, on and off
// resonance, every order live and not), each state compared slot by slot
// through the renaming after every step and register by register when the
// run brings the rows home.
struct OneThreadTeam {
  int team_rank() const { return 0; }
  void team_barrier() const {}
};
template <int P, bool AllLive, bool Precess, class Block>
void renamed_step(Block& renamed, Block& moved, int live, const epg::PendingComplexRotation<1>& r) {
  OneThreadTeam team;
  epg::EdgeExchange<float, 1> x;  // one thread: nothing to trade
  epg::renamed::shift<P>(renamed, team, x);
  epg::renamed::rotate_pending<P + 1, AllLive, Precess>(renamed, live, r);
  moved.shift(team, x);
  moved.rotate_pending(live, r, Precess);
  for (int s = 0; s < Block::opt; ++s) {
    const int p = epg::renamed::fp_row<Block::opt, P + 1>(s);
    const int m = epg::renamed::fm_row<Block::opt, P + 1>(s);
    SCOPED_TRACE("phase " + std::to_string(P) + ", slot " + std::to_string(s));
    EXPECT_FLOAT_EQ(renamed.fp_re[p][0], moved.fp_re[s][0]);
    EXPECT_FLOAT_EQ(renamed.fp_im[p][0], moved.fp_im[s][0]);
    EXPECT_FLOAT_EQ(renamed.fm_re[m][0], moved.fm_re[s][0]);
    EXPECT_FLOAT_EQ(renamed.fm_im[m][0], moved.fm_im[s][0]);
    EXPECT_FLOAT_EQ(renamed.z_re[s][0], moved.z_re[s][0]);
    EXPECT_FLOAT_EQ(renamed.z_im[s][0], moved.z_im[s][0]);
  }
}
template <bool AllLive, bool Precess, class Block, int... P>
void renamed_run(Block& renamed, Block& moved, int live, std::mt19937& rng,
                 std::integer_sequence<int, P...>) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const auto pending = [&] {
    epg::PendingComplexRotation<1> r;
    const double a = Precess ? 6.2 * u(rng) : 0.0, e2 = 0.9 + 0.1 * u(rng);
    r.set(0,
          epg::make_rotation(
              epg::make_flip(float(3.0 * u(rng))),
              epg::make_phase(float(std::cos(6.2 * u(rng))), float(std::sin(6.2 * u(rng))))),
          float(e2 * std::cos(a)), float(e2 * std::sin(a)), float(0.95 + 0.05 * u(rng)),
          float(0.05 * u(rng)));
    return r;
  };
  (renamed_step<P, AllLive, Precess>(renamed, moved, live, pending()), ...);
}
TEST(TEST_CATEGORY, renamed_shifts_match_moved_rows) {
  using Block = epg::StateBlock<float, 4, 1>;
  std::mt19937 rng(41);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Block renamed;
  renamed.reset(0);
  for (int j = 0; j < Block::opt; ++j) {
    renamed.fp_re[j][0] = u(rng), renamed.fp_im[j][0] = u(rng);
    renamed.fm_re[j][0] = u(rng), renamed.fm_im[j][0] = u(rng);
    renamed.z_re[j][0] = u(rng), renamed.z_im[j][0] = u(rng);
  }
  Block moved = renamed;
  const auto phases = std::make_integer_sequence<int, Block::opt>{};
  renamed_run<false, false>(renamed, moved, 2, rng, phases);
  renamed_run<true, false>(renamed, moved, 4, rng, phases);
  renamed_run<true, true>(renamed, moved, 4, rng, phases);
  renamed_run<false, true>(renamed, moved, 3, rng, phases);
  for (int j = 0; j < Block::opt; ++j) {  // home after each run of four
    EXPECT_FLOAT_EQ(renamed.fp_re[j][0], moved.fp_re[j][0]) << "row " << j;
    EXPECT_FLOAT_EQ(renamed.fm_im[j][0], moved.fm_im[j][0]) << "row " << j;
  }
  EXPECT_GT(std::abs(moved.fp_re[0][0]) + std::abs(moved.fm_re[3][0]), 1e-3f);
}

// The train of a spoiled gradient echo is one step per repetition: its pulse
// after the previous readout's spoiler shift and TR - TE of free evolution
// (TE before the first: the builder's first interval), its sample TE later
// with no shift between; ideal spoiling marks every pulse after the first.
TEST(TEST_CATEGORY, a_spoiled_gradient_echo_compiles_to_one_step_per_repetition) {
  for (auto spoiler : {sequence::Spoiler::gradient_shift, sequence::Spoiler::ideal}) {
    sequence::SpgrParams p;
    p.repetitions = 40;
    p.spoiler = spoiler;
    simulate::Simulator sim(sequence::build_spgr(p));
    const abi::PackedEventsRef ref = sim.packed().ref();
    const auto records = epg::build_event_records(ref, 16, sim.samples());
    const auto steps = epg::build_train_steps(records.data(), records.size());
    ASSERT_EQ(int(steps.size()), p.repetitions);
    const bool ideal = spoiler == sequence::Spoiler::ideal;
    for (int n = 0; n < p.repetitions; ++n) {
      const epg::TrainStep& s = steps[std::size_t(n)];
      SCOPED_TRACE("step " + std::to_string(n));
      EXPECT_TRUE(s.control & epg::train::has_pulse);
      EXPECT_EQ(s.output_index, n);
      EXPECT_EQ(epg::shifts_before_pulse(s.control), n > 0 && !ideal ? 1 : 0);
      EXPECT_EQ(epg::shifts_before_sample(s.control), 0);
      EXPECT_EQ(epg::shifts_once_then_pulses(s.control), n > 0 && !ideal);
      EXPECT_EQ((s.control & epg::train::spoiled_before_pulse) != 0, n > 0 && ideal);
      EXPECT_FALSE(s.control & epg::train::spoiled_before_sample);
      EXPECT_NEAR(s.pulse_elapsed, n > 0 ? p.tr_s : 0.0, 1e-9);
      EXPECT_NEAR(s.sample_elapsed, p.te_s, 1e-9);
      EXPECT_NEAR(s.flip, p.flip_deg * M_PI / 180.0, 1e-6);
    }
  }
}

TEST(TEST_CATEGORY, every_compiled_device_layout_matches_reference) {
  if (kx::is_host_space_v<TEST_EXECSPACE>) GTEST_SKIP() << "layouts are chosen on device backends";
  sequence::MeseParams mese;
  mese.echoes = 12;
  mese.refocusing_deg = 140.0;
  sequence::MrfParams mrf;
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int n = 0; n < 60; ++n) {
    mrf.schedule.push_back({0.1 + 0.9 * u(rng), 0.0, 4e-3 * u(rng), 1e-3 * u(rng)});
  }
  const EveryOrder every_order;
  for_each_device_layout([&] {
    for (int orders : {5, 24, 64}) {
      SCOPED_TRACE("orders = " + std::to_string(orders));
      expect_matches_reference(sequence::build_mese(mese), random_tissue(37, 20 + orders), orders);
      expect_matches_reference(sequence::build_mrf(mrf), random_tissue(19, 40 + orders, false),
                               orders);
    }
  });
}

// Ideal refocusing: echo n is M0 sin(a) exp(-n ESP / T2), whatever T1.
TEST(TEST_CATEGORY, cpmg_echoes_follow_the_t2_decay) {
  sequence::MeseParams p;
  p.echoes = 32;
  p.echo_spacing_s = 0.01;
  tissue::Tissue t;
  t.voxels = 3;
  t.t2_s.map = {0.02f, 0.1f, 1.5f};
  t.t1_s.uniform = 1.0f;
  const auto got = run_on_backend(sequence::build_mese(p), t, 0);
  for (int v = 0; v < 3; ++v) {
    for (int n = 1; n <= p.echoes; ++n) {
      const double want = std::abs(
          simulate::cpmg_ideal_echo(n, kx::pi / 2, p.echo_spacing_s, t.t2_s.map[std::size_t(v)]));
      EXPECT_NEAR(std::abs(sample(got, p.echoes, v, n - 1)), want, 2e-6)
          << "voxel " << v << " echo " << n;
    }
  }
}

// Non-ideal refocusing: the first three echoes against expressions derived by
// hand from the EPG recurrence (closed_form.cpp).
TEST(TEST_CATEGORY, cpmg_first_echoes_with_non_ideal_refocusing) {
  for (double beta_deg : {60.0, 120.0, 150.0}) {
    sequence::MeseParams p;
    p.echoes = 3;
    p.refocusing_deg = beta_deg;
    tissue::Tissue t;
    t.voxels = 1;
    t.t1_s.uniform = 0.9f;
    t.t2_s.uniform = 0.08f;
    const auto got = run_on_backend(sequence::build_mese(p), t, 0);
    const auto want = simulate::cpmg_first_echoes(kx::pi / 2, beta_deg * kx::pi / 180,
                                                  p.echo_spacing_s, 0.9, 0.08);
    for (int n = 0; n < 3; ++n) {
      EXPECT_NEAR(std::abs(sample(got, 3, 0, n)), std::abs(want[std::size_t(n)]), 2e-6)
          << "refocusing " << beta_deg << " deg, echo " << n + 1;
    }
  }
}

// RF-spoiled gradient echo approaches the Ernst signal. The quadratic
// schedule with 117 degrees leaves a small bias against ideal spoiling (it
// spoils coherences only approximately), so the test uses ideal spoiling for
// the closed form and bounds the approach to steady state: after n TRs the
// distance decays as (E1 cos a)^n, below 1e-7 for the values here.
TEST(TEST_CATEGORY, spoiled_gradient_echo_reaches_the_ernst_signal) {
  for (double flip : {5.0, 15.0, 40.0, 70.0}) {
    sequence::SpgrParams p;
    p.flip_deg = flip;
    p.repetitions = 600;
    p.spoiler = sequence::Spoiler::ideal;
    tissue::Tissue t;
    t.voxels = 1;
    t.t1_s.uniform = 0.4f;
    t.t2_s.uniform = 0.05f;
    const auto got = run_on_backend(sequence::build_spgr(p), t, 0);
    const double want = simulate::ernst_signal(flip * kx::pi / 180, p.tr_s, 0.4, 0.05, p.te_s);
    EXPECT_NEAR(std::abs(sample(got, p.repetitions, 0, p.repetitions - 1)), want,
                2e-5 * want + 1e-6)
        << "flip " << flip;
  }
}

// Balanced SSFP steady state against its closed form, on and off resonance,
// for both phase-cycling increments.
TEST(TEST_CATEGORY, bssfp_reaches_its_closed_form) {
  for (double increment : {0.0, 180.0}) {
    for (float df : {0.0f, 17.0f, -43.0f}) {
      sequence::BssfpParams p;
      p.flip_deg = 35.0;
      p.dummy_repetitions = 1500;
      p.repetitions = 1;
      p.phase_increments_deg = {increment};
      tissue::Tissue t;
      t.voxels = 1;
      t.t1_s.uniform = 0.3f;
      t.t2_s.uniform = 0.06f;
      t.df_hz.uniform = df;
      const auto got = run_on_backend(sequence::build_bssfp(p), t, 0);
      const Complex want = simulate::bssfp_signal(35.0 * kx::pi / 180, p.tr_s, 0.5 * p.tr_s, 0.3,
                                                  0.06, df, increment * kx::pi / 180);
      EXPECT_LE(std::abs(sample(got, 1, 0, 0) - want), 5e-5)
          << "increment " << increment << ", df " << df << ": got " << sample(got, 1, 0, 0)
          << " want " << want;
    }
  }
}

// Uniform properties and per-voxel maps of the same values give the same
// signals; voxel counts that leave lanes empty and chunked launches change
// nothing.
TEST(TEST_CATEGORY, maps_uniforms_lanes_and_chunks_agree) {
  sequence::MeseParams p;
  p.echoes = 8;
  p.refocusing_deg = 140.0;
  const auto d = sequence::build_mese(p);
  tissue::Tissue uniform;
  uniform.voxels = 7;
  uniform.t1_s.uniform = 0.8f;
  uniform.t2_s.uniform = 0.07f;
  uniform.b1.uniform = 0.9f;
  tissue::Tissue mapped = uniform;
  mapped.t1_s.map.assign(7, 0.8f);
  mapped.t2_s.map.assign(7, 0.07f);
  mapped.b1.map.assign(7, 0.9f);
  const auto a = run_on_backend(d, uniform, 0);
  const auto b = run_on_backend(d, mapped, 0);
  const auto c = run_on_backend(d, mapped, 0, 3);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i], b[i]) << i;
    EXPECT_EQ(b[i], c[i]) << i;
  }
}

// A voxel's signal must not depend on which voxels share its lanes, team or
// launch (that is what makes results identical for any MPI rank count): the
// same voxels simulated from a different first voxel agree bit for bit,
// with neighbours on and off resonance.
TEST(TEST_CATEGORY, a_voxel_does_not_depend_on_its_neighbours) {
  sequence::SpgrParams p;
  p.repetitions = 40;
  p.flip_deg = 30.0;
  const auto d = sequence::build_spgr(p);
  tissue::Tissue all = random_tissue(29, 77);
  for (int v = 0; v < all.voxels; v += 3) all.df_hz.map[std::size_t(v)] = 0.0f;
  const auto whole = run_on_backend(d, all, 0);
  const int samples = d.sample_count();
  for (int first : {1, 5, 11}) {
    tissue::Tissue part = all;
    part.voxels = all.voxels - first;
    for (auto* m : {&part.m0.map, &part.t1_s.map, &part.t2_s.map, &part.b1.map, &part.df_hz.map}) {
      m->erase(m->begin(), m->begin() + first);
    }
    const auto shifted = run_on_backend(d, part, 0);
    for (std::size_t i = 0; i < shifted.size(); ++i) {
      ASSERT_EQ(shifted[i], whole[i + std::size_t(first) * samples * 2])
          << "voxel " << first + int(i / (std::size_t(samples) * 2)) << " from first voxel "
          << first;
    }
  }
}

TEST(TEST_CATEGORY, an_external_t2_preparation_module_reaches_the_kernel) {
  for (double te : {0.02, 0.08}) expect_stored_t2_decay(t2_preparation(te), te, "external module");
}

TEST(TEST_CATEGORY, too_many_orders_are_refused_by_name) {
  sequence::MeseParams p;
  simulate::Options o;
  o.max_order = 1024;  // 1025 states: one above the kernels' 1024
  try {
    simulate::Simulator sim(sequence::build_mese(p), o);
    FAIL() << "max_order = 1024 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("larmor::epg::forward"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("max_order = 1024"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("0..1023"), std::string::npos) << e.what();
  }
}

TEST(TEST_CATEGORY, bad_tissue_is_refused_before_launch) {
  sequence::MeseParams p;
  simulate::Simulator sim(sequence::build_mese(p));
  tissue::Tissue t;
  t.voxels = 2;
  t.t1_s.uniform = 1.0f;
  t.t2_s.map = {0.1f, -0.1f};
  std::vector<float> out(2 * std::size_t(sim.samples()) * 2);
  EXPECT_THROW(sim.run_into<TEST_EXECSPACE>(t, out.data()), std::invalid_argument);
  t.t2_s.map = {0.1f, NAN};
  EXPECT_THROW(sim.run_into<TEST_EXECSPACE>(t, out.data()), std::invalid_argument);
}

}  // namespace larmor::test
