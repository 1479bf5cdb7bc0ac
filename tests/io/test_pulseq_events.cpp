// Pulseq -> events: hand-written files of every version give the events
// worked out by hand in their comments and below; larmor's builders written
// as Pulseq read back to the same events and the same signal (double-precision
// reference simulation); files that cannot be represented are refused with
// the blocks and the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../reference/epg_reference.hpp"
#include "../reference/pulseq_bloch.hpp"
#include "io/pulseq/pulseq_events.hpp"
#include "io/pulseq/pulseq_file.hpp"
#include "io/pulseq/pulseq_writer.hpp"
#include "reference/constants.hpp"
#include "sequence/builders/builders.hpp"
#include "sequence/canonical.hpp"
#include "sequence/operators.hpp"
#include "sequence/waveform_pulses.hpp"
#include "simulate/simulator.hpp"
#include "test_paths.hpp"

namespace larmor::io::pulseq {
namespace {

using sequence::Event;
using sequence::EventKind;
namespace act = sequence::action;
using larmor::test::kPi;
constexpr double us = 1e-6;

std::string events_path(const std::string& name) {
  return std::string(LARMOR_SOURCE_DIR) + "/tests/data/pulseq/events/" + name;
}

struct Expected {
  EventKind kind;
  double duration_s, flip_rad, phase_rad;
  std::uint32_t action;
  double rf_frequency_hz = 0.0;
};

Expected wait(double d, std::uint32_t a = 0) { return {EventKind::wait, d, 0, 0, a}; }
Expected pulse(double d, double flip, double phase, std::uint32_t a = 0, double f = 0) {
  return {EventKind::pulse, d, flip, phase, a, f};
}
Expected adc(double d, double phase, std::uint32_t a) { return {EventKind::adc, d, 0, phase, a}; }

void expect_events(const sequence::Description& d, const std::vector<Expected>& expected) {
  ASSERT_EQ(d.events.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE("event " + std::to_string(i));
    const Event& e = d.events[i];
    EXPECT_EQ(e.kind, expected[i].kind);
    EXPECT_NEAR(e.duration_s, expected[i].duration_s, 1e-12);
    EXPECT_NEAR(e.flip_rad, expected[i].flip_rad, 1e-12);
    EXPECT_NEAR(e.phase_rad, expected[i].phase_rad, 1e-12);
    EXPECT_EQ(e.action, expected[i].action);
    EXPECT_NEAR(e.rf_frequency_hz, expected[i].rf_frequency_hz, 1e-9);
  }
}

// The hand-written files' moments are tens of cycles per metre: in a 10 cm
// voxel their crushers wind several turns, as a scanner's do across a
// millimetre voxel, and the rounding tolerance is 0.5 cycles per metre.
TranslateOptions hand_written(TranslateOptions options = {}) {
  options.voxel_size_m = std::array<double, 3>{0.1, 0.1, 0.1};
  return options;
}

sequence::Description translate(const std::string& name, TranslationReport* report = nullptr,
                                TranslateOptions options = {}) {
  return to_description(PulseqFile::read(events_path(name)), hand_written(options), report);
}

TEST(PulseqEvents, SpinEchoVersion12WithDelays) {
  // Excitation centre 50 us, refocusing centre 5150 us, echo 9920 + 5 + 325 =
  // 10250 us, end 10570 us; both gaps around the refocusing pulse hold one crusher.
  TranslationReport report;
  const auto d = translate("se_v12.seq", &report);
  expect_events(d, {wait(50 * us), pulse(5100 * us, kPi / 2, 0.0),
                    pulse(5100 * us, kPi, kPi / 2, act::crush_before | act::crush_after),
                    adc(320 * us, 0.0, act::echo_centre)});
  EXPECT_EQ(report.crusher_source, "detected");
  EXPECT_NEAR(report.crusher_moment[2], 90.0, 1e-9);  // 1e5 Hz/m x 900 us
}

TEST(PulseqEvents, SpoiledGradientEchoVersion13DropsEncoding) {
  // Echo 795 us after the start of each 5 ms repetition; the phase encodes
  // (y) are rewound between pulses, so only x and z dephase: one shift after
  // each readout but the last (its trailing moment lacks the next slice
  // select's half and is not quantised).
  TranslationReport report;
  const auto d = translate("gre_v13.seq", &report);
  const double phase2 = 2.0420352248333655;
  expect_events(d, {wait(60 * us), pulse(735 * us, kPi / 6, 0.0),
                    adc(4265 * us, 0.0, act::echo_centre | act::shift_after),
                    pulse(735 * us, kPi / 6, phase2), adc(4205 * us, phase2, act::echo_centre)});
  EXPECT_EQ(d.name, "gre13");
  EXPECT_EQ(report.encoding_axes_dropped, 2);  // y in both repetitions
  // Readout 16 after the echo + spoiler 10 on x; spoiler 10 + slice half 5.5 on z.
  EXPECT_NEAR(report.crusher_moment[0], 26.0, 1e-9);
  EXPECT_NEAR(report.crusher_moment[1], 0.0, 1e-9);
  EXPECT_NEAR(report.crusher_moment[2], 15.5, 1e-9);
}

TEST(PulseqEvents, SpinEchoVersion14TimeShapes) {
  const auto d = translate("se_v14_time_shapes.seq");
  expect_events(d, {wait(5 * us), pulse(2015 * us, kPi / 2, 0.0),
                    pulse(2015.5 * us, kPi, kPi / 2, act::crush_before | act::crush_after),
                    adc(14.5 * us, 0.0, act::echo_centre)});
}

TEST(PulseqEvents, EverySampleOption) {
  TranslateOptions options;
  options.adc = AdcSampling::every_sample;
  const auto d = translate("se_v14_time_shapes.seq", nullptr, options);
  ASSERT_EQ(d.sample_count(), 10);
  // Samples 1 us apart from 4030.5 us; sample 5 is the echo centre.
  const auto t = d.timestamps_s();
  int seen = 0;
  for (std::size_t i = 0; i < d.events.size(); ++i) {
    if (d.events[i].kind != EventKind::adc) continue;
    EXPECT_NEAR(t[i], (4030.5 + seen) * us, 1e-12);
    EXPECT_EQ((d.events[i].action & act::echo_centre) != 0, seen == 5);
    ++seen;
  }
}

TEST(PulseqEvents, Version15SplitPulsePpmRotation) {
  TranslationReport report;
  const auto d = translate("mt_v15.seq", &report);
  const double f0_mhz = 42.577478518 * 3.0;
  const double w1 = 2 * kPi * 1e4;  // rad/s per sample of the MT pulse
  std::vector<Expected> expected = {wait(0.5 * us)};
  for (int n = 0; n < 4; ++n) {
    // Samples at 0.5, 1.5, 2.5, 3.5 us; 1.5 references the ramp to the centre (2 us).
    const double ramp = 2 * kPi * 1000.0 * ((n + 0.5) - 2.0) * us;
    const double after = n < 3 ? 1 * us : (225 - 3.5) * us;
    const std::uint32_t bits = n < 3 ? 0u : act::crush_after | act::spoil_after;
    expected.push_back(pulse(after, w1 * us, ramp, bits, 1000.0));
  }
  expected.push_back(pulse((445.5 - 225) * us, kPi / 2, 0.3 + 0.001 * f0_mhz,
                           act::crush_before | act::crush_after));
  expected.push_back(
      adc((670 - 445.5) * us, 0.1 + 0.002 * f0_mhz, act::echo_centre | act::shift_after));
  // The MT pulse is one event played from its waveform: four equal samples
  // in the frame of its 1 kHz offset, one run; as hard pulses at the
  // samples' centres it is the list above, sample by sample.
  ASSERT_EQ(d.waveforms.size(), 1u);
  const sequence::PulseWaveform& w = d.waveforms[0];
  ASSERT_EQ(w.runs.size(), 1u);
  EXPECT_EQ(w.runs[0].samples, 4);
  EXPECT_NEAR(w.runs[0].angle_rad, w1 * us, 1e-12);
  EXPECT_NEAR(w.rf_frequency_hz, 1000.0, 1e-9);
  EXPECT_NEAR(w.duration_s(), 4 * us, 1e-15);
  ASSERT_EQ(d.events[0].kind, EventKind::waveform_pulse);
  EXPECT_NEAR(d.events[0].duration_s, (225 - 4) * us, 1e-12);
  expect_events(sequence::expand_waveform_pulses(d), expected);
  EXPECT_EQ(report.crusher_source, "definition");
  EXPECT_EQ(report.waveform_pulses, 1);
  EXPECT_EQ(report.spoiled_gaps, 1);
  // The pulse carries its power for a bound pool, each hard pulse its
  // sample's: w1^2 x 1 us.
  EXPECT_NEAR(d.events[0].saturation, 4 * w1 * w1 * us, 1e-6 * w1 * w1 * us);
  EXPECT_NEAR(sequence::expand_waveform_pulses(d).events[1].saturation, w1 * w1 * us,
              1e-6 * w1 * w1 * us);
}

// A spin echo written inline: crusher areas `before` and `after` (1/m) around
// the refocusing pulse, on z.
std::string spin_echo_v14(double before, double after) {
  std::ostringstream s;
  s << "[VERSION]\nmajor 1\nminor 4\nrevision 2\n[DEFINITIONS]\nAdcRasterTime 1e-07\n"
       "BlockDurationRaster 1e-05\nGradientRasterTime 1e-05\nRadiofrequencyRasterTime 1e-06\n"
       "[BLOCKS]\n1 1 1 0 0 0 0 0\n2 30 0 0 0 1 0 0\n3 1 2 0 0 0 0 0\n4 30 0 0 0 2 0 0\n"
       "5 1 0 0 0 0 1 0\n[RF]\n1 25000 1 2 0 0 0 0\n2 50000 1 2 0 0 0 1.5707963267948966\n"
       "[TRAP]\n1 "
    << before / 200e-6 << " 50 150 50 0\n2 " << after / 200e-6
    << " 50 150 50 0\n[ADC]\n1 1 1000 0 0 0\n[SHAPES]\nshape_id 1\nnum_samples 10\n1 0 0 7\n"
       "shape_id 2\nnum_samples 10\n0 0 8\n";
  return s.str();
}

// The file's one sample against spins filling the translation's voxel, each
// playing the file's own waveforms (tests/reference/pulseq_bloch.hpp): the
// voxel's mean, whatever the crushers wind.
void expect_voxel_sample(const PulseqFile& file, const TranslateOptions& options) {
  TranslationReport report;
  const auto d = to_description(file, options, &report);
  reference::Tissue tissue;
  tissue.t1_s = 1.0;
  tissue.t2_s = 0.1;
  const auto ours = reference::simulate(d, tissue, d.declared_winding() + 1);
  reference::BlochOptions bloch;
  bloch.positions_m = reference::box_positions(report.voxel_size_m, {0, 0, 0}, {1, 1, 4000});
  const auto spins = reference::simulate_pulseq_bloch(file, tissue, bloch);
  ASSERT_EQ(ours.size(), 1u);
  ASSERT_EQ(spins.size(), 1u);
  EXPECT_LT(std::abs(ours[0] - spins[0].value), 1e-4)
      << file.path << ": " << ours[0] << " against the spins' " << spins[0].value;
}

TEST(PulseqEvents, CrushersOfUnequalAreasAreTheVoxelsMean) {
  // 20 and 25 cycles per metre on z wind 2 and 2.5 turns across the 10 cm
  // voxel: the echo keeps sinc(0.5) of itself, the weights say so.
  const PulseqFile two = PulseqFile::parse(spin_echo_v14(20, 25), "two.seq");
  TranslationReport report;
  const auto d = to_description(two, hand_written(), &report);
  EXPECT_EQ(report.weighted_samples, 1);
  expect_voxel_sample(two, hand_written());
  // 30 after 20: the extra whole turn leaves the spin echo nothing.
  expect_voxel_sample(PulseqFile::parse(spin_echo_v14(20, 30), "three.seq"), hand_written());
  // Declared as 20 per order, the 25 before the refocusing pulse is 1.25
  // orders: half a turn off whole orders at a pulse, which no sample weight
  // can carry, so the file is refused with the numbers.
  TranslateOptions declared = hand_written();
  declared.crusher_moment = std::array<double, 3>{0, 0, 20};
  try {
    to_description(PulseqFile::parse(spin_echo_v14(25, 20), "late.seq"), declared);
    FAIL() << "half an order at a pulse was accepted";
  } catch (const PulseqError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("late.seq: blocks 1-3"), std::string::npos) << what;
    EXPECT_NE(what.find("it winds 0.5 turns across the 100 x 100 x 100 mm voxel"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("two crusher areas"), std::string::npos) << what;
  }
}

// A CEST preparation: 3 s of continuous RF 400 Hz off resonance on the 1 us
// raster (three million samples, one shape line), then an excitation and
// its FID. The saturation is one event whose waveform is one run; the
// kernel's sample agrees with a spin that plays every raster cell.
std::string cest_v14() {
  return "[VERSION]\nmajor 1\nminor 4\nrevision 2\n[DEFINITIONS]\nAdcRasterTime 1e-07\n"
         "BlockDurationRaster 1e-05\nGradientRasterTime 1e-05\nRadiofrequencyRasterTime 1e-06\n"
         "[BLOCKS]\n1 300000 1 0 0 0 0 0\n2 100 0 0 0 0 0 0\n3 10 2 0 0 0 0 0\n"
         "4 10 0 0 0 0 1 0\n[RF]\n1 80 1 2 0 0 400 0\n2 2500 3 4 0 0 0 0\n"
         "[ADC]\n1 1 1000 0 0 0\n[SHAPES]\nshape_id 1\nnum_samples 3000000\n1 0 0 2999997\n"
         "shape_id 2\nnum_samples 3000000\n0 0 2999998\nshape_id 3\nnum_samples 100\n"
         "1 0 0 97\nshape_id 4\nnum_samples 100\n0 0 98\n";
}

TEST(PulseqEvents, ThreeSecondSaturationIsOneEventAndMatchesTheSpin) {
  const PulseqFile file = PulseqFile::parse(cest_v14(), "cest.seq");
  TranslationReport report;
  const auto d = to_description(file, hand_written(), &report);
  EXPECT_LE(d.events.size(), 4u);
  ASSERT_EQ(d.waveforms.size(), 1u);
  EXPECT_EQ(d.waveforms[0].runs.size(), 1u);
  EXPECT_EQ(d.waveforms[0].samples(), 3000000);
  EXPECT_EQ(report.waveform_pulses, 1);
  ASSERT_FALSE(report.pulses.empty());
  EXPECT_NE(report.pulses[0].how.find("3000000 samples in 1 run, 400.0 Hz off resonance"),
            std::string::npos)
      << report.pulses[0].how;
  simulate::Simulator sim(d);
  tissue::Tissue t;
  t.voxels = 1;
  t.t1_s.uniform = 1.0f;
  t.t2_s.uniform = 0.1f;
  const std::vector<float> ours = sim.run(t);
  ASSERT_EQ(ours.size(), 2u);
  reference::Tissue tissue;
  tissue.t1_s = 1.0;
  tissue.t2_s = 0.1;
  const auto spin = reference::simulate_pulseq_bloch(file, tissue, reference::BlochOptions{});
  ASSERT_EQ(spin.size(), 1u);
  // The saturation leaves a third of the magnetisation (2 pi 80 Hz against
  // 400 Hz off resonance over three T1), so an error in it shows.
  EXPECT_LT(std::abs(spin[0].value), 0.9);
  EXPECT_GT(std::abs(spin[0].value), 0.1);
  EXPECT_LT(std::abs(std::complex<double>(ours[0], ours[1]) - spin[0].value), 1e-4)
      << "larmor (" << ours[0] << ", " << ours[1] << ") against the spin's " << spin[0].value;
}

TEST(PulseqEvents, FileWithoutAdcRefused) {
  std::string text = spin_echo_v14(20, 20);
  text.replace(text.find("5 1 0 0 0 0 1 0"), 15, "5 1 0 0 0 0 0 0");
  try {
    to_description(PulseqFile::parse(text, "noadc.seq"), hand_written());
    FAIL() << "a file without an ADC was accepted";
  } catch (const PulseqError& e) {
    EXPECT_NE(std::string(e.what()).find("noadc.seq: blocks 1-5: the file has no ADC"),
              std::string::npos)
        << e.what();
  }
}

TEST(PulseqEvents, VoxelSizeDecidesTheWeights) {
  // The crushers are 20 cycles per metre: 0.02 turns across the default 1 mm
  // voxel, two across 10 cm. Each is one order either way; the voxel decides
  // what the sample keeps of each order.
  const PulseqFile file = PulseqFile::parse(spin_echo_v14(20, 20), "se.seq");
  TranslationReport report;
  EXPECT_EQ(to_description(file, {}, &report).declared_winding(), 2);
  EXPECT_EQ(report.voxel_source, "1 mm default");
  EXPECT_NEAR(report.largest_residual_turns, 0.0, 1e-12);
  expect_voxel_sample(file, {});
  EXPECT_EQ(to_description(file, hand_written(), &report).declared_winding(), 2);
  expect_voxel_sample(file, hand_written());
  // FOV and matrix in [DEFINITIONS] give the voxel: 0.2 m / 4 = 5 cm, one turn.
  std::string text = spin_echo_v14(20, 20);
  text.replace(text.find("[DEFINITIONS]\n"), 14, "[DEFINITIONS]\nFOV 0.2 0.2 0.2\nMatrix 4 4 4\n");
  EXPECT_EQ(to_description(PulseqFile::parse(text, "fov.seq"), {}, &report).declared_winding(), 2);
  EXPECT_EQ(report.voxel_source, "[DEFINITIONS] FOV / matrix");
  EXPECT_NEAR(report.voxel_size_m[2], 0.05, 1e-15);
}

TEST(PulseqEvents, SaturationBandDoesNotPlaceTheVoxel) {
  // A 2 ms, 90 degree saturation pulse under an x gradient 1 kHz off the
  // voxel (a band 10 mm away), then the excitation under z, rephased, and a
  // sample: the voxel sits in
  // the excitation's slice, and the band's profile at the voxel,
  // sinc(1 kHz x 2 ms), is zero, so it misses.
  const std::string text =
      "[VERSION]\nmajor 1\nminor 5\nrevision 0\n[DEFINITIONS]\nAdcRasterTime 1e-07\n"
      "BlockDurationRaster 1e-05\nGradientRasterTime 1e-05\nRadiofrequencyRasterTime 1e-06\n"
      "[BLOCKS]\n1 202 1 1 0 0 0 0\n2 202 2 0 0 2 0 0\n3 103 0 0 0 3 1 0\n"
      "[RF]\n1 125 1 2 0 1000 10 0 0 1000 0 s\n2 125 1 2 0 1000 10 0 0 0 0 e\n"
      "[TRAP]\n1 100000 10 2000 10 0\n2 100000 10 2000 10 0\n3 -100000 10 995 10 0\n"
      "[ADC]\n1 1 10000 1020 0 0 0 0 0\n"
      "[SHAPES]\nshape_id 1\nnum_samples 2000\n1 0 0 1997\nshape_id 2\nnum_samples 2000\n"
      "0 0 1998\n";
  TranslationReport report;
  const auto d = to_description(PulseqFile::parse(text, "band.seq"), {}, &report);
  EXPECT_NEAR(report.slice_normal[2], 1.0, 1e-12);
  EXPECT_NEAR(report.slice_position_m[0], 0.0, 1e-15);
  ASSERT_EQ(report.pulses.size(), 2u);
  EXPECT_EQ(report.missed_pulses, 1);
  EXPECT_NE(report.pulses[0].how.find("misses the voxel"), std::string::npos)
      << report.pulses[0].how;
  // Each pulse is played across the slice: the band's profile there is zero.
  EXPECT_EQ(report.pulses[1].how, "played across the slice (profile 2)");
  EXPECT_EQ(d.slice_profiles.size(), 2u);
  EXPECT_EQ(d.sample_count(), 1);
  // As ideal slabs, the band misses as a pulse of no flip.
  TranslateOptions slabs;
  slabs.slice_profile = false;
  const auto ideal = to_description(PulseqFile::parse(text, "band.seq"), slabs, &report);
  EXPECT_EQ(report.pulses[1].how, "instant (slice-selective, ideal slab)");
  EXPECT_TRUE(ideal.slice_profiles.empty());
  EXPECT_EQ(ideal.events[1].flip_rad, 0.0);
}

TEST(PulseqEvents, TooManyInstantsRefusedBeforeAnyIsMade) {
  const PulseqFile file = PulseqFile::parse(spin_echo_v14(20, 20), "se.seq");
  TranslateOptions options = hand_written();
  options.max_instants = 3;  // two pulses and a sample
  EXPECT_EQ(to_description(file, options).sample_count(), 1);
  options.max_instants = 2;
  try {
    to_description(file, options);
    FAIL() << "three instants were allowed two";
  } catch (const PulseqError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("se.seq: blocks 1-5: up to here the file makes 3 pulses and samples, "
                        "more than the 2 allowed (max_instants in [sequence]"),
              std::string::npos)
        << what;
  }
}

TEST(PulseqEvents, ReversedCrusherIsTheVoxelsMean) {
  // -20 after +20: no echo forms; the sample reads the order the first
  // crusher filled, at the moment the second leaves.
  expect_voxel_sample(PulseqFile::parse(spin_echo_v14(20, -20), "bipolar.seq"), hand_written());
}

TEST(PulseqEvents, PpmWithoutB0Refused) {
  std::string text = spin_echo_v14(20, 20);
  // 1.4 has no ppm columns: make it 1.5 with ppm phase and no B0.
  text.replace(text.find("minor 4"), 7, "minor 5");
  text.replace(text.find("1 25000 1 2 0 0 0 0"), 19, "1 25000 1 2 0 5 0 0 0.5 0 0 e");
  text.replace(text.find("2 50000 1 2 0 0 0 1.5707963267948966"), 36,
               "2 50000 1 2 0 5 0 0 0 0 1.5707963267948966 r");
  text.replace(text.find("1 1 1000 0 0 0"), 14, "1 1 1000 0 0 0 0 0 0");
  const PulseqFile file = PulseqFile::parse(text, "ppm.seq");
  try {
    to_description(file, hand_written());
    FAIL();
  } catch (const PulseqError& e) {
    EXPECT_NE(std::string(e.what()).find("ppm.seq: block 1: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("B0"), std::string::npos) << e.what();
  }
}

// A 1.5 RF row's center must lie within its pulse (0 to 10 us here); one
// far outside once gave instants past every block (found by the fuzzer,
// tests/data/pulseq/fuzz-regressions).
TEST(PulseqEvents, RfCenterOutsideThePulseRefused) {
  const auto file_with_center = [](const std::string& center_us, const std::string& name) {
    std::string text = spin_echo_v14(20, 20);
    text.replace(text.find("minor 4"), 7, "minor 5");
    text.replace(text.find("1 25000 1 2 0 0 0 0"), 19,
                 "1 25000 1 2 0 " + center_us + " 0 0 0 0 0 e");
    text.replace(text.find("2 50000 1 2 0 0 0 1.5707963267948966"), 36,
                 "2 50000 1 2 0 5 0 0 0 0 1.5707963267948966 r");
    text.replace(text.find("1 1 1000 0 0 0"), 14, "1 1 1000 0 0 0 0 0 0");
    return PulseqFile::parse(text, name);
  };
  EXPECT_EQ(to_description(file_with_center("10", "end.seq"), hand_written()).declared_winding(),
            2);
  for (const char* center : {"10.5", "-1", "2e117"}) {
    try {
      to_description(file_with_center(center, "center.seq"), hand_written());
      FAIL() << "an RF center of " << center << " us was accepted";
    } catch (const PulseqError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("center.seq: block 1: RF 1: its center"), std::string::npos) << what;
      EXPECT_NE(what.find("outside the pulse (0 to 10.0"), std::string::npos) << what;
    }
  }
}

// A block longer than a day is refused with its number (the fuzz target's
// 1.3 file with an RF delay of 8.9e97 us); an hour's delay is read.
TEST(PulseqEvents, BlockLongerThanADayRefused) {
  const auto file_with_delay = [](const std::string& delay_us) {
    std::ifstream in(std::string(LARMOR_SOURCE_DIR) + "/tests/data/pulseq/events/gre_v13.seq");
    std::stringstream bytes;
    bytes << in.rdbuf();
    std::string text = bytes.str();
    const std::string rf = "\n1 833.33333333333337 1 2 10 0 0";
    const auto at = text.find(rf);
    EXPECT_NE(at, std::string::npos);
    text.replace(at, rf.size(), "\n1 833.33333333333337 1 2 " + delay_us + " 0 0");
    return PulseqFile::parse(text, "long.seq");
  };
  const auto d = to_description(file_with_delay("3.6e9"));
  EXPECT_GT(d.total_duration_s(), 3600.0);
  for (const char* delay : {"1e11", "8.9e97"}) {
    try {
      to_description(file_with_delay(delay));
      FAIL() << "an RF delay of " << delay << " us was accepted";
    } catch (const PulseqError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("long.seq: block 1: it lasts"), std::string::npos) << what;
      EXPECT_NE(what.find("more than a day"), std::string::npos) << what;
    }
  }
}

// ---- Round trips: builder -> Pulseq -> events ----

// The description read back starts 10 us late when its first instant is at
// t = 0 (a block cannot be centred there): an equilibrium delay that changes
// nothing. Drop it before comparing.
sequence::Description without_equilibrium_wait(sequence::Description d) {
  if (!d.events.empty() && d.events[0].kind == EventKind::wait && d.events[0].action == 0) {
    d.events.erase(d.events.begin());
  }
  return d;
}

void expect_round_trip(const sequence::Description& built) {
  SCOPED_TRACE(built.name);
  const std::string text = format_pulseq(built);
  std::vector<std::string> warnings;
  const PulseqFile file = PulseqFile::parse(text, built.name + ".seq", &warnings);
  EXPECT_TRUE(file.signature.present && file.signature.matches);
  EXPECT_TRUE(warnings.empty());
  TranslationReport report;
  const auto back = without_equilibrium_wait(to_description(file, {}, &report));
  const auto expected = without_equilibrium_wait(sequence::canonical_form(built));
  ASSERT_EQ(back.events.size(), expected.events.size());
  for (std::size_t i = 0; i < back.events.size(); ++i) {
    const Event& a = back.events[i];
    const Event& b = expected.events[i];
    ASSERT_EQ(a.kind, b.kind) << "event " << i;
    ASSERT_EQ(a.action, b.action) << "event " << i;
    ASSERT_NEAR(a.duration_s, b.duration_s, 1e-12) << "event " << i;
    ASSERT_NEAR(a.flip_rad, b.flip_rad, 1e-12 * (1 + std::fabs(b.flip_rad))) << "event " << i;
    ASSERT_NEAR(a.phase_rad, b.phase_rad, 1e-12 * (1 + std::fabs(b.phase_rad))) << "event " << i;
  }
  // The same signal, from the double-precision reference: the builder's own
  // description, its canonical form and the file read back.
  reference::Tissue tissue;
  tissue.t1_s = 0.9;
  tissue.t2_s = 0.07;
  tissue.b1 = 0.93;
  tissue.df_hz = 3.0;
  const int orders = 40;
  const auto s_built = reference::simulate(built, tissue, orders);
  const auto s_canonical = reference::simulate(sequence::canonical_form(built), tissue, orders);
  const auto s_back = reference::simulate(back, tissue, orders);
  ASSERT_EQ(s_built.size(), s_back.size());
  for (std::size_t i = 0; i < s_built.size(); ++i) {
    EXPECT_LT(std::abs(s_canonical[i] - s_built[i]), 1e-12) << "sample " << i;
    EXPECT_LT(std::abs(s_back[i] - s_built[i]), 1e-9) << "sample " << i;
  }
}

TEST(PulseqRoundTrip, EveryBuilder) {
  sequence::MeseParams mese;
  mese.echoes = 8;
  expect_round_trip(sequence::build_mese(mese));
  sequence::TseParams tse;
  tse.echoes = 6;
  tse.refocusing_deg = {160, 120, 130, 140, 150, 170};
  expect_round_trip(sequence::build_tse(tse));
  sequence::SpgrParams spgr;
  spgr.repetitions = 40;
  expect_round_trip(sequence::build_spgr(spgr));
  spgr.spoiler = sequence::Spoiler::ideal;
  expect_round_trip(sequence::build_spgr(spgr));
  sequence::BssfpParams bssfp;
  bssfp.dummy_repetitions = 10;
  bssfp.repetitions = 3;
  bssfp.phase_increments_deg = {180, 90};
  expect_round_trip(sequence::build_bssfp(bssfp));
  sequence::DessParams dess;
  dess.dummy_repetitions = 20;
  dess.repetitions = 2;
  expect_round_trip(sequence::build_dess(dess));
  sequence::MprageParams mprage;
  mprage.readouts = 8;
  expect_round_trip(sequence::build_mprage(mprage));
  mprage.preparation = sequence::Preparation::t2;
  expect_round_trip(sequence::build_mprage(mprage));
  sequence::MrfParams mrf;
  for (int i = 0; i < 30; ++i) {
    mrf.schedule.push_back({0.1 + 0.02 * i, i % 2 ? 90.0 : 0.0, 1e-3 * (i % 3), 0.0});
  }
  expect_round_trip(sequence::build_mrf(mrf));
}

TEST(PulseqRoundTrip, WriterRefusesWhatItCannotPlace) {
  sequence::Description d;
  d.name = "close";
  d << sequence::Excitation{90.0, 0.0, 5e-6} << sequence::Readout{0.0, 1e-3};
  EXPECT_THROW(format_pulseq(d), std::invalid_argument);  // instants 5 us apart
  sequence::Description off;
  off.name = "off-raster";
  off << sequence::Excitation{90.0, 0.0, 1.00005e-3} << sequence::Readout{0.0, 1e-3};
  EXPECT_THROW(format_pulseq(off), std::invalid_argument);
}

TEST(PulseqRoundTrip, WrittenAtomically) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "larmor_pulseq_writer";
  fs::create_directories(dir);
  sequence::MeseParams mese;
  mese.echoes = 4;
  const auto d = sequence::build_mese(mese);
  write_pulseq((dir / "mese.seq").string(), d);
  const PulseqFile file = PulseqFile::read((dir / "mese.seq").string());
  EXPECT_EQ(to_description(file).sample_count(), 4);
  for (const auto& entry : fs::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().filename(), "mese.seq");  // no temporary left behind
  }
  fs::remove_all(dir);
}

