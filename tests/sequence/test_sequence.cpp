// Sequence description, operators, builders, packing and the order-count
// rule: what each must produce, written out independently of the code.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "reference/constants.hpp"
#include "sequence/builders/builders.hpp"
#include "sequence/operators.hpp"
#include "sequence/packing.hpp"
#include "simulate/simulator.hpp"
#include "test_paths.hpp"

namespace larmor::sequence {
namespace {

using larmor::test::kPi;

TEST(Operators, emit_the_documented_vocabulary) {
  Description d;
  d << Excitation{90.0, 0.0, 0.005} << Refocusing{180.0, 90.0, 0.005, true}
    << Readout{0.0, 0.001, true, AfterReadout::shift} << Dephase{0.0} << Spoil{0.0} << Delay{0.25};
  ASSERT_EQ(d.events.size(), 6u);
  EXPECT_EQ(d.events[0].kind, EventKind::pulse);
  EXPECT_DOUBLE_EQ(d.events[0].flip_rad, kPi / 2);
  EXPECT_EQ(d.events[0].action, 0u);
  EXPECT_EQ(d.events[1].action, action::crush_before | action::crush_after);
  EXPECT_DOUBLE_EQ(d.events[1].phase_rad, kPi / 2);
  EXPECT_EQ(d.events[2].kind, EventKind::adc);
  EXPECT_EQ(d.events[2].action, action::echo_centre | action::shift_after);
  EXPECT_EQ(d.events[3].action, action::shift_after);
  EXPECT_EQ(d.events[4].action, action::spoil_after);
  EXPECT_EQ(d.events[5].kind, EventKind::wait);
  EXPECT_DOUBLE_EQ(d.total_duration_s(), 0.005 + 0.005 + 0.001 + 0.25);
  EXPECT_EQ(d.declared_winding(), 4);  // two crushers, two shifts
}

TEST(OrderCap, is_the_winding_clamped_and_overridable) {
  Description d;
  EXPECT_EQ(default_max_order(d), 7);  // clamped up
  EXPECT_EQ(resolve_state_count(d, -1), 8);
  for (int i = 0; i < 20; ++i) d << Dephase{};
  EXPECT_EQ(default_max_order(d), 20);  // 20 shifts reach order 20
  for (int i = 0; i < 100; ++i) d << Dephase{};
  EXPECT_EQ(default_max_order(d), 63);  // clamped down
  // A cap of N keeps orders 0..N: N + 1 states; a cap of 0 keeps order 0 alone.
  EXPECT_EQ(resolve_state_count(d, 300), 301);
  EXPECT_EQ(resolve_state_count(d, 0), 1);
  EXPECT_EQ(resolve_state_count(d, 1023), 1024);
  try {
    resolve_state_count(d, 1024);
    FAIL() << "max_order = 1024 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("max_order = 1024"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("larmor::epg::forward"), std::string::npos);
  }
}

// A gradient-echo train with a shift per repetition: a state a pulse turns to
// F- at order k is read k shifts later, so samples reach about half the
// winding, above the automatic cap's 63 for 200 repetitions.
TEST(OrderCap, warns_when_the_automatic_cap_drops_orders_a_sample_reaches) {
  Description d;
  for (int n = 0; n < 200; ++n) {
    d << Excitation{30.0, 0.0, 0.001} << Readout{0.0, 0.004, true, AfterReadout::shift};
  }
  const int reached = sample_reach_order_count(d) - 1;
  ASSERT_GT(reached, 63);
  const std::string w = automatic_cap_warning(d, -1);
  EXPECT_NE(w.find("reach EPG order " + std::to_string(reached)), std::string::npos) << w;
  EXPECT_NE(w.find("keeps orders 0..63"), std::string::npos) << w;
  EXPECT_NE(w.find("max_order = " + std::to_string(reached)), std::string::npos) << w;
  // An explicit cap is the user's choice: no warning.
  EXPECT_EQ(automatic_cap_warning(d, 63), "");
  // A clamp that drops only orders no sample reads: no warning (mese winds 64,
  // its samples reach 31).
  MeseParams p;
  const Description mese = build_mese(p);
  ASSERT_EQ(default_max_order(mese), 63);
  EXPECT_EQ(automatic_cap_warning(mese, -1), "");
}

TEST(Builders, mese_is_a_cpmg_train) {
  MeseParams p;
  p.echoes = 4;
  p.echo_spacing_s = 0.012;
  const Description d = build_mese(p);
  ASSERT_EQ(d.events.size(), 1u + 2u * 4u);
  EXPECT_EQ(d.sample_count(), 4);
  EXPECT_EQ(default_max_order(d), 8);  // 8 crushers
  const auto t = d.timestamps_s();
  const PackedSequence packed = pack(d);
  // Echo n sits at n * ESP after the excitation.
  for (int n = 0; n < 4; ++n)
    EXPECT_NEAR(packed.sample_times_s[std::size_t(n)], (n + 1) * 0.012, 1e-15);
  // Refocusing pulses a quarter turn from the excitation (CPMG).
  EXPECT_NEAR(d.events[1].phase_rad - d.events[0].phase_rad, kPi / 2, 1e-15);
  EXPECT_EQ(t.size(), d.events.size());
}

TEST(Builders, spgr_phases_are_quadratic) {
  SpgrParams p;
  p.repetitions = 50;
  const Description d = build_spgr(p);
  ASSERT_EQ(d.events.size(), 100u);
  // phi_n - phi_{n-1} = n * increment: the second difference is constant.
  for (int n = 2; n < 50; ++n) {
    const double a = d.events[std::size_t(2 * n)].phase_rad;
    const double b = d.events[std::size_t(2 * n - 2)].phase_rad;
    const double c = d.events[std::size_t(2 * n - 4)].phase_rad;
    EXPECT_NEAR((a - b) - (b - c), 117.0 * kPi / 180, 1e-9);
    // The receiver follows the pulse.
    EXPECT_DOUBLE_EQ(d.events[std::size_t(2 * n + 1)].phase_rad, a);
  }
  EXPECT_NEAR(d.total_duration_s(), 50 * 0.008, 1e-12);
  EXPECT_EQ(default_max_order(d), 50);
}

TEST(Builders, bssfp_records_after_its_dummies_only) {
  BssfpParams p;
  p.dummy_repetitions = 10;
  p.repetitions = 3;
  p.phase_increments_deg = {0.0, 180.0};
  const Description d = build_bssfp(p);
  EXPECT_EQ(d.sample_count(), 6);
  EXPECT_EQ(d.declared_winding(), 0);  // balanced: no shifts
  EXPECT_EQ(d.events.size(), 2u * 2u * 13u);
}

TEST(Builders, refuse_nonsense_parameters) {
  SpgrParams s;
  s.te_s = 0.01;  // > TR
  EXPECT_THROW(build_spgr(s), std::invalid_argument);
  MeseParams m;
  m.echoes = 0;
  EXPECT_THROW(build_mese(m), std::invalid_argument);
  MrfParams r;
  EXPECT_THROW(build_mrf(r), std::invalid_argument);
}

TEST(Builders, refuse_trains_past_the_event_limit_before_allocating) {
  SpgrParams s;
  s.repetitions = 2000000000;  // 4e9 events: refused at once, nothing built
  try {
    build_spgr(s);
    FAIL() << "a 4e9-event train was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("4000000000 events; trains are limited to 16777216"),
              std::string::npos)
        << e.what();
  }
  // Within the kernels' 32-bit index, but gigabytes of descriptions (the deck
  // fuzz target's finding), and the first count past the limit: refused.
  MeseParams m;
  m.echoes = 432333333;
  EXPECT_THROW(build_mese(m), std::invalid_argument);
  m.echoes = 1 << 23;  // 1 + 2 * 2^23 = 2^24 + 1 events
  try {
    build_mese(m);
    FAIL() << "a train of 2^24 + 1 events was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("16777217 events"), std::string::npos) << e.what();
  }
  BssfpParams b;
  b.dummy_repetitions = 1500000000;
  EXPECT_THROW(build_bssfp(b), std::invalid_argument);
  // A count past what an int64 holds (shots x readouts) is named, not cast.
  MprageParams p;
  p.shots = p.readouts = 2147483647;
  try {
    build_mprage(p);
    FAIL() << "a train of 9e18 events was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("events; trains are limited to"), std::string::npos)
        << e.what();
  }
}

TEST(Schedule, reads_the_shipped_csv) {
  const auto rows =
      read_mrf_schedule_csv(std::string(LARMOR_SOURCE_DIR "/inputs") + "/mrf-schedule-1000.csv");
  ASSERT_EQ(rows.size(), 1000u);
  EXPECT_DOUBLE_EQ(rows[0].flip_fraction, 0.084857);
  EXPECT_DOUBLE_EQ(rows[0].tr_extension_s, 1.50e-3);
  MrfParams p;
  p.schedule = rows;
  const Description d = build_mrf(p);
  EXPECT_EQ(d.sample_count(), 1000);
  EXPECT_EQ(d.events.size(), 2001u);  // inversion + 1000 x (pulse, readout)
}

TEST(Schedule, errors_name_the_file_and_line) {
  const auto dir = std::filesystem::temp_directory_path() / "larmor-schedule-test";
  std::filesystem::create_directories(dir);
  const auto file = (dir / "bad.csv").string();
  std::ofstream(file) << "flip,phase,tr,te\n0.1,0,1,0\n0.2,zero,1,0\n";
  try {
    read_mrf_schedule_csv(file);
    FAIL() << "a non-numeric cell was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(file + ":3"), std::string::npos) << e.what();
  }
  std::ofstream(file) << "flip,phase,tr,te\n0.1,0,1\n";
  EXPECT_THROW(read_mrf_schedule_csv(file), std::runtime_error);
  EXPECT_THROW(read_mrf_schedule_csv((dir / "missing.csv").string()), std::runtime_error);
}

TEST(Packing, fills_the_nine_arrays_and_numbers_the_samples) {
  Description d;
  d.name = "t";
  d << Excitation{30.0, 45.0, 0.002} << Readout{45.0, 0.003, true, AfterReadout::spoil}
    << Delay{0.1} << Readout{10.0, 0.0, false, AfterReadout::nothing};
  const PackedSequence p = pack(d);
  ASSERT_EQ(p.size(), 4);
  EXPECT_EQ(p.samples, 2);
  EXPECT_EQ(p.output_index, (std::vector<std::int32_t>{-1, 0, -1, 1}));
  EXPECT_EQ(p.kind, (std::vector<std::uint8_t>{1, 2, 0, 2}));
  EXPECT_FLOAT_EQ(p.flip[0], float(30.0 * kPi / 180));
  EXPECT_DOUBLE_EQ(p.phase[1], 45.0 * kPi / 180);
  EXPECT_EQ(p.action[1], action::echo_centre | action::spoil_after);
  EXPECT_NEAR(p.sample_times_s[1], 0.105, 1e-15);
  EXPECT_EQ(p.sample_is_echo_centre, (std::vector<std::uint8_t>{1, 0}));
  const abi::PackedEventsRef r = p.ref();
  EXPECT_EQ(r.count, 4);
  EXPECT_EQ(r.duration, p.duration.data());
}

TEST(Packing, refuses_bad_events_naming_them) {
  Description d;
  d.name = "bad";
  d << Excitation{30.0, 0.0, 0.002};
  d.events.push_back(Event{});
  d.events.back().duration_s = -1.0;
  try {
    pack(d);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("event 1"), std::string::npos) << e.what();
  }
  d.events.back().duration_s = 0.0;
  d.events.back().phase_rad = NAN;
  EXPECT_THROW(pack(d), std::invalid_argument);
  d.events.back().phase_rad = 0.0;
  d.events.back().action = 1u << 7;
  EXPECT_THROW(pack(d), std::invalid_argument);
}

