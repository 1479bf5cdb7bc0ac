// `builder = "events"` decks: a listed train reads as the builder it spells
// out, from the deck or a CSV file; bad events are refused with the deck, the
// line, the event and the key; the train goes to Pulseq and back unchanged.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "../reference/epg_reference.hpp"
#include "app/deck.hpp"
#include "app/deck_fixture.hpp"
#include "io/pulseq/pulseq_events.hpp"
#include "io/pulseq/pulseq_file.hpp"
#include "io/pulseq/pulseq_writer.hpp"
#include "sequence/canonical.hpp"
#include "sequence/same_events.hpp"

namespace larmor::app {
namespace {

namespace fs = std::filesystem;

// Errors are compared with the folder's path cut away.
class EventsDeck : public DeckFolder {
 protected:
  std::string error_of(const std::string& text) { return DeckFolder::error_of(text, true); }
};

// The CPMG train of `builder = "mese"` with 6 echoes 8 ms apart, listed.
constexpr const char* kMeseAsBlocks = R"(
[sequence]
builder = "events"
crusher_moment_per_m = 2000.0

[[sequence.block]]    # the excitation, half an echo spacing before the first refocusing
events = [ { event = "pulse", flip_deg = 90.0, duration_ms = 4.0 } ]

[[sequence.block]]    # one echo
repeat = 6
events = [
  { event = "shift" },
  { event = "pulse", flip_deg = 180.0, phase_deg = 90.0 },
  { event = "shift", duration_ms = 4.0 },
  { event = "sample", duration_ms = 4.0 },
]
)";

TEST_F(EventsDeck, spells_out_mese_with_the_same_events_and_signals) {
  const Deck listed = read_deck(write(std::string(kMeseAsBlocks) + kTissue));
  const Deck mese = read_deck(
      write(std::string("[sequence]\nbuilder = \"mese\"\nechoes = 6\necho_spacing_ms = 8.0\n"
                        "crusher_moment_per_m = 2000.0\n") +
                kTissue,
            "mese.toml"));
  EXPECT_EQ(listed.builder, "events");
  expect_same_events(listed.sequence, mese.sequence);
  EXPECT_EQ(listed.sequence.crusher.moment_per_m, 2000.0);
  // The same signals, off resonance, at B1 != 1 and with diffusion through
  // the declared crusher (the shifts' places matter for it).
  reference::Tissue tissue;
  tissue.t1_s = 0.9;
  tissue.t2_s = 0.07;
  tissue.b1 = 0.85;
  tissue.df_hz = 7.0;
  tissue.adc_m2_s = 2e-9;
  const auto a = reference::simulate(listed.sequence, tissue, 20);
  const auto b = reference::simulate(mese.sequence, tissue, 20);
  ASSERT_EQ(a.size(), 6u);
  ASSERT_EQ(b.size(), 6u);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << "sample " << i;
}

TEST_F(EventsDeck, a_csv_file_lists_the_same_train_and_is_an_input) {
  write(
      "event,flip_deg,phase_deg,duration_ms\n"
      "pulse,90,0,\nwait,,,6.5\npulse,180,90,6.5\nsample,,45,\n",
      "train.csv");
  const Deck from_csv = read_deck(
      write(std::string("[sequence]\nbuilder = \"events\"\nevents_csv = \"train.csv\"\n") + kTissue,
            "csv.toml"));
  const Deck inline_deck = read_deck(write(std::string(R"([sequence]
builder = "events"
events = [
  { event = "pulse", flip_deg = 90.0 },
  { event = "wait", duration_ms = 6.5 },
  { event = "pulse", flip_deg = 180.0, phase_deg = 90.0, duration_ms = 6.5 },
  { event = "sample", phase_deg = 45.0 },
]
)") + kTissue));
  expect_same_events(from_csv.sequence, inline_deck.sequence);
  ASSERT_EQ(from_csv.sequence.events.size(), 3u);
  EXPECT_NEAR(from_csv.sequence.events[2].phase_rad, M_PI / 4.0, 1e-15);
  EXPECT_EQ(from_csv.input_files.size(), 2u);
  EXPECT_EQ(fs::path(from_csv.input_files.at(1)).filename(), "train.csv");
}

TEST_F(EventsDeck, bad_events_are_refused_with_the_place_and_the_key) {
  const std::string head = "[sequence]\nbuilder = \"events\"\nevents = [\n";
  const std::string tail = std::string("]\n") + kTissue;
  EXPECT_EQ(error_of(head + "  { event = \"pulse\", flip_deg = 90.0 },\n  { event = \"flip\" },\n" +
                     tail),
            "deck.toml:5: [sequence.events 2] event 'flip' is not an event type (pulse, wait, "
            "shift, spoil, sample)");
  EXPECT_EQ(error_of(head + "  { event = \"pulse\", phase_deg = 90.0 },\n" + tail),
            "deck.toml:4: [sequence.events 1] flip_deg is required for a pulse event");
  EXPECT_EQ(error_of(head +
                     "  { event = \"pulse\", flip_deg = 90.0 },\n"
                     "  { event = \"wait\", duration_ms = -5.0 },\n" +
                     tail),
            "deck.toml:5: [sequence.events 2] duration_ms must be positive (got -5)");
  EXPECT_EQ(error_of(head + "  { event = \"sample\", duration_ms = -1.5 },\n" + tail),
            "deck.toml:4: [sequence.events 1] duration_ms must be >= 0 (got -1.5): it is the "
            "free evolution after the event");
  EXPECT_EQ(error_of(head + "  { event = \"pulse\", flip_deg = \"ninety\" },\n" + tail),
            "deck.toml:4: [sequence.events 1] flip_deg must be a number");
  EXPECT_EQ(error_of(head + "  { event = \"wait\", duration_ms = 1.0, flip_deg = 9.0 },\n" + tail),
            "deck.toml:4: [sequence.events 1] flip_deg is not a key of a wait event (it takes "
            "duration_ms)");
  EXPECT_EQ(error_of(head + "  { event = \"pulse\", flip = 9.0 },\n" + tail),
            "deck.toml:4: [sequence.events 1] flip is not a key of an event (event, flip_deg, "
            "phase_deg, duration_ms, count, b1_scaled)");
  EXPECT_EQ(error_of(head + "  { event = \"shift\", count = 0 },\n" + tail),
            "deck.toml:4: [sequence.events 1] count must be an integer >= 1");
  EXPECT_EQ(error_of(head + "  { flip_deg = 90.0 },\n" + tail),
            "deck.toml:4: [sequence.events 1] event is required: pulse, wait, shift, spoil or "
            "sample");
  EXPECT_EQ(error_of(head + "  90.0,\n" + tail),
            "deck.toml:4: [sequence.events 1] must be a table such as { event = \"pulse\", "
            "flip_deg = 90.0 }, not a bare value");
  write("event\nsample\n", "train.csv");
  EXPECT_EQ(error_of("[sequence]\nbuilder = \"events\"\nevents_csv = \"train.csv\"\n"
                     "events = [ { event = \"sample\" } ]\n" +
                     std::string(kTissue)),
            "deck.toml:3: [sequence] events_csv and events are both given: list the events in "
            "the deck or in a CSV file, not both");
  write("event,duration_ms\nsample,\nwait,-3\n", "bad.csv");
  EXPECT_EQ(error_of("[sequence]\nbuilder = \"events\"\nevents_csv = \"bad.csv\"\n" +
                     std::string(kTissue)),
            "deck.toml:3: [sequence] events_csv could not be read: bad.csv:3: duration_ms must be "
            "positive (got -3)");
  EXPECT_EQ(
      error_of("[sequence]\nbuilder = \"events\"\nrepeat = 3\n" + std::string(kTissue)),
      "deck.toml:1: [sequence] needs events = [ { event = \"pulse\", flip_deg = 90.0 }, ... ] "
      "or events_csv = \"train.csv\"");
  EXPECT_EQ(error_of(std::string(kMeseAsBlocks) + "events_csv = \"train.csv\"\n" + kTissue),
            "deck.toml:17: [sequence.block 2] events_csv and events are both given: list the "
            "events in the deck or in a CSV file, not both");
  EXPECT_EQ(error_of(std::string(kMeseAsBlocks) + "echoes = 6\n" + kTissue),
            "deck.toml:17: [sequence.block 2] echoes is not a known key of this section");
  EXPECT_EQ(error_of("[sequence]\nbuilder = \"events\"\nevents = [ { event = \"pulse\", "
                     "flip_deg = 90.0 } ]\n" +
                     std::string(kTissue)),
            "deck.toml: [sequence] records no sample (it has no ADC event), so there is no "
            "signal to simulate or write");
}

TEST_F(EventsDeck, exports_to_pulseq_and_reads_back_as_the_same_train) {
  const Deck listed = read_deck(write(std::string(kMeseAsBlocks) + kTissue));
  io::pulseq::write_pulseq((dir_ / "listed.seq").string(), listed.sequence);
  const Deck back = read_deck(
      write(std::string("[sequence]\nbuilder = \"pulseq\"\nfile = \"listed.seq\"\n") + kTissue,
            "back.toml"));
  // The file starts with an empty block (the first instant is at t = 0): an
  // equilibrium wait that changes no signal.
  sequence::Description read = back.sequence;
  ASSERT_EQ(read.events.front().kind, sequence::EventKind::wait);
  ASSERT_EQ(read.events.front().action, 0u);
  read.events.erase(read.events.begin());
  const sequence::Description expected = sequence::canonical_form(listed.sequence);
  ASSERT_EQ(read.events.size(), expected.events.size());
  for (std::size_t i = 0; i < read.events.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(read.events[i].kind, expected.events[i].kind);
    EXPECT_EQ(read.events[i].action, expected.events[i].action);
    EXPECT_NEAR(read.events[i].duration_s, expected.events[i].duration_s, 1e-12);
    EXPECT_NEAR(read.events[i].flip_rad, expected.events[i].flip_rad, 1e-12);
    EXPECT_NEAR(read.events[i].phase_rad, expected.events[i].phase_rad, 1e-12);
  }
  reference::Tissue tissue;
  tissue.t1_s = 0.9;
  tissue.t2_s = 0.07;
  tissue.b1 = 0.9;
  tissue.df_hz = 3.0;
  const auto a = reference::simulate(listed.sequence, tissue, 20);
  const auto b = reference::simulate(back.sequence, tissue, 20);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_LT(std::abs(a[i] - b[i]), 1e-9) << i;
}

TEST_F(EventsDeck, export_refuses_what_pulseq_cannot_say) {
  const Deck ideal = read_deck(write(std::string(R"([sequence]
builder = "events"
events = [
  { event = "pulse", flip_deg = 180.0, b1_scaled = false },
  { event = "spoil", duration_ms = 20.0 },
  { event = "pulse", flip_deg = 90.0 },
  { event = "sample" },
]
)") + kTissue));
  EXPECT_EQ(ideal.sequence.events.front().action,
            sequence::action::b1_fixed | sequence::action::spoil_after);
  try {
    io::pulseq::format_pulseq(ideal.sequence);
    FAIL() << "an ideal inversion was written";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "Pulseq writer (events): instant 0 (the pulse at 0 ms) keeps its nominal flip "
                 "whatever B1 is (b1_scaled = false); a Pulseq 1.4 file cannot say so, and read "
                 "back it would scale with B1");
  }
  const Deck lobes = read_deck(write(std::string(kMeseAsBlocks) + kTissue + "", "lobes.toml"));
  sequence::Description with_lobes = lobes.sequence;
  sequence::place_lobes_within_timing(with_lobes, 1e-3);
  try {
    io::pulseq::format_pulseq(with_lobes);
    FAIL() << "crusher lobes with their own time were written";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "Pulseq writer (events): the crusher lobes last 1 ms (crusher_duration_ms); the "
                 "writer writes every shift as a 30 us gradient block and cannot keep their "
                 "timing");
  }
}

}  // namespace
}  // namespace larmor::app
