// Crusher lobes that take time and pulses B1 does not scale, on the host:
// where the lobes' time goes (timestamps, packed durations, the kernels'
// records), lobes placed inside a builder's timing, and the b1_fixed bit from
// the operators, builders, decks and the canonical form. The physics of both
// is tested on every backend in tests/epg/tstFidelity.hpp.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "app/deck.hpp"
#include "epg/event_table.hpp"
#include "sequence/builders/builders.hpp"
#include "sequence/canonical.hpp"
#include "sequence/operators.hpp"
#include "sequence/packing.hpp"

namespace larmor::sequence {
namespace {

// Excitation, a refocusing pulse with its crushers, a readout with a shift
// after it, and a second refocusing pulse: every kind of lobe.
Description every_lobe(double lobe_s) {
  Description d;
  d.name = "lobes";
  d << Excitation{90.0, 0.0, 0.004} << Refocusing{180.0, 90.0, 0.003}
    << Readout{0.0, 0.002, true, AfterReadout::shift} << Refocusing{180.0, 90.0, 0.001};
  d.crusher.moment_per_m = 1000.0;
  d.crusher.duration_s = lobe_s;
  return d;
}

TEST(LobeTiming, lobes_add_their_time_between_the_instants) {
  const double tau = 0.0005;
  const Description d = every_lobe(tau);
  // Event 0 holds event 1's crush_before lobe; event 1 its crush_after lobe;
  // event 2 its shift_after lobe and event 3's crush_before; event 3 its
  // crush_after lobe (the first event has no crush_before to wrap).
  const double lobes[] = {tau, tau, 2 * tau, tau};
  const double durations[] = {0.004, 0.003, 0.002, 0.001};
  double now = 0.0;
  const auto t = d.timestamps_s();
  const PackedSequence p = pack(d);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_DOUBLE_EQ(d.lobe_time_after_s(i), lobes[i]) << i;
    EXPECT_DOUBLE_EQ(t[i], now) << i;
    EXPECT_FLOAT_EQ(p.duration[i], float(durations[i] + lobes[i])) << i;
    now += durations[i] + lobes[i];
  }
  EXPECT_NEAR(d.total_duration_s(), now, 1e-15);
  EXPECT_NEAR(p.sample_times_s[0], 0.004 + 0.003 + 2 * tau, 1e-9);
  // Without a lobe duration the instants follow the durations alone.
  const Description instant = every_lobe(0.0);
  EXPECT_NEAR(instant.total_duration_s(), 0.010, 1e-15);
  EXPECT_EQ(instant.lobe_time_after_s(2), 0.0);
}

TEST(LobeTiming, the_records_count_the_lobes_inside_each_duration) {
  const double tau = 0.0005;
  Description d = every_lobe(tau);
  // The first event takes a crush_before lobe: the last event's duration
  // holds it, as a repeated period's would.
  d.events[0].action |= action::crush_before;
  const PackedSequence p = pack(d);
  const auto records = epg::build_event_records(p.ref(), 8, p.samples);
  const int counts[] = {1, 1, 2, 2};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(epg::interval_lobes_of(records[i]), counts[i]) << i;
    EXPECT_NEAR(epg::free_duration_of(records[i], float(tau)), d.events[i].duration_s, 1e-9) << i;
    EXPECT_EQ(epg::action_of(records[i]), d.events[i].action) << i;
  }
  EXPECT_NEAR(d.lobe_time_after_s(3), 2 * tau, 1e-15);
}

TEST(LobeTiming, placing_lobes_keeps_a_builders_echo_times) {
  MeseParams m;
  m.echoes = 6;
  m.echo_spacing_s = 0.01;
  Description d = build_mese(m);
  const auto before = pack(d).sample_times_s;
  place_lobes_within_timing(d, 0.0015);
  EXPECT_EQ(d.crusher.duration_s, 0.0015);
  const auto after = pack(d).sample_times_s;
  ASSERT_EQ(before.size(), after.size());
  for (std::size_t n = 0; n < before.size(); ++n) EXPECT_NEAR(after[n], before[n], 1e-9) << n;
  // Half an echo spacing holds one lobe of at most ESP / 2.
  Description tight = build_mese(m);
  try {
    place_lobes_within_timing(tight, 0.006);
    FAIL() << "lobes longer than their intervals were placed";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("event 0"), std::string::npos) << what;
    EXPECT_NE(what.find("5.000000 ms"), std::string::npos) << what;
  }
}

