// Helpers of the SteadyState tests (tstSteadyState.hpp): references, runs on the backend
// TEST_EXECSPACE names, and the checks the tests share.
#pragma once

#include <gtest/gtest.h>
#include <cmath>

namespace larmor::test {

namespace steady {

// `orders` <= 0: the description's default rule.
inline simulate::SteadyStateReport run(const sequence::Description& d, const tissue::Tissue& t,
                                       const simulate::SteadyStateOptions& o,
                                       std::vector<float>& signals, int orders = 0) {
  simulate::Options so;
  so.max_order = orders - 1;  // `orders` counts states (0..orders-1)
  simulate::Simulator sim(d, so);
  signals.assign(std::size_t(t.voxels) * sim.samples() * 2, NAN);
  return sim.run_steady_state_into<TEST_EXECSPACE>(t, signals.data(), o);
}

inline simulate::SteadyStateReport run(const sequence::Description& d, const tissue::Tissue& t,
                                       double tolerance, std::vector<float>& signals,
                                       int orders = 0) {
  simulate::SteadyStateOptions o;
  o.tolerance = tolerance;
  return run(d, t, o, signals, orders);
}

// `period` played `times` times over: the straight run whose limit the
// steady state is.
inline sequence::Description repeated(const sequence::Description& period, int times) {
  sequence::Description train = period;
  train.events.clear();
  for (int p = 0; p < times; ++p) {
    train.events.insert(train.events.end(), period.events.begin(), period.events.end());
  }
  return train;
}

// One repetition: a pulse, the echo at TE with `readout_action` (spoiling or
// none), then the rest of TR.
inline sequence::Description period(double flip_deg, double tr, double te,
                                    std::uint32_t readout_action) {
  sequence::Description d;
  d.name = "one-tr";
  sequence::Event pulse, adc;
  pulse.kind = abi::EventKind::pulse;
  pulse.flip_rad = flip_deg * M_PI / 180.0;
  pulse.duration_s = te;
  adc.kind = abi::EventKind::adc;
  adc.action = readout_action;
  adc.duration_s = tr - te;
  d.events = {pulse, adc};
  return d;
}

inline sequence::Description spoiled_period(double flip_deg, double tr, double te) {
  return period(flip_deg, tr, te, abi::action::spoil_after);
}

}  // namespace steady

}  // namespace larmor::test
