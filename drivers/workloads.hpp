// The named benchmark workloads of docs/performance.md (mese, spgr3d, mrf),
// defined once for the bench driver and the tests.
#pragma once

#include <cstdint>
#include <string>

#include "sequence/builders/builders.hpp"
#include "sequence/description.hpp"
#include "tissue/tissue.hpp"

namespace larmor::drivers {

struct Workload {
  std::string name;
  sequence::Description sequence;
  std::int64_t full_voxels = 0;  // the workload's defined size
  int orders = 0;                // 0: the default rule
};

// The mrf workload's train parameters (the schedule from `schedule_csv`).
sequence::MrfParams mrf_workload_params(const std::string& schedule_csv);

// `schedule_csv` is only read by mrf.
Workload make_workload(const std::string& name, const std::string& schedule_csv);

// Deterministic tissue spread over the workload's ranges (a low-discrepancy
// sequence, so any voxel count covers the ranges evenly).
tissue::Tissue workload_tissue(const std::string& name, std::int64_t voxels);

}  // namespace larmor::drivers
