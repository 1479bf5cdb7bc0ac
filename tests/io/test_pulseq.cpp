// Pulseq reader: the hand-written files under tests/data/pulseq give the values
// written out below; malformed files are refused with file:line and section.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "io/pulseq/pulseq_events.hpp"
#include "io/pulseq/pulseq_file.hpp"
#include "io/pulseq/pulseq_steps.hpp"
#include "test_paths.hpp"

namespace larmor::io::pulseq {
namespace {

namespace fs = std::filesystem;

std::string data_path(const std::string& name) {
  return std::string(LARMOR_SOURCE_DIR) + "/tests/data/pulseq/" + name;
}

std::string slurp(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  std::ostringstream text;
  text << stream.rdbuf();
  return text.str();
}

// Shape 1 in every file: 10 samples compressed to `0.25 0.25 2  0 0 2  -0.5 -0.5 0`.
// Runs: 0.25 x (2+2), 0 x (2+2), -0.5 x (0+2) -> derivative
// [.25 .25 .25 .25 0 0 0 0 -.5 -.5]; cumulative sum:
const std::vector<double> kMagnitude = {0.25, 0.5, 0.75, 1, 1, 1, 1, 1, 0.5, 0};
// Shape 2: raw in 1.4+; pre-1.4 `0 0 3  0.5  0 0 2` -> derivative
// [0 0 0 0 0 .5 0 0 0 0] -> the same step.
const std::vector<double> kPhase = {0, 0, 0, 0, 0, 0.5, 0.5, 0.5, 0.5, 0.5};
// Shape 3: raw in 1.4+; pre-1.4 `0  .5 .5 0  -.5 -.5 0` -> [0 .5 .5 -.5 -.5] -> a triangle.
const std::vector<double> kTriangle = {0, 0.5, 1, 0.5, 0};

void expect_values(const std::vector<double>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(actual[i], expected[i], 1e-12) << i;
}

// The events shared by all four files (the 1.3 file omits gradient delays).
void expect_common_events(const PulseqFile& file, bool gradient_delays) {
  ASSERT_EQ(file.blocks.size(), 2u);
  EXPECT_EQ(file.blocks[0].rf, 1);
  EXPECT_EQ(file.blocks[0].gz, 1);
  EXPECT_EQ(file.blocks[1].gx, 2);
  EXPECT_EQ(file.blocks[1].gy, 3);
  EXPECT_EQ(file.blocks[1].adc, 1);

  const RfEvent* rf = file.find_rf(1);
  ASSERT_NE(rf, nullptr);
  EXPECT_DOUBLE_EQ(rf->amplitude_hz, 250.0);
  EXPECT_EQ(rf->mag_shape, 1);
  EXPECT_EQ(rf->phase_shape, 2);
  EXPECT_NEAR(rf->delay_s, 100e-6, 1e-15);
  EXPECT_DOUBLE_EQ(rf->freq_hz, 12.5);
  EXPECT_DOUBLE_EQ(rf->phase_rad, 1.5708);

  const GradientEvent* arbitrary = file.find_gradient(2);
  ASSERT_NE(arbitrary, nullptr);
  EXPECT_DOUBLE_EQ(arbitrary->amplitude_hz_per_m, -100000.0);
  EXPECT_EQ(arbitrary->shape, 3);
  EXPECT_NEAR(arbitrary->delay_s, gradient_delays ? 20e-6 : 0.0, 1e-15);

  const TrapEvent* slice = file.find_trap(1);
  ASSERT_NE(slice, nullptr);
  EXPECT_DOUBLE_EQ(slice->amplitude_hz_per_m, 200000.0);
  EXPECT_NEAR(slice->rise_s, 100e-6, 1e-15);
  EXPECT_NEAR(slice->flat_s, 1000e-6, 1e-15);
  EXPECT_NEAR(slice->fall_s, 100e-6, 1e-15);
  const TrapEvent* phase = file.find_trap(3);
  ASSERT_NE(phase, nullptr);
  EXPECT_NEAR(phase->delay_s, gradient_delays ? 10e-6 : 0.0, 1e-15);

  const AdcEvent* adc = file.find_adc(1);
  ASSERT_NE(adc, nullptr);
  EXPECT_EQ(adc->samples, 256);
  EXPECT_NEAR(adc->dwell_s, 10e-6, 1e-18);  // 10000 ns
  EXPECT_NEAR(adc->delay_s, 500e-6, 1e-15);
  EXPECT_DOUBLE_EQ(adc->phase_rad, 3.14159);

  ASSERT_NE(file.find_shape(1), nullptr);
  ASSERT_NE(file.find_shape(2), nullptr);
  ASSERT_NE(file.find_shape(3), nullptr);
  expect_values(file.find_shape(1)->values, kMagnitude);
  expect_values(file.find_shape(2)->values, kPhase);
  expect_values(file.find_shape(3)->values, kTriangle);
  EXPECT_EQ(file.find_shape(1)->samples, 10);
}

void expect_implied_rasters(const Definitions& definitions) {
  EXPECT_DOUBLE_EQ(definitions.gradient_raster_s, 10e-6);
  EXPECT_DOUBLE_EQ(definitions.rf_raster_s, 1e-6);
  EXPECT_DOUBLE_EQ(definitions.adc_raster_s, 0.1e-6);
}

TEST(PulseqRead, Version12WithDelaysAndAsciiName) {
  std::vector<std::string> warnings;
  const PulseqFile file = PulseqFile::read(data_path("fid_v12.seq"), &warnings);
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(file.version.major, 1);
  EXPECT_EQ(file.version.minor, 2);
  expect_common_events(file, true);
  expect_implied_rasters(file.definitions);
  EXPECT_EQ(file.definitions.name, "fid");  // written as 102 105 100
  EXPECT_EQ(file.blocks[0].delay_id, 1);
  EXPECT_DOUBLE_EQ(file.blocks[0].duration_s, 0.0);  // derived later for pre-1.4
  ASSERT_EQ(file.delays.count(1), 1u);
  EXPECT_NEAR(file.delays.at(1).delay_s, 300e-6, 1e-15);
  EXPECT_TRUE(std::isnan(file.find_rf(1)->center_s));
  EXPECT_EQ(file.find_rf(1)->use, 'u');
  EXPECT_FALSE(file.signature.present);
}

TEST(PulseqRead, Version13JemrisRowsWithoutDelays) {
  const PulseqFile file = PulseqFile::read(data_path("fid_v13.seq"));
  EXPECT_EQ(file.version.minor, 3);
  EXPECT_EQ(file.version.revision, "5");
  expect_common_events(file, false);
  expect_implied_rasters(file.definitions);
  EXPECT_EQ(file.blocks[1].ext, 0);
}

TEST(PulseqRead, Version14RastersDurationsAndRawShapes) {
  std::vector<std::string> warnings;
  const PulseqFile file = PulseqFile::read(data_path("fid_v14.seq"), &warnings);
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(file.version.minor, 4);
  expect_common_events(file, true);
  EXPECT_DOUBLE_EQ(file.definitions.rf_raster_s, 2e-6);  // read, not the 1 us default
  EXPECT_DOUBLE_EQ(file.definitions.gradient_raster_s, 1e-5);
  EXPECT_DOUBLE_EQ(file.definitions.adc_raster_s, 1e-7);
  EXPECT_DOUBLE_EQ(file.definitions.block_duration_raster_s, 1e-5);
  EXPECT_NEAR(file.blocks[0].duration_s, 1e-3, 1e-15);    // 100 x 10 us
  EXPECT_NEAR(file.blocks[1].duration_s, 2.5e-3, 1e-15);  // 250 x 10 us
  EXPECT_EQ(file.definitions.values.at("FOV"), "0.256 0.256 0.005");
  EXPECT_EQ(file.definitions.name, "fid14");
  EXPECT_EQ(file.find_rf(1)->time_shape, 0);
}

TEST(PulseqRead, Version15PpmUseAndExtensions) {
  std::vector<std::string> warnings;
  const PulseqFile file = PulseqFile::read(data_path("fid_v15.seq"), &warnings);
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(file.version.revision, "1post1");
  expect_common_events(file, true);
  const RfEvent& rf = *file.find_rf(1);
  EXPECT_NEAR(rf.center_s, 10e-6, 1e-15);
  EXPECT_DOUBLE_EQ(rf.freq_ppm, -3.3);
  EXPECT_DOUBLE_EQ(rf.phase_ppm, 0.5);
  EXPECT_EQ(rf.use, 'e');
  EXPECT_DOUBLE_EQ(file.find_gradient(2)->first, 0.0);
  EXPECT_DOUBLE_EQ(file.find_adc(1)->freq_ppm, 1.5);
  EXPECT_EQ(file.find_adc(1)->phase_shape, 0);
  EXPECT_EQ(file.definitions.required_extensions, std::vector<std::string>{"TRIGGERS"});

  EXPECT_EQ(file.blocks[1].ext, 1);
  ASSERT_EQ(file.extensions.size(), 2u);
  EXPECT_EQ(file.extensions.at(1).type, 1);
  EXPECT_EQ(file.extensions.at(1).next, 2);
  const ExtensionSpec* triggers = file.find_extension("TRIGGERS");
  ASSERT_NE(triggers, nullptr);
  EXPECT_TRUE(triggers->known);
  EXPECT_EQ(triggers->rows.at(1).values, (std::vector<double>{2, 1, 0, 2000}));
  const ExtensionSpec* labels = file.find_extension("LABELSET");
  ASSERT_NE(labels, nullptr);
  EXPECT_EQ(labels->rows.at(1).values, std::vector<double>{3});
  EXPECT_EQ(labels->rows.at(1).word, "SLC");
}

TEST(PulseqShapes, DecompressByHand) {
  // `1 1 3 2`: 1 repeated 3 + 2 times, then 2 -> derivative [1 1 1 1 1 2] -> [1 2 3 4 5 7].
  expect_values(decompress_shape({1, 1, 3, 2}, 6), {1, 2, 3, 4, 5, 7});
  EXPECT_THROW(decompress_shape({1, 1, 3, 2}, 5), std::invalid_argument);
  EXPECT_THROW(decompress_shape({1, 1, 1e12}, 5), std::invalid_argument);
  EXPECT_THROW(decompress_shape({1, 1, -1}, 5), std::invalid_argument);
  EXPECT_THROW(decompress_shape({1, 1}, 5), std::invalid_argument);
}

TEST(PulseqSignature, Md5KnownAnswers) {  // RFC 1321 test suite
  EXPECT_EQ(md5_hex(""), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(md5_hex("abc"), "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(
      md5_hex("12345678901234567890123456789012345678901234567890123456789012345678901234567890"),
      "57edf4a22be3c955ac49da2e2107b67a");
}

TEST(PulseqSignature, CorrectHashMatches) {
  std::vector<std::string> warnings;
  const PulseqFile file = PulseqFile::read(data_path("fid_v14_signed.seq"), &warnings);
  EXPECT_TRUE(warnings.empty());
  EXPECT_TRUE(file.signature.present);
  EXPECT_EQ(file.signature.type, "md5");
  EXPECT_EQ(file.signature.hash, "44c3407c32562de3460ef09c90f2d537");  // md5sum of the bytes
  EXPECT_TRUE(file.signature.matches);
}

TEST(PulseqSignature, HashWithoutTrailingNewlineMatches) {
  std::vector<std::string> warnings;
  const PulseqFile file = PulseqFile::read(data_path("fid_v14_signed_nonewline.seq"), &warnings);
  EXPECT_TRUE(warnings.empty());
  EXPECT_TRUE(file.signature.matches);
}

// Writes malformed files to a per-test temporary folder.
class PulseqBadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("larmor-pulseq-test-" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& text, const std::string& name = "bad.seq") {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  // The error of reading `text`; fails the test if it is accepted.
  std::string error_of(const std::string& text) {
    const std::string path = write(text);
    try {
      PulseqFile::read(path);
    } catch (const PulseqError& e) {
      return e.what();
    }
    ADD_FAILURE() << "accepted:\n" << text;
    return "";
  }
  // The 1.4 test file with `from` (which must occur) replaced by `to`.
  static std::string edited(const std::string& from, const std::string& to,
                            const std::string& name = "fid_v14.seq") {
    std::string text = slurp(data_path(name));
    const std::size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return text;
  }
  fs::path dir_;
};

// Line numbers below count lines of fid_v14.seq: [BLOCKS] is line 18, its rows
// 19-20, [RF] row 26, [GRADIENTS] row 31, [TRAP] rows 36-37, shape_id 1 on line 47.
TEST_F(PulseqBadInput, EditedSignatureWarnsOnly) {
  const std::string path =
      write(edited("1 250 1 2 0 100 12.5", "1 251 1 2 0 100 12.5", "fid_v14_signed.seq"));
  std::vector<std::string> warnings;
  const PulseqFile file = PulseqFile::read(path, &warnings);
  EXPECT_FALSE(file.signature.matches);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("[SIGNATURE]"), std::string::npos) << warnings[0];
  EXPECT_DOUBLE_EQ(file.find_rf(1)->amplitude_hz, 251.0);
}

TEST_F(PulseqBadInput, ByteOrderMarkAndEmptySectionsAreRead) {
  // A UTF-8 byte-order mark is not content, and an empty section in the
  // middle of a file (pypulseq writes an empty [GRADIENTS]) is no truncation.
  const std::string text = slurp(data_path("fid_v14.seq"));
  const PulseqFile plain = PulseqFile::read(write(text, "plain.seq"));
  const PulseqFile marked = PulseqFile::read(write("\xEF\xBB\xBF" + text, "marked.seq"));
  EXPECT_EQ(marked.blocks.size(), plain.blocks.size());
  EXPECT_DOUBLE_EQ(marked.find_rf(1)->amplitude_hz, plain.find_rf(1)->amplitude_hz);
  const std::size_t at = text.find("[BLOCKS]");
  ASSERT_NE(at, std::string::npos);
  const PulseqFile empty = PulseqFile::read(
      write(text.substr(0, at) + "[EXTENSIONS]\n\n" + text.substr(at), "empty.seq"));
  EXPECT_EQ(empty.blocks.size(), plain.blocks.size());
  // Only an empty section that ends the file is taken for a truncation.
  EXPECT_NE(error_of(text + "\n[EXTENSIONS]\n").find("ends the file"), std::string::npos);
}

TEST_F(PulseqBadInput, UnknownExtensionSkippedWithWarning) {
  const std::string text =
      slurp(data_path("fid_v15.seq")) + "\n[EXTENSIONS]\nextension VENDOR_X 7\n1 2 3\n";
  std::vector<std::string> warnings;
  const PulseqFile file = PulseqFile::read(write(text), &warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("VENDOR_X"), std::string::npos) << warnings[0];
  const ExtensionSpec* vendor = file.find_extension("VENDOR_X");
  ASSERT_NE(vendor, nullptr);
  EXPECT_FALSE(vendor->known);
  EXPECT_TRUE(vendor->rows.empty());
}

TEST_F(PulseqBadInput, RequiredUnknownExtensionRefused) {
  std::string text = slurp(data_path("fid_v15.seq"));
  text.replace(text.find("RequiredExtensions TRIGGERS"), 27,
               "RequiredExtensions TRIGGERS VENDOR_X");
  const std::string error = error_of(text + "\n[EXTENSIONS]\nextension VENDOR_X 7\n1 2 3\n");
  EXPECT_NE(error.find("[EXTENSIONS]"), std::string::npos) << error;
  EXPECT_NE(error.find("VENDOR_X"), std::string::npos) << error;
}

TEST_F(PulseqBadInput, UnreadableFile) {
  const std::string path = (dir_ / "missing.seq").string();
  try {
    PulseqFile::read(path);
    ADD_FAILURE() << "read a missing file";
  } catch (const PulseqError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

// Each malformed variant: the edit, then the `line: [SECTION]` its error must name.
struct BadCase {
  const char* name;
  std::string text;
  std::string where;
};

TEST_F(PulseqBadInput, ErrorsNameFileLineAndSection) {
  const std::string v14 = slurp(data_path("fid_v14.seq"));
  const std::vector<BadCase> cases = {
      {"missing version", "[BLOCKS]\n1 0 0 0 0 0 0\n", ":1: [VERSION]"},
      {"unsupported version", edited("minor 4", "minor 9"), ":3: [VERSION]"},
      {"unknown section", v14 + "[WHATEVER]\n1 2\n", "[WHATEVER] unknown section"},
      {"wrong column count", edited("1 250 1 2 0 100 12.5 1.5708", "1 250 1 2 0"),
       ":26: [RF] expected 8 columns, found 5"},
      {"non-numeric field", edited("2 -100000 3 0 20", "2 -1e5x 3 0 20"),
       ":31: [GRADIENTS] non-numeric field '-1e5x'"},
      {"duplicate id", edited("3 50000 20", "1 50000 20"), ":37: [TRAP] duplicate id 1"},
      {"missing rf", edited("1 100 1 0 0 1 0 0", "1 100 7 0 0 1 0 0"), ":19: [BLOCKS]"},
      {"missing gradient", edited("2 250 0 2 3 0 1 0", "2 250 0 2 4 0 1 0"), ":20: [BLOCKS]"},
      {"missing adc", edited("2 250 0 2 3 0 1 0", "2 250 0 2 3 0 2 0"), ":20: [BLOCKS]"},
      {"missing extension", edited("2 250 0 2 3 0 1 0", "2 250 0 2 3 0 1 5"), ":20: [BLOCKS]"},
      {"missing delay", edited("1 1 1 0 0 1 0", "1 4 1 0 0 1 0", "fid_v12.seq"), ":12: [BLOCKS]"},
      {"shape too long", edited("0.25\n0.25\n2\n", "0.25\n0.25\n3\n"), ":47: [SHAPES] shape 1"},
      {"shape cut short", v14 + "\nshape_id 4\nnum_samples 9\n1\n2\n",
       "[SHAPES] shape 4 cut short"},
      {"section without rows", v14 + "\n[SIGNATURE]\n",
       "[SIGNATURE] section has no rows and ends the file"},
      {"no blocks", edited("[BLOCKS]\n1 100 1 0 0 1 0 0\n2 250 0 2 3 0 1 0\n", ""), "[BLOCKS]"},
      {"row before a section", "major 1\n[VERSION]\n", ":1: [none]"},
      {"bad RF use", edited(" e\n", " x\n", "fid_v15.seq"), "[RF] RF use"},
      {"missing RF shape", edited("1 250 1 2 0 100", "1 250 9 2 0 100"), ":26: [RF]"},
      {"huge run count", edited("0.25\n0.25\n2\n", "0.25\n0.25\n1e300\n"), "[SHAPES]"},
  };
  for (const BadCase& bad : cases) {
    const std::string error = error_of(bad.text);
    EXPECT_NE(error.find("bad.seq"), std::string::npos) << bad.name << ": " << error;
    EXPECT_NE(error.find(bad.where), std::string::npos) << bad.name << ": " << error;
  }
}

// Every prefix of a valid file is either read or refused cleanly (run under
// a sanitizer to catch out-of-bounds reads).
TEST_F(PulseqBadInput, TruncatedPrefixesNeverCrash) {
  const std::string text = slurp(data_path("fid_v15.seq"));
  for (std::size_t length = 0; length <= text.size(); length += 7) {
    try {
      PulseqFile::read(write(text.substr(0, length)));
    } catch (const PulseqError&) {
    }
  }
}

TEST_F(PulseqBadInput, Version15LabelledFileWithVersion14RfRows) {
  const std::string path = write(edited("1 250 1 2 0 10 100 -3.3 0.5 12.5 1.5708 e",
                                        "1 250 1 2 0 100 12.5 1.5708", "fid_v15.seq"));
  const PulseqFile file = PulseqFile::read(path);
  EXPECT_NEAR(file.find_rf(1)->delay_s, 100e-6, 1e-15);
  EXPECT_TRUE(std::isnan(file.find_rf(1)->center_s));
  EXPECT_EQ(file.find_rf(1)->use, 'u');
}

// Inputs the fuzz target once flagged are kept and replayed: each must now be
// read and translated to finite events, or refused with a PulseqError. (In-memory parsing is also
// what the fuzz target exercises, so this pins that entry point too.)
TEST(PulseqFuzzRegressions, every_kept_input_is_read_or_refused) {
  const fs::path folder = fs::path(LARMOR_SOURCE_DIR) / "tests/data/pulseq/fuzz-regressions";
  for (const auto& entry : fs::directory_iterator(folder)) {
    if (entry.path().extension() == ".md") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    try {
      const PulseqFile file = PulseqFile::parse(bytes.str(), entry.path().string());
      try {
        for (const AdcSampling adc : {AdcSampling::echo_centre, AdcSampling::every_sample}) {
          TranslateOptions options;
          options.adc = adc;
          options.max_instants = 1 << 18;
          for (const auto& e : to_description(file, options).events) {
            EXPECT_TRUE(std::isfinite(e.duration_s) && e.duration_s >= 0) << entry.path();
            EXPECT_TRUE(std::isfinite(e.flip_rad) && std::isfinite(e.saturation)) << entry.path();
          }
        }
      } catch (const PulseqError&) {
      }
      // The isochromat engine's step table: finite steps, or a refusal.
      StepOptions steps;
      steps.max_steps = 1 << 18;
      const auto table = to_step_table(file, steps);
      for (float v : table.records) EXPECT_TRUE(std::isfinite(v)) << entry.path();
    } catch (const PulseqError&) {
    }
  }
  // In-memory parsing agrees with reading the file.
  const std::string v15 = std::string(LARMOR_SOURCE_DIR) + "/tests/data/pulseq/fid_v15.seq";
  std::ifstream in(v15, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  const PulseqFile from_memory = PulseqFile::parse(bytes.str(), v15);
  const PulseqFile from_file = PulseqFile::read(v15);
  EXPECT_EQ(from_memory.blocks.size(), from_file.blocks.size());
  EXPECT_EQ(from_memory.shapes.size(), from_file.shapes.size());
}

}  // namespace
}  // namespace larmor::io::pulseq
