// The event stream compiled into a train of steps, once per table on the
// host, for the train kernel (impl/train_loop.hpp).
//
// Between two pulses a plain forward run only counts time, shifts and
// spoilers, and reads F+_0 at its samples: the free evolution commutes with
// the shifts and folds into the next pulse's rotation (pending_interval.hpp).
// So a stream of instantaneous pulses and unweighted samples is a train of
// steps, each "shift, pulse, shift, sample" with either part possibly absent,
// and every per-voxel scalar of a step (the flip's sine and cosine, the
// exponentials of its intervals, the rotation with the evolution folded in,
// the sample's factor) can be computed once per voxel, ahead of the loop that
// turns the states: the loop then has no branch on kind or action.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/kokkos_compat.hpp"

namespace larmor::epg {

struct EventRecord;

// One step, 48 bytes (three 16-byte loads).
struct alignas(16) TrainStep {
  float flip;       // the pulse's nominal flip [rad]
  float cos_phase;  // the pulse's axis
  float sin_phase;
  float pulse_elapsed;   // [s] since the previous pulse (or the start), folded into this one
  float sample_elapsed;  // [s] from the last pulse (this one, if any) to the sample
  float receiver_cos;    // the sample's receiver phase
  float receiver_sin;
  std::int32_t output_index;  // the sample's slot; -1: no sample
  // shifts before the pulse [0, 8), shifts between the pulse and the sample
  // [8, 16), and the flags below
  std::uint32_t control;
  std::int32_t live_orders;  // the pulse's (EventRecord: the orders that can be non-zero)
  std::uint32_t unused[2];
};
static_assert(sizeof(TrainStep) == 48, "a train step is read as three 16-byte words");

namespace train {
inline constexpr std::uint32_t has_pulse = 1u << 16;
inline constexpr std::uint32_t spoiled_before_pulse = 1u << 17;   // since the previous pulse
inline constexpr std::uint32_t spoiled_before_sample = 1u << 18;  // since the last pulse
inline constexpr std::uint32_t b1_fixed = 1u << 19;               // the flip ignores B1
inline constexpr int max_shifts = 0xff;                           // per part of a step
}  // namespace train

KOKKOS_FORCEINLINE_FUNCTION int shifts_before_pulse(std::uint32_t control) {
  return static_cast<int>(control & 0xffu);
}
KOKKOS_FORCEINLINE_FUNCTION int shifts_before_sample(std::uint32_t control) {
  return static_cast<int>((control >> 8) & 0xffu);
}

// A step that shifts once, then pulses, and does not shift before its sample:
// every repetition of a gradient echo or a fingerprinting train. A device
// walks runs of them shifting by renaming registers (impl/renamed_shifts.hpp).
KOKKOS_FORCEINLINE_FUNCTION bool shifts_once_then_pulses(std::uint32_t control) {
  return (control & (0xffffu | train::has_pulse)) == (1u | train::has_pulse);
}

// The steps of `records`, or none where the stream is not such a train: a
// slice-selective or waveform pulse, a sample with voxel weights, or more
// shifts in one part of a step than a step counts. Events after the last
// sample change no signal and are dropped.
std::vector<TrainStep> build_train_steps(const EventRecord* records, std::size_t count);

}  // namespace larmor::epg
