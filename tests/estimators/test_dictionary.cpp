// Dictionary matching: signals of atoms scaled by a complex M0 find their own
// atom and that M0 (closed form: s = M0 x atom, so <unit atom, s> / |atom| =
// M0); arbitrary signals find the atom a brute-force double-precision search
// written here finds; the compressed dictionary keeps the leading singular
// directions (its basis orthonormal, the energy it reports the energy its
// projection keeps, the fewest directions that keep what was asked) and
// matches like the uncompressed one; a voxel's result does not depend on the
// chunk or the other voxels; a dictionary simulated into device memory is the
// one made from the same signals on the host.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <random>
#include <stdexcept>

#include "estimators/dictionary/dictionary.hpp"
#include "sequence/builders/builders.hpp"
#include "simulate/simulator.hpp"

namespace larmor::estimators::dictionary {
namespace {

struct Fixture {
  tissue::Tissue grid;
  std::vector<float> signals;
  int samples = 0;
};

// A T2 x B1 grid (T1 1 s) through a 24-echo CPMG with 140-degree refocusing.
Fixture fixture() {
  sequence::MeseParams p;
  p.echoes = 24;
  p.refocusing_deg = 140.0;
  const simulate::Simulator sim(sequence::build_mese(p));
  Fixture f;
  f.grid.t1_s.uniform = 1.0f;
  for (int i = 0; i < 60; ++i) {
    for (int j = 0; j < 9; ++j) {
      f.grid.t2_s.map.push_back(float(0.02 * std::pow(1.06, i)));
      f.grid.b1.map.push_back(float(0.8 + 0.05 * j));
    }
  }
  f.grid.voxels = std::int64_t(f.grid.t2_s.map.size());
  f.signals = sim.run(f.grid);
  f.samples = sim.samples();
  return f;
}

TEST(Dictionary, AtomsScaledByComplexM0FindThemselves) {
  const Fixture f = fixture();
  const Dictionary d = make_dictionary(f.signals, f.samples, f.grid);
  EXPECT_EQ(d.properties.size(), 2u);  // t2 and b1 vary
  const std::complex<float> m0 = std::polar(0.7f, 0.3f);
  std::vector<float> s(f.signals.size());
  for (std::size_t i = 0; i < s.size() / 2; ++i) {
    const std::complex<float> z = m0 * std::complex<float>(f.signals[2 * i], f.signals[2 * i + 1]);
    s[2 * i] = z.real();
    s[2 * i + 1] = z.imag();
  }
  const MatchResult r = match(d, s, d.atoms, 100);  // several chunks
  for (std::int64_t a = 0; a < d.atoms; ++a) {
    EXPECT_EQ(r.atom[a], a);
    EXPECT_LT(std::abs(r.m0[a] - m0), 2e-5f) << a;
    EXPECT_NEAR(r.correlation[a], 1.0f, 2e-5f);
  }
}

TEST(Dictionary, AgreesWithBruteForceAndWithItsCompression) {
  const Fixture f = fixture();
  const Dictionary d = make_dictionary(f.signals, f.samples, f.grid);
  // Off-grid voxels with noise.
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> t2(0.025f, 0.5f), b1(0.82f, 1.18f);
  std::normal_distribution<float> noise(0.0f, 0.002f);
  tissue::Tissue t;
  t.t1_s.uniform = 1.0f;
  for (int v = 0; v < 300; ++v) {
    t.t2_s.map.push_back(t2(rng));
    t.b1.map.push_back(b1(rng));
  }
  t.voxels = 300;
  sequence::MeseParams p;
  p.echoes = 24;
  p.refocusing_deg = 140.0;
  std::vector<float> s = simulate::Simulator(sequence::build_mese(p)).run(t);
  for (float& x : s) x += noise(rng);
  const MatchResult r = match(d, s, t.voxels);
  int agree_compressed = 0;
  const Dictionary c = compress(d, 0, 0.99999);
  EXPECT_LT(c.samples, f.samples);
  const MatchResult rc = match(c, s, t.voxels);
  // The brute force in double: |<atom, voxel>| / |atom|.
  const auto score = [&](std::int64_t a, int v) {
    std::complex<double> ip = 0.0;
    for (int k = 0; k < f.samples; ++k) {
      const std::size_t ia = (std::size_t(a) * f.samples + k) * 2;
      const std::size_t is = (std::size_t(v) * f.samples + k) * 2;
      ip += std::conj(std::complex<double>(f.signals[ia], f.signals[ia + 1])) *
            std::complex<double>(s[is], s[is + 1]);
    }
    return std::abs(ip) / d.norms[a];
  };
  int agree_exactly = 0;
  for (int v = 0; v < 300; ++v) {
    double best = -1.0;
    std::int64_t arg = -1;
    for (std::int64_t a = 0; a < d.atoms; ++a) {
      const double sa = score(a, v);
      if (sa > best) best = sa, arg = a;
    }
    // The matcher sums in float: where two atoms score alike to its round-off
    // (1e-7 relative on 24 samples) either may win; otherwise it finds the
    // best atom.
    agree_exactly += r.atom[v] == arg;
    EXPECT_GE(score(r.atom[v], v), best * (1.0 - 1e-6))
        << "voxel " << v << ": atom " << r.atom[v] << ", the best is " << arg;
    agree_compressed += rc.atom[v] == r.atom[v];
  }
  EXPECT_GE(agree_exactly, 295);  // near-ties are rare (299 or 300 seen)
  // The maps within 1 %: the mean relative difference of the matched T2 and
  // B1 (rank 8 of 24 here; 0.06 % and 0.11 % seen).
  double dt2 = 0.0, db1 = 0.0;
  for (int v = 0; v < 300; ++v) {
    const auto value = [&](int atom, int p) { return d.values[std::size_t(atom) * 2 + p]; };
    dt2 += std::fabs(value(rc.atom[v], 0) / value(r.atom[v], 0) - 1.0) / 300;
    db1 += std::fabs(value(rc.atom[v], 1) / value(r.atom[v], 1) - 1.0) / 300;
  }
  EXPECT_GE(agree_compressed, 270);  // the rest are neighbours of near-ties (293 seen)
  EXPECT_LT(dt2, 0.01);
  EXPECT_LT(db1, 0.01);
  // The basis is orthonormal.
  const std::vector<float> basis = c.host_basis();
  const int n = c.original_samples;
  ASSERT_EQ(basis.size(), std::size_t(c.samples) * n * 2);
  auto at = [&](int i, int k) {
    const std::size_t x = (std::size_t(i) * n + k) * 2;
    return std::complex<double>(basis[x], basis[x + 1]);
  };
  for (int i = 0; i < c.samples; ++i) {
    for (int j = 0; j < c.samples; ++j) {
      std::complex<double> ip = 0.0;
      for (int k = 0; k < n; ++k) ip += std::conj(at(i, k)) * at(j, k);
      EXPECT_NEAR(std::abs(ip), i == j ? 1.0 : 0.0, 1e-5) << i << " " << j;
    }
  }
  // The energy it reports is what projecting the unit atoms onto it keeps
  // (summed here in double), at least what was asked; one direction fewer
  // keeps less.
  double kept = 0.0;
  for (std::int64_t a = 0; a < d.atoms; ++a) {
    for (int i = 0; i < c.samples; ++i) {
      std::complex<double> ip = 0.0;
      for (int k = 0; k < n; ++k) {
        const std::size_t x = (std::size_t(a) * n + k) * 2;
        ip += std::conj(at(i, k)) * std::complex<double>(f.signals[x], f.signals[x + 1]);
      }
      kept += std::norm(ip) / (double(d.norms[a]) * d.norms[a]);
    }
  }
  EXPECT_NEAR(c.energy_kept, kept / double(d.atoms), 1e-6);
  EXPECT_GE(c.energy_kept, 0.99999);
  EXPECT_LT(compress(d, c.samples - 1).energy_kept, 0.99999);
}

// The signals with Gaussian noise of 0.003 per channel.
std::vector<float> noisy(std::vector<float> s, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.0f, 0.003f);
  for (float& x : s) x += noise(rng);
  return s;
}

// A voxel's result is the same, bit for bit, whichever voxels share its call
// and however the call is chunked (the MPI partition and the chunk size must
// not change a map).
TEST(Dictionary, ResultsDoNotDependOnTheSplitOrTheChunk) {
  const Fixture f = fixture();
  const Dictionary c = compress(make_dictionary(f.signals, f.samples, f.grid), 0, 0.99999);
  const std::vector<float> s = noisy(f.signals, 8);
  const std::int64_t n = f.grid.voxels, half = 217;
  const auto whole = match(c, s, n);
  const auto chunked = match(c, s, n, 29);
  const std::vector<float> first(s.begin(), s.begin() + half * f.samples * 2);
  const std::vector<float> rest(s.begin() + half * f.samples * 2, s.end());
  const auto a = match(c, first, half);
  const auto b = match(c, rest, n - half);
  for (std::int64_t v = 0; v < n; ++v) {
    const auto& part = v < half ? a : b;
    const std::int64_t i = v < half ? v : v - half;
    EXPECT_EQ(whole.atom[v], part.atom[i]) << v;
    EXPECT_EQ(whole.m0[v], part.m0[i]) << v;  // bit for bit
    EXPECT_EQ(whole.m0[v], chunked.m0[v]) << v;
    EXPECT_EQ(whole.correlation[v], chunked.correlation[v]) << v;
  }
}

// The staged interface: chunks staged in turn (each launched while the next is
// filled, in any order of the volume) give what one call gives, bit for bit;
// a chunk's results are complete after finish(), and a timed matcher gives
// the same results and times each phase.
TEST(Dictionary, StagedChunksInFlightGiveTheSameResults) {
  const Fixture f = fixture();
  const Dictionary c = compress(make_dictionary(f.signals, f.samples, f.grid), 0, 0.99999);
  const std::vector<float> s = noisy(f.signals, 9);
  const std::int64_t n = f.grid.voxels, chunk = 31;
  const std::size_t values = std::size_t(f.samples) * 2;
  const auto whole = match(c, s, n);
  for (const MatchPhases phases : {MatchPhases::overlapped, MatchPhases::timed}) {
    MatchResult staged;
    staged.resize(n);
    std::fill(staged.atom.begin(), staged.atom.end(), -1);
    Matcher matcher(c, chunk, phases);
    const float* previous = nullptr;
    for (std::int64_t v0 = (n - 1) / chunk * chunk; v0 >= 0; v0 -= chunk) {  // last chunk first
      const std::int64_t count = std::min(chunk, n - v0);
      float* slot = matcher.staging();
      EXPECT_NE(slot, previous);  // the slot in flight is not handed out
      previous = slot;
      std::copy_n(s.begin() + std::ptrdiff_t(v0 * values), count * values, slot);
      matcher.match_staged(count, staged, v0);
    }
    matcher.finish();
    for (std::int64_t v = 0; v < n; ++v) {
      EXPECT_EQ(staged.atom[v], whole.atom[v]) << v;
      EXPECT_EQ(staged.m0[v], whole.m0[v]) << v;
      EXPECT_EQ(staged.correlation[v], whole.correlation[v]) << v;
    }
    if (phases == MatchPhases::timed) {
      EXPECT_GT(matcher.timings().match_s, 0.0);
      EXPECT_GT(matcher.timings().project_s, 0.0);
    } else {
      EXPECT_THROW(matcher.timings(), std::logic_error);
    }
  }
}

// The atoms simulated into device memory are those the host-made dictionary
// has: the same norms and the same matches.
TEST(Dictionary, SimulatedOnTheDeviceIsTheHostMadeOne) {
  const Fixture f = fixture();
  sequence::MeseParams p;
  p.echoes = 24;
  p.refocusing_deg = 140.0;
  const simulate::Simulator sim(sequence::build_mese(p));
  const Dictionary host = make_dictionary(f.signals, f.samples, f.grid);
  const Dictionary device = simulate_dictionary(sim, f.grid);
  ASSERT_EQ(device.atoms, host.atoms);
  EXPECT_EQ(device.properties, host.properties);
  EXPECT_EQ(device.norms, host.norms);
  const auto r = match(device, f.signals, f.grid.voxels);
  for (std::int64_t v = 0; v < f.grid.voxels; ++v) EXPECT_EQ(r.atom[v], v);
}

TEST(Dictionary, ZeroAtomRefused) {
  tissue::Tissue t;
  t.voxels = 2;
  t.t2_s.map = {0.05f, 0.06f};
  std::vector<float> s = {1, 0, 0, 0};
  try {
    make_dictionary(s, 1, t);
    FAIL();
  } catch (const std::invalid_argument& e) {
    // Named by its index and parameters (deck units).
    EXPECT_NE(std::string(e.what()).find("atom 1 (t2_ms 60) has zero norm"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace larmor::estimators::dictionary
