#include "reference/voxel_reference.hpp"

#include <cmath>
#include <stdexcept>

#include "reference/slice_reference.hpp"
#include "sequence/slice_profile.hpp"

namespace larmor::reference {

namespace {

constexpr double kTwoPi = 6.283185307179586;

struct Spin {
  std::array<double, 3> x;
  int position = 0;  // slice position (with slice profiles)
  double mx = 0.0, my = 0.0, mz = 1.0;

  void turn(double angle) {
    const double c = std::cos(angle), s = std::sin(angle);
    const double a = mx, b = my;
    mx = c * a - s * b;
    my = s * a + c * b;
  }
  void rotate(const Rotation& r) {
    const double a = mx, b = my, c = mz;
    mx = r[0][0] * a + r[0][1] * b + r[0][2] * c;
    my = r[1][0] * a + r[1][1] * b + r[1][2] * c;
    mz = r[2][0] * a + r[2][1] * b + r[2][2] * c;
  }
};

}  // namespace

std::vector<Complex> simulate_voxel_spins(const larmor::sequence::Description& d,
                                          const Tissue& tissue, const std::array<int, 3>& grid,
                                          std::vector<double>* mean_mz) {
  using larmor::sequence::EventKind;
  namespace action = larmor::sequence::action;
  const auto& v = d.voxel;
  if (!v.declared()) throw std::invalid_argument("voxel reference: the description has no voxel");
  if (d.crusher.duration_s > 0.0) throw std::invalid_argument("voxel reference: lobes of no time");
  const bool sliced = !d.slice_profiles.empty();
  const int positions = sliced ? d.slice_profiles.front().positions : 1;
  const double extent = sliced ? d.slice_profiles.front().extent : 1.0;
  const int axis = v.slice_axis;
  if (grid[std::size_t(axis)] % positions != 0) {
    throw std::invalid_argument(
        "voxel reference: the slice axis's grid is not a multiple of the "
        "positions");
  }
  std::vector<Spin> spins;
  for (int i = 0; i < grid[0]; ++i) {
    for (int j = 0; j < grid[1]; ++j) {
      for (int k = 0; k < grid[2]; ++k) {
        const int index[3] = {i, j, k};
        Spin s;
        for (std::size_t a = 0; a < 3; ++a) {
          const double unit = (index[a] + 0.5) / grid[a] - 0.5;  // in (-1/2, 1/2)
          const double span = int(a) == axis ? extent : 1.0;
          s.x[a] = v.centre_m[a] + unit * span * v.edges_m[a];
        }
        s.position = index[axis] * positions / grid[std::size_t(axis)];
        spins.push_back(s);
      }
    }
  }
  std::vector<std::vector<double>> waveforms;
  for (const auto& p : d.slice_profiles) waveforms.push_back(larmor::sequence::pulse_waveform(p));
  const double e1_rate = std::isinf(tissue.t1_s) ? 0.0 : 1.0 / tissue.t1_s;
  const double e2_rate = std::isinf(tissue.t2_s) ? 0.0 : 1.0 / tissue.t2_s;
  const auto shift = [&] {
    for (Spin& s : spins) {
      double phase = 0.0;
      for (std::size_t a = 0; a < 3; ++a) phase += v.order_moment_per_m[a] * s.x[a];
      s.turn(kTwoPi * phase);
    }
  };
  std::vector<Complex> samples;
  const larmor::sequence::SliceProfileSpec hard;
  for (const auto& e : d.events) {
    if (e.action & action::crush_before) shift();
    if (e.kind == EventKind::pulse) {
      const double b1 = (e.action & action::b1_fixed) != 0 ? 1.0 : tissue.b1;
      const double flip = e.flip_rad * b1;
      std::vector<Rotation> at(static_cast<std::size_t>(positions));
      for (int j = 0; j < positions; ++j) {
        const double z = -0.5 * extent + (j + 0.5) * extent / positions;
        at[std::size_t(j)] =
            e.slice_profile == 0
                ? shaped_pulse_matrix(hard, {1.0}, 0.0, flip, e.phase_rad, 64)
                : shaped_pulse_matrix(d.slice_profiles[std::size_t(e.slice_profile - 1)],
                                      waveforms[std::size_t(e.slice_profile - 1)], z, flip,
                                      e.phase_rad);
      }
      for (Spin& s : spins) s.rotate(at[std::size_t(s.position)]);
    }
    if (e.kind == EventKind::adc) {
      if (e.voxel_weights == 0) {
        throw std::invalid_argument("voxel reference: every sample needs voxel weights");
      }
      const auto& r = v.residuals_per_m.at(std::size_t(e.voxel_weights - 1));
      Complex sum = 0.0;
      for (const Spin& s : spins) {
        double phase = 0.0;
        for (std::size_t a = 0; a < 3; ++a) phase += r[a] * s.x[a];
        sum += Complex(s.mx, s.my) * std::polar(1.0, kTwoPi * phase);
      }
      // The positions' slabs add with their widths (slice thicknesses).
      const double scale = tissue.m0 * (sliced ? extent : 1.0) / double(spins.size());
      samples.push_back(scale * sum * std::polar(1.0, -e.phase_rad));
      if (mean_mz != nullptr) {
        double mz = 0.0;
        for (const Spin& s : spins) mz += s.mz;
        mean_mz->push_back(scale * mz);
      }
    }
    if (e.action & action::crush_after) shift();
    if (e.action & action::shift_after) shift();
    if (e.action & action::spoil_after) {
      for (Spin& s : spins) s.mx = s.my = 0.0;
    }
    const double e1 = std::exp(-e.duration_s * e1_rate), e2 = std::exp(-e.duration_s * e2_rate);
    for (Spin& s : spins) {
      s.turn(kTwoPi * tissue.df_hz * e.duration_s);
      s.mx *= e2;
      s.my *= e2;
      s.mz = s.mz * e1 + (1.0 - e1);
    }
  }
  return samples;
}

}  // namespace larmor::reference
