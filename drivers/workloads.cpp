#include "workloads.hpp"

#include <cmath>
#include <stdexcept>

#include "sequence/builders/builders.hpp"

namespace larmor::drivers {

sequence::MrfParams mrf_workload_params(const std::string& schedule_csv) {
  sequence::MrfParams p;
  p.schedule = sequence::read_mrf_schedule_csv(schedule_csv);
  return p;
}

Workload make_workload(const std::string& name, const std::string& schedule_csv) {
  Workload w;
  w.name = name;
  if (name == "mese") {
    sequence::MeseParams p;  // 90, 32 x 180 with crushers, ESP 10 ms
    w.sequence = sequence::build_mese(p);
    w.full_voxels = 1000000;
  } else if (name == "spgr3d") {
    sequence::SpgrParams p;  // 15 deg, 117 deg quadratic, TE 2.5 ms, TR 8 ms, 3564 TRs
    w.sequence = sequence::build_spgr(p);
    w.full_voxels = 1000000;
    w.orders = 64;
  } else if (name == "mrf") {
    w.sequence = sequence::build_mrf(mrf_workload_params(schedule_csv));
    w.full_voxels = 140000;
    w.orders = 64;
  } else {
    throw std::invalid_argument("unknown workload '" + name + "' (mese, spgr3d, mrf)");
  }
  return w;
}

tissue::Tissue workload_tissue(const std::string& name, std::int64_t voxels) {
  tissue::Tissue t;
  t.voxels = voxels;
  t.t1_s.map.resize(std::size_t(voxels));
  t.t2_s.map.resize(std::size_t(voxels));
  t.b1.map.resize(std::size_t(voxels));
  // Additive recurrences with irrational steps (golden-ratio family).
  const double a1 = 0.7548776662466927, a2 = 0.5698402909980532, a3 = 0.6180339887498949;
  double t1_lo = 0.1, t1_hi = 4.0, t2_lo = 0.01, t2_hi = 2.0, b1_lo = 0.6, b1_hi = 1.4;
  if (name == "mese") {
    t1_lo = 1.0, t1_hi = 1.0, t2_lo = 0.02, t2_hi = 2.0, b1_lo = 0.5, b1_hi = 1.2;
  }
  for (std::int64_t i = 0; i < voxels; ++i) {
    const double u1 = std::fmod(0.5 + a1 * double(i), 1.0);
    const double u2 = std::fmod(0.5 + a2 * double(i), 1.0);
    const double u3 = std::fmod(0.5 + a3 * double(i), 1.0);
    const double t2 = t2_lo * std::pow(t2_hi / t2_lo, u2);
    const double t1 = std::max(t1_lo * std::pow(t1_hi / t1_lo, u1), t2);
    t.t1_s.map[std::size_t(i)] = static_cast<float>(t1);
    t.t2_s.map[std::size_t(i)] = static_cast<float>(t2);
    t.b1.map[std::size_t(i)] = static_cast<float>(b1_lo + (b1_hi - b1_lo) * u3);
  }
  return t;
}

}  // namespace larmor::drivers
