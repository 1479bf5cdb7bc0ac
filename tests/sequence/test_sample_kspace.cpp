// Each sample's k-space position (sequence::sample_kspace_per_m), the
// trajectory written with raw k-space: against moments summed by hand for a
// table built step by step, and against a Cartesian file's own design (lines
// 1 / FOV apart, the echo centre at k = 0).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <set>
#include <vector>

#include "io/pulseq/pulseq_file.hpp"
#include "io/pulseq/pulseq_steps.hpp"
#include "sequence/step_table.hpp"
#include "test_paths.hpp"

namespace larmor {
namespace {

constexpr double kspace_test_pi = 3.141592653589793;

// A pulse of two 0.5 ms cells of `flip` [rad] in all, under a z gradient.
void kspace_test_pulse(sequence::StepTableWriter& writer, double flip, double gz_hz_per_m,
                       char use = 'u') {
  const double w1 = flip / 1e-3;
  writer.rf(0.5e-3, w1, 0.0, {0.0, 0.0, gz_hz_per_m}, 0.0, use);
  writer.rf(0.5e-3, w1, 0.0, {0.0, 0.0, gz_hz_per_m}, 0.0, use);
}

void expect_kspace(const std::array<double, 3>& k, const std::array<double, 3>& expected,
                   const char* what) {
  for (int a = 0; a < 3; ++a)
    EXPECT_NEAR(k[std::size_t(a)], expected[std::size_t(a)], 1e-4) << what;
}

TEST(SampleKspace, resets_at_excitations_and_turns_over_at_refocusing_pulses) {
  const double degree = kspace_test_pi / 180.0;
  sequence::StepTable table;
  {
    sequence::StepTableWriter writer(table);
    // Excitation: the slice gradient's second half (1000 Hz/m x 0.5 ms)
    // counts, then its rewinder and a readout prephaser.
    kspace_test_pulse(writer, 90 * degree, 1000.0);
    writer.free(1e-3, {-10.0, 0.0, -0.5});
    writer.sample(1.0, 0.0, 2e-3, 1, 0, false);
    writer.free(1e-3, {5.0, 0.0, 0.0});
    writer.sample(1.0, 0.0, 3e-3, 1, 1, false);
    // Refocusing (180 degrees, use not given): the moment turns over at the
    // pulse's centre; the gradient before the centre counts before the turn.
    kspace_test_pulse(writer, 180 * degree, 400.0);
    writer.free(1e-3, {3.0, 2.0, 0.0});
    writer.sample(1.0, 0.0, 5e-3, 2, 0, false);
    // 120 degrees the file calls refocusing turns it over too.
    kspace_test_pulse(writer, 120 * degree, 0.0, 'r');
    writer.sample(1.0, 0.0, 7e-3, 3, 0, false);
    // 150 degrees the file calls an inversion leaves it be.
    kspace_test_pulse(writer, 150 * degree, 0.0, 'i');
    writer.sample(1.0, 0.0, 9e-3, 4, 0, false);
    // 95 degrees, use not given, excites: the moment starts again from zero.
    kspace_test_pulse(writer, 95 * degree, 0.0);
    writer.free(1e-3, {1.0, 1.0, 1.0});
    writer.sample(1.0, 0.0, 11e-3, 5, 0, false);
    writer.flush();
  }
  const auto k = sequence::sample_kspace_per_m(table);
  ASSERT_EQ(k.size(), 6u);
  expect_kspace(k[0], {-10.0, 0.0, 0.0}, "after the prephaser");
  expect_kspace(k[1], {-5.0, 0.0, 0.0}, "half way through the readout");
  // -(-5, 0, 0.2) + (0, 0, 0.2) + (3, 2, 0)
  expect_kspace(k[2], {8.0, 2.0, 0.0}, "after the refocusing pulse");
  expect_kspace(k[3], {-8.0, -2.0, 0.0}, "after a refocusing pulse the file names");
  expect_kspace(k[4], {-8.0, -2.0, 0.0}, "after an inversion");
  expect_kspace(k[5], {1.0, 1.0, 1.0}, "after a second excitation");
}

// pyp_write_gre.seq (pypulseq's write_gre: 64 x 64 over 256 mm): its
// readout's flat top holds 64 / FOV, its prephaser half the readout's area
// with ramps, and its ADC of 64 samples spans the flat top, each sample at
// the middle of its dwell. So sample j of every line lies at
// k_x = (j - 31.5) / FOV, and the lines at k_y = n / FOV for n from -32 to
// 31, each once.
TEST(SampleKspace, cartesian_lines_of_a_shared_file_lie_on_the_design_grid) {
  const std::filesystem::path file = std::filesystem::path(LARMOR_SOURCE_DIR) / ".." / "shared" /
                                     "data" / "pulseq-corpus" / "pyp_write_gre.seq";
  if (!std::filesystem::exists(file)) GTEST_SKIP() << file << " is not here";
  const auto seq = io::pulseq::PulseqFile::read(file.string());
  const sequence::StepTable table = io::pulseq::to_step_table(seq);
  const auto k = sequence::sample_kspace_per_m(table);
  ASSERT_EQ(k.size(), table.samples());
  const double fov = 0.256, line = 1.0 / fov;
  std::set<long> lines;
  for (std::size_t i = 0; i < k.size(); ++i) {
    EXPECT_NEAR(k[i][0], (table.sample_index[i] - 31.5) * line, 1e-3 * line) << "sample " << i;
    EXPECT_NEAR(k[i][2], 0.0, 1e-3 * line) << "sample " << i;
    const double n = k[i][1] / line;
    EXPECT_NEAR(n, std::round(n), 1e-3) << "sample " << i;
    if (table.sample_is_adc_centre[i]) lines.insert(std::lround(n));
  }
  ASSERT_EQ(lines.size(), 64u);
  EXPECT_EQ(*lines.begin(), -32);
  EXPECT_EQ(*lines.rbegin(), 31);
}

}  // namespace
}  // namespace larmor
