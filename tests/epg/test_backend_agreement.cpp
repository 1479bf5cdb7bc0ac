// Serial and OpenMP run the same host layout, so they must agree exactly on
// every builder, whatever the thread count.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include "sequence/builders/builders.hpp"
#include "simulate/simulator.hpp"

namespace larmor {
namespace {

tissue::Tissue grid(int n) {
  tissue::Tissue t;
  t.voxels = n;
  for (int i = 0; i < n; ++i) {
    t.t1_s.map.push_back(0.3f + 0.01f * float(i));
    t.t2_s.map.push_back(0.02f + 0.002f * float(i));
    t.b1.map.push_back(0.7f + 0.6f * float(i) / float(n));
    t.df_hz.map.push_back(-20.0f + 0.5f * float(i));
  }
  return t;
}

void expect_identical(const sequence::Description& d) {
  simulate::Simulator sim(d);
  const tissue::Tissue t = grid(61);
  std::vector<float> serial(std::size_t(t.voxels) * std::size_t(sim.samples()) * 2, 1.0f);
  std::vector<float> openmp(serial.size(), 2.0f);
  sim.run_into<Kokkos::Serial>(t, serial.data());
  sim.run_into<Kokkos::OpenMP>(t, openmp.data());
  for (std::size_t i = 0; i < serial.size(); ++i)
    ASSERT_EQ(serial[i], openmp[i]) << d.name << " at " << i;
}

TEST(BackendAgreement, serial_and_openmp_are_identical) {
  sequence::MeseParams m;
  m.refocusing_deg = 160;
  expect_identical(sequence::build_mese(m));
  sequence::SpgrParams s;
  s.repetitions = 200;
  expect_identical(sequence::build_spgr(s));
  sequence::BssfpParams b;
  b.dummy_repetitions = 50;
  b.repetitions = 5;
  expect_identical(sequence::build_bssfp(b));
}

}  // namespace
}  // namespace larmor
