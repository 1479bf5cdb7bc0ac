// A sequence description: the list of events every front end (operators,
// builders, Pulseq, MRD) produces and the packer consumes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "epg/event_abi.hpp"

namespace larmor::sequence {

using abi::EventKind;
namespace action = abi::action;

struct Event {
  EventKind kind = EventKind::wait;
  double duration_s = 0.0;  // free evolution after the instant
  double flip_rad = 0.0;    // pulse only
  double phase_rad = 0.0;   // pulse: RF phase; adc: receiver phase
  std::uint32_t action = 0;
  std::int32_t shim_index = 0;
  float saturation = 0.0f;
  double rf_frequency_hz = 0.0;
};

struct Description {
  std::string name;  // builder or file it came from
  std::vector<Event> events;
  // Parameters that produced it, written as attributes next to the signals.
  std::map<std::string, double> parameters;

  int sample_count() const;      // number of adc events
  int declared_winding() const;  // total shift bits over the stream
  double total_duration_s() const;
  // Timestamp of event i: the running total of durations before it.
  std::vector<double> timestamps_s() const;
  void append(const Description& other);
};

// Turns every adc event but the last `n` into a wait of the same duration and
// actions: the physics is unchanged and only the last n samples are recorded
// (a steady-state image of a long train without its transient). n <= 0 or at
// least the sample count: unchanged.
void keep_last_samples(Description& d, int n);

// The order-count rule: one more than the declared winding, clamped to
// [8, 64]; an explicit request wins. Throws when above the kernel limit.
int default_order_count(const Description& d);
int resolve_order_count(const Description& d, int requested /* <= 0: auto */);

}  // namespace larmor::sequence
