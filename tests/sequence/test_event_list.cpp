// The listed-event builder (`builder = "events"`): the fold into description
// events keeps the order of instants, shifts, spoiling and evolution, and the
// trains it builds give closed-form signals.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "../reference/epg_reference.hpp"
#include "sequence/builders/builders.hpp"
#include "sequence/builders/event_list.hpp"
#include "sequence/same_events.hpp"

namespace larmor::sequence {
namespace {

using Type = ListedEvent::Type;

ListedEvent pulse(double flip_deg, double phase_deg = 0.0, double then_ms = 0.0) {
  ListedEvent e;
  e.type = Type::pulse;
  e.flip_deg = flip_deg;
  e.phase_deg = phase_deg;
  e.duration_s = then_ms * 1e-3;
  return e;
}
ListedEvent wait(double ms) {
  ListedEvent e;
  e.type = Type::wait;
  e.duration_s = ms * 1e-3;
  return e;
}
ListedEvent shift(int count = 1, double then_ms = 0.0) {
  ListedEvent e;
  e.type = Type::shift;
  e.count = count;
  e.duration_s = then_ms * 1e-3;
  return e;
}
ListedEvent spoil() {
  ListedEvent e;
  e.type = Type::spoil;
  return e;
}
ListedEvent sample(double phase_deg = 0.0, double then_ms = 0.0) {
  ListedEvent e;
  e.type = Type::sample;
  e.phase_deg = phase_deg;
  e.duration_s = then_ms * 1e-3;
  return e;
}

Description build(std::vector<ListedEvent> events, int repeat = 1) {
  return build_event_list({EventBlock{std::move(events), repeat, "test"}});
}

constexpr double kDeg = 3.14159265358979323846 / 180.0;

TEST(EventList, spells_out_mese_event_for_event) {
  MeseParams p;
  p.echoes = 5;
  p.echo_spacing_s = 0.012;
  const Description mese = build_mese(p);
  const Description listed = build_event_list(
      {EventBlock{{pulse(90.0, 0.0, 6.0)}, 1, "excitation"},
       EventBlock{{shift(), pulse(180.0, 90.0), shift(1, 6.0), sample(0.0, 6.0)}, 5, "echo"}});
  expect_same_events(listed, mese);
  EXPECT_EQ(listed.parameters.at("listed_events"), 1.0 + 4.0 * 5.0);
}

TEST(EventList, shifts_and_spoiling_keep_their_place_between_evolutions) {
  // shift x2 before a pulse: one wait of no length with one shift, then the
  // pulse's crush_before; a shift between two waits: a wait of its own that
  // the second wait extends; spoiling after a sample: its spoil_after; a shift
  // after spoiling comes after it (a wait of its own), one left at the end too.
  const Description d =
      build({shift(2), pulse(30.0), wait(2.0), shift(), wait(3.0), sample(), spoil(), shift()});
  ASSERT_EQ(d.events.size(), 5u);
  EXPECT_EQ(d.events[0].kind, EventKind::wait);
  EXPECT_EQ(d.events[0].action, action::crush_after);
  EXPECT_EQ(d.events[0].duration_s, 0.0);
  EXPECT_EQ(d.events[1].kind, EventKind::pulse);
  EXPECT_EQ(d.events[1].action, action::crush_before);
  EXPECT_NEAR(d.events[1].duration_s, 2e-3, 1e-15);
  EXPECT_EQ(d.events[2].kind, EventKind::wait);
  EXPECT_EQ(d.events[2].action, action::crush_after);
  EXPECT_NEAR(d.events[2].duration_s, 3e-3, 1e-15);
  EXPECT_EQ(d.events[3].kind, EventKind::adc);
  EXPECT_EQ(d.events[3].action, action::echo_centre | action::spoil_after);
  EXPECT_EQ(d.events[4].kind, EventKind::wait);
  EXPECT_EQ(d.events[4].action, action::crush_after);
  EXPECT_EQ(d.declared_winding(), 4);
}

TEST(EventList, a_pulse_not_scaled_by_b1_keeps_its_nominal_flip) {
  ListedEvent inversion = pulse(180.0);
  inversion.b1_scaled = false;
  const Description d = build({inversion, spoil(), wait(10.0), pulse(90.0), sample()});
  EXPECT_EQ(d.events[0].action, action::b1_fixed | action::spoil_after);
  // After an ideal inversion and 10 ms of T1 recovery the 90 reads
  // Mz = 1 - 2 exp(-t / T1), at any B1 (the 90 itself is exact at b1 = 1 only,
  // so the excitation here reads Mz sin(90 b1)).
  reference::Tissue tissue;
  tissue.t1_s = 0.5;
  tissue.b1 = 0.8;
  const auto s = reference::simulate(d, tissue, 8);
  ASSERT_EQ(s.size(), 1u);
  const double mz = 1.0 - 2.0 * std::exp(-0.010 / 0.5);
  EXPECT_NEAR(std::abs(s[0]), std::abs(mz * std::sin(90.0 * kDeg * 0.8)), 1e-12);
}

TEST(EventList, fid_decays_as_exp_minus_te_over_t2) {
  const double te_ms = 7.0;
  const Description d = build({pulse(90.0), wait(te_ms), sample()});
  reference::Tissue tissue;
  tissue.t1_s = 1.0;
  tissue.t2_s = 0.05;
  const auto s = reference::simulate(d, tissue, 4);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_NEAR(std::abs(s[0]), std::exp(-te_ms * 1e-3 / tissue.t2_s), 1e-12);
}

TEST(EventList, spin_echo_refocuses_off_resonance) {
  const double tau_ms = 9.0;
  const Description d =
      build({pulse(90.0), wait(tau_ms), pulse(180.0, 90.0), wait(tau_ms), sample()});
  for (double df : {0.0, 13.0, -41.5}) {
    reference::Tissue tissue;
    tissue.t1_s = 0.8;
    tissue.t2_s = 0.06;
    tissue.df_hz = df;
    const auto s = reference::simulate(d, tissue, 4);
    ASSERT_EQ(s.size(), 1u);
    EXPECT_NEAR(std::abs(s[0]), std::exp(-2.0 * tau_ms * 1e-3 / tissue.t2_s), 1e-12) << df;
  }
}

TEST(EventList, repeats_play_the_block_over) {
  // The shift that ends a pass is the next pass's crush_before.
  const Description thrice = build({pulse(20.0), sample(0.0, 5.0), shift()}, 3);
  const Description listed =
      build({pulse(20.0), sample(0.0, 5.0), shift(), pulse(20.0), sample(0.0, 5.0), shift(),
             pulse(20.0), sample(0.0, 5.0), shift()});
  ASSERT_EQ(thrice.events.size(), 7u);
  ASSERT_EQ(listed.events.size(), 7u);
  for (std::size_t i = 0; i < 7; ++i) {
    EXPECT_EQ(thrice.events[i].kind, listed.events[i].kind) << i;
    EXPECT_EQ(thrice.events[i].action, listed.events[i].action) << i;
    EXPECT_EQ(thrice.events[i].duration_s, listed.events[i].duration_s) << i;
  }
  EXPECT_EQ(thrice.events[2].action, action::crush_before);
  EXPECT_EQ(thrice.sample_count(), 3);
}

TEST(EventList, bad_values_are_refused_naming_the_event) {
  ListedEvent bad = wait(-1.0);
  bad.where = "deck.toml:7: [sequence.events 2]";
  try {
    build({pulse(90.0), bad, sample()});
    FAIL() << "a negative wait was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "deck.toml:7: [sequence.events 2]: duration_ms must be positive (got -1)");
  }
  EXPECT_EQ(listed_event_problem(shift(0)), "count must be at least 1 (got 0)");
  EXPECT_EQ(listed_event_problem(pulse(90.0, 0.0, -2.5)),
            "duration_ms must be >= 0 (got -2.5): it is the free evolution after the event");
  EXPECT_EQ(listed_event_problem(pulse(std::nan(""))), "flip_deg must be finite");
  // 2^24 + 1 shifts are refused before anything is built.
  EXPECT_THROW(build({shift(1 << 12), sample()}, (1 << 12) + 1), std::invalid_argument);
}

class EventListCsv : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("larmor-event-csv-" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& text) {
    const std::string path = (dir_ / "train.csv").string();
    std::ofstream(path) << text;
    return path;
  }
  std::string error_of(const std::string& text) {
    const std::string path = write(text);
    try {
      read_event_list_csv(path);
    } catch (const std::runtime_error& e) {
      return std::string(e.what()).substr(path.size());
    }
    ADD_FAILURE() << "accepted:\n" << text;
    return "";
  }
  std::filesystem::path dir_;
};

TEST_F(EventListCsv, columns_are_named_by_the_header) {
  const auto events = read_event_list_csv(
      write("# a spin echo\nevent, duration_ms, flip_deg, phase_deg, b1_scaled, count\n"
            "pulse,,90,,,\nwait,4.5,,,,\r\n\nshift,,,,,2\npulse,,180,90,false,\nsample,1,,30,,\n"));
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events[0].type, Type::pulse);
  EXPECT_EQ(events[0].flip_deg, 90.0);
  EXPECT_TRUE(events[0].b1_scaled);
  EXPECT_EQ(events[1].type, Type::wait);
  EXPECT_NEAR(events[1].duration_s, 4.5e-3, 1e-18);
  EXPECT_EQ(events[2].count, 2);
  EXPECT_EQ(events[3].phase_deg, 90.0);
  EXPECT_FALSE(events[3].b1_scaled);
  EXPECT_EQ(events[4].type, Type::sample);
  EXPECT_EQ(events[4].phase_deg, 30.0);
  EXPECT_NEAR(events[4].duration_s, 1e-3, 1e-18);
  EXPECT_NE(events[4].where.find("train.csv:8"), std::string::npos) << events[4].where;
}

