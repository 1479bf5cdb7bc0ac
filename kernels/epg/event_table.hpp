// Launch tables: what the host derives once per packed stream, before launch.
//
// The nine ABI arrays are turned into one compact record per event (32 bytes,
// so a team stages a tile of them in scratch with one coalesced copy). The
// record holds the phase as its cosine and sine, taken in double on the host,
// and the number of orders that can be non-zero at that event, so kernels
// skip orders that are still exactly zero.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/kokkos_compat.hpp"
#include "epg/event_abi.hpp"
#include "epg/train_program.hpp"

namespace larmor::epg {

// 16-byte aligned so a thread reads a staged record with two vector loads.
struct alignas(16) EventRecord {
  float duration;
  float flip;
  float cos_phase;
  float sin_phase;
  // action bits [0, 6), lobes inside `duration` [6, 8), kind [8, 16), live
  // orders [16, 32)
  std::uint32_t control;
  std::int32_t output_index;  // adc: sample slot; pulse: shim setting and slice profile
  float rf_frequency_hz;
  // adc: its voxel weights, 1-based (0: F+_0 alone); 0 otherwise. (A pulse's
  // saturation, which pooled runs read per event, is in PoolViews.)
  std::int32_t sample_weights;
};
static_assert(sizeof(EventRecord) == 32, "an event record is staged as 32 bytes");

KOKKOS_FORCEINLINE_FUNCTION std::uint32_t action_of(const EventRecord& r) {
  return r.control & abi::action::all_bits;
}
// The declared crusher lobes that take time inside the event's duration (its
// own after its instant, the next event's crush_before before that one's):
// diffusion and flow take the interval factor over the rest only.
KOKKOS_FORCEINLINE_FUNCTION int interval_lobes_of(const EventRecord& r) {
  return static_cast<int>((r.control >> 6) & 0x3u);
}
KOKKOS_FORCEINLINE_FUNCTION float free_duration_of(const EventRecord& r, float lobe_s) {
  const float rest = r.duration - float(interval_lobes_of(r)) * lobe_s;
  return rest > 0.0f ? rest : 0.0f;
}
// Whether a pulse's flip follows the voxel's transmit field (B1), and the
// field it takes: 1 for a pulse with action::b1_fixed.
KOKKOS_FORCEINLINE_FUNCTION bool follows_b1(const EventRecord& r) {
  return (r.control & abi::action::b1_fixed) == 0u;
}
template <class Real>
KOKKOS_FORCEINLINE_FUNCTION Real pulse_b1(const EventRecord& r, const Real& b1) {
  return follows_b1(r) ? b1 : Real(1.0f);
}
KOKKOS_FORCEINLINE_FUNCTION abi::EventKind kind_of(const EventRecord& r) {
  return static_cast<abi::EventKind>((r.control >> 8) & 0xffu);
}
KOKKOS_FORCEINLINE_FUNCTION int shim_of(const EventRecord& r) { return r.output_index & 0xffff; }
// A pulse's slice-selective table, 1-based (0: an instantaneous rotation).
KOKKOS_FORCEINLINE_FUNCTION int slice_profile_of(const EventRecord& r) {
  return r.output_index >> 16;
}
// A waveform pulse's waveform, 1-based (the slice profile's bits).
KOKKOS_FORCEINLINE_FUNCTION int waveform_of(const EventRecord& r) { return r.output_index >> 16; }
// A sample's voxel weights, 1-based (0: it records F+_0 alone).
KOKKOS_FORCEINLINE_FUNCTION int sample_weights_of(const EventRecord& r) { return r.sample_weights; }
KOKKOS_FORCEINLINE_FUNCTION int live_orders_of(const EventRecord& r) {
  return static_cast<int>(r.control >> 16);
}

// Which orders an event's record counts live (live_orders_of): the kernels
// step orders [0, live) and leave the others as they are.
enum class LiveOrders {
  // A carried state (steady-state iteration): every order from the start.
  all,
  // From equilibrium: the orders the shifts so far can have filled (Z_0 only
  // at the start; each shift raises the highest order by one).
  filled,
  // Of those, the orders a later sample can still read: F_k reaches F+_0 in
  // no fewer than k shifts, so with R shifts left before the last sample
  // orders above R never reach one (a sample with voxel weights reads every
  // order, so nothing before it is trimmed). What is left above `live` is never read
  // again (the state there stays as the last event that stepped it left it,
  // the adjoint there zero), and the samples are those of `filled`. For runs
  // whose final state is not read out.
  read,
};

// Validates the arrays (kinds, action bits, output indices, finite values) and
// builds the records for a run with `orders` orders. Throws
// std::invalid_argument naming the event and the field.
std::vector<EventRecord> build_event_records(const abi::PackedEventsRef& events, int orders,
                                             int sample_count,
                                             LiveOrders live = LiveOrders::filled);

// The rule for a run from equilibrium on `ExecSpace` when `trim` (the
// simulator's LARMOR_TRIM_ORDERS): `read` on the host, whose loops run to the
// live orders; a device's threads step their whole blocks in lockstep, which
// the tail's fewer live orders would not shorten, so its tables keep `filled`.
template <class ExecSpace>
LiveOrders live_orders_rule(bool trim) {
  return trim && kx::is_host_space_v<ExecSpace> ? LiveOrders::read : LiveOrders::filled;
}

// Refuses an order count the kernels cannot hold, naming the kernel.
void check_order_limit(int orders, const std::string& kernel_name);

// Refuses a launch whose pulses use `used` slice profiles when the tissue
// views hold `held` tables over `positions` positions; `unsupported` (not
// null) says why this kernel has no slice-selective pulses at all.
void check_slice_profiles(int used, int held, int positions, const std::string& kernel_name,
                          const char* unsupported = nullptr);

// Refuses a launch whose waveform pulses use `used` waveforms when the tissue
// views hold `held`; `unsupported` (not null) says why this kernel plays no
// waveform at all (the simulator runs those on the pulses' samples instead:
// sequence::expand_waveform_pulses).
void check_waveforms(int used, int held, const std::string& kernel_name,
                     const char* unsupported = nullptr);

// Refuses a launch whose samples use `used` voxel-weight tables when the
// tissue views hold `held` over `orders` orders and `positions` positions,
// where the run has `run_orders` orders and `run_positions` positions.
void check_sample_weights(int used, int held, int orders, int positions, int run_orders,
                          int run_positions, const std::string& kernel_name);

template <class MemorySpace>
struct EventTable {
  Kokkos::View<const EventRecord*, MemorySpace> records;
  int count = 0;
  int orders = 0;
  int samples = 0;
  // The records are a real-subspace rewrite (src/sequence/real_subspace.hpp:
  // every pulse at phase 0 with its half turn in the flip's sign, each
  // receiver phase moved by the axis): forward runs use the on-axis states.
  bool on_axis = false;
  // The largest slice profile a pulse uses (0: every pulse is instantaneous);
  // a run needs that many tables (TissueViews::slice).
  int slice_profiles = 0;
  // The largest voxel-weight table a sample uses (0: every sample records
  // F+_0); a run needs that many (TissueViews::weights).
  int sample_weight_tables = 0;
  // The largest waveform a waveform pulse uses (0: none); a run needs that
  // many (TissueViews::waveforms).
  int waveforms = 0;
  // The records as a train of steps (train_program.hpp) for the train
  // kernel; empty where the stream is not one or none was asked for
  // (TrainSteps::skip).
  Kokkos::View<const TrainStep*, MemorySpace> train;
  int train_steps = 0;
  int train_single_shift_steps = 0;  // those of shifts_once_then_pulses' shape
};

// Whether at least half of a table's train steps shift once before their
// pulse and not before their sample, so that the train kernel renames
// registers through runs of them: gradient echoes and fingerprinting trains,
// not spin-echo trains, which shift on both sides of their pulses.
template <class MemorySpace>
bool train_renames_shifts(const EventTable<MemorySpace>& table) {
  return table.train_steps > 0 && 2 * table.train_single_shift_steps >= table.train_steps;
}

// Whether a table carries its records compiled into a train of steps
// (EventTable::train): only tables whose forward runs may take the train
// kernel need them (train_steps_rule in forward.hpp), and a step list costs
// about as much memory as the records.
enum class TrainSteps { skip, compile };

template <class MemorySpace>
EventTable<MemorySpace> make_event_table(const abi::PackedEventsRef& events, int orders,
                                         int sample_count, LiveOrders live = LiveOrders::filled,
                                         TrainSteps train_steps = TrainSteps::compile) {
  const std::vector<EventRecord> host = build_event_records(events, orders, sample_count, live);
  Kokkos::View<EventRecord*, MemorySpace> device(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::event_records"), host.size());
  Kokkos::View<const EventRecord*, Kokkos::HostSpace, kx::Unmanaged> staged(host.data(),
                                                                            host.size());
  Kokkos::deep_copy(device, staged);
  EventTable<MemorySpace> table;
  table.records = device;
  table.count = static_cast<int>(host.size());
  table.orders = orders;
  table.samples = sample_count;
  const std::vector<TrainStep> steps = train_steps == TrainSteps::compile
                                           ? build_train_steps(host.data(), host.size())
                                           : std::vector<TrainStep>{};
  if (!steps.empty()) {
    Kokkos::View<TrainStep*, MemorySpace> train(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::train_steps"), steps.size());
    Kokkos::deep_copy(train, Kokkos::View<const TrainStep*, Kokkos::HostSpace, kx::Unmanaged>(
                                 steps.data(), steps.size()));
    table.train = train;
    table.train_steps = static_cast<int>(steps.size());
    for (const TrainStep& step : steps) {
      table.train_single_shift_steps += shifts_once_then_pulses(step.control) ? 1 : 0;
    }
  }
  for (const EventRecord& r : host) {
    if (kind_of(r) == abi::EventKind::pulse && slice_profile_of(r) > table.slice_profiles) {
      table.slice_profiles = slice_profile_of(r);
    }
    if (kind_of(r) == abi::EventKind::waveform_pulse && waveform_of(r) > table.waveforms) {
      table.waveforms = waveform_of(r);
    }
    if (sample_weights_of(r) > table.sample_weight_tables) {
      table.sample_weight_tables = sample_weights_of(r);
    }
  }
  return table;
}

}  // namespace larmor::epg