TEST(UnscaledPulses, operators_and_builders_set_the_bit) {
  Description d;
  d << Excitation{.flip_deg = 180.0,
                  .then_s = 0.1,
                  .extra_action = action::spoil_after,
                  .b1_scaled = false}
    << Excitation{30.0, 0.0, 0.01}
    << Refocusing{.flip_deg = 180.0, .then_s = 0.01, .b1_scaled = false};
  EXPECT_EQ(d.events[0].action, action::spoil_after | action::b1_fixed);
  EXPECT_EQ(d.events[1].action, 0u);
  EXPECT_EQ(d.events[2].action, action::crush_before | action::crush_after | action::b1_fixed);
  MrfParams mrf;
  mrf.schedule = {{1.0, 0.0, 0.0, 0.0}, {0.5, 0.0, 0.0, 0.0}};
  EXPECT_EQ(build_mrf(mrf).events[0].action & action::b1_fixed, 0u);
  mrf.inversion_b1_scaled = false;
  const Description fixed = build_mrf(mrf);
  EXPECT_EQ(fixed.events[0].action, action::spoil_after | action::b1_fixed);
  for (std::size_t i = 1; i < fixed.events.size(); ++i) {
    EXPECT_EQ(fixed.events[i].action & action::b1_fixed, 0u) << i;
  }
  // The canonical form (Pulseq writing, equivalence) keeps it on its pulse.
  const Description c = canonical_form(fixed);
  EXPECT_EQ(c.events[0].action & action::b1_fixed, action::b1_fixed);
}

TEST(UnscaledPulses, are_refused_where_they_mean_nothing) {
  Description d;
  d << Excitation{90.0, 0.0, 0.01} << Readout{};
  d.events[1].action |= action::b1_fixed;
  EXPECT_THROW(pack(d), std::invalid_argument);
  d.events[1].action &= ~action::b1_fixed;
  d.events[0].action |= action::b1_fixed;
  d.shims.channels = 1;
  d.shims.weights = {{1.0, 0.0}};
  d.events[0].shim_index = 1;
  try {
    pack(d);
    FAIL() << "a b1_fixed pulse with a shim setting was packed";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("event 0"), std::string::npos) << e.what();
  }
}

class UnscaledDeck : public ::testing::Test {
 protected:
  void SetUp() override {
    // One folder per test: CTest runs the fixture's tests in parallel.
    dir_ = std::filesystem::temp_directory_path() /
           (std::string("larmor-unscaled-deck-") +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "schedule.csv") << "flip,phase,tr,te\n1.0,0,0,0\n0.5,0,0,0\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  app::Deck read(const std::string& sequence_keys) {
    const auto path = dir_ / "deck.toml";
    std::ofstream(path) << "[sequence]\n"
                        << sequence_keys << "\n[tissue]\nt1_ms = 1000.0\nt2_ms = 100.0\n";
    return app::read_deck(path.string());
  }
  std::filesystem::path dir_;
};

TEST_F(UnscaledDeck, inversion_b1_scaled_reaches_the_inversion) {
  const auto scaled = read("builder = \"mrf\"\nschedule = \"schedule.csv\"\n");
  EXPECT_EQ(scaled.sequence.events[0].action & action::b1_fixed, 0u);
  const auto fixed =
      read("builder = \"mrf\"\nschedule = \"schedule.csv\"\ninversion_b1_scaled = false\n");
  EXPECT_EQ(fixed.sequence.events[0].action & action::b1_fixed, action::b1_fixed);
  const auto mprage = read("builder = \"mprage\"\ninversion_b1_scaled = false\nshots = 1\n");
  EXPECT_EQ(mprage.sequence.events[0].action & action::b1_fixed, action::b1_fixed);
  EXPECT_THROW(read("builder = \"mprage\"\npreparation = \"t2\"\ninversion_b1_scaled = false\n"),
               app::DeckError);
}

TEST_F(UnscaledDeck, crusher_duration_keeps_the_echo_spacing) {
  const auto d = read(
      "builder = \"mese\"\nechoes = 4\necho_spacing_ms = 10\ncrusher_moment_per_m = 2000\n"
      "crusher_duration_ms = 2\n");
  EXPECT_EQ(d.sequence.crusher.duration_s, 0.002);
  const auto times = pack(d.sequence).sample_times_s;
  for (std::size_t n = 0; n < times.size(); ++n) EXPECT_NEAR(times[n], 0.01 * (n + 1), 1e-9);
  EXPECT_THROW(read("builder = \"mese\"\nechoes = 4\necho_spacing_ms = 10\n"
                    "crusher_moment_per_m = 2000\ncrusher_duration_ms = 6\n"),
               app::DeckError);
}

}  // namespace
}  // namespace larmor::sequence
