#include "design/crlb.hpp"

#include <cmath>
#include <complex>
#include <limits>
#include <stdexcept>

#include <Kokkos_Core.hpp>

#include "epg/adjoint.hpp"
#include "epg/forward.hpp"
#include "simulate/simulator.hpp"

namespace larmor::design {

namespace {

constexpr int directions = epg::tissue_tangent_count;

// In-place inverse of a small symmetric positive definite matrix (row-major,
// n x n) by Cholesky factorisation of its correlation form (unit diagonal, so
// the test does not depend on the parameters' units); false when it is
// singular to working precision (parameters the sequence cannot tell apart).
bool invert_spd(std::vector<double>& a, int n) {
  std::vector<double> scale(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const double d = a[std::size_t(i * n + i)];
    if (!(d > 0.0) || !std::isfinite(d)) return false;
    scale[std::size_t(i)] = 1.0 / std::sqrt(d);
  }
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j)
      a[std::size_t(i * n + j)] *= scale[std::size_t(i)] * scale[std::size_t(j)];
  }
  std::vector<double> l(std::size_t(n * n), 0.0);
  for (int j = 0; j < n; ++j) {
    double d = a[std::size_t(j * n + j)];
    for (int k = 0; k < j; ++k) d -= l[std::size_t(j * n + k)] * l[std::size_t(j * n + k)];
    if (!(d > 1e-10) || !std::isfinite(d)) return false;
    l[std::size_t(j * n + j)] = std::sqrt(d);
    for (int i = j + 1; i < n; ++i) {
      double s = a[std::size_t(i * n + j)];
      for (int k = 0; k < j; ++k) s -= l[std::size_t(i * n + k)] * l[std::size_t(j * n + k)];
      l[std::size_t(i * n + j)] = s / l[std::size_t(j * n + j)];
    }
  }
  // Columns of L^-T L^-1 by two triangular solves against the identity.
  for (int c = 0; c < n; ++c) {
    std::vector<double> y(std::size_t(n), 0.0);
    for (int i = 0; i < n; ++i) {
      double s = i == c ? 1.0 : 0.0;
      for (int k = 0; k < i; ++k) s -= l[std::size_t(i * n + k)] * y[std::size_t(k)];
      y[std::size_t(i)] = s / l[std::size_t(i * n + i)];
    }
    for (int i = n - 1; i >= 0; --i) {
      double s = y[std::size_t(i)];
      for (int k = i + 1; k < n; ++k) s -= l[std::size_t(k * n + i)] * a[std::size_t(k * n + c)];
      a[std::size_t(i * n + c)] = s / l[std::size_t(i * n + i)];
    }
  }
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j)
      a[std::size_t(i * n + j)] *= scale[std::size_t(i)] * scale[std::size_t(j)];
  }
  return true;
}

// A parameter whose relative change moves the signal by less than this
// fraction of its norm is invisible to the sequence: float round-off in the
// Jacobian would otherwise turn an infinite bound into a large finite one.
constexpr double min_relative_sensitivity = 1e-5;

}  // namespace

const std::vector<std::string>& tissue_direction_names() {
  static const std::vector<std::string> names = {"m0", "t1", "t2", "b1", "df"};
  return names;
}