TEST_F(EventListCsv, bad_lines_are_named) {
  EXPECT_EQ(error_of("event,flip_deg\npulse,90\npulse,ninety\n"),
            ":3: flip_deg ('ninety') is not a finite number");
  EXPECT_EQ(error_of("event,flip_deg\npulse,90\nflip,90\n"),
            ":3: event 'flip' is not an event type (pulse, wait, shift, spoil, sample)");
  EXPECT_EQ(error_of("event,duration_ms\nwait,-2\n"), ":2: duration_ms must be positive (got -2)");
  EXPECT_EQ(error_of("event,flip_deg\nwait,90\n"),
            ":2: flip_deg ('90'): a wait event takes no flip_deg (leave the cell empty)");
  EXPECT_EQ(error_of("event,duration_ms\npulse,1\n"), ":2: a pulse event needs flip_deg");
  EXPECT_EQ(error_of("event,flip\n"),
            ":1: column 2 ('flip') is not a column of an event list (event, flip_deg, "
            "phase_deg, duration_ms, count, b1_scaled)");
  EXPECT_EQ(error_of("event,count\nshift,1,2\n"),
            ":2: expected 2 columns (as the header names), found 3");
  EXPECT_EQ(error_of("event,count\nshift,1.5\n"), ":2: count ('1.5') must be a whole number >= 1");
  EXPECT_EQ(error_of("event\n"), ": the event list has no events");
}

}  // namespace
}  // namespace larmor::sequence
