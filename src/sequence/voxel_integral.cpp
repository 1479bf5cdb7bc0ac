#include "sequence/voxel_integral.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace larmor::sequence {

namespace {

constexpr double kPi = 3.14159265358979323846;

double sinc(double x) {
  const double a = kPi * x;
  return std::fabs(a) < 1e-8 ? 1.0 - a * a / 6.0 : std::sin(a) / a;
}

bool finite(const std::array<double, 3>& v) {
  return std::isfinite(v[0]) && std::isfinite(v[1]) && std::isfinite(v[2]);
}

}  // namespace

std::complex<double> voxel_transform(const VoxelIntegral& voxel, const std::array<double, 3>& m,
                                     double position, double width) {
  double phase = 0.0, magnitude = 1.0;
  for (int a = 0; a < 3; ++a) {
    phase += m[std::size_t(a)] * voxel.centre_m[std::size_t(a)];
    const double edge = voxel.edges_m[std::size_t(a)];
    if (a == voxel.slice_axis && width > 0.0) {
      phase += m[std::size_t(a)] * position * edge;
      magnitude *= sinc(m[std::size_t(a)] * width * edge);
    } else {
      magnitude *= sinc(m[std::size_t(a)] * edge);
    }
  }
  return std::polar(magnitude, 2.0 * kPi * phase);
}

void validate_voxel_integral(const Description& d) {
  const VoxelIntegral& v = d.voxel;
  if (!v.declared()) return;
  const auto refuse = [&](const std::string& what) {
    throw std::invalid_argument("sequence '" + d.name + "': the voxel its samples average " + what);
  };
  if (!finite(v.order_moment_per_m) || !finite(v.centre_m)) {
    refuse("needs a finite order moment and centre");
  }
  for (double e : v.edges_m) {
    if (!(e > 0.0 && e < std::numeric_limits<double>::infinity())) {
      refuse("needs finite positive edges");
    }
  }
  if (v.slice_axis < 0 || v.slice_axis > 2) refuse("needs a slice axis 0, 1 or 2");
  for (std::size_t i = 0; i < v.residuals_per_m.size(); ++i) {
    if (!finite(v.residuals_per_m[i])) {
      refuse("has a residual moment that is not finite (sample table " + std::to_string(i + 1) +
             ")");
    }
  }
}

VoxelWeightTable build_voxel_weight_table(const Description& d, int orders,
                                          const SliceProfileTable& slices) {
  VoxelWeightTable t;
  if (!d.voxel.declared()) return t;
  validate_voxel_integral(d);
  if (orders < 1) throw std::invalid_argument("build_voxel_weight_table: orders must be >= 1");
  t.tables = int(d.voxel.residuals_per_m.size());
  t.positions = slices.profiles > 0 ? slices.positions : 1;
  t.orders = orders;
  const int signed_orders = 2 * orders - 1;
  t.weights.assign(
      std::size_t(t.tables) * std::size_t(t.positions) * std::size_t(signed_orders) * 2, 0.0f);
  const auto& u = d.voxel.order_moment_per_m;
  std::size_t at = 0;
  for (const auto& r : d.voxel.residuals_per_m) {
    for (int j = 0; j < t.positions; ++j) {
      const double position = slices.profiles > 0 ? slices.position[std::size_t(j)] : 0.0;
      const double width = slices.profiles > 0 ? slices.position_weight[std::size_t(j)] : 0.0;
      for (int k = -(orders - 1); k < orders; ++k) {
        const std::array<double, 3> m = {k * u[0] + r[0], k * u[1] + r[1], k * u[2] + r[2]};
        const std::complex<double> w = voxel_transform(d.voxel, m, position, width);
        t.weights[at++] = float(w.real());
        t.weights[at++] = float(w.imag());
      }
    }
  }
  return t;
}

}  // namespace larmor::sequence