void validate(const CrlbSpec& spec, const tissue::Tissue& prior) {
  if (spec.estimated.empty()) throw std::invalid_argument("design: no parameter is estimated");
  if (spec.weights.size() != spec.estimated.size()) {
    throw std::invalid_argument("design: one weight per estimated parameter is needed");
  }
  if (!(spec.noise_sigma > 0.0) || !std::isfinite(spec.noise_sigma)) {
    throw std::invalid_argument("design: noise_sigma must be positive and finite");
  }
  double total = 0.0;
  for (std::size_t p = 0; p < spec.estimated.size(); ++p) {
    const int d = spec.estimated[p];
    if (d < 0 || d >= directions) throw std::invalid_argument("design: unknown parameter index");
    for (std::size_t q = 0; q < p; ++q) {
      if (spec.estimated[q] == d) {
        throw std::invalid_argument("design: parameter '" +
                                    tissue_direction_names()[std::size_t(d)] +
                                    "' is estimated twice");
      }
    }
    if (!(spec.weights[p] >= 0.0) || !std::isfinite(spec.weights[p])) {
      throw std::invalid_argument("design: the weight of '" +
                                  tissue_direction_names()[std::size_t(d)] +
                                  "' must be finite and >= 0");
    }
    total += spec.weights[p];
    const auto& values = prior[tissue::all_properties[std::size_t(d)]];
    for (std::int64_t v = 0; v < prior.voxels; ++v) {
      const float x = values.at(v);
      if (!(x != 0.0f) || !std::isfinite(x)) {
        throw std::invalid_argument(
            "design: parameter '" + tissue_direction_names()[std::size_t(d)] +
            "' is estimated but prior point " + std::to_string(v) + " has it at " +
            std::to_string(x) + ": a relative bound needs a finite, non-zero value");
      }
    }
  }
  if (!(total > 0.0)) throw std::invalid_argument("design: every weight is zero");
  prior.validate("design prior");
  if (prior.voxels <= 0 && spec.total_points <= 0) {
    throw std::invalid_argument("design: the prior has no points");
  }
}

