// Input decks: a good deck gives the sequence and tissue it describes; a bad
// one is refused with the file, the line and the key.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "app/deck.hpp"
#include "app/deck_fixture.hpp"
#include "io/toml_text.hpp"
#include "sequence/builders/builders.hpp"
#include "simulate/simulator.hpp"
#include "test_paths.hpp"

namespace larmor::app {
namespace {

namespace fs = std::filesystem;

using DeckTest = DeckFolder;

TEST_F(DeckTest, reads_a_complete_deck) {
  const std::string path = write(R"(
[sequence]
builder = "mese"
echoes = 12
echo_spacing_ms = 8.0

[tissue]
t1_ms = 900
t2_ms = { from = 10.0, to = 1000.0, count = 3, spacing = "log" }
b1 = [0.9, 1.1]

[simulation]
max_order = 39

[output]
path = "out.h5"
)");
  const Deck d = read_deck(path);
  EXPECT_EQ(d.builder, "mese");
  EXPECT_EQ(d.sequence.sample_count(), 12);
  EXPECT_NEAR(d.sequence.parameters.at("echo_spacing_s"), 0.008, 1e-15);
  EXPECT_EQ(d.simulation.max_order, 39);
  EXPECT_EQ(d.output_path, "out.h5");
  ASSERT_EQ(d.tissue.mode, TissueSpec::Mode::grid);
  const auto& t2 = d.tissue.values.at(tissue::Property::t2);
  ASSERT_EQ(t2.size(), 3u);
  EXPECT_NEAR(t2[1], 100.0, 1e-9);  // geometric midpoint of 10 and 1000
  EXPECT_EQ(d.tissue.values.at(tissue::Property::t1).size(), 1u);
  EXPECT_EQ(d.tissue.values.at(tissue::Property::b1), (std::vector<double>{0.9, 1.1}));
}

// The declared terms: the crusher and slice (diffusion, flow), a transmit
// array's shim settings with a cycle over the pulses, and tissue values in
// their deck units.
TEST_F(DeckTest, declared_terms_are_read_in_their_units) {
  const Deck d = read_deck(write(R"(
[sequence]
builder = "mese"
echoes = 3
crusher_moment_per_m = 2500
crusher_duration_ms = 1.5
slice_thickness_mm = 4
shim_weights = [[[1, 0], [0, 1]], [[0.5, -0.5], [2, 0]]]
shim_cycle = [1, 2]

[tissue]
t1_ms = 900
adc_um2_ms = 0.8
velocity_cm_s = [-2, 3]
transmit = [[0.9, 0.1], [0.7, -0.2]]
bound_fraction = 0.1
bound_t2_us = 10
bound_lineshape = "gaussian"
)"));
  EXPECT_DOUBLE_EQ(d.tissue.bound_t2_us, 10.0);
  EXPECT_EQ(d.tissue.bound_lineshape, tissue::Lineshape::gaussian);
  EXPECT_EQ(d.tissue.values.at(tissue::Property::bound_fraction), (std::vector<double>{0.1}));
  EXPECT_DOUBLE_EQ(d.sequence.crusher.moment_per_m, 2500.0);
  EXPECT_DOUBLE_EQ(d.sequence.crusher.duration_s, 1.5e-3);
  EXPECT_DOUBLE_EQ(d.sequence.crusher.slice_thickness_m, 4e-3);
  ASSERT_EQ(d.sequence.shims.channels, 2);
  ASSERT_EQ(d.sequence.shims.settings(), 2);
  EXPECT_EQ(d.sequence.shims.weights[2], std::complex<double>(0.5, -0.5));
  std::vector<int> shims;
  for (const auto& e : d.sequence.events) {
    if (e.kind == sequence::EventKind::pulse) shims.push_back(e.shim_index);
  }
  EXPECT_EQ(shims, (std::vector<int>{1, 2, 1, 2}));  // excitation and three refocusing pulses
  EXPECT_EQ(d.tissue.values.at(tissue::Property::diffusion), (std::vector<double>{0.8}));
  EXPECT_EQ(d.tissue.values.at(tissue::Property::velocity), (std::vector<double>{-2.0, 3.0}));
  ASSERT_EQ(d.tissue.transmit_uniform.size(), 2u);
  EXPECT_EQ(d.tissue.transmit_uniform[1], std::complex<double>(0.7, -0.2));
  EXPECT_DOUBLE_EQ(tissue::to_si(tissue::Property::diffusion), 1e-9);
  EXPECT_DOUBLE_EQ(tissue::to_si(tissue::Property::velocity), 1e-2);

  const std::string base = "[sequence]\nbuilder = \"mese\"\n";
  EXPECT_NE(error_of(base + "shim_weights = [[[1, 0]], [[1, 0], [0, 1]]]\n" + kTissue)
                .find("same number of channels"),
            std::string::npos);
  EXPECT_NE(
      error_of(base + "shim_weights = [[[1, 0]]]\nshim_cycle = [2]\n" + kTissue).find("shim_cycle"),
      std::string::npos);
  EXPECT_NE(error_of(base + "shim_cycle = [1]\n" + kTissue).find("needs shim_weights"),
            std::string::npos);
  EXPECT_NE(error_of(base + "crusher_moment_per_m = -3\n" + kTissue).find("crusher_moment_per_m"),
            std::string::npos);
  EXPECT_NE(error_of(base + "shim_weights = [[[1, 0, 3]]]\n" + kTissue).find("[re, im]"),
            std::string::npos);
  EXPECT_NE(error_of(base + kTissue + "bound_lineshape = \"square\"\n").find("bound_lineshape"),
            std::string::npos);
}

TEST_F(DeckTest, slice_profiles_shape_the_pulses_they_select) {
  const Deck d = read_deck(write(R"([sequence]
builder = "mese"
echoes = 3

[[sequence.across_slice]]
pulses = "first"
time_bandwidth = 6
positions = 24

[[sequence.across_slice]]
pulses = "rest"
waveform = [0.2, 0.7, 1.0, 0.7, 0.2]
thickness = 1.5
positions = 24
)" + std::string(kTissue)));
  ASSERT_EQ(d.sequence.slice_profiles.size(), 2u);
  const auto& excitation = d.sequence.slice_profiles[0];
  const auto& refocusing = d.sequence.slice_profiles[1];
  EXPECT_DOUBLE_EQ(excitation.time_bandwidth, 6.0);
  EXPECT_DOUBLE_EQ(excitation.rephase, 0.5);  // an excitation is rephased by default
  EXPECT_DOUBLE_EQ(refocusing.rephase, 0.0);  // refocusing pulses are not
  EXPECT_DOUBLE_EQ(refocusing.thickness, 1.5);
  EXPECT_EQ(refocusing.waveform.size(), 5u);
  EXPECT_EQ(excitation.positions, 24);
  std::vector<int> profiles;
  for (const auto& e : d.sequence.events) {
    if (e.kind == sequence::EventKind::pulse) profiles.push_back(e.slice_profile);
  }
  EXPECT_EQ(profiles, (std::vector<int>{1, 2, 2, 2}));

  const std::string base = "[sequence]\nbuilder = \"mese\"\n";
  const auto refused = [&](const std::string& tables, const char* text) {
    const std::string e = error_of(base + tables + kTissue);
    EXPECT_NE(e.find(text), std::string::npos) << e;
  };
  refused("[[sequence.across_slice]]\npulses = \"second\"\n", "pulses");
  refused("[[sequence.across_slice]]\nshape = \"gauss\"\n", "shape");
  refused("[[sequence.across_slice]]\n[[sequence.across_slice]]\npulses = \"first\"\n",
          "already shaped by table 1");
  refused("[[sequence.across_slice]]\nrephase = 2\n", "rephase");
  refused(
      "[[sequence.across_slice]]\npulses = \"first\"\npositions = 8\n"
      "[[sequence.across_slice]]\npulses = \"rest\"\npositions = 9\n",
      "same positions");
  refused("[[sequence.across_slice]]\nwaveform = [1, -1]\n", "zero area");
}

TEST_F(DeckTest, shipped_decks_parse) {
  for (const char* name :
       {"default", "mese", "tse", "spgr", "mprage", "bssfp", "dess", "mrf", "events-spin-echo"}) {
    SCOPED_TRACE(name);
    EXPECT_NO_THROW(read_deck(std::string(LARMOR_SOURCE_DIR "/inputs") + "/" + name + ".toml"));
  }
}

// A deck's text reads as its file does (the Python bindings' path), and a
// complaint names the origin given in place of the file.
TEST_F(DeckTest, text_reads_as_its_file_does) {
  const std::string path = std::string(LARMOR_SOURCE_DIR "/inputs") + "/mese.toml";
  const Deck from_file = read_deck(path);
  const Deck from_text = read_deck_text(io::read_toml_text(path), "mese-text");
  ASSERT_EQ(from_text.sequence.events.size(), from_file.sequence.events.size());
  for (std::size_t i = 0; i < from_file.sequence.events.size(); ++i) {
    EXPECT_EQ(from_text.sequence.events[i].kind, from_file.sequence.events[i].kind);
    EXPECT_EQ(from_text.sequence.events[i].flip_rad, from_file.sequence.events[i].flip_rad);
    EXPECT_EQ(from_text.sequence.events[i].duration_s, from_file.sequence.events[i].duration_s);
  }
  EXPECT_EQ(from_text.tissue.values.size(), from_file.tissue.values.size());
  try {
    read_deck_text("[sequence]\nbuilder = \"mese\"\nechoes = -3\n", "larmor.build(mese)", false);
    FAIL() << "a negative echo count was read";
  } catch (const DeckError& e) {
    EXPECT_NE(std::string(e.what()).find("larmor.build(mese)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("echoes"), std::string::npos) << e.what();
  }
  try {
    read_deck_text("[sequence\n", "broken-text");
    FAIL() << "a syntax error was read";
  } catch (const DeckError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("broken-text:1:", 0), 0u) << e.what();
  }
}

TEST_F(DeckTest, tse_and_mprage_decks_build_their_trains) {
  const Deck tse =
      read_deck(write("[sequence]\nbuilder = \"tse\"\nechoes = 3\n"
                      "refocusing_deg = [150.0, 120.0, 100.0]\n" +
                      std::string(kTissue)));
  ASSERT_EQ(tse.sequence.events.size(), 7u);  // excitation, then a pulse and a readout per echo
  EXPECT_NEAR(tse.sequence.events[3].flip_rad, 120.0 * 3.14159265358979 / 180, 1e-12);
  const Deck mprage =
      read_deck(write("[sequence]\nbuilder = \"mprage\"\nreadouts = 5\nshots = 2\n"
                      "preparation = \"t2\"\n" +
                      std::string(kTissue)));
  EXPECT_EQ(mprage.sequence.sample_count(), 10);
  std::string e =
      error_of("[sequence]\nbuilder = \"tse\"\nechoes = 3\nrefocusing_deg = [150.0, 120.0]\n" +
               std::string(kTissue));
  EXPECT_NE(e.find("deck.toml:4"), std::string::npos) << e;
  EXPECT_NE(e.find("refocusing_deg needs one flip or one per echo (3), got 2"), std::string::npos)
      << e;
  e = error_of("[sequence]\nbuilder = \"mprage\"\npreparation = \"saturation\"\n" +
               std::string(kTissue));
  EXPECT_NE(e.find("preparation must be"), std::string::npos) << e;
}

TEST_F(DeckTest, unknown_key_names_file_line_and_key) {
  const std::string e =
      error_of("[sequence]\nbuilder = \"mese\"\nechos = 4\n" + std::string(kTissue));
  EXPECT_NE(e.find("deck.toml:3"), std::string::npos) << e;
  EXPECT_NE(e.find("echos"), std::string::npos) << e;
}

TEST_F(DeckTest, wrong_types_are_named) {
  std::string e =
      error_of("[sequence]\nbuilder = \"mese\"\nechoes = \"four\"\n" + std::string(kTissue));
  EXPECT_NE(e.find("deck.toml:3"), std::string::npos) << e;
  EXPECT_NE(e.find("integer"), std::string::npos) << e;
  e = error_of("[sequence]\nbuilder = \"spgr\"\ntr_ms = -8\n" + std::string(kTissue));
  EXPECT_NE(e.find("tr_ms"), std::string::npos) << e;
}

TEST_F(DeckTest, syntax_errors_carry_line_and_column) {
  const std::string e = error_of("[sequence]\nbuilder = \"mese\n");
  EXPECT_NE(e.find("deck.toml:2"), std::string::npos) << e;
}

// Non-ASCII text outside strings and comments is refused by line and column
// before toml++ sees it (Debian's toml++ 3.3.0 reaches undefined behaviour on
// some such code points: io/toml_text.hpp); in strings and comments it
// is read.
TEST_F(DeckTest, non_ascii_text_is_refused_outside_strings_and_comments) {
  // A Cyrillic letter in a number (the fuzz target's finding).
  std::string e =
      error_of("[sequence]\nbuilder = \"spgr\"\ntr_ms = 11\xD0\x98\n" + std::string(kTissue));
  EXPECT_NE(e.find("deck.toml:3:11: non-ASCII byte 0xD0"), std::string::npos) << e;
  // After a multi-line string's line-ending backslash (toml++ issue #190).
  e = error_of("s = \"\"\"\\  \n  \xC2\xA7\"\"\"\n");
  EXPECT_NE(e.find("deck.toml:2:3: non-ASCII byte 0xC2 right after a line-ending backslash"),
            std::string::npos)
      << e;
  // After a backslash that does not end the line (the fuzz target's).
  e = error_of("s = \"\"\"i\\ \xEF\xBB\xB7o\"\"\"\n");
  EXPECT_NE(e.find("deck.toml:1:11: non-ASCII byte 0xEF after a backslash in a multi-line string"),
            std::string::npos)
      << e;
  // A combining mark alone (toml++ issue #295).
  e = error_of("\xCC\xAA");
  EXPECT_NE(e.find("deck.toml:1:1: non-ASCII byte 0xCC"), std::string::npos) << e;
  // In a string glued to a bare value (toml++ reads it as part of the value).
  e = error_of("[sequence]\nbuilder = \"spgr\"\ntr_ms = 11'\xC3\xA9'\n" + std::string(kTissue));
  EXPECT_NE(e.find("deck.toml:3:12: non-ASCII byte 0xC3 in a string that directly follows a value"),
            std::string::npos)
      << e;
  // In comments and strings of every kind it is text, wherever a string
  // may stand (values, arrays, inline tables, quoted and dotted keys).
  EXPECT_NO_THROW(
      io::check_toml_text("# T\xC3\xA9\nname = \"\xC3\xA9\\\"\xC3\xA9\" # \xC3\xBC\n"
                          "b = 'x\xC3\xA9'\nc = '''\n\xC3\xBC'''\nd = \"\"\"\xC3\xBC\\\"\"\"\"\n"
                          "e = \"\"\"\\\nx\xC3\xBC\"\"\"\"\n"
                          "f = [1, \"\xC3\xA9\"]\ng = {h = '\xC3\xA9'}\n\"\xC3\xA9\" = 1\n"
                          "[a.\"\xC3\xA9\"]\n[\"\xC3\xA9\"]\n",
                          "text"));
  // and the string's end is found: what follows it is code again.
  EXPECT_THROW(io::check_toml_text("a = \"x\\\"\" \xC3\xA9\n", "text"), std::invalid_argument);
  EXPECT_THROW(io::check_toml_text("a = '''x''''' \xC3\xA9\n", "text"), std::invalid_argument);
  const std::string path =
      write("# r\xC3\xA9sum\xC3\xA9\n[sequence]\nbuilder = \"spgr\"\n" + std::string(kTissue));
  EXPECT_NO_THROW(read_deck(path));
}

// Inputs the deck fuzz target once flagged are kept and replayed: each must
// now be read or refused with a DeckError.
TEST(DeckFuzzRegressions, every_kept_input_is_read_or_refused) {
  const fs::path folder = fs::path(LARMOR_SOURCE_DIR) / "tests/data/deck-fuzz-regressions";
  int replayed = 0;
  for (const auto& entry : fs::directory_iterator(folder)) {
    if (entry.path().extension() == ".md") continue;
    ++replayed;
    try {
      read_deck(entry.path().string());
    } catch (const DeckError&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << entry.path() << ": not a DeckError: " << e.what();
    }
  }
  EXPECT_GE(replayed, 3);
}

TEST_F(DeckTest, unknown_builder_and_section_are_refused) {
  std::string e = error_of("[sequence]\nbuilder = \"fse\"\n" + std::string(kTissue));
  EXPECT_NE(e.find("fse"), std::string::npos) << e;
  EXPECT_NE(e.find("mese"), std::string::npos) << e;  // lists what exists
  e = error_of("[sequence]\nbuilder = \"mese\"\n" + std::string(kTissue) + "[extra]\nx = 1\n");
  EXPECT_NE(e.find("extra"), std::string::npos) << e;
  e = error_of(std::string(kTissue));
  EXPECT_NE(e.find("[sequence]"), std::string::npos) << e;
}

TEST_F(DeckTest, too_many_orders_are_refused_with_the_kernel_name) {
  std::string e = error_of("[sequence]\nbuilder = \"mese\"\n" + std::string(kTissue) +
                           "[simulation]\nmax_order = 1024\n");
  EXPECT_NE(e.find("deck.toml:8"), std::string::npos) << e;
  EXPECT_NE(e.find("max_order"), std::string::npos) << e;
  EXPECT_NE(e.find("1023"), std::string::npos) << e;
  EXPECT_NE(e.find("larmor::epg::forward"), std::string::npos) << e;
  e = error_of("[sequence]\nbuilder = \"mese\"\n" + std::string(kTissue) +
               "[simulation]\nmax_order = -1\n");
  EXPECT_NE(e.find("max_order must be an integer >= 0"), std::string::npos) << e;
}

// mt_spgr's excitation as a rectangular hard pulse: its power integral
// flip^2 / duration (rad^2/s), and a length outrunning the MT gap refused.
TEST_F(DeckTest, mt_spgr_excitation_duration_carries_power_or_is_refused_by_name) {
  const std::string head = "[sequence]\nbuilder = \"mt_spgr\"\nrepetitions = 2\nflip_deg = 10.0\n";
  const Deck d = read_deck(write(head + "excitation_duration_ms = 0.8\n" + std::string(kTissue)));
  const double a = 10.0 * 3.14159265358979323846 / 180.0;
  int excitations = 0;
  for (const auto& e : d.sequence.events) {
    if (e.kind != sequence::EventKind::pulse || e.rf_frequency_hz != 0.0) continue;
    EXPECT_FLOAT_EQ(e.saturation, float(a * a / 0.8e-3));
    ++excitations;
  }
  EXPECT_EQ(excitations, 2);
  const std::string e = error_of(head + "excitation_duration_ms = 2.0\n" + std::string(kTissue));
  EXPECT_NE(e.find("excitation_duration_ms"), std::string::npos) << e;
}

// The state count of the old `orders` key is one more than the cap it meant.
TEST_F(DeckTest, the_old_orders_key_is_refused_with_the_max_order_to_write) {
  const std::string e = error_of("[sequence]\nbuilder = \"mese\"\n" + std::string(kTissue) +
                                 "[simulation]\norders = 40\n");
  EXPECT_NE(e.find("deck.toml:8"), std::string::npos) << e;
  EXPECT_NE(e.find("[simulation] orders"), std::string::npos) << e;
  EXPECT_NE(e.find("write max_order = 39"), std::string::npos) << e;
}

TEST_F(DeckTest, a_max_order_keeps_orders_zero_to_it) {
  const Deck d = read_deck(write("[sequence]\nbuilder = \"mese\"\n" + std::string(kTissue) +
                                 "[simulation]\nmax_order = 2\n"));
  EXPECT_EQ(d.simulation.max_order, 2);
  EXPECT_EQ(simulate::Simulator(d.sequence, d.simulation).states(), 3);
  const Deck automatic =
      read_deck(write("[sequence]\nbuilder = \"mese\"\n" + std::string(kTissue), "auto.toml"));
  EXPECT_EQ(automatic.simulation.max_order, -1);
}

TEST_F(DeckTest, nan_values_and_bad_ranges_are_refused) {
  std::string e = error_of("[sequence]\nbuilder = \"mese\"\n[tissue]\nt1_ms = nan\nt2_ms = 50.0\n");
  EXPECT_NE(e.find("t1_ms"), std::string::npos) << e;
  e = error_of(
      "[sequence]\nbuilder = \"mese\"\n[tissue]\nt2_ms = { from = -1.0, to = 10.0, count = 4, "
      "spacing = \"log\" }\n");
  EXPECT_NE(e.find("t2_ms"), std::string::npos) << e;
  e = error_of("[sequence]\nbuilder = \"mese\"\n[tissue]\nt2_ms = { from = 1.0, to = 10.0 }\n");
  EXPECT_NE(e.find("count"), std::string::npos) << e;
}

TEST_F(DeckTest, missing_schedule_file_is_named) {
  const std::string e = error_of("[sequence]\nbuilder = \"mrf\"\nschedule = \"nowhere.csv\"\n" +
                                 std::string(kTissue));
  EXPECT_NE(e.find("nowhere.csv"), std::string::npos) << e;
}

// Mutated decks (characters deleted, inserted or replaced, lines repeated)
// are either read or refused with a DeckError; nothing else escapes.
TEST_F(DeckTest, mutated_decks_are_read_or_refused_cleanly) {
  const std::string good = R"([sequence]
builder = "spgr"
flip_deg = 12.0
tr_ms = 7.0
te_ms = 3.0
repetitions = 40

[tissue]
t1_ms = [800.0, 1200.0]
t2_ms = { from = 20.0, to = 200.0, count = 3, spacing = "log" }
b1 = 1.0

[simulation]
max_order = 15
)";
  std::mt19937 rng(2026);
  const std::string alphabet = "[]{}=,.\"#0123456789-+eEnaif_ \n";
  int refused = 0, read = 0;
  for (int trial = 0; trial < 800; ++trial) {
    std::string text = good;
    const int edits = 1 + int(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = rng() % text.size();
      switch (rng() % 4) {
        case 0:
          text.erase(at, 1 + rng() % 4);
          break;
        case 1:
          text.insert(at, 1, alphabet[rng() % alphabet.size()]);
          break;
        case 2:
          text[at] = alphabet[rng() % alphabet.size()];
          break;
        default: {
          const std::size_t start = text.rfind('\n', at) + 1;
          const std::size_t end = text.find('\n', at);
          text.insert(start, text.substr(start, end - start) + "\n");
        }
      }
    }
    const std::string path = write(text);
    try {
      read_deck(path);
      ++read;
    } catch (const DeckError&) {
      ++refused;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not a DeckError: " << e.what() << "\n" << text;
    }
  }
  // Both outcomes must occur, or the mutations test nothing.
  EXPECT_GT(refused, 50);
  EXPECT_GT(read, 10);
}

// t2_prime_ms (an intra-voxel frequency spread) exists on the isochromat
// engine only: under engine = "auto" a Pulseq file runs there and says why;
// EPG, chosen or the only engine of a builder, refuses it by name.
TEST_F(DeckTest, t2_prime_chooses_the_isochromat_engine_or_is_refused) {
  const std::string seq = std::string(LARMOR_SOURCE_DIR) + "/inputs/mese.seq";
  const std::string tissue = "[tissue]\nt1_ms = 1000\nt2_ms = 80\nt2_prime_ms = 30\n";
  const Deck automatic =
      read_deck(write("[sequence]\nbuilder = \"pulseq\"\nfile = \"" + seq + "\"\n" + tissue));
  EXPECT_TRUE(automatic.isochromats);
  EXPECT_NE(automatic.engine_reason.find("t2_prime_ms"), std::string::npos)
      << automatic.engine_reason;
  const auto refused = [&](const std::string& deck, const std::string& why) {
    try {
      read_deck(write(deck));
      FAIL() << "EPG took t2_prime_ms: " << deck;
    } catch (const DeckError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("[tissue] t2_prime_ms: an intra-voxel frequency spread is simulated by "
                          "the isochromat engine only"),
                std::string::npos)
          << what;
      EXPECT_NE(what.find(why), std::string::npos) << what;
    }
  };
  refused("[sequence]\nbuilder = \"pulseq\"\nfile = \"" + seq + "\"\n" + tissue +
              "[simulation]\nengine = \"epg\"\n",
          "engine = \"epg\"");
  refused("[sequence]\nbuilder = \"mese\"\n" + tissue, "builder 'mese'");
  // Every EPG run refuses it too: the library and the Python bindings reach
  // EPG without a deck.
  tissue::Tissue spread;
  spread.voxels = 1;
  spread.t2_prime_s.uniform = 0.03f;
  const simulate::Simulator epg(sequence::build_mese(sequence::MeseParams{}));
  try {
    epg.run(spread);
    FAIL() << "EPG ran a tissue with t2_prime_ms";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("t2_prime_ms"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace larmor::app
