#include "estimators/nlls/nlls.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/kokkos_compat.hpp"
#include "epg/tissue_views.hpp"

namespace larmor::estimators::nlls {
namespace {

constexpr int kMaxParameters = 1 + epg::tissue_direction::count;

int direction_of(tissue::Property p) {
  switch (p) {
    case tissue::Property::m0:
      return epg::tissue_direction::m0;
    case tissue::Property::t1:
      return epg::tissue_direction::t1;
    case tissue::Property::t2:
      return epg::tissue_direction::t2;
    case tissue::Property::b1:
      return epg::tissue_direction::b1;
    default:
      return epg::tissue_direction::df;
  }
}

// The per-voxel state a Levenberg-Marquardt iteration reads and writes.
struct VoxelState {
  Kokkos::View<float**, Kokkos::HostSpace> theta, accepted;  // [voxel][P]
  Kokkos::View<double***, Kokkos::HostSpace> jtj;            // [voxel][P][P] at accepted
  Kokkos::View<double**, Kokkos::HostSpace> jtr;             // [voxel][P] at accepted
  Kokkos::View<double*, Kokkos::HostSpace> cost, damping;    // at accepted
  Kokkos::View<int*, Kokkos::HostSpace> steps, done;
};

// The estimated parameters in the order of the fit: M0, then the spec's.
struct Parameters {
  int count = 0;
  std::vector<int> direction;  // epg::tissue_direction of each
  std::vector<double> low, high;
  std::vector<char> log_scale;  // start at the geometric mean of the bounds
};

Parameters parameters_of(const NllsSpec& spec) {
  Parameters p{1 + int(spec.estimate.size()), {epg::tissue_direction::m0}, {0.0}, {INFINITY}, {0}};
  if (p.count > kMaxParameters) throw std::invalid_argument("NLLS: too many parameters");
  for (const perk::Prior& prior : spec.estimate) {
    const std::string name = tissue::deck_name(prior.property);
    if (prior.property == tissue::Property::m0) {
      throw std::invalid_argument("NLLS: m0 is always estimated; do not list it");
    }
    for (int d : p.direction) {
      if (d == direction_of(prior.property))
        throw std::invalid_argument("NLLS: " + name + " twice");
    }
    if (!(prior.low < prior.high) || !std::isfinite(prior.low) || !std::isfinite(prior.high)) {
      throw std::invalid_argument("NLLS: " + name + " needs finite bounds with low < high");
    }
    p.direction.push_back(direction_of(prior.property));
    p.low.push_back(prior.low);
    p.high.push_back(prior.high);
    p.log_scale.push_back(prior.log_uniform && prior.low > 0.0);
  }
  return p;
}

// Every voxel at the start: M0 1 (set from the first evaluation), each other
// parameter in the middle of its bounds, no cost yet.
VoxelState starting_state(std::int64_t n, const Parameters& p) {
  VoxelState s{Kokkos::View<float**, Kokkos::HostSpace>("theta", n, p.count),
               Kokkos::View<float**, Kokkos::HostSpace>("accepted", n, p.count),
               Kokkos::View<double***, Kokkos::HostSpace>("jtj", n, p.count, p.count),
               Kokkos::View<double**, Kokkos::HostSpace>("jtr", n, p.count),
               Kokkos::View<double*, Kokkos::HostSpace>("cost", n),
               Kokkos::View<double*, Kokkos::HostSpace>("damping", n),
               Kokkos::View<int*, Kokkos::HostSpace>("steps", n),
               Kokkos::View<int*, Kokkos::HostSpace>("done", n)};
  for (std::int64_t v = 0; v < n; ++v) {
    s.theta(v, 0) = 1.0f;
    for (int j = 1; j < p.count; ++j) {
      s.theta(v, j) =
          float(p.log_scale[j] ? std::sqrt(p.low[j] * p.high[j]) : 0.5 * (p.low[j] + p.high[j]));
    }
    s.cost(v) = INFINITY;
    s.damping(v) = 1e-3;
  }
  return s;
}

// Solves the damped normal equations (JtJ + mu diag JtJ) dx = Jtr of `count`
// parameters in place (an inline Cholesky); false when the system is not
// positive definite.
bool solve_damped(double (&a)[kMaxParameters][kMaxParameters], double (&x)[kMaxParameters],
                  int count) {
  for (int j = 0; j < count; ++j) {
    for (int k = 0; k < j; ++k) a[j][j] -= a[j][k] * a[j][k];
    if (!(a[j][j] > 0.0)) return false;
    a[j][j] = std::sqrt(a[j][j]);
    for (int i = j + 1; i < count; ++i) {
      for (int k = 0; k < j; ++k) a[i][j] -= a[i][k] * a[j][k];
      a[i][j] /= a[j][j];
    }
  }
  for (int i = 0; i < count; ++i) {
    for (int k = 0; k < i; ++k) x[i] -= a[i][k] * x[k];
    x[i] /= a[i][i];
  }
  for (int i = count - 1; i >= 0; --i) {
    for (int k = i + 1; k < count; ++k) x[i] -= a[k][i] * x[k];
    x[i] /= a[i][i];
  }
  return true;
}

}  // namespace

NllsResult fit_nlls(const simulate::Simulator& sim, tissue::Tissue t,
                    const std::vector<float>& measured, const NllsSpec& spec) {
  const kx::ScopedRegion region("larmor::nlls::fit");
  const Parameters parameters = parameters_of(spec);
  const int p_count = parameters.count;
  const std::int64_t n = t.voxels;
  const int d = sim.samples();
  if (std::int64_t(measured.size()) != n * d * 2) {
    throw std::invalid_argument("NLLS: the measured signals do not match the voxels and samples");
  }
  VoxelState s = starting_state(n, parameters);
  std::vector<float> signals(std::size_t(n) * d * 2);
  std::vector<float> tangents(std::size_t(n) * epg::tissue_direction::count * d * 2);
  for (int it = 0; it <= spec.iterations; ++it) {
    // Evaluate every voxel at its current point (converged ones repeat theirs).
    for (int j = 0; j < p_count; ++j) {
      auto& map = t[j == 0 ? tissue::Property::m0 : spec.estimate[j - 1].property].map;
      map.resize(std::size_t(n));
      for (std::int64_t v = 0; v < n; ++v) map[v] = s.theta(v, j);
    }
    sim.run_tissue_jvp_into<Kokkos::DefaultExecutionSpace>(t, signals.data(), tangents.data());
    const int first = it == 0;
    const int ndir = epg::tissue_direction::count;
    const float* sig = signals.data();
    const float* tan = tangents.data();
    const float* y = measured.data();
    int dir_of[kMaxParameters] = {0};
    double lo[kMaxParameters] = {0}, hi[kMaxParameters] = {0};
    for (int j = 0; j < p_count; ++j) {
      dir_of[j] = parameters.direction[j], lo[j] = parameters.low[j], hi[j] = parameters.high[j];
    }
    const double tol = spec.step_tolerance;
    // One kernel: residuals, normal equations, acceptance and the next step
    // of every voxel (an inline Cholesky of the P x P damped system).
    Kokkos::parallel_for(
        "larmor::nlls_step", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, n),
        [&](std::int64_t v) {
          if (s.done(v)) return;
          const float* sv = sig + std::size_t(v) * d * 2;
          const float* yv = y + std::size_t(v) * d * 2;
          if (first) {  // M0 by linear least squares on the magnitudes
            double num = 0.0, den = 0.0;
            for (int k = 0; k < d; ++k) {
              const double m = std::hypot(sv[2 * k], sv[2 * k + 1]);
              num += m * std::hypot(yv[2 * k], yv[2 * k + 1]);
              den += m * m;
            }
            const double m0 = den > 0.0 ? num / den : 1.0;
            s.accepted(v, 0) = s.theta(v, 0) = float(m0);
            for (int j = 1; j < p_count; ++j) s.accepted(v, j) = s.theta(v, j);
            s.cost(v) = INFINITY;  // evaluated, with this M0, in the next pass
            return;
          }
          double r[1], cost = 0.0;
          double jtj[kMaxParameters][kMaxParameters] = {{0}}, jtr[kMaxParameters] = {0};
          for (int k = 0; k < d; ++k) {
            const double sr = sv[2 * k], si = sv[2 * k + 1];
            const double mag = std::hypot(sr, si);
            r[0] = std::hypot(yv[2 * k], yv[2 * k + 1]) - mag;
            cost += r[0] * r[0];
            double jrow[kMaxParameters];
            for (int j = 0; j < p_count; ++j) {
              const float* tv = tan + ((std::size_t(v) * ndir + dir_of[j]) * d + k) * 2;
              jrow[j] = mag > 0.0 ? (sr * tv[0] + si * tv[1]) / mag : 0.0;
            }
            for (int a = 0; a < p_count; ++a) {
              jtr[a] += jrow[a] * r[0];
              for (int b = 0; b < p_count; ++b) jtj[a][b] += jrow[a] * jrow[b];
            }
          }
          if (cost <= s.cost(v)) {  // accept: keep the point and its system
            for (int j = 0; j < p_count; ++j) s.accepted(v, j) = s.theta(v, j);
            for (int a = 0; a < p_count; ++a) {
              s.jtr(v, a) = jtr[a];
              for (int b = 0; b < p_count; ++b) s.jtj(v, a, b) = jtj[a][b];
            }
            if (std::isfinite(s.cost(v))) s.steps(v) += 1;
            s.cost(v) = cost;
            s.damping(v) = std::max(s.damping(v) / 3.0, 1e-9);
          } else {
            s.damping(v) *= 4.0;
          }
          // The next proposal from the accepted point: (JtJ + mu diag JtJ) dx = Jtr.
          double a[kMaxParameters][kMaxParameters], x[kMaxParameters];
          for (int i = 0; i < p_count; ++i) {
            for (int j = 0; j < p_count; ++j) a[i][j] = s.jtj(v, i, j);
            a[i][i] += s.damping(v) * (s.jtj(v, i, i) > 0.0 ? s.jtj(v, i, i) : 1e-30);
            x[i] = s.jtr(v, i);
          }
          if (!solve_damped(a, x, p_count)) {
            s.done(v) = 1;
            return;
          }
          bool small = true;
          for (int j = 0; j < p_count; ++j) {
            const double next = std::min(std::max(double(s.accepted(v, j)) + x[j], lo[j]), hi[j]);
            small = small && std::fabs(next - s.accepted(v, j)) <=
                                 tol * std::max(std::fabs(double(s.accepted(v, j))), 1e-12);
            s.theta(v, j) = float(next);
          }
          if (small && s.steps(v) > 0) s.done(v) = 1;
        });
  }
  NllsResult out;
  out.parameters = p_count;
  out.values.resize(std::size_t(n) * p_count);
  out.cost.resize(std::size_t(n));
  out.iterations.resize(std::size_t(n));
  for (std::int64_t v = 0; v < n; ++v) {
    for (int j = 0; j < p_count; ++j) out.values[std::size_t(v) * p_count + j] = s.accepted(v, j);
    out.cost[v] = float(s.cost(v));
    out.iterations[v] = s.steps(v);
  }
  return out;
}

}  // namespace larmor::estimators::nlls
