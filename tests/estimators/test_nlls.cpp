// Voxel-wise NLLS: noiseless CPMG magnitudes give back T2 and M0 (the NIST
// phantom T2 values, B1 known); noisy ones within 5 % RMS at noise 0.5 % of
// M0; a truth beyond the bounds ends on the bound; each voxel's fit does not
// depend on the voxels fitted with it.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "estimators/nlls/nlls.hpp"
#include "sequence/builders/builders.hpp"

namespace larmor::estimators::nlls {
namespace {

const simulate::Simulator& mese16() {
  static const simulate::Simulator sim([] {
    sequence::MeseParams p;
    p.echoes = 16;
    p.refocusing_deg = 150.0;
    return sequence::build_mese(p);
  }());
  return sim;
}

tissue::Tissue voxels(const std::vector<double>& t2, const std::vector<double>& b1) {
  tissue::Tissue t;
  t.voxels = std::int64_t(t2.size());
  t.m0.uniform = 0.8f;
  t.t1_s.uniform = 1.0f;
  for (std::size_t i = 0; i < t2.size(); ++i) {
    t.t2_s.map.push_back(float(t2[i]));
    t.b1.map.push_back(float(b1[i]));
  }
  return t;
}

NllsSpec t2_spec(double high = 1.0) {
  NllsSpec spec;
  spec.estimate = {{tissue::Property::t2, 0.01, high, true}};
  return spec;
}

// The fit sees only the known B1 (and T1): the truth's T2 and M0 are dropped.
tissue::Tissue known_only(tissue::Tissue t) {
  t.t2_s.map.clear();
  t.m0.uniform = 1.0f;
  return t;
}

TEST(Nlls, NoiselessRecoversT2AndM0) {
  std::vector<double> t2, b1;
  for (double v : {190.94, 133.27, 96.89, 64.07, 46.42}) {
    for (double b : {0.85, 1.0, 1.15}) t2.push_back(v * 1e-3), b1.push_back(b);
  }
  const tissue::Tissue truth = voxels(t2, b1);
  const std::vector<float> y = mese16().run(truth);
  const NllsResult r = fit_nlls(mese16(), known_only(truth), y, t2_spec());
  for (std::size_t v = 0; v < t2.size(); ++v) {
    EXPECT_NEAR(r.values[v * 2 + 1] / t2[v], 1.0, 1e-3) << "T2 " << t2[v];
    EXPECT_NEAR(r.values[v * 2], 0.8, 1e-3) << "M0, T2 " << t2[v];
    EXPECT_GT(r.iterations[v], 0);
  }
}

TEST(Nlls, NoisyWithinFivePercentAndIndependentOfNeighbours) {
  std::vector<double> t2(300, 0.08), b1(300);
  for (std::size_t i = 0; i < b1.size(); ++i) b1[i] = 0.85 + 0.3 * double(i % 7) / 6.0;
  const tissue::Tissue truth = voxels(t2, b1);
  std::vector<float> y = mese16().run(truth);
  std::mt19937 rng(2);
  std::normal_distribution<float> noise(0.0f, 0.004f);
  for (float& x : y) x += noise(rng);
  const NllsResult r = fit_nlls(mese16(), known_only(truth), y, t2_spec());
  double sq = 0.0;
  for (std::size_t v = 0; v < t2.size(); ++v) {
    sq += std::pow(r.values[v * 2 + 1] / 0.08 - 1.0, 2) / double(t2.size());
  }
  EXPECT_LT(std::sqrt(sq), 0.05);
  // The first 50 voxels alone: the same fits, bit for bit.
  const tissue::Tissue part = known_only(truth.slice(0, 50));
  const NllsResult a =
      fit_nlls(mese16(), part, std::vector<float>(y.begin(), y.begin() + 50 * 16 * 2), t2_spec());
  for (std::size_t i = 0; i < a.values.size(); ++i) EXPECT_EQ(a.values[i], r.values[i]) << i;
}

TEST(Nlls, TruthBeyondTheBoundEndsOnIt) {
  const tissue::Tissue truth = voxels({0.5}, {1.0});
  const NllsResult r = fit_nlls(mese16(), known_only(truth), mese16().run(truth), t2_spec(0.2));
  EXPECT_FLOAT_EQ(r.values[1], 0.2f);
}

TEST(Nlls, BadSpecsRefused) {
  NllsSpec spec = t2_spec();
  spec.estimate.push_back({tissue::Property::m0, 0.1, 2.0, false});
  const tissue::Tissue t = voxels({0.05}, {1.0});
  EXPECT_THROW(fit_nlls(mese16(), t, mese16().run(t), spec), std::invalid_argument);
  spec = t2_spec();
  spec.estimate[0].high = spec.estimate[0].low;
  EXPECT_THROW(fit_nlls(mese16(), t, mese16().run(t), spec), std::invalid_argument);
}

}  // namespace
}  // namespace larmor::estimators::nlls
