// Helpers of the Derivatives tests (tstDerivatives.hpp): references, runs on the backend
// TEST_EXECSPACE names, and the checks the tests share.
#pragma once

#include <gtest/gtest.h>
#include <array>
#include <cmath>
#include <functional>
#include <random>

#include "epg/adjoint.hpp"
#include "epg/forward.hpp"
#include "epg/forward_support.hpp"
#include "sequence/waveform_pulses.hpp"

namespace larmor::test {

// Forward mode along every tissue direction against central differences of
// the double-precision reference (written independently of the kernel). The
// float tangents carry the same kind of round-off as the values, so they are
// held to the value tolerance relative to each direction's largest derivative.
inline void expect_tissue_jvp_matches_differences(const sequence::Description& d,
                                                  const tissue::Tissue& t, int orders) {
  simulate::Options o;
  o.max_order = orders - 1;  // `orders` counts states (0..orders-1)
  simulate::Simulator sim(d, o);
  const int samples = sim.samples();
  constexpr int directions = epg::tissue_tangent_count;
  std::vector<float> signals(std::size_t(t.voxels) * samples * 2, NAN);
  std::vector<float> tangents(std::size_t(t.voxels) * directions * samples * 2, NAN);
  sim.run_tissue_jvp_into<TEST_EXECSPACE>(t, signals.data(), tangents.data());
  const double tol = float_tolerance(std::int64_t(d.events.size()));
  // The values are the forward run's to float round-off (the dual run always
  // takes the precessing branch, so not bit for bit).
  const auto forward = run_on_backend(d, t, orders);
  for (std::size_t i = 0; i < forward.size(); ++i) ASSERT_NEAR(signals[i], forward[i], tol) << i;
  for (std::int64_t v = 0; v < t.voxels; ++v) {
    const reference::Tissue base = voxel_of(t, v);
    for (int k = 0; k < directions; ++k) {
      reference::Tissue lo = base, hi = base;
      double* plo[] = {&lo.m0, &lo.t1_s, &lo.t2_s, &lo.b1, &lo.df_hz};
      double* phi[] = {&hi.m0, &hi.t1_s, &hi.t2_s, &hi.b1, &hi.df_hz};
      const double x = *plo[k];
      const double h = k == 4 ? 1e-3 : 1e-5 * std::abs(x);
      *plo[k] = x - h;
      *phi[k] = x + h;
      const auto s_lo = reference::simulate(d, lo, sim.states());
      const auto s_hi = reference::simulate(d, hi, sim.states());
      std::vector<Complex> fd(static_cast<std::size_t>(samples));
      double scale = 0.0;
      for (int n = 0; n < samples; ++n) {
        fd[std::size_t(n)] = (s_hi[std::size_t(n)] - s_lo[std::size_t(n)]) / (2 * h);
        scale = std::max(scale, std::abs(fd[std::size_t(n)]));
      }
      for (int n = 0; n < samples; ++n) {
        const std::size_t i = ((std::size_t(v) * directions + std::size_t(k)) * samples + n) * 2;
        const Complex got(tangents[i], tangents[i + 1]);
        ASSERT_LE(std::abs(got - fd[std::size_t(n)]), tol * std::max(scale, 1e-3))
            << d.name << ": voxel " << v << ", direction " << k << ", sample " << n << ": got "
            << got << ", central difference " << fd[std::size_t(n)];
      }
    }
  }
}

// One voxel's samples from a double-precision reference, given its free-pool
// values (which the derivative tests move) and its index (for the rest of its
// model, pools for instance).
using VoxelReference = std::function<std::vector<Complex>(
    const sequence::Description&, const reference::Tissue&, std::int64_t voxel, int orders)>;

inline VoxelReference single_pool_reference() {
  return [](const sequence::Description& d, const reference::Tissue& x, std::int64_t, int orders) {
    return reference::simulate(d, x, orders);
  };
}

// Moves one event's flip, phase or duration (columns of sequence_gradient) by
// `step`. A pulse's power integral (its bound-pool saturation) goes with the
// square of its flip, as the reverse sweeps differentiate it.
inline void move_event_value(sequence::Description& d, std::size_t event, int column, double step) {
  auto& e = d.events[event];
  if (column == epg::sequence_gradient::flip) {
    if (e.saturation > 0.0f && e.flip_rad != 0.0) {
      const double ratio = (e.flip_rad + step) / e.flip_rad;
      e.saturation = float(double(e.saturation) * ratio * ratio);
    }
    e.flip_rad += step;
  } else if (column == epg::sequence_gradient::phase) {
    e.phase_rad += step;
  } else {
    e.duration_s += step;
  }
}

// The step of a central difference along an event's value: small, except for
// the flip of a pulse whose float power integral moves with it (a step of
// 1e-3 rad keeps its rounding below 1e-4 of the difference).
inline double event_step(const sequence::Event& e, int column, double flip_phase_step) {
  if (column == epg::sequence_gradient::duration) return 1e-6;
  if (column == epg::sequence_gradient::flip && e.saturation > 0.0f) return 1e-3;
  return flip_phase_step;
}

// Reverse mode. The loss is L = sum over voxels and samples of Re(conj(w) y).
// Without `sequence` the run skips the sequence derivatives (`sequence` stays empty).
struct VjpResult {
  std::vector<float> tissue, sequence;
};

inline VjpResult run_vjp(const sequence::Description& d, const tissue::Tissue& t, int orders,
                         const std::vector<float>& w, int interval = 0, bool sequence = true) {
  simulate::Options o;
  o.max_order = orders - 1;  // `orders` counts states (0..orders-1)
  simulate::Simulator sim(d, o);
  VjpResult r;
  r.tissue.assign(std::size_t(t.voxels) * epg::tissue_tangent_count, NAN);
  if (sequence) r.sequence.assign(std::size_t(sim.events()) * epg::sequence_gradient::count, NAN);
  sim.run_tissue_vjp_into<TEST_EXECSPACE>(t, w.data(), r.tissue.data(),
                                          sequence ? r.sequence.data() : nullptr, interval);
  return r;
}

inline std::vector<float> random_cotangents(std::size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> w(count);
  for (auto& x : w) x = u(rng);
  return w;
}

inline sequence::Description vjp_test_train() {
  sequence::MrfParams mrf;
  std::mt19937 rng(71);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int n = 0; n < 30; ++n) {
    mrf.schedule.push_back(
        {0.1 + 0.9 * u(rng), n % 3 ? 0.0 : 90.0 * u(rng), 2e-3 * u(rng), 1e-3 * u(rng)});
  }
  return sequence::build_mrf(mrf);
}

