// Packing a description into the ten flat arrays of the parameter ABI
// (kernels/epg/event_abi.hpp). Runs once per sequence structure on the host.
#pragma once

#include <cstdint>
#include <vector>

#include "sequence/description.hpp"

namespace larmor::sequence {

struct PackedSequence {
  std::vector<float> duration;
  std::vector<std::uint8_t> kind;
  std::vector<float> flip;
  std::vector<double> phase;
  std::vector<std::uint32_t> action;
  std::vector<std::int32_t> output_index;
  std::vector<std::int32_t> shim_index;
  std::vector<float> saturation;
  std::vector<float> rf_frequency_hz;
  std::vector<std::int32_t> slice_profile;

  int samples = 0;  // adc events, numbered in stream order
  std::vector<double> sample_times_s;
  std::vector<std::uint8_t> sample_is_echo_centre;

  std::int64_t size() const { return static_cast<std::int64_t>(duration.size()); }
  abi::PackedEventsRef ref() const;
};

// Validates every event (finite values, non-negative durations, known action
// bits, 32-bit event and sample counts) and throws std::invalid_argument
// naming the event index and the field.
PackedSequence pack(const Description& d);

}  // namespace larmor::sequence
