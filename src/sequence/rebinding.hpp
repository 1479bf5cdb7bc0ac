// Value rebinding: a sequence whose structure stays fixed while its numbers
// (flip angles, phases, repetition times) change from call to call is packed
// once; later calls rebuild only the duration, flip and phase buffers (and
// the sample times read off the rebuilt durations) with whole-array
// arithmetic instead of building and packing a description.
//
// Every entry of those buffers is offset + scale * args[source] (or a
// constant). The map is recovered from the layout by two forward-mode passes
// at dual numbers: a tangent of ones gives the scale, a tangent of 1, 2, 3,
// ... gives the scale times the source index plus one; the passes run at
// zero arguments so the offsets are exact. The map is refused when a
// recovered index is not whole (an entry draws on several arguments) or when
// a rebuild disagrees in any bit with a fresh packing at a point the map was
// not read at; a refusal is remembered and every later call packs afresh.
//
// A Layout provides argument_count(), description(args) at double, and
// events<Num>(args) -> std::vector<ValueEvent<Num>> (MrfLayout is one).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/dual.hpp"
#include "sequence/builders/mrf_layout.hpp"
#include "sequence/packing.hpp"

namespace larmor::sequence {

// entry = offset (+ scale * args[source] when source >= 0).
struct AffineMap {
  std::vector<std::int32_t> source;
  std::vector<double> offset, scale;
};

struct ValueMaps {
  AffineMap duration, flip, phase;
};

// From the values and tangents of the two passes (per event: duration, flip,
// phase). Returns an empty string on success, else why the map is refused.
std::string recover_maps(const std::vector<ValueEvent<Dual<double, 1>>>& ones,
                         const std::vector<ValueEvent<Dual<double, 1>>>& counting,
                         std::size_t argument_count, ValueMaps& maps);

// Rebuilds target's duration, flip, phase and sample_times_s from the maps.
// Throws std::invalid_argument (naming `name` and the event) for a duration
// that is negative or not finite, or a non-finite flip or phase.
void rebuild_values(const ValueMaps& maps, const std::vector<double>& args, const std::string& name,
                    PackedSequence& target);

// Empty when a and b agree in every bit of every buffer, else the first
// difference.
std::string first_difference(const PackedSequence& a, const PackedSequence& b);

// A point near `args` the map was not read at.
std::vector<double> verification_point(const std::vector<double>& args);

template <class Layout>
class ValueBinding {
 public:
  explicit ValueBinding(Layout layout) : layout_(std::move(layout)) {}

  // The packed sequence for `args` (valid until the next call).
  const PackedSequence& pack(const std::vector<double>& args);

  enum class State { unresolved, bound, refused };
  State state() const { return state_; }
  const std::string& refusal() const { return refusal_; }
  const Layout& layout() const { return layout_; }

 private:
  void resolve(const std::vector<double>& args, const Description& d);

  Layout layout_;
  PackedSequence packed_;
  ValueMaps maps_;
  State state_ = State::unresolved;
  std::string refusal_;
  std::string name_;
};

template <class Layout>
const PackedSequence& ValueBinding<Layout>::pack(const std::vector<double>& args) {
  if (state_ == State::bound) {
    if (args.size() != layout_.argument_count()) {
      throw std::invalid_argument("value rebinding: expected " +
                                  std::to_string(layout_.argument_count()) + " values, got " +
                                  std::to_string(args.size()));
    }
    rebuild_values(maps_, args, name_, packed_);
    return packed_;
  }
  const Description d = layout_.description(args);
  name_ = d.name;
  packed_ = sequence::pack(d);
  if (state_ == State::unresolved) resolve(args, d);
  return packed_;
}

template <class Layout>
void ValueBinding<Layout>::resolve(const std::vector<double>& args, const Description& d) {
  using Tangent = Dual<double, 1>;
  const std::size_t n = layout_.argument_count();
  std::vector<Tangent> ones(n), counting(n);
  for (std::size_t j = 0; j < n; ++j) {
    ones[j].tangent[0] = 1.0;
    counting[j].tangent[0] = double(j + 1);
  }
  auto refuse = [&](std::string why) {
    state_ = State::refused;
    refusal_ = std::move(why);
  };
  std::string why = recover_maps(layout_.template events<Tangent>(ones),
                                 layout_.template events<Tangent>(counting), n, maps_);
  if (!why.empty()) return refuse(why);
  if (maps_.duration.source.size() != std::size_t(packed_.size())) {
    return refuse("the layout's events differ in number from its description's");
  }
  // The packed durations hold the lobes' time too, fixed by the actions.
  for (std::size_t e = 0; e < maps_.duration.offset.size(); ++e) {
    maps_.duration.offset[e] += d.lobe_time_after_s(e);
  }
  const std::vector<double> elsewhere = verification_point(args);
  PackedSequence fresh, rebuilt = packed_;
  try {
    fresh = sequence::pack(layout_.description(elsewhere));
    rebuild_values(maps_, elsewhere, "verification", rebuilt);
  } catch (const std::exception& e) {
    return refuse(std::string("the verification point could not be packed: ") + e.what());
  }
  why = first_difference(fresh, rebuilt);
  if (!why.empty()) return refuse("a rebuild disagrees with a fresh packing: " + why);
  state_ = State::bound;
}

}  // namespace larmor::sequence