// Bounds on how large a sample's derivative along each tissue direction can
// be, from the physics (transverse magnetisation is at most M0): 1 per unit
// M0; t / T^2 M0 for T1 and T2 (d/dT exp(-t/T) <= t/T^2) and 2 pi t M0 for df
// at the sample time t; M0 times the flips before the sample for B1. Float
// round-off scales with these, not with the net derivative, which can cancel
// to nothing (a CPMG echo does not depend on df at all).
inline std::vector<std::array<double, 5>> derivative_bounds(const sequence::Description& d,
                                                            const reference::Tissue& x) {
  std::vector<std::array<double, 5>> out;
  double t = 0.0, flips = 0.0;
  for (std::size_t i = 0; i < d.events.size(); ++i) {
    const auto& e = d.events[i];
    t += d.instant_length_s(i);
    if (abi::is_rf(e.kind)) flips += std::abs(e.flip_rad);
    if (e.kind == abi::EventKind::adc) {
      const double inv_t1 = std::isinf(x.t1_s) ? 0.0 : 1.0 / x.t1_s;
      const double inv_t2 = std::isinf(x.t2_s) ? 0.0 : 1.0 / x.t2_s;
      out.push_back({1.0, x.m0 * t * inv_t1 * inv_t1, x.m0 * t * inv_t2 * inv_t2, x.m0 * flips,
                     x.m0 * 2.0 * M_PI * t});
    }
    t += e.duration_s;
  }
  return out;
}

// <w, J u> = <J^T w, u> along every tissue direction, J u from forward mode
// (the reverse run with or without the sequence derivatives).
inline void expect_dot_product_identity(const sequence::Description& d, const tissue::Tissue& t,
                                        bool sequence = true) {
  {
    simulate::Simulator sim(d, simulate::Options{});
    const int samples = sim.samples();
    const auto w = random_cotangents(std::size_t(t.voxels) * samples * 2, 82);
    std::vector<float> signals(std::size_t(t.voxels) * samples * 2);
    std::vector<float> tangents(std::size_t(t.voxels) * epg::tissue_tangent_count * samples * 2);
    sim.run_tissue_jvp_into<TEST_EXECSPACE>(t, signals.data(), tangents.data());
    const auto vjp = run_vjp(d, t, 0, w, 0, sequence);
    // The reverse sweeps step a waveform pulse's samples one by one, in float.
    const double tol = float_tolerance(std::int64_t(
        sequence::has_waveform_pulses(d) ? sequence::expand_waveform_pulses(d).events.size()
                                         : d.events.size()));
    for (int v = 0; v < t.voxels; ++v) {
      const auto bounds = derivative_bounds(d, voxel_of(t, v));
      ASSERT_EQ(int(bounds.size()), samples);
      for (int k = 0; k < epg::tissue_tangent_count; ++k) {
        double want = 0.0, scale = 0.0;
        for (int n = 0; n < samples; ++n) {
          const std::size_t wi = (std::size_t(v) * samples + n) * 2;
          const std::size_t ti =
              ((std::size_t(v) * epg::tissue_tangent_count + k) * samples + n) * 2;
          want += double(w[wi]) * tangents[ti] + double(w[wi + 1]) * tangents[ti + 1];
          scale += (std::abs(w[wi]) + std::abs(w[wi + 1])) * bounds[std::size_t(n)][std::size_t(k)];
        }
        const double got = vjp.tissue[std::size_t(v) * epg::tissue_tangent_count + k];
        ASSERT_NEAR(got, want, tol * scale) << "voxel " << v << ", direction " << k;
      }
    }
  }
}