// The file declares the description's crusher moment, which its diffusion and
// flow terms use; the translation reads it back from the definition. Another
// moment asked of the writer is refused, naming both.
double declared_moment(const std::string& text) {
  TranslationReport report;
  to_description(PulseqFile::parse(text, "declared.seq"), {}, &report);
  EXPECT_EQ(report.crusher_source, "definition");
  return report.crusher_moment[2];
}

TEST(PulseqRoundTrip, WritesTheDeclaredCrusherMoment) {
  sequence::MeseParams mese;
  mese.echoes = 4;
  sequence::Description d = sequence::build_mese(mese);
  d.crusher.moment_per_m = 437.5;
  EXPECT_DOUBLE_EQ(declared_moment(format_pulseq(d)), 437.5);
  WriteOptions same;
  same.crusher_moment_per_m = 437.5;
  EXPECT_DOUBLE_EQ(written_crusher_moment(d, same), 437.5);
  WriteOptions other;
  other.crusher_moment_per_m = 1000.0;
  try {
    format_pulseq(d, other);
    FAIL() << "a moment other than the declared one was written";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("declares a crusher moment of 437.5 1/m; writing 1000"),
              std::string::npos)
        << e.what();
  }
  // Undeclared: one cycle per millimetre unless asked.
  d.crusher.moment_per_m = 0.0;
  EXPECT_DOUBLE_EQ(written_crusher_moment(d, {}), 1000.0);
  EXPECT_DOUBLE_EQ(written_crusher_moment(d, other), 1000.0);
  other.crusher_moment_per_m = 250.0;
  EXPECT_DOUBLE_EQ(declared_moment(format_pulseq(d, other)), 250.0);
}

}  // namespace
}  // namespace larmor::io::pulseq
