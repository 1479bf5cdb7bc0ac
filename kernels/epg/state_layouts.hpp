// The state layouts compiled for each launch, as one table per backend kind
// and entry point, and the one dispatch from a layout chosen at run time to
// its compiled instance. Every layout list (the launchers, the checks of a
// requested layout, the tests that run every layout) reads these tables.
#pragma once

#include <cstddef>
#include <iterator>
#include <type_traits>
#include <utility>

namespace larmor::epg {

// Orders per thread and voxel lanes of a compiled kernel; `axis_only`: it
// holds the on-axis states only (three floats per order, where the complex
// states of as many orders would spill).
struct StateLayout {
  int orders_per_thread;
  int lanes;
  bool axis_only;
};

namespace layouts {

// The floats of one SIMD register of the host build (-march=native): forward
// mode's voxel lanes up to 64 orders.
#if defined(__AVX512F__)
inline constexpr int host_vector_floats = 16;
#else
inline constexpr int host_vector_floats = 8;
#endif

// Host forward runs: one order bucket per power of two, the voxel lanes the
// SIMD lanes (fewer for large buckets, to bound the stack); the one-lane
// on-axis buckets serve LaunchOptions::real_scalar. Eight lanes, not a
// vector's sixteen: the declared terms' kernels share the layout, and their
// per-lane work (a transmit array's flips, the walks) grows with the lanes
// (docs/performance.md, "Host kernels").
struct HostForward {
  static constexpr StateLayout entries[] = {
      {8, 8, false},   {16, 8, false},  {32, 8, false},   {64, 8, false}, {128, 4, false},
      {256, 2, false}, {512, 1, false}, {1024, 1, false}, {8, 1, true},   {16, 1, true},
      {32, 1, true},   {64, 1, true},   {128, 1, true},   {256, 1, true}};
};

// Device forward runs: up to 64 orders a thread holds several orders of one
// or two voxels; beyond, one order per thread. On the axis, sixteen orders
// of two voxels.
struct DeviceForward {
  static constexpr StateLayout entries[] = {{8, 1, false}, {8, 2, false}, {4, 1, false},
                                            {4, 2, false}, {2, 2, false}, {1, 1, false},
                                            {16, 2, true}};
};

// Forward mode (dual numbers of six floats per complex state): a vector's
// lanes up to 64 orders on the host (each part's lanes contiguous: the vector
// loops of part_ring_state.hpp), one beyond; one order per device thread, two on
// the axis.
struct HostJvp {
  static constexpr int lanes = host_vector_floats;
  static constexpr StateLayout entries[] = {
      {8, lanes, false}, {16, lanes, false}, {32, lanes, false}, {64, lanes, false},
      {128, 1, false},   {256, 1, false},    {512, 1, false},    {1024, 1, false}};
};
struct DeviceJvp {
  static constexpr StateLayout entries[] = {{1, 1, false}, {2, 1, true}};
};

// Whether (orders per thread, lanes) is compiled in `Table`; axis-only
// layouts count where the run is on the axis.
template <class Table>
constexpr bool compiled(int orders_per_thread, int lanes, bool on_axis) {
  for (const StateLayout& l : Table::entries) {
    if (l.orders_per_thread == orders_per_thread && l.lanes == lanes && (on_axis || !l.axis_only)) {
      return true;
    }
  }
  return false;
}

namespace detail {
template <class Table, class Launch, std::size_t... I>
bool dispatch(int orders_per_thread, int lanes, const Launch& launch, std::index_sequence<I...>) {
  bool found = false;
  const auto try_entry = [&](auto entry) {
    constexpr StateLayout l = Table::entries[decltype(entry)::value];
    if (found || l.orders_per_thread != orders_per_thread || l.lanes != lanes) return;
    found = true;
    launch(std::integral_constant<int, l.orders_per_thread>{},
           std::integral_constant<int, l.lanes>{}, std::bool_constant<l.axis_only>{});
  };
  (try_entry(std::integral_constant<std::size_t, I>{}), ...);
  return found;
}
}  // namespace detail

// Calls launch(orders_per_thread, lanes, axis_only), each an
// std::integral_constant, for the entry of `Table` matching the run-time
// layout; false where none does.
template <class Table, class Launch>
bool dispatch(int orders_per_thread, int lanes, const Launch& launch) {
  return detail::dispatch<Table>(orders_per_thread, lanes, launch,
                                 std::make_index_sequence<std::size(Table::entries)>{});
}

}  // namespace layouts

}  // namespace larmor::epg
