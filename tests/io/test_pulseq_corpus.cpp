// Real Pulseq files written by other tools (../shared/data/pulseq-corpus,
// kept outside the project): every file is either translated and simulated
// by larmor's kernel in agreement with an isochromat Bloch simulation of the
// file's own waveforms (tests/reference/pulseq_bloch.hpp), or refused with a
// message that names the file and its blocks. No file may run and disagree.
//
// The reference voxel is what EPG assumes: spins spread evenly over one whole
// turn of the crusher moment the translation used, centred where the
// translation put the voxel (the slice of the first selective pulse). Then a
// wrong crusher count, a dropped or displaced sample, a wrong flip or phase
// sign all show as differences far above the tolerance, which allows for what
// EPG leaves out by design: relaxation during the pulses (T2 is long here to
// keep it small), the slice profile across the spread of spins, and the
// in-phase residuals the translation rounds away (at most 0.05 turns each).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "io/pulseq/pulseq_events.hpp"
#include "larmor_config.hpp"
#include "reference/pulseq_bloch.hpp"
#include "simulate/simulator.hpp"

namespace larmor::io::pulseq {
namespace {

namespace fs = std::filesystem;

// The largest difference from the reference, relative to the reference's
// largest sample, that a file may show and still agree.
// The files that agree stay below 1 %; a missing or extra crusher, a sample
// taken off its echo or a conjugated phase moves samples by tens of per cent.
constexpr double kTolerance = 0.015;
// Samples compared: the first repetitions of each file.
constexpr int kComparedSamples = 48;

fs::path corpus_dir() {
  return fs::path(LARMOR_SOURCE_DIR) / ".." / "shared" / "data" / "pulseq-corpus";
}

struct Outcome {
  std::string file;
  bool ran = false;
  int compared = 0;
  double deviation = 0.0;   // relative to the reference's largest sample
  double own_voxel = -1.0;  // the same over the file's own voxel (reported, not asserted)
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

// How far the file's own voxel departs from EPG's: the same comparison over a
// box of the translation's voxel size filled with spins, each pulse with its
// real slice profile across them. EPG assumes whole turns of the crusher and
// a uniform flip; a real voxel need not have either. Reported, not asserted.
double own_voxel_deviation(const PulseqFile& file, const TranslationReport& report,
                           const reference::Tissue& tissue, const std::vector<double>& times,
                           const std::vector<std::complex<double>>& ours) {
  constexpr int kSamples = 8;
  const int wanted = std::min<int>(kSamples, int(ours.size()));
  const auto& d = report.voxel_size_m;
  const auto& u = report.crusher_moment;
  const auto& r0 = report.slice_position_m;
  std::array<int, 3> n{};
  for (int a = 0; a < 3; ++a) {
    // Eight spins per turn the crusher winds along the axis, and across a slice.
    const double turns = std::fabs(u[a]) * d[a] + 8.0 * std::fabs(report.slice_normal[a]);
    n[a] = std::clamp(int(std::ceil(8.0 * turns)), 1, 48);
  }
  while (n[0] * n[1] * n[2] > 3000) {
    for (int& k : n) k = std::max(1, (k * 3) / 4);
  }
  reference::BlochOptions bloch;
  for (int i = 0; i < n[0]; ++i) {
    for (int j = 0; j < n[1]; ++j) {
      for (int k = 0; k < n[2]; ++k) {
        bloch.positions_m.push_back({r0[0] + ((i + 0.5) / n[0] - 0.5) * d[0],
                                     r0[1] + ((j + 0.5) / n[1] - 0.5) * d[1],
                                     r0[2] + ((k + 0.5) / n[2] - 0.5) * d[2]});
      }
    }
  }
  bloch.end_time_s = times[std::size_t(wanted - 1)] + 1e-6;
  const auto ref = reference::simulate_pulseq_bloch(file, tissue, bloch);
  double largest = 0.0, worst = 0.0;
  std::size_t next = 0;
  for (int i = 0; i < wanted; ++i) {
    while (next < ref.size() && ref[next].time_s < times[i] - 1e-9) ++next;
    if (next == ref.size()) return -1.0;
    largest = std::max(largest, std::abs(ref[next].value));
    worst = std::max(worst, std::fabs(std::abs(ref[next].value) - std::abs(ours[i])));
  }
  return largest > 0 ? worst / largest : -1.0;
}

Outcome run_file(const fs::path& path, std::optional<double> b0_t) {
  Outcome o;
  o.file = path.filename().string() + (b0_t ? " (b0_t = 3)" : "");
  std::vector<std::string> warnings;
  PulseqFile file;
  TranslateOptions options;
  TranslationReport report;
  sequence::Description d;
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
  const double t1 = 1.5, t2 = 0.5;
  const auto ours = larmor_samples(d, t1, t2);
  const auto times = d.timestamps_s();
  std::vector<double> sample_times;
  for (std::size_t i = 0; i < d.events.size(); ++i) {
    if (d.events[i].kind == sequence::EventKind::adc) sample_times.push_back(times[i]);
  }
  EXPECT_EQ(sample_times.size(), ours.size());
  const int wanted = std::min<int>(kComparedSamples, int(ours.size()));
  if (wanted == 0) return o;

  // Spins over one turn of the crusher, enough that no order reached in the
  // compared window aliases onto order 0.
  int shifts = 0, seen = 0;
  for (const auto& e : d.events) {
    if (e.kind == sequence::EventKind::adc && ++seen > wanted) break;
    shifts += abi::shifts_of(e.action);
  }
  reference::BlochOptions bloch;
  const auto& u = report.crusher_moment;
  const auto& r0 = report.slice_position_m;
  const int spins = std::clamp(2 * shifts + 2, 1, 400);
  // The spins span one turn of u along u, centred on the voxel, and every
  // pulse turns them all as it turns the centre: EPG's pulses are uniform
  // across the voxel, and a slice profile over the spread would be physics
  // EPG leaves out by design.
  bloch.rf_uniform_across_spins = true;
  bloch.centre_m = r0;
  const double uu = u[0] * u[0] + u[1] * u[1] + u[2] * u[2];
  bloch.positions_m.assign(1, r0);
  if (uu > 0.0) {
    bloch.positions_m.clear();
    for (int j = 0; j < spins; ++j) {
      const double s = ((j + 0.5) / spins - 0.5) / uu;  // u.r spans one turn
      bloch.positions_m.push_back({r0[0] + s * u[0], r0[1] + s * u[1], r0[2] + s * u[2]});
    }
  }
  bloch.end_time_s = sample_times[std::size_t(wanted - 1)] + 1e-6;
  reference::Tissue tissue;
  tissue.t1_s = t1;
  tissue.t2_s = t2;
  const auto ref = reference::simulate_pulseq_bloch(file, tissue, bloch);
  // The kernel against the double-precision EPG of the same events: what is
  // left between the two simulations below is the translation's.
  const auto epg = reference::simulate(d, tissue, std::max(2, d.declared_winding() + 1));
  for (int i = 0; i < wanted; ++i) {
    EXPECT_LT(std::abs(epg[std::size_t(i)] - ours[std::size_t(i)]), 1e-4)
        << o.file << ": the kernel differs from the double-precision EPG at sample " << i;
  }

  // The voxel off the isocentre carries the encoding's phase at its centre,
  // which the voxel's own signal does not: compare magnitudes there.
  const bool magnitudes = r0[0] != 0 || r0[1] != 0 || r0[2] != 0;
  double largest = 0.0, worst = 0.0;
  std::size_t next = 0;
  for (int i = 0; i < wanted; ++i) {
    while (next < ref.size() && ref[next].time_s < sample_times[i] - 1e-9) ++next;
    if (next == ref.size() || std::fabs(ref[next].time_s - sample_times[i]) > 1e-9) {
      ADD_FAILURE() << o.file << ": larmor's sample " << i << " at " << sample_times[i] * 1e3
                    << " ms is not an ADC sample of the file";
      return o;
    }
    const std::complex<double> r = ref[next].value, s = ours[i];
    largest = std::max(largest, std::abs(r));
    const double difference = magnitudes ? std::fabs(std::abs(s) - std::abs(r)) : std::abs(s - r);
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
    EXPECT_LE(std::abs(peak - a.kept_sample), 1)
        << o.file << ": block " << a.block << " kept sample " << a.kept_sample
        << " but the voxel's echo peaks at sample " << peak;
    break;
  }
  o.compared = wanted;
  o.deviation = largest > 0 ? worst / largest : worst;
  EXPECT_GT(largest, 1e-3) << o.file << ": the reference's signal vanishes in the compared samples";
  EXPECT_LE(o.deviation, kTolerance)
      << o.file << ": larmor differs from the isochromat voxel; worst at sample " << o.worst_sample
      << " (" << o.worst_time_s * 1e3 << " ms): larmor " << o.worst_ours << ", reference "
      << o.worst_reference;
  o.own_voxel = own_voxel_deviation(file, report, tissue, sample_times, ours);
  return o;
}

// A file that runs must not throw past the translation either.
Outcome check_file(const fs::path& path, std::optional<double> b0_t = std::nullopt) {
  try {
    return run_file(path, b0_t);
  } catch (const std::exception& e) {
    ADD_FAILURE() << path.filename().string() << ": " << e.what();
    Outcome o;
    o.file = path.filename().string();
    o.message = std::string("failed: ") + e.what();
    return o;
  }
}

TEST(PulseqCorpus, every_file_runs_and_agrees_with_the_isochromat_voxel_or_is_refused) {
  const fs::path dir = corpus_dir();
  if (!fs::is_directory(dir)) GTEST_SKIP() << "no Pulseq corpus at " << dir;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".seq") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty());
  int ran = 0;
  for (const fs::path& path : files) {
    SCOPED_TRACE(path.filename().string());
    std::vector<Outcome> outcomes = {check_file(path)};
    // A file refused for want of the main field runs again with one.
    if (outcomes[0].message.find("b0_t") != std::string::npos) {
      outcomes.push_back(check_file(path, 3.0));
    }
    for (const Outcome& o : outcomes) {
      ran += o.ran;
      if (o.ran) {
        std::printf("| %s | ran | %d samples | %.3g | own voxel, first 8 magnitudes: %.3g |\n",
                    o.file.c_str(), o.compared, o.deviation, o.own_voxel);
      } else {
        std::printf("| %s | refused | %s |\n", o.file.c_str(), o.message.c_str());
      }
    }
  }
  EXPECT_GT(ran, 0);
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
  int fixed = 0, pulses = 0;
  for (const auto& e : d.events) {
    if (e.kind != sequence::EventKind::pulse || e.flip_rad == 0.0) continue;
    ++pulses;
    if ((e.action & sequence::action::b1_fixed) != 0) {
      ++fixed;
      EXPECT_NEAR(e.flip_rad, M_PI, 0.02);  // the file's inversions are 180 degrees
    }
  }
  EXPECT_EQ(fixed, inversions);
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
