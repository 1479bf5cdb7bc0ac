// Cartesian labels for raw data whose trajectories are the lines of a grid,
// axis-aligned or turned (mrd.hpp, label_cartesian).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "io/mrd/mrd.hpp"

namespace larmor::io::mrd {
namespace {

using Vec = std::array<double, 3>;

double dot(const Vec& a, const Vec& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
Vec cross(const Vec& a, const Vec& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
Vec minus(const Vec& a, const Vec& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
Vec times(const Vec& a, double s) { return {a[0] * s, a[1] * s, a[2] * s}; }
double norm(const Vec& a) { return std::sqrt(dot(a, a)); }
int largest_axis(const Vec& a) {
  int axis = 0;
  for (int d = 1; d < 3; ++d) {
    if (std::abs(a[std::size_t(d)]) > std::abs(a[std::size_t(axis)])) axis = d;
  }
  return axis;
}
// A unit direction with its largest component positive: one sign per axis.
Vec oriented(const Vec& a) {
  const Vec unit = times(a, 1.0 / norm(a));
  return unit[std::size_t(largest_axis(unit))] < 0.0 ? times(unit, -1.0) : unit;
}
std::array<float, 3> as_float(const Vec& a) { return {float(a[0]), float(a[1]), float(a[2])}; }

// Whole steps of the lines' coordinates along one lattice axis, lowest
// first, and the lowest step's index (the centre line is at minus it).
// False where a coordinate is off the lattice.
bool whole_steps(const std::vector<double>& coordinate, double tolerance, std::vector<long>& index,
                 long& lowest) {
  std::vector<double> values = coordinate;
  std::sort(values.begin(), values.end());
  double step = 0.0;
  for (std::size_t i = 1; i < values.size(); ++i) {
    const double gap = values[i] - values[i - 1];
    if (gap > tolerance && (step == 0.0 || gap < step)) step = gap;
  }
  if (step == 0.0) step = std::abs(values.front());  // one line off the centre
  index.clear();
  for (double c : coordinate) {
    const double q = c / step;
    if (std::abs(q - std::nearbyint(q)) > 0.01) return false;
    index.push_back(std::lround(q));
  }
  const auto [low, high] = std::minmax_element(index.begin(), index.end());
  if (*high - *low >= 65535) return false;
  lowest = *low;
  for (long& v : index) v -= lowest;
  return true;
}

}  // namespace

bool label_cartesian(std::vector<Acquisition>& acquisitions, RawEncoding& encoding,
                     const std::array<double, 3>& voxel_m) {
  // Geometry in k-space of physical directions: cycles per voxel of the
  // largest edge, where grid steps are at least 1 / 65535.
  constexpr double tolerance = 1e-5;
  if (acquisitions.empty()) return false;
  const double largest_edge = std::max({voxel_m[0], voxel_m[1], voxel_m[2]});
  const auto point = [&](const Acquisition& a, int n) {
    Vec k;
    for (std::size_t d = 0; d < 3; ++d) {
      k[d] = double(a.trajectory[std::size_t(n) * 3 + d]) * largest_edge / voxel_m[d];
    }
    return k;
  };
  // The read direction: the first readout that moves.
  Vec read{1.0, 0.0, 0.0};
  bool read_found = false;
  for (const Acquisition& a : acquisitions) {
    if (a.trajectory_dimensions != 3 || a.samples < 2 ||
        a.trajectory.size() != std::size_t(a.samples) * 3) {
      return false;
    }
    const Vec sweep = minus(point(a, a.samples - 1), point(a, 0));
    if (!read_found && norm(sweep) > tolerance) {
      read = oriented(sweep);
      read_found = true;
    }
  }
  // Each line's position across the read direction, constant along it.
  std::vector<Vec> across(acquisitions.size());
  std::vector<bool> reversed(acquisitions.size());
  for (std::size_t i = 0; i < acquisitions.size(); ++i) {
    const Acquisition& a = acquisitions[i];
    const auto off_read = [&](int n) {
      const Vec k = point(a, n);
      return minus(k, times(read, dot(k, read)));
    };
    across[i] = off_read(0);
    for (int n = 1; n < a.samples; ++n) {
      if (norm(minus(off_read(n), across[i])) > tolerance) return false;
    }
    reversed[i] = dot(minus(point(a, a.samples - 1), point(a, 0)), read) < 0.0;
  }
  // The lattice's first axis: the shortest step from the first line to
  // another (a rectangular grid's neighbour), or the line itself where all
  // lines coincide; the second completes the frame.
  Vec first_axis{0.0, 0.0, 0.0};
  double shortest = 0.0;
  for (const Vec& p : across) {
    const double d = norm(minus(p, across[0]));
    if (d > tolerance && (shortest == 0.0 || d < shortest)) {
      shortest = d;
      first_axis = minus(p, across[0]);
    }
  }
  if (shortest == 0.0)
    first_axis = norm(across[0]) > tolerance ? across[0] : cross(read, Vec{0, 0, 1});
  if (norm(first_axis) <= tolerance) first_axis = cross(read, Vec{0, 1, 0});
  Vec phase = oriented(first_axis);
  Vec slice = oriented(cross(read, phase));
  if (largest_axis(slice) < largest_axis(phase)) std::swap(phase, slice);
  // Whole steps along each lattice axis that the lines leave.
  std::vector<std::vector<long>> steps;
  std::vector<long> lowest;
  std::vector<int> axis_of_step;  // 0: phase, 1: slice
  for (int axis = 0; axis < 2; ++axis) {
    const Vec& direction = axis == 0 ? phase : slice;
    std::vector<double> coordinate;
    for (const Vec& p : across) coordinate.push_back(dot(p, direction));
    const auto [low, high] = std::minmax_element(coordinate.begin(), coordinate.end());
    if (std::abs(*low) <= tolerance && std::abs(*high) <= tolerance) continue;
    std::vector<long> index;
    long low_index = 0;
    if (!whole_steps(coordinate, tolerance, index, low_index)) return false;
    steps.push_back(std::move(index));
    lowest.push_back(low_index);
    axis_of_step.push_back(axis);
  }
  // Lines along the slice axis alone: it is the first encode. An axis the
  // lines do not step along completes a right-handed frame; one they do
  // keeps the direction its steps count along.
  if (axis_of_step.size() == 1 && axis_of_step[0] == 1) std::swap(phase, slice);
  if (axis_of_step.size() < 2) slice = cross(read, phase);
  for (std::size_t i = 0; i < acquisitions.size(); ++i) {
    Acquisition& a = acquisitions[i];
    a.encode_step_1 = steps.size() > 0 ? std::uint16_t(steps[0][i]) : 0;
    a.encode_step_2 = steps.size() > 1 ? std::uint16_t(steps[1][i]) : 0;
    a.read_dir = as_float(read);
    a.phase_dir = as_float(phase);
    a.slice_dir = as_float(slice);
    a.reversed = reversed[i];
  }
  const auto size = [&](std::size_t k) {
    return k < steps.size() ? int(*std::max_element(steps[k].begin(), steps[k].end())) + 1 : 1;
  };
  encoding.matrix[1] = size(0);
  encoding.matrix[2] = size(1);
  encoding.centre_line = steps.size() > 0 ? int(-lowest[0]) : 0;
  encoding.centre_partition = steps.size() > 1 ? int(-lowest[1]) : 0;
  const double fov[3] = {encoding.fov_mm[0], encoding.fov_mm[1], encoding.fov_mm[2]};
  encoding.fov_mm[0] = fov[largest_axis(read)];
  encoding.fov_mm[1] = fov[largest_axis(phase)];
  encoding.fov_mm[2] = fov[largest_axis(slice)];
  encoding.trajectory = "cartesian";
  return true;
}

}  // namespace larmor::io::mrd
