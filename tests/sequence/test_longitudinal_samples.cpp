// Longitudinal samples (sequence/longitudinal_samples.hpp) in the
// double-precision references: the turned sample's imaginary part is minus
// the mean Mz, which an inversion's recovery gives in closed form and spins
// filling a voxel give where the crushers wind a fraction of a turn; the
// transverse samples stay what they were.
#include <gtest/gtest.h>

#include <cmath>

#include "reference/epg_reference.hpp"
#include "reference/voxel_reference.hpp"
#include "sequence/builders/builders.hpp"
#include "sequence/longitudinal_samples.hpp"

namespace larmor::sequence {
namespace {

TEST(LongitudinalSamples, inversion_recovery_follows_its_closed_form) {
  // A 180 degree pulse, spoiled, then samples 0.1, 0.3 and 0.9 s after it.
  Description d;
  d.name = "inversion recovery";
  Event inversion;
  inversion.kind = EventKind::pulse;
  inversion.flip_rad = M_PI;
  inversion.action = action::spoil_after;
  inversion.duration_s = 0.1;
  d.events.push_back(inversion);
  for (double wait : {0.2, 0.6, 0.0}) {
    Event sample;
    sample.kind = EventKind::adc;
    sample.duration_s = wait;
    d.events.push_back(sample);
  }
  const auto columns = add_longitudinal_samples(d);
  ASSERT_EQ(columns.longitudinal.size(), 3u);
  reference::Tissue t;
  t.m0 = 1.7;
  t.t1_s = 0.7;
  t.t2_s = 0.05;
  t.b1 = 0.9;
  const auto s = reference::simulate(d, t, 4);
  const double times[3] = {0.1, 0.3, 0.9};
  for (int n = 0; n < 3; ++n) {
    const double mz = t.m0 * (1.0 - (1.0 - std::cos(M_PI * t.b1)) * std::exp(-times[n] / t.t1_s));
    EXPECT_NEAR(-s[std::size_t(columns.longitudinal[std::size_t(n)])].imag(), mz, 1e-12) << n;
    // After a spoiled inversion nothing is transverse.
    EXPECT_NEAR(std::abs(s[std::size_t(columns.transverse[std::size_t(n)])]), 0.0, 1e-12);
  }
}

TEST(LongitudinalSamples, leave_the_transverse_samples_as_they_were) {
  MeseParams p;
  p.echoes = 8;
  p.refocusing_deg = 140.0;
  const Description plain = build_mese(p);
  Description d = plain;
  const auto columns = add_longitudinal_samples(d);
  reference::Tissue t;
  t.t1_s = 0.9;
  t.t2_s = 0.08;
  t.b1 = 0.85;
  t.df_hz = 7.0;
  const auto want = reference::simulate(plain, t, 20);
  const auto got = reference::simulate(d, t, 20);
  ASSERT_EQ(columns.transverse.size(), want.size());
  for (std::size_t n = 0; n < want.size(); ++n) {
    EXPECT_LT(std::abs(got[std::size_t(columns.transverse[n])] - want[n]), 1e-12) << n;
  }
}

TEST(LongitudinalSamples, are_the_mean_mz_of_spins_filling_a_voxel) {
  // An RF-spoiled train whose spoiler winds 0.55 turns across the voxel: the
  // longitudinal magnetisation varies across it, and its mean is not Z_0.
  Description d;
  d.name = "partial spoiler";
  d.voxel.order_moment_per_m = {0.0, 0.0, 550.0};
  d.voxel.edges_m = {1e-3, 1e-3, 1e-3};
  d.voxel.residuals_per_m = {{0.0, 0.0, 40.0}};
  for (int n = 0; n < 10; ++n) {
    Event pulse, sample;
    pulse.kind = EventKind::pulse;
    pulse.flip_rad = 0.6;
    pulse.phase_rad = (117.0 * M_PI / 180.0) * 0.5 * n * (n + 1);
    pulse.duration_s = 3e-3;
    sample.kind = EventKind::adc;
    sample.voxel_weights = 1;
    sample.action = action::shift_after;
    sample.duration_s = 6e-3;
    d.events.push_back(pulse);
    d.events.push_back(sample);
  }
  Description extended = d;
  const auto columns = add_longitudinal_samples(extended);
  reference::Tissue t;
  t.t1_s = 0.4;
  t.t2_s = 0.05;
  std::vector<double> mz;
  reference::simulate_voxel_spins(d, t, {1, 1, 2000}, &mz);
  const auto s = reference::simulate(extended, t, extended.declared_winding() + 1);
  double spread = 0.0;
  for (std::size_t n = 0; n < mz.size(); ++n) {
    const double got = -s[std::size_t(columns.longitudinal[n])].imag();
    EXPECT_NEAR(got, mz[n], 1e-5) << n;
    spread = std::max(spread, std::fabs(mz[n] - mz.front()));
  }
  EXPECT_GT(spread, 0.05);  // the samples see the recovery, not a constant
}

}  // namespace
}  // namespace larmor::sequence