// Every event's flip, phase and duration gradient (summed over voxels) against
// central differences of the double-precision reference.
// Returns how many were checked.
// `tolerance`: relative to the largest gradient (0: float_tolerance, for
// references the kernels should match to round-off).
inline int expect_sequence_gradients_match_differences(
    const sequence::Description& d, const tissue::Tissue& t, int orders,
    const VoxelReference& simulate_voxel = single_pool_reference(), double tolerance = 0.0) {
  const int samples = d.sample_count();
  const auto w = random_cotangents(std::size_t(t.voxels) * samples * 2, 92);
  const auto vjp = run_vjp(d, t, orders, w);
  EXPECT_EQ(vjp.sequence.size(), d.events.size() * epg::sequence_gradient::count);
  const int resolved = sequence::resolve_state_count(d, orders - 1);
  const auto loss = [&](const sequence::Description& dd) {
    double l = 0.0;
    for (int v = 0; v < t.voxels; ++v) {
      const auto y = simulate_voxel(dd, voxel_of(t, v), v, resolved);
      for (int n = 0; n < samples; ++n) {
        const std::size_t wi = (std::size_t(v) * samples + n) * 2;
        l += w[wi] * y[std::size_t(n)].real() + w[wi + 1] * y[std::size_t(n)].imag();
      }
    }
    return l;
  };
  const double tol = tolerance > 0.0 ? tolerance : float_tolerance(std::int64_t(d.events.size()));
  double scale = 0.0;
  for (float g : vjp.sequence) scale = std::max(scale, double(std::abs(g)));
  int checked = 0;
  for (std::size_t i = 0; i < d.events.size(); ++i) {
    const auto& e = d.events[i];
    for (int c = 0; c < epg::sequence_gradient::count; ++c) {
      // Flips of pulses, phases of pulses and samples, durations of intervals.
      const bool pulse = abi::is_rf(e.kind), adc = e.kind == abi::EventKind::adc;
      if ((c == 0 && !pulse) || (c == 1 && !pulse && !adc) || (c == 2 && e.duration_s <= 0)) {
        EXPECT_EQ(vjp.sequence[i * 3 + c], 0.0f) << "event " << i << ", value " << c;
        continue;
      }
      auto lo = d, hi = d;
      const double h = event_step(e, c, 1e-5);
      move_event_value(lo, i, c, -h);
      move_event_value(hi, i, c, h);
      const double fd = (loss(hi) - loss(lo)) / (2 * h);
      EXPECT_NEAR(vjp.sequence[i * 3 + c], fd, tol * std::max(scale, 1e-3))
          << "event " << i << ", value " << c;
      ++checked;
    }
  }
  return checked;
}

// The checkpoint interval changes memory, not results: the replays recompute
// the same states, so the tissue gradients are bit for bit the same.
inline void expect_vjp_independent_of_the_interval(const sequence::Description& d,
                                                   const tissue::Tissue& t) {
  const auto w = random_cotangents(std::size_t(t.voxels) * d.sample_count() * 2, 96);
  const auto automatic = run_vjp(d, t, 0, w);
  for (int interval : {1, 3, 1000000}) {
    const auto other = run_vjp(d, t, 0, w, interval);
    EXPECT_EQ(other.tissue, automatic.tissue) << "interval " << interval;
    for (std::size_t i = 0; i < other.sequence.size(); ++i) {
      ASSERT_NEAR(other.sequence[i], automatic.sequence[i],
                  1e-6 * (1.0 + std::abs(automatic.sequence[i])))
          << "interval " << interval << ", " << i;
    }
  }
}

// Forward mode against the derivatives of closed forms, written out by hand.
inline std::vector<float> jvp_tangents(const sequence::Description& d, const tissue::Tissue& t) {
  simulate::Simulator sim(d, simulate::Options{});
  std::vector<float> signals(std::size_t(t.voxels) * sim.samples() * 2);
  std::vector<float> tangents(std::size_t(t.voxels) * epg::tissue_tangent_count * sim.samples() *
                              2);
  sim.run_tissue_jvp_into<TEST_EXECSPACE>(t, signals.data(), tangents.data());
  return tangents;
}

inline Complex tangent_at(const std::vector<float>& tangents, int samples, int direction, int n) {
  const std::size_t i = (std::size_t(direction) * samples + n) * 2;  // voxel 0
  return {tangents[i], tangents[i + 1]};
}

}  // namespace larmor::test
