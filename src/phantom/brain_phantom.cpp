#include "phantom/brain_phantom.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace larmor::phantom {
namespace {

// 3 T values (ms) of the classes, in the range of published brain
// measurements (e.g. Stanisz et al. 2005; Wansapura et al. 1999): CSF, grey
// matter, white matter. M0 is relative proton density.
struct ClassValues {
  double t1_ms, t2_ms, m0;
};
constexpr ClassValues kValues[4] = {
    {0, 0, 0}, {4000.0, 1500.0, 1.0}, {1350.0, 95.0, 0.80}, {850.0, 75.0, 0.69}};

// Position in [-1, 1]^3 of a voxel, and its radius in the ellipsoid.
void position(const Volume& v, std::int64_t index, double p[3]) {
  const auto nx = std::int64_t(v.shape[2]), ny = std::int64_t(v.shape[1]);
  const std::int64_t x = index % nx, y = (index / nx) % ny, z = index / (nx * ny);
  const std::int64_t c[3] = {z, y, x};
  for (int a = 0; a < 3; ++a) p[a] = (2.0 * (double(c[a]) + 0.5) / double(v.shape[a])) - 1.0;
}

TissueClass class_at(const double p[3]) {
  const double r = std::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
  if (r > 1.0) return TissueClass::background;
  // Folding of the cortical ribbon.
  const double fold = 0.06 * std::sin(9.0 * p[1]) * std::sin(7.0 * p[2]) * std::cos(5.0 * p[0]);
  const double rr = r + fold;
  const double ventricle = (p[0] * p[0]) / 0.04 + (p[1] * p[1]) / 0.09 + (p[2] * p[2]) / 0.02;
  if (ventricle < 1.0) return TissueClass::csf;
  if (rr < 0.62) return TissueClass::white;
  if (rr < 0.90) return TissueClass::grey;
  return TissueClass::csf;
}

}  // namespace

Volume make_volume(std::int64_t brain_voxels) {
  if (brain_voxels < 1 || brain_voxels > 2147483647ll) {
    throw std::invalid_argument("phantom: the voxel count must lie in [1, 2^31 - 1], got " +
                                std::to_string(brain_voxels));
  }
  // An ellipsoid fills pi/6 of its box; the box is 0.9 : 1.2 : 1 (z, y, x).
  const double box = double(brain_voxels) / (3.14159265358979 / 6.0);
  const double side = std::cbrt(box / (0.9 * 1.2));
  Volume v;
  v.shape = {std::uint64_t(std::max(1.0, std::round(0.9 * side))),
             std::uint64_t(std::max(1.0, std::round(1.2 * side))),
             std::uint64_t(std::max(1.0, std::round(side)))};
  const std::int64_t total = std::int64_t(v.shape[0] * v.shape[1] * v.shape[2]);
  v.mask.assign(std::size_t(total), 0);
  v.classes.assign(std::size_t(total), 0);
  for (std::int64_t i = 0; i < total; ++i) {
    double p[3];
    position(v, i, p);
    const TissueClass c = class_at(p);
    v.classes[std::size_t(i)] = std::uint8_t(c);
    if (c != TissueClass::background) {
      v.mask[std::size_t(i)] = 1;
      v.brain.push_back(i);
    }
  }
  if (v.brain.empty()) {  // a one-voxel request: its voxel is the centre
    v.mask[0] = 1;
    v.classes[0] = std::uint8_t(TissueClass::white);
    v.brain.push_back(0);
  }
  return v;
}

tissue::Tissue tissue_of(const Volume& v, std::int64_t begin, std::int64_t end) {
  tissue::Tissue t;
  t.voxels = end - begin;
  for (auto* map : {&t.m0.map, &t.t1_s.map, &t.t2_s.map, &t.b1.map})
    map->resize(std::size_t(t.voxels));
  for (std::int64_t k = begin; k < end; ++k) {
    const std::int64_t index = v.brain[std::size_t(k)];
    double p[3];
    position(v, index, p);
    const ClassValues& c =
        kValues[v.classes[std::size_t(index)] == 0 ? 3 : v.classes[std::size_t(index)]];
    // Smooth within-class variation of a few percent.
    const double vary = 1.0 + 0.04 * std::sin(3.1 * p[0] + 1.3) * std::cos(2.3 * p[1] - 0.4) +
                        0.03 * std::sin(4.7 * p[2] + 0.9);
    const std::size_t i = std::size_t(k - begin);
    t.m0.map[i] = float(c.m0);
    t.t1_s.map[i] = float(c.t1_ms * 1e-3 * vary);
    t.t2_s.map[i] = float(c.t2_ms * 1e-3 * (2.0 - vary));
    // Transmit field: brighter centre, a left-right tilt, within [0.8, 1.2].
    t.b1.map[i] = float(1.12 - 0.22 * (p[1] * p[1] + p[2] * p[2]) / 2.0 + 0.06 * p[2]);
  }
  return t;
}

}  // namespace larmor::phantom