CrlbEvaluation evaluate_crlb(const sequence::Description& sequence, const tissue::Tissue& prior,
                             const CrlbSpec& spec, bool with_gradient) {
  using Exec = Kokkos::DefaultExecutionSpace;
  validate(spec, prior);
  simulate::Options options;
  options.max_order = spec.max_order;
  const simulate::Simulator sim(sequence, options);
  const int samples = sim.samples();
  const std::int64_t voxels = prior.voxels;
  const int params = int(spec.estimated.size());
  const double inv_var = 1.0 / (spec.noise_sigma * spec.noise_sigma);
  const double point_weight = 1.0 / double(spec.total_points > 0 ? spec.total_points : voxels);

  CrlbEvaluation out;
  out.scan_time_s = sequence.total_duration_s();
  if (voxels == 0) {  // this rank's share of the prior is empty
    if (with_gradient) out.event_gradients.assign(sequence.events.size() * 3, 0.0);
    return out;
  }
  std::vector<float> signals(std::size_t(voxels) * samples * 2);
  std::vector<float> tangents(std::size_t(voxels) * directions * samples * 2);
  sim.run_tissue_jvp_into<Exec>(prior, signals.data(), tangents.data());

  // Cotangents per estimated parameter: [p][voxel][sample][re, im].
  std::vector<float> cotangents;
  if (with_gradient) cotangents.assign(std::size_t(params) * voxels * samples * 2, 0.0f);
  out.relative_sd.resize(std::size_t(voxels) * params);
  double phi = 0.0;
  std::vector<std::complex<double>> jac(std::size_t(samples) * params);
  std::vector<double> f(std::size_t(params * params)), a(f.size());
  for (std::int64_t v = 0; v < voxels; ++v) {
    for (int p = 0; p < params; ++p) {
      const std::size_t base =
          (std::size_t(v) * directions + std::size_t(spec.estimated[std::size_t(p)])) * samples * 2;
      for (int t = 0; t < samples; ++t) {
        jac[std::size_t(t * params + p)] = {tangents[base + 2 * t], tangents[base + 2 * t + 1]};
      }
    }
    for (int p = 0; p < params; ++p) {
      for (int q = 0; q < params; ++q) {
        double s = 0.0;
        for (int t = 0; t < samples; ++t) {
          s += std::real(std::conj(jac[std::size_t(t * params + p)]) *
                         jac[std::size_t(t * params + q)]);
        }
        f[std::size_t(p * params + q)] = s * inv_var;
      }
    }
    double energy = 0.0;
    for (int t = 0; t < samples; ++t) {
      const std::size_t i = (std::size_t(v) * samples + t) * 2;
      energy += double(signals[i]) * signals[i] + double(signals[i + 1]) * signals[i + 1];
    }
    bool visible = true;
    for (int p = 0; p < params; ++p) {
      const double theta =
          prior[tissue::all_properties[std::size_t(spec.estimated[std::size_t(p)])]].at(v);
      const double moved =
          theta * theta * f[std::size_t(p * params + p)] / inv_var;  // |theta dy/dtheta|^2
      visible = visible && moved > min_relative_sensitivity * min_relative_sensitivity * energy;
    }
    if (!visible || !invert_spd(f, params)) {
      out.finite = false;
      out.objective = std::numeric_limits<double>::infinity();
      return out;
    }
    std::vector<double> d(static_cast<std::size_t>(params));
    for (int p = 0; p < params; ++p) {
      const double theta =
          prior[tissue::all_properties[std::size_t(spec.estimated[std::size_t(p)])]].at(v);
      const double bound = f[std::size_t(p * params + p)] / (theta * theta);
      out.relative_sd[std::size_t(v) * params + p] = std::sqrt(bound);
      phi += point_weight * spec.weights[std::size_t(p)] * bound;
      d[std::size_t(p)] = point_weight * spec.weights[std::size_t(p)] / (theta * theta);
    }
    if (!with_gradient) continue;
    // A = F^-1 D F^-1 and w_:p = -(2 / sigma^2) (J A)_:p.
    for (int p = 0; p < params; ++p) {
      for (int q = 0; q < params; ++q) {
        double s = 0.0;
        for (int k = 0; k < params; ++k) {
          s += f[std::size_t(p * params + k)] * d[std::size_t(k)] * f[std::size_t(k * params + q)];
        }
        a[std::size_t(p * params + q)] = s;
      }
    }
    for (int p = 0; p < params; ++p) {
      for (int t = 0; t < samples; ++t) {
        std::complex<double> ja = 0.0;
        for (int q = 0; q < params; ++q) {
          ja += jac[std::size_t(t * params + q)] * a[std::size_t(q * params + p)];
        }
        const std::size_t i = ((std::size_t(p) * voxels + std::size_t(v)) * samples + t) * 2;
        cotangents[i] = float(-2.0 * inv_var * ja.real());
        cotangents[i + 1] = float(-2.0 * inv_var * ja.imag());
      }
    }
  }
  out.objective = spec.time_normalised ? phi * out.scan_time_s : phi;
  if (!with_gradient) return out;

  const std::int64_t events = sim.events();
  if (events != std::int64_t(sequence.events.size())) {
    throw std::logic_error("design: packed events do not map one to one onto the description's");
  }
  constexpr int columns = epg::sequence_gradient::count;
  out.event_gradients.assign(std::size_t(events) * columns, 0.0);
  std::vector<float> unit(std::size_t(voxels) * directions), tissue_g(unit.size()),
      tissue_h(unit.size());
  std::vector<float> seq_g(std::size_t(events) * columns), seq_h(seq_g.size());
  for (int p = 0; p < params; ++p) {
    std::fill(unit.begin(), unit.end(), 0.0f);
    for (std::int64_t v = 0; v < voxels; ++v) {
      unit[std::size_t(v) * directions + std::size_t(spec.estimated[std::size_t(p)])] = 1.0f;
    }
    sim.run_tissue_hvp_into<Exec>(prior, unit.data(),
                                  cotangents.data() + std::size_t(p) * voxels * samples * 2,
                                  tissue_g.data(), seq_g.data(), tissue_h.data(), seq_h.data());
    for (std::size_t i = 0; i < seq_h.size(); ++i) out.event_gradients[i] += seq_h[i];
  }
  if (spec.time_normalised) {
    for (std::int64_t e = 0; e < events; ++e) {
      for (int c = 0; c < columns; ++c) {
        double& g = out.event_gradients[std::size_t(e) * columns + c];
        g *= out.scan_time_s;
        if (c == epg::sequence_gradient::duration) g += phi;
      }
    }
  }
  return out;
}

}  // namespace larmor::design
