// Times compas-toolkit's FISP simulation on the size of larmor's `mrf`
// dictionary workload: the same schedule's flip angles and RF phases, the same
// voxel count, TR count and state count, one slice position. compas-toolkit
// keeps TR and TE constant, so the schedule's TR and TE extensions are left
// out; the work per TR and voxel is the same. Prints one JSON object.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "compas/core/complex_type.h"
#include "compas/core/context.h"
#include "compas/parameters/tissue.h"
#include "compas/sequences/fisp.h"
#include "compas/simulate/fisp.h"

namespace {

struct ScheduleRow {
  float flip_fraction;
  float phase_deg;
};

std::vector<ScheduleRow> read_schedule(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << "compas-fisp-dictionary: cannot read schedule '" << path << "'\n";
    std::exit(1);
  }
  std::vector<ScheduleRow> rows;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::replace(line.begin(), line.end(), ',', ' ');
    std::istringstream fields(line);
    ScheduleRow row{};
    fields >> row.flip_fraction >> row.phase_deg;
    rows.push_back(row);
  }
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: compas-fisp-dictionary SCHEDULE.csv [VOXELS [STATES [REPEATS]]]\n";
    return 2;
  }
  const auto schedule = read_schedule(argv[1]);
  const int voxels = argc > 2 ? std::atoi(argv[2]) : 140000;
  const int states = argc > 3 ? std::atoi(argv[3]) : 64;
  const int repeats = argc > 4 ? std::atoi(argv[4]) : 20;
  const int trs = static_cast<int>(schedule.size());
  constexpr float nominal_flip_deg = 60.0f, tr_s = 0.016f, te_s = 0.0035f, ti_s = 0.020f;
  constexpr float deg = 3.14159265358979f / 180.0f;

  auto context = compas::make_context();

  std::vector<compas::cfloat> rf_train(trs);
  for (int i = 0; i < trs; ++i) {
    const float flip = nominal_flip_deg * schedule[i].flip_fraction;
    const float phase = schedule[i].phase_deg * deg;
    rf_train[i] = compas::cfloat(flip * std::cos(phase), flip * std::sin(phase));
  }
  std::vector<compas::cfloat> slice_profile(trs, compas::cfloat(1.0f, 0.0f));
  auto sequence =
      compas::make_fisp_sequence(context, {rf_train.data(), {{trs}}},
                                 {slice_profile.data(), {{1, trs}}}, tr_s, te_s, states, ti_s);

  // A dictionary's spread of T1 and T2 (T1 0.1-4 s, T2 0.01-2 s, T2 < T1).
  std::vector<float> t1(voxels), t2(voxels), b1(voxels, 1.0f), b0(voxels, 0.0f);
  std::vector<float> rho_x(voxels, 1.0f), rho_y(voxels, 0.0f), x(voxels, 0.0f), y(voxels, 0.0f);
  for (int v = 0; v < voxels; ++v) {
    const float a = static_cast<float>(v % 400) / 399.0f,
                b = static_cast<float>(v / 400 % 350) / 349.0f;
    t1[v] = 0.1f * std::pow(40.0f, a);
    t2[v] = std::min(0.01f * std::pow(200.0f, b), 0.9f * t1[v]);
  }
  auto parameters = compas::make_tissue_parameters(
      context, voxels, voxels, {t1.data(), {{voxels}}}, {t2.data(), {{voxels}}},
      {b1.data(), {{voxels}}}, {b0.data(), {{voxels}}}, {rho_x.data(), {{voxels}}},
      {rho_y.data(), {{voxels}}}, {x.data(), {{voxels}}}, {y.data(), {{voxels}}});

  auto echos = compas::simulate_magnetization(context, parameters, sequence);  // warm-up
  context.synchronize();
  double best_s = 1e30, total_s = 0;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    echos = compas::simulate_magnetization(context, parameters, sequence);
    context.synchronize();
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best_s = std::min(best_s, s);
    total_s += s;
  }
  // A finite, non-zero signal shows the run simulated something.
  std::vector<compas::cfloat> host(static_cast<size_t>(trs) * voxels);
  echos.copy_to(host);
  double sum_abs = 0;
  for (const auto& z : host) sum_abs += std::hypot(z.real(), z.imag());
  std::cout << "{\"peer\": \"compas-toolkit\", \"sequence\": \"fisp\", \"voxels\": " << voxels
            << ", \"trs\": " << trs << ", \"states\": " << states << ", \"repeats\": " << repeats
            << ", \"best_s\": " << best_s << ", \"mean_s\": " << total_s / repeats
            << ", \"ns_per_tr_per_voxel\": " << best_s * 1e9 / (static_cast<double>(trs) * voxels)
            << ", \"mean_abs_echo\": " << sum_abs / static_cast<double>(host.size()) << "}\n";
  return std::isfinite(sum_abs) && sum_abs > 0 ? 0 : 1;
}
