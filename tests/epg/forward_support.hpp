// Helpers of the Forward tests (tstForward.hpp): references, runs on the backend
// TEST_EXECSPACE names, and the checks the tests share.
#pragma once

#include <gtest/gtest.h>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <random>
#include <string>

#include "common/kokkos_compat.hpp"
#include "epg/forward.hpp"
#include "reference/epg_reference.hpp"
#include "sequence/builders/builders.hpp"
#include "sequence/operators.hpp"
#include "simulate/closed_form.hpp"
#include "simulate/simulator.hpp"

namespace larmor::test {

using Complex = std::complex<double>;

inline std::vector<float> run_on_backend(const sequence::Description& d, const tissue::Tissue& t,
                                         int orders, std::int64_t chunk = 0) {
  simulate::Options o;
  o.max_order = orders - 1;  // `orders` counts states (0..orders-1)
  o.chunk_voxels = chunk;
  simulate::Simulator sim(d, o);
  std::vector<float> out(std::size_t(t.voxels) * std::size_t(sim.samples()) * 2, NAN);
  sim.run_into<TEST_EXECSPACE>(t, out.data());
  return out;
}

inline Complex sample(const std::vector<float>& s, int samples, std::int64_t voxel, int n) {
  const std::size_t i = (std::size_t(voxel) * std::size_t(samples) + std::size_t(n)) * 2;
  return {s[i], s[i + 1]};
}

// Sets an environment variable for one scope.
struct ScopedSetting {
  ScopedSetting(const char* name, const char* value) : name(name) { ::setenv(name, value, 1); }
  ~ScopedSetting() { ::unsetenv(name); }
  const char* name;
};

// Runs every order of the truncation asked for, not only those that reach a
// sample: for tests of the kernels' order layouts and buckets, whose short
// trains read fewer orders than the counts they name.
struct EveryOrder : ScopedSetting {
  EveryOrder() : ScopedSetting("LARMOR_TRIM_ORDERS", "off") {}
};

inline double float_tolerance(std::int64_t events) { return 8 * 6e-8 * double(events) + 1e-6; }

// A tissue of several voxels drawn at random (fixed seed), with maps for
// every property so each lane gets different physics.
inline tissue::Tissue random_tissue(int voxels, unsigned seed, bool off_resonance = true) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  tissue::Tissue t;
  t.voxels = voxels;
  for (int v = 0; v < voxels; ++v) {
    const double t2 = 0.01 * std::pow(200.0, u(rng));
    t.t2_s.map.push_back(float(t2));
    t.t1_s.map.push_back(float(t2 + 0.1 * std::pow(40.0, u(rng))));
    t.b1.map.push_back(float(0.5 + 0.9 * u(rng)));
    t.m0.map.push_back(float(0.2 + 1.5 * u(rng)));
    t.df_hz.map.push_back(off_resonance ? float(-60.0 + 120.0 * u(rng)) : 0.0f);
  }
  return t;
}

// A stream of `events` random events (fixed seed): pulses (a `pulse_share`)
// of random flips, half of them between crushers, a `b1_fixed_share` of them
// ignoring B1; samples and waits, half followed by a shift and a tenth by a
// spoiler; random phases and intervals, a fifth of them zero.
inline sequence::Description random_stream(unsigned seed, int events, double pulse_share,
                                           double b1_fixed_share = 0.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  sequence::Description d;
  d.name = "random";
  for (int i = 0; i < events; ++i) {
    sequence::Event e;
    const double k = u(rng);
    e.kind = k < pulse_share ? abi::EventKind::pulse
                             : (k < 0.8 ? abi::EventKind::adc : abi::EventKind::wait);
    e.duration_s = u(rng) < 0.2 ? 0.0 : 0.01 * u(rng);
    e.phase_rad = 40.0 * (u(rng) - 0.5);
    if (e.kind == abi::EventKind::pulse) {
      e.flip_rad = 3.5 * u(rng);
      if (u(rng) < 0.5) e.action |= abi::action::crush_before | abi::action::crush_after;
      if (b1_fixed_share > 0.0 && u(rng) < b1_fixed_share) e.action |= abi::action::b1_fixed;
    } else {
      if (u(rng) < 0.5) e.action |= abi::action::shift_after;
      if (u(rng) < 0.1) e.action |= abi::action::spoil_after;
    }
    d.events.push_back(e);
  }
  return d;
}

