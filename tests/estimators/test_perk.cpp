// PERK training and estimation: a model survives its byte image and HDF5
// unchanged; trained on a multi-echo spin echo with B1 known, it estimates
// the T2 values of the NIST/ISMRM system phantom's T2 array that fall in its
// prior (Jiang et al. / Stupic et al., 3 T: 190.94, 133.27, 96.89, 64.07,
// 46.42 ms) within 2 % from noiseless signals and within 5 % RMS at a noise of
// 0.5 % of M0 per channel, and M0 (the measured mean magnitude over the
// model's signal level) within the same bounds; bad specs are refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "app/perk_model_file.hpp"
#include "estimators/perk/impl/perk_device.hpp"
#include "estimators/perk/perk_train.hpp"
#include "sequence/builders/builders.hpp"
#include "simulate/simulator.hpp"

namespace larmor::estimators::perk {
namespace {

const double kNistT2Ms[] = {190.94, 133.27, 96.89, 64.07, 46.42};

sequence::Description mese16() {
  sequence::MeseParams p;
  p.echoes = 16;
  p.echo_spacing_s = 0.010;
  p.refocusing_deg = 150.0;  // non-ideal refocusing: B1 matters
  return sequence::build_mese(p);
}

PerkSpec t2_spec(double noise) {
  PerkSpec spec;
  spec.latent = {{tissue::Property::t2, 0.02, 0.4, true}};
  spec.known = {{tissue::Property::b1, 0.75, 1.25, false}};
  spec.nuisance = {{tissue::Property::t1, 1.0, 1.0, false}};  // T1 fixed at 1 s
  spec.samples = 6000;
  spec.features = 300;
  spec.noise_sigma = noise;
  spec.seed = 5;
  return spec;
}

constexpr double kM0 = 0.8;
struct Estimates {
  std::vector<double> t2, m0;
};

// Estimates T2 [s] and M0 of voxels with the given T2 and B1, T1 = 1 s,
// M0 = 0.8, with complex noise `noise` x M0 per channel.
Estimates estimate_t2(const PerkModel& model, const std::vector<double>& t2,
                      const std::vector<double>& b1, double noise, unsigned seed) {
  tissue::Tissue t;
  t.voxels = std::int64_t(t2.size());
  t.m0.uniform = float(kM0);
  t.t1_s.uniform = 1.0f;
  for (std::size_t i = 0; i < t2.size(); ++i) {
    t.t2_s.map.push_back(float(t2[i]));
    t.b1.map.push_back(float(b1[i]));
  }
  const simulate::Simulator sim(mese16());
  std::vector<float> signals = sim.run(t);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, float(noise * kM0));
  if (noise > 0) {
    for (float& s : signals) s += normal(rng);
  }
  const std::vector<float> q =
      perk_inputs(signals.data(), t.voxels, sim.samples(), {t.b1.map.data()});
  using Mem = Kokkos::DefaultExecutionSpace::memory_space;
  Kokkos::View<float**, Kokkos::LayoutRight, Mem> in("in", t.voxels, model.inputs());
  const int l = int(model.outputs.size());
  EXPECT_EQ(l, 2);  // T2, then the signal level
  EXPECT_EQ(model.outputs.back(), tissue::Property::m0);
  Kokkos::View<float**, Kokkos::LayoutRight, Mem> out("out", t.voxels, l);
  Kokkos::deep_copy(
      in, Kokkos::View<const float**, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged>(
              q.data(), t.voxels, model.inputs()));
  larmor::perk::apply(Kokkos::DefaultExecutionSpace(), upload<Mem>(model), in, out, true);
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  Estimates est;
  for (std::int64_t v = 0; v < t.voxels; ++v) {
    est.t2.push_back(host(v, 0));
    const float* voxel_signals = signals.data() + std::size_t(v) * sim.samples() * 2;
    est.m0.push_back(m0_from_level(mean_magnitude(voxel_signals, sim.samples()), host(v, l - 1)));
  }
  return est;
}

TEST(Perk, NoiselessNistT2WithinTwoPercent) {
  TrainingReport report;
  const PerkModel model = train_perk(mese16(), t2_spec(0.0), &report);
  std::vector<double> t2, b1;
  for (double v : kNistT2Ms) {
    for (double b : {0.85, 1.0, 1.15}) {
      t2.push_back(v * 1e-3);
      b1.push_back(b);
    }
  }
  const auto est = estimate_t2(model, t2, b1, 0.0, 1);
  for (std::size_t i = 0; i < t2.size(); ++i) {
    EXPECT_NEAR(est.t2[i] / t2[i], 1.0, 0.02) << "T2 " << t2[i] * 1e3 << " ms, B1 " << b1[i];
    EXPECT_NEAR(est.m0[i] / kM0, 1.0, 0.02) << "T2 " << t2[i] * 1e3 << " ms, B1 " << b1[i];
  }
}

TEST(Perk, NoisyNistT2WithinFivePercentRms) {
  const double noise = 0.005;
  const PerkModel model = train_perk(mese16(), t2_spec(noise));
  for (double v : kNistT2Ms) {
    std::vector<double> t2(200, v * 1e-3), b1(200);
    for (std::size_t i = 0; i < b1.size(); ++i) b1[i] = 0.85 + 0.3 * double(i % 7) / 6.0;
    const auto est = estimate_t2(model, t2, b1, noise, unsigned(v));
    double sq = 0.0, sq_m0 = 0.0;
    for (double e : est.t2) sq += (e / t2[0] - 1.0) * (e / t2[0] - 1.0);
    for (double e : est.m0) sq_m0 += (e / kM0 - 1.0) * (e / kM0 - 1.0);
    EXPECT_LT(std::sqrt(sq / double(t2.size())), 0.05) << "T2 " << v << " ms";
    EXPECT_LT(std::sqrt(sq_m0 / double(t2.size())), 0.05) << "M0 at T2 " << v << " ms";
  }
}

TEST(Perk, KnownMapDensityAndModelFiles) {
  PerkSpec spec = t2_spec(0.002);
  spec.samples = 600;
  spec.features = 40;
  spec.lambdas = {1.0};
  spec.rhos = {std::pow(2.0, -30)};
  spec.known_samples = {std::vector<float>(500, 0.0f)};
  for (std::size_t i = 0; i < 500; ++i)
    spec.known_samples[0][i] = 0.9f + 0.2f * float(i % 11) / 10.f;
  TrainingReport report;
  const PerkModel model = train_perk(mese16(), spec, &report);
  EXPECT_EQ(report.grid.size(), 1u);
  EXPECT_EQ(model.inputs(), 17);
  const PerkModel copy = PerkModel::from_bytes(model.to_bytes());
  EXPECT_EQ(copy.weights, model.weights);
  EXPECT_EQ(copy.frequencies, model.frequencies);
  EXPECT_EQ(copy.outputs, model.outputs);
  const auto path = (std::filesystem::temp_directory_path() / "larmor_perk_model.h5").string();
  app::save_perk_model(model, path);
  const PerkModel loaded = app::load_perk_model(path);
  EXPECT_EQ(loaded.weights, model.weights);
  EXPECT_EQ(loaded.phases, model.phases);
  EXPECT_EQ(loaded.offsets, model.offsets);
  EXPECT_EQ(loaded.known, model.known);
  EXPECT_EQ(loaded.signals, 16);
  EXPECT_EQ(loaded.rho, model.rho);
  std::filesystem::remove(path);
  EXPECT_THROW(PerkModel::from_bytes(model.to_bytes().substr(0, 100)), std::runtime_error);
}

TEST(Perk, BadSpecsRefusedByName) {
  PerkSpec spec = t2_spec(0.0);
  spec.latent = {{tissue::Property::m0, 0.5, 1.5, false}};
  try {
    train_perk(mese16(), spec);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("m0 cannot be a latent property"), std::string::npos);
  }
  spec = t2_spec(0.0);
  spec.latent[0].low = -1.0;
  try {
    train_perk(mese16(), spec);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("t2_ms: a log-uniform prior needs low > 0"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace larmor::estimators::perk
