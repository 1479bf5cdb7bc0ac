// Real Pulseq files written by other tools (../shared/data/pulseq-corpus,
// kept outside the project): every file is either translated and simulated
// by larmor's kernel in agreement with an isochromat Bloch simulation of the
// file's own waveforms over the file's own voxel
// (tests/reference/pulseq_bloch.hpp), or refused with a message that names
// the file and its blocks. No file may run and disagree, and none may run to
// a signal that vanishes.
//
// The reference voxel is a box of the translation's voxel size, centred where
// the translation put it (the slice of the first selective pulse), filled
// with spins along every axis the crusher or a sample's residual moment
// winds on, enough that no moment the compared window reaches aliases. A
// wrong crusher count or size, a dropped or displaced sample, a wrong flip
// or phase sign all show as differences far above the tolerance.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "io/pulseq/pulseq_events.hpp"
#include "reference/pulseq_bloch.hpp"
#include "simulate/simulator.hpp"
#include "test_paths.hpp"

namespace larmor::io::pulseq {
namespace {

namespace fs = std::filesystem;

// The largest difference from the reference, relative to the reference's
// largest sample, that a file may show and still agree.
// The files that agree stay below 1 %; a missing or extra crusher, a sample
// taken off its echo or a conjugated phase moves samples by tens of per cent.
constexpr double kTolerance = 0.01;
// Samples compared: the first repetitions of each file.
constexpr int kComparedSamples = 48;

fs::path corpus_dir() {
  return fs::path(LARMOR_SOURCE_DIR) / ".." / "shared" / "data" / "pulseq-corpus";
}

struct Outcome {
  std::string file;
  bool ran = false;
  int compared = 0;
  double deviation = 0.0;             // relative to the reference's largest sample
  int weighted = 0;                   // samples recorded as the voxel's mean
  std::array<int, 3> spins{1, 1, 1};  // the reference voxel's grid
  std::string message;
  int worst_sample = -1;
  double worst_time_s = 0.0;
  std::complex<double> worst_ours, worst_reference;
};

std::vector<std::complex<double>> larmor_samples(const sequence::Description& d, double t1,
                                                 double t2) {
  simulate::Simulator sim(d);
  tissue::Tissue t;
  t.voxels = 1;
  t.t1_s.uniform = float(t1);
  t.t2_s.uniform = float(t2);
  const std::vector<float> s = sim.run(t);
  std::vector<std::complex<double>> out;
  for (int i = 0; i < sim.samples(); ++i) out.emplace_back(s[2 * i], s[2 * i + 1]);
  return out;
}

// Spins per voxel edge: eight per turn that the crusher's orders (up to
// `orders`) and the samples' residual moments wind along the axis (more with
// LARMOR_CORPUS_SPINS, which sets the most in all).
const int kMaxSpins =
    std::getenv("LARMOR_CORPUS_SPINS") ? std::atoi(std::getenv("LARMOR_CORPUS_SPINS")) : 4000;
// The fewest samples compared where the spins cannot resolve more.
constexpr int kFewestCompared = 8;

std::array<int, 3> spins_per_edge(const sequence::Description& d, const TranslationReport& report,
                                  int orders, double extent) {
  std::array<int, 3> n{1, 1, 1};
  for (int a = 0; a < 3; ++a) {
    double turns = std::fabs(report.crusher_moment[a]) * orders;
    for (const auto& r : d.voxel.residuals_per_m) turns = std::max(turns, std::fabs(r[a]));
    turns *= report.voxel_size_m[a];
    const bool slice = !d.slice_profiles.empty() && a == d.voxel.slice_axis;
    if (slice) turns *= extent;
    if (turns > 1e-3) n[a] = std::max(8, int(std::ceil(8.0 * turns)) + 8);
    // The slice's profile: 32 spins per slice thickness at least.
    if (slice) n[a] = std::max(n[a], int(std::ceil(32 * extent)));
  }
  return n;
}

Outcome run_file(const fs::path& path, std::optional<double> b0_t, bool split_all) {
  Outcome o;
  o.file = path.filename().string() + (b0_t ? " (b0_t = 3)" : "");
  std::vector<std::string> warnings;
  PulseqFile file;
  TranslateOptions options;
  TranslationReport report;
  sequence::Description d;
  const double t1 = 1.5, t2 = 0.5;
  options.longest_t2_s = t2;
  if (split_all) options.split = TranslateOptions::Splitting::all;
  try {
    file = PulseqFile::read(path.string(), &warnings);
    if (b0_t) {
      options.b0_t = *b0_t;
      file.definitions.values["B0"] = std::to_string(*b0_t);  // the reference reads it here
    }
    d = to_description(file, options, &report);
  } catch (const PulseqError& e) {
    o.message = e.what();
    // A refusal names the file and, past the reader, its blocks or line.
    EXPECT_NE(o.message.find(path.filename().string()), std::string::npos) << o.message;
    return o;
  }
  o.ran = true;
  o.weighted = report.weighted_samples;
  const auto ours = larmor_samples(d, t1, t2);
  const auto times = d.timestamps_s();
  std::vector<double> sample_times;
  for (std::size_t i = 0; i < d.events.size(); ++i) {
    if (d.events[i].kind == sequence::EventKind::adc) sample_times.push_back(times[i]);
  }
  EXPECT_EQ(sample_times.size(), ours.size());
  if (ours.empty()) return o;
  // The compared window: the first samples, as many (up to
  // kComparedSamples) as the reference's spins can resolve the orders they
  // reach.
  const bool sliced = !d.slice_profiles.empty();
  const double extent = sliced ? d.slice_profiles.front().extent : 1.0;
  std::vector<int> shifts_before{0};  // shifts up to each sample
  for (const auto& e : d.events) {
    shifts_before.back() += abi::shifts_of(e.action);
    if (e.kind == sequence::EventKind::adc) shifts_before.push_back(shifts_before.back());
  }
  int wanted = std::min<int>(kComparedSamples, int(ours.size()));
  const auto spins_for = [&](int n) {
    return spins_per_edge(d, report, shifts_before[std::size_t(n - 1)] + 1, extent);
  };
  const auto count = [](const std::array<int, 3>& n) { return n[0] * n[1] * n[2]; };
  while (wanted > kFewestCompared && count(spins_for(wanted)) > kMaxSpins) --wanted;
  reference::Tissue tissue;
  tissue.t1_s = t1;
  tissue.t2_s = t2;
  // The kernel against the double-precision EPG of the same events: what is
  // left between the two simulations below is the translation's.
  // (It plays a pulse played from its waveform as its samples' hard pulses,
  // which the kernel integrates per voxel instead.)
  const auto epg = d.slice_profiles.empty()
                       ? reference::simulate(d, tissue, std::max(2, d.declared_winding() + 1))
                       : std::vector<reference::Complex>{};
  // (With pulses played across the slice the kernel runs each position with
  // its tables, which the kernel tests hold to references of their own.)
  for (int i = 0; i < wanted && d.slice_profiles.empty(); ++i) {
    EXPECT_LT(std::abs(epg[std::size_t(i)] - ours[std::size_t(i)]), 1e-4)
        << o.file << ": the kernel differs from the double-precision EPG at sample " << i;
  }
  reference::BlochOptions bloch;
  const auto& r0 = report.slice_position_m;
  // Played across the slice, the voxel spans the positions' extent along the
  // slice axis, each spin turned by the pulse as it plays there; else each
  // pulse turns every spin as it turns the voxel's centre.
  auto edges = report.voxel_size_m;
  if (sliced) edges[std::size_t(d.voxel.slice_axis)] *= extent;
  o.spins = spins_for(wanted);
  while (count(o.spins) > kMaxSpins) {
    for (int& k : o.spins) k = std::max(1, (k * 3) / 4);
  }
  bloch.positions_m = reference::box_positions(edges, r0, o.spins);
  bloch.rf_uniform_across_spins = !sliced;
  bloch.centre_m = r0;
  bloch.end_time_s = sample_times[std::size_t(wanted - 1)] + 1e-6;
  const auto ref = reference::simulate_pulseq_bloch(file, tissue, bloch);

  double largest = 0.0, worst = 0.0;
  std::size_t next = 0;
  for (int i = 0; i < wanted; ++i) {
    while (next < ref.size() && ref[next].time_s < sample_times[i] - 1e-9) ++next;
    if (next == ref.size() || std::fabs(ref[next].time_s - sample_times[i]) > 1e-9) {
      ADD_FAILURE() << o.file << ": larmor's sample " << i << " at " << sample_times[i] * 1e3
                    << " ms is not an ADC sample of the file";
      return o;
    }
    // Slice positions add up by their widths (slice thicknesses).
    const std::complex<double> r = ref[next].value * extent, s = ours[i];
    largest = std::max(largest, std::abs(r));
    const double difference = std::abs(s - r);
    if (difference > worst) {
      worst = difference;
      o.worst_sample = i;
      o.worst_time_s = sample_times[i];
      o.worst_ours = s;
      o.worst_reference = r;
    }
    if (std::getenv("LARMOR_CORPUS_VERBOSE") != nullptr) {
      std::printf("  %3d %10.4f ms  larmor (%9.6f, %9.6f)  reference (%9.6f, %9.6f)\n", i,
                  sample_times[i] * 1e3, s.real(), s.imag(), r.real(), r.imag());
    }
  }
  // The first readout's sample is where its echo peaks, found from the
  // physics rather than from moments: spins spread over one turn of what the
  // readout sweeps image a single pixel, whose signal peaks at its centre.
  for (const AdcRecord& a : report.adcs) {
    if (a.how != "k-space centre") continue;
    const auto& w = a.swept_per_m;
    const double ww = w[0] * w[0] + w[1] * w[1] + w[2] * w[2];
    reference::BlochOptions pixel = bloch;
    pixel.positions_m.clear();
    for (int j = 0; j < 64; ++j) {
      const double s = ((j + 0.5) / 64 - 0.5) / ww;
      pixel.positions_m.push_back({r0[0] + s * w[0], r0[1] + s * w[1], r0[2] + s * w[2]});
    }
    pixel.end_time_s = a.time_s + 1.0;
    int peak = -1;
    double peak_value = 0.0;
    for (const auto& b : reference::simulate_pulseq_bloch(file, tissue, pixel)) {
      if (b.block_id == a.block && std::abs(b.value) > peak_value) {
        peak_value = std::abs(b.value);
        peak = b.adc_sample;
      }
    }
    // T2 decay across the readout moves the peak of a long one (hundreds of
    // samples, as on tabletop systems) early by a few samples: one sample, or
    // half a per cent of them.
    EXPECT_LE(std::abs(peak - a.kept_sample), std::max(1, a.samples / 200))
        << o.file << ": block " << a.block << " kept sample " << a.kept_sample
        << " but the voxel's echo peaks at sample " << peak;
    break;
  }
  o.compared = wanted;
  o.deviation = largest > 0 ? worst / largest : worst;
  EXPECT_GT(largest, 1e-3) << o.file << ": the reference's signal vanishes in the compared samples";
  double ours_largest = 0.0;
  for (int i = 0; i < wanted; ++i)
    ours_largest = std::max(ours_largest, std::abs(ours[std::size_t(i)]));
  EXPECT_GT(ours_largest, 1e-3) << o.file << ": larmor's signal vanishes in the compared samples";
  EXPECT_LE(o.deviation, kTolerance)
      << o.file << ": larmor differs from the voxel's spins; worst at sample " << o.worst_sample
      << " (" << o.worst_time_s * 1e3 << " ms): larmor " << o.worst_ours << ", reference "
      << o.worst_reference;
  return o;
}

// A file that runs must not throw past the translation either.
Outcome check_file(const fs::path& path, std::optional<double> b0_t = std::nullopt,
                   bool split_all = false) {
  try {
    return run_file(path, b0_t, split_all);
  } catch (const std::exception& e) {
    ADD_FAILURE() << path.filename().string() << ": " << e.what();
    Outcome o;
    o.file = path.filename().string();
    o.message = std::string("failed: ") + e.what();
    return o;
  }
}

std::vector<std::string> corpus_files() {
  std::vector<std::string> files;
  const fs::path dir = corpus_dir();
  if (!fs::is_directory(dir)) return files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".seq") files.push_back(entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// One test per file, so that CTest runs them side by side and names each.
class PulseqCorpusFile : public ::testing::TestWithParam<std::string> {};

// The files larmor refuses, and the reason each message gives; every other
// file must run (and agree).
const std::map<std::string, std::string> kRefused = {
    {"koma_basic_tests_v1.5_unknown_ext.seq", "the file has no ADC"},
    {"pyp_seq1.seq", "the file has no ADC"},
    {"pyp_old_se_python.seq", "[VERSION] section missing"},
    // Its net moment turns from repetition to repetition.
    {"pyp_write_radial_gre.seq", "rotates from repetition to repetition"},
    // Pulseq 1.2 without RF centres: the plateau's middle leaves the slab
    // select a third of an order off at the first excitation.
    {"pyp_simple_mprage120.seq", "two crusher areas"},
};

TEST_P(PulseqCorpusFile, runs_and_agrees_with_the_voxels_spins_or_is_refused) {
  const fs::path path = corpus_dir() / GetParam();
  std::vector<Outcome> outcomes = {check_file(path)};
  const auto refused = kRefused.find(GetParam());
  if (refused != kRefused.end()) {
    EXPECT_FALSE(outcomes[0].ran) << GetParam() << " ran";
    EXPECT_NE(outcomes[0].message.find(refused->second), std::string::npos) << outcomes[0].message;
  } else if (outcomes[0].message.find("b0_t") == std::string::npos) {
    EXPECT_TRUE(outcomes[0].ran) << outcomes[0].message;
  }
  // A file refused for want of the main field runs again with one.
  if (outcomes[0].message.find("b0_t") != std::string::npos) {
    outcomes.push_back(check_file(path, 3.0));
  }
  if (outcomes.size() > 1) EXPECT_TRUE(outcomes[1].ran) << outcomes[1].message;
  for (const Outcome& o : outcomes) {
    if (o.ran) {
      std::printf("| %s | ran | %d samples (%d weighted) | %.3g | %d x %d x %d spins |\n",
                  o.file.c_str(), o.compared, o.weighted, o.deviation, o.spins[0], o.spins[1],
                  o.spins[2]);
    } else {
      std::printf("| %s | refused | %s |\n", o.file.c_str(), o.message.c_str());
    }
  }
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param.substr(0, info.param.find_last_of('.'));
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Corpus, PulseqCorpusFile, ::testing::ValuesIn(corpus_files()), test_name);
// Without ../shared/data/pulseq-corpus there is no file to run.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(PulseqCorpusFile);

// split_pulses = true: slice-selective gradient echoes played as hard pulses
// at their slice's centre agree with spins each pulse turns as it turns the
// centre (no profile across the slice), as one rotation would.
TEST(PulseqCorpus, split_selective_pulses_act_at_their_slices_centre) {
  if (!fs::is_directory(corpus_dir())) GTEST_SKIP() << "no Pulseq corpus at " << corpus_dir();
  for (const char* name :
       {"pyp_write_gre.seq", "ismrm_s12_gre_spoiler.seq", "pyp_trufi_v140.seq"}) {
    SCOPED_TRACE(name);
    const Outcome o = check_file(corpus_dir() / name, std::nullopt, true);
    EXPECT_TRUE(o.ran) << o.message;
    std::printf("| %s (split_pulses = true) | ran | %d samples | %.3g |\n", o.file.c_str(),
                o.compared, o.deviation);
  }
}

TEST(PulseqCorpus, the_shared_corpus_is_present_or_the_tests_say_so) {
  if (!fs::is_directory(corpus_dir())) GTEST_SKIP() << "no Pulseq corpus at " << corpus_dir();
  EXPECT_FALSE(corpus_files().empty());
}

// inversion_b1_scaled = false: the pulses a Pulseq 1.5 file marks as
// inversions (RF use 'i') carry b1_fixed and no other pulse does; a file
// that marks none is refused, naming it, rather than run with them scaled.
TEST(PulseqCorpus, pulses_marked_as_inversions_can_be_left_unscaled_by_b1) {
  const fs::path dir = corpus_dir();
  if (!fs::is_directory(dir)) GTEST_SKIP() << "no Pulseq corpus at " << dir;
  const auto file = PulseqFile::read((dir / "pyp_simple_mprage150.seq").string());
  TranslateOptions options;
  options.b1_fixed_uses = "i";
  TranslationReport report;
  const auto d = to_description(file, options, &report);
  int inversions = 0;
  for (const auto& p : report.pulses) inversions += p.use == 'i';
  ASSERT_GT(inversions, 0);
  // The inversions last 10 ms: each is played from its waveform, whose
  // samples add to 180 degrees, every one of them fixed.
  double fixed_flip = 0.0;
  int fixed = 0, pulses = 0;
  for (const auto& e : d.events) {
    if (!abi::is_rf(e.kind) || e.flip_rad == 0.0) continue;
    ++pulses;
    if ((e.action & sequence::action::b1_fixed) != 0) {
      ++fixed;
      EXPECT_EQ(e.kind, sequence::EventKind::waveform_pulse);
      double angles = 0.0;
      for (const auto& run : d.waveforms.at(std::size_t(e.waveform - 1)).runs) {
        angles += run.angle_rad * double(run.samples);
      }
      fixed_flip += angles;
    }
  }
  EXPECT_NEAR(fixed_flip, inversions * M_PI, 0.02 * inversions);
  EXPECT_GE(fixed, inversions);
  EXPECT_GT(pulses, fixed);
  const auto gre = PulseqFile::read((dir / "pyp_write_gre.seq").string());
  try {
    to_description(gre, options);
    FAIL() << "a file without inversions ran with inversion_b1_scaled = false";
  } catch (const PulseqError& e) {
    EXPECT_NE(std::string(e.what()).find("pyp_write_gre.seq"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace larmor::io::pulseq