inline reference::Tissue voxel_of(const tissue::Tissue& t, std::int64_t v) {
  reference::Tissue r;
  r.m0 = t.m0.at(v);
  r.t1_s = t.t1_s.at(v);
  r.t2_s = t.t2_s.at(v);
  r.b1 = t.b1.at(v);
  r.df_hz = t.df_hz.at(v);
  r.adc_m2_s = t.adc_m2_s.at(v);
  r.velocity_m_s = t.velocity_m_s.at(v);
  for (int c = 0; c < t.transmit_channels; ++c) {
    r.transmit.push_back(t.transmit[std::size_t(v * t.transmit_channels + c)]);
  }
  return r;
}

// Every sample of every voxel against a double-precision reference:
// reference(voxel, orders) gives that voxel's samples.
template <class Reference>
void expect_matches(const sequence::Description& d, const tissue::Tissue& t, int orders,
                    const Reference& reference) {
  const auto got = run_on_backend(d, t, orders);
  const int samples = d.sample_count();
  const int resolved = sequence::resolve_state_count(d, orders - 1);
  const double tol = float_tolerance(std::int64_t(d.events.size()));
  for (std::int64_t v = 0; v < t.voxels; ++v) {
    const auto want = reference(v, resolved);
    ASSERT_EQ(int(want.size()), samples);
    const double scale = std::max(1.0, double(t.m0.at(v)));
    for (int n = 0; n < samples; ++n) {
      const Complex g = sample(got, samples, v, n);
      ASSERT_LE(std::abs(g - want[std::size_t(n)]), tol * scale)
          << d.name << ": voxel " << v << ", sample " << n << ": got " << g << ", want "
          << want[std::size_t(n)];
    }
  }
}

// ... the single-pool reference, which sees the tissue as the kernel does (in float).
inline void expect_matches_reference(const sequence::Description& d, const tissue::Tissue& t,
                                     int orders) {
  expect_matches(d, t, orders, [&](std::int64_t v, int resolved) {
    return reference::simulate(d, voxel_of(t, v), resolved);
  });
}

// Every compiled device layout, with voxel counts that leave the last team's
// groups and lanes part empty, and order counts that pad the groups' threads.
// Runs `check` under LARMOR_EPG_LAYOUT set to each compiled device layout
// (epg::layouts::DeviceForward). `on_axis`: also the layouts compiled for the
// on-axis states only.
template <class Check>
void for_each_device_layout(const Check& check, bool on_axis = false) {
  for (const epg::StateLayout& layout : epg::layouts::DeviceForward::entries) {
    if (layout.axis_only && !on_axis) continue;
    const std::string name =
        std::to_string(layout.orders_per_thread) + "x" + std::to_string(layout.lanes);
    SCOPED_TRACE("LARMOR_EPG_LAYOUT=" + name);
    const ScopedSetting setting("LARMOR_EPG_LAYOUT", name.c_str());
    check();
  }
}

// A module written outside the library: a T2 preparation (tip down, a Hahn
// echo, tip back up, spoil what stayed transverse). It emits the operators'
// vocabulary and reaches the kernel unchanged. With ideal pulses the stored
// longitudinal magnetisation is exp(-TE_prep / T2) whatever T1 and the
// off-resonance (the echo refocuses it), so the readout that follows sees
// exactly that.
inline sequence::Description t2_preparation(double te_s) {
  using namespace sequence;
  Description d;
  d.name = "t2prep";
  d << Excitation{90.0, 0.0, 0.5 * te_s} << Refocusing{180.0, 90.0, 0.5 * te_s, false}
    << Excitation{90.0, 180.0, 0.0, abi::action::spoil_after};
  return d;
}

// A 90 degree readout after `prep`, on three voxels of different T1, T2 and
// off-resonance, shows exactly exp(-TE_prep / T2).
inline void expect_stored_t2_decay(sequence::Description d, double te, const std::string& what) {
  d << sequence::Excitation{90.0, 0.0, 0.0} << sequence::Readout{0.0, 0.0, true};
  tissue::Tissue t;
  t.voxels = 3;
  t.t1_s.map = {0.3f, 1.0f, 2.0f};
  t.t2_s.map = {0.03f, 0.08f, 0.2f};
  t.df_hz.map = {0.0f, 25.0f, -40.0f};
  const auto got = run_on_backend(d, t, 0);
  for (int v = 0; v < 3; ++v) {
    EXPECT_NEAR(std::abs(sample(got, 1, v, 0)), std::exp(-te / double(t.t2_s.map[std::size_t(v)])),
                2e-6)
        << what << ", TE_prep " << te << ", voxel " << v;
  }
}

}  // namespace larmor::test