// keep_last_samples turns the earlier ADCs into waits: the physics is the
// same, so the kept samples equal the full run's last ones bit for bit, and
// their times are the full run's last times.
TEST(Sequence, KeepLastSamplesRecordsTheSameSignal) {
  SpgrParams p;
  p.repetitions = 60;
  const Description full = build_spgr(p);
  Description last = full;
  keep_last_samples(last, 4);
  EXPECT_EQ(last.sample_count(), 4);
  EXPECT_EQ(last.events.size(), full.events.size());
  EXPECT_DOUBLE_EQ(last.total_duration_s(), full.total_duration_s());
  tissue::Tissue t;
  t.voxels = 3;
  t.t1_s.map = {0.3f, 1.0f, 2.5f};
  t.t2_s.map = {0.03f, 0.08f, 0.2f};
  t.b1.map = {0.8f, 1.0f, 1.2f};
  const simulate::Simulator all(full), kept(last);
  const std::vector<float> a = all.run(t), b = kept.run(t);
  ASSERT_EQ(a.size(), 3u * 60 * 2);
  ASSERT_EQ(b.size(), 3u * 4 * 2);
  for (int v = 0; v < 3; ++v) {
    for (int s = 0; s < 4; ++s) {
      for (int part = 0; part < 2; ++part) {
        EXPECT_EQ(b[(v * 4 + s) * 2 + part], a[(v * 60 + 56 + s) * 2 + part]) << v << " " << s;
      }
    }
  }
  const auto& times_all = all.packed().sample_times_s;
  const auto& times_kept = kept.packed().sample_times_s;
  for (int s = 0; s < 4; ++s) EXPECT_DOUBLE_EQ(times_kept[s], times_all[56 + s]);
  Description unchanged = full;
  keep_last_samples(unchanged, 0);
  EXPECT_EQ(unchanged.sample_count(), 60);
}

}  // namespace
}  // namespace larmor::sequence
