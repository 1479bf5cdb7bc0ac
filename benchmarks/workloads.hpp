// The named benchmark workloads of docs/performance.md (mese, spgr3d, mrf,
// cest),
// defined once for the bench and the tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sequence/builders/builders.hpp"
#include "sequence/description.hpp"
#include "tissue/tissue.hpp"

namespace larmor::benchmarks {

struct Workload {
  std::string name;
  sequence::Description sequence;
  std::int64_t full_voxels = 0;  // the workload's defined size
  int max_order = -1;            // < 0: the automatic cap
};

// The mrf workload's train parameters (the schedule from `schedule_csv`).
sequence::MrfParams mrf_workload_params(const std::string& schedule_csv);

// `schedule_csv` is only read by mrf.
Workload make_workload(const std::string& name, const std::string& schedule_csv);

// A Z-spectrum: at each of 41 offsets from -2 to +2 kHz, 3 s of continuous RF
// at 1 uT on the 1 us raster (one waveform pulse), a spoiler, a 90 degree
// pulse and its FID, then 2 s of recovery.
sequence::Description cest_z_spectrum();

// Deterministic tissue spread over the workload's ranges (a low-discrepancy
// sequence, so any voxel count covers the ranges evenly).
tissue::Tissue workload_tissue(const std::string& name, std::int64_t voxels);

// The declared terms the bench can add to a workload, each at typical values:
// off_resonance (df over +-50 Hz), diffusion (ADC 0.3-3 um^2/ms against a
// 1 cycle/mm crusher with 1 ms lobes), flow (velocity over +-5 cm/s, its phase
// and washout from a 5 mm slice), transmit (an 8-channel array, two shim
// settings alternating pulse by pulse); and the pooled layouts second_pool
// (myelin water: 15 %, T1 500 ms, T2 15 ms, 10/s exchange) and bound_pool
// (magnetisation transfer: 12 %, 4.3/s). `terms` is "none", "all" (the four
// terms) or a comma-separated list; an unknown name throws.
std::vector<std::string> known_terms();
void declare_terms(const std::string& terms, sequence::Description& d, tissue::Tissue& t);

}  // namespace larmor::benchmarks
