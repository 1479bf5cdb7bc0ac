// The parameter ABI shared by the packer (src/sequence) and every EPG kernel.
//
// A sequence reaches the kernels as ten flat arrays, one entry per event. This
// header is the single definition of their meaning; it deliberately includes no
// Kokkos so that host-only code (builders, Pulseq reader) can use it.
#pragma once

#include <cstdint>

namespace larmor::abi {

// What an event does at its instant. Gradients are not events: their effect is
// carried by the action bits below.
enum class EventKind : std::uint8_t {
  wait = 0,   // free evolution only
  pulse = 1,  // instantaneous RF rotation by flip * B1 (flip alone with
              // action::b1_fixed) about the axis at `phase`
  adc = 2,    // record F+_0 (times M0, demodulated by `phase`) into output_index;
              // a sample with voxel weights records their sum over the orders
  // A pulse played sample by sample from its waveform (slice_profile: its
  // table, 1-based; kernels/epg/waveform_pulse.hpp) at each voxel's own
  // off-resonance, relaxing as it plays: one linear map per voxel over all
  // orders. Its instant is the pulse's start and lasts the pulse's length;
  // `duration` runs from its end. `flip` is the nominal flip (reports); the
  // table's angles, times B1, turn; `phase` adds to every sample's phase.
  waveform_pulse = 3,
};

// Whether an event of this kind turns the magnetisation with RF.
inline constexpr bool is_rf(EventKind k) {
  return k == EventKind::pulse || k == EventKind::waveform_pulse;
}

// Bits of the action word. Each set shift bit dephases by exactly one order
// (one declared crusher moment); a description cannot express other moments.
namespace action {
inline constexpr std::uint32_t crush_before = 1u << 0;  // shift, then the instant
inline constexpr std::uint32_t crush_after = 1u << 1;   // shift after the instant
inline constexpr std::uint32_t shift_after = 1u << 2;   // shift after a readout
inline constexpr std::uint32_t spoil_after = 1u << 3;   // ideal spoiling: F+- = 0
inline constexpr std::uint32_t echo_centre = 1u << 4;   // marks an ADC at an echo
// A pulse whose flip is the nominal one in every voxel: the transmit field
// (B1) does not scale it (an inversion modelled as ideal, say), so it adds
// nothing to dS/dB1.
inline constexpr std::uint32_t b1_fixed = 1u << 5;
inline constexpr std::uint32_t all_bits = (1u << 6) - 1u;
}  // namespace action

// The ten arrays, in ABI order. Units are SI: seconds, radians, hertz.
//   duration        float     free evolution after the event's instant [s]
//   kind            uint8     EventKind
//   flip            float     nominal flip angle [rad] (pulse), 0 otherwise
//   phase           double    RF phase (pulse) or receiver phase (adc) [rad];
//                             unbounded (RF spoiling), so kept in double and
//                             reduced on the host before launch
//   action          uint32    action bits
//   output_index    int32     sample slot of an adc, -1 for everything else
//   shim_index      int32     transmit shim setting used by a pulse (0 = none)
//   saturation      float     bound-pool saturation weight of a pulse
//   rf_frequency_hz float     RF offset of a pulse from the water resonance [Hz]
//   slice_profile   int32     pulse: its slice-selective table, 1-based (0: an
//                             instantaneous rotation); waveform_pulse: its
//                             waveform, 1-based; adc: its voxel weights,
//                             1-based (0: F+_0 alone; src/sequence/
//                             voxel_integral.hpp); 0 for a wait
inline constexpr int event_parameter_count = 10;
inline constexpr const char* event_parameter_names[event_parameter_count] = {
    "duration",     "kind",       "flip",       "phase",           "action",
    "output_index", "shim_index", "saturation", "rf_frequency_hz", "slice_profile"};

// A non-owning view of the nine arrays on the host, in ABI order. The packer
// owns them (sequence::PackedSequence); kernels build their launch tables
// from this view and never see the sequence classes.
struct PackedEventsRef {
  std::int64_t count = 0;
  const float* duration = nullptr;
  const std::uint8_t* kind = nullptr;
  const float* flip = nullptr;
  const double* phase = nullptr;
  const std::uint32_t* action = nullptr;
  const std::int32_t* output_index = nullptr;
  const std::int32_t* shim_index = nullptr;
  const float* saturation = nullptr;
  const float* rf_frequency_hz = nullptr;
  const std::int32_t* slice_profile = nullptr;  // null: every pulse instantaneous, no weights
};

// Order of operations inside one event (every kernel and every reference
// implementation follows this):
//   1. crush_before: shift by one order
//   2. the instant: pulse rotation, or adc sample, or nothing
//   3. crush_after, then shift_after: one shift per bit
//   4. spoil_after: transverse states set to zero
//   5. free evolution for `duration`: T2 decay of F, T1 decay and recovery of
//      Z, off-resonance precession F+ *= exp(+i 2 pi df t), F- *= exp(-i ...)
// `duration` is the time from this event's instant to the next one's. A
// declared crusher lobe (of the description's lobe duration) takes time inside
// it: the event's crush_after and shift_after lobes at its start, the next
// event's crush_before lobe at its end. Relaxation and precession act on every
// order alike, so they commute with the shifts and run over the whole
// duration; diffusion and flow do not, and take each lobe's own factor at its
// shift and the interval factor over the rest.
inline constexpr int shifts_of(std::uint32_t a) {
  return int((a & action::crush_before) != 0) + int((a & action::crush_after) != 0) +
         int((a & action::shift_after) != 0);
}

// The lobes inside an event's duration: its own crush_after and shift_after
// lobes and the next event's crush_before lobe (`next`: that event's action;
// the last event's is the first event's, as a repeated period's is).
inline constexpr int lobes_in_interval(std::uint32_t own, std::uint32_t next) {
  return int((own & action::crush_after) != 0) + int((own & action::shift_after) != 0) +
         int((next & action::crush_before) != 0);
}

// Kernel limits (see docs/kernels.md). A tile holds at most one order per
// thread, and a GPU block has at most 1024 threads.
inline constexpr int max_orders = 1024;
inline constexpr int min_default_orders = 8;
inline constexpr int max_default_orders = 64;
// A pulse's record packs its shim setting and slice profile into one word.
inline constexpr int max_shim_settings = 0xffff;
inline constexpr int max_slice_profiles = 0x7fff;

}  // namespace larmor::abi
