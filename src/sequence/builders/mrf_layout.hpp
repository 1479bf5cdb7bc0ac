// The fingerprinting train as a layout: its structure (event kinds, actions,
// echo times, the inversion) fixed at construction, its values (per-row flip
// fraction, RF phase, TR extension) an argument vector. The events are
// written once over a number type: at double they are the description
// build_mrf returns; at a dual number value rebinding
// (sequence/rebinding.hpp) reads the map from arguments to event values off
// the tangents. Each value is written as offset + scale * argument with the
// scale computed first, so that a rebuild from the map and a fresh build
// round alike.
#pragma once

#include <cstdint>
#include <vector>

#include "sequence/builders/builders.hpp"
#include "sequence/operators.hpp"

namespace larmor::sequence {

template <class Num>
struct ValueEvent {
  EventKind kind = EventKind::wait;
  std::uint32_t action = 0;
  Num duration_s = Num(0.0);
  Num flip_rad = Num(0.0);
  Num phase_rad = Num(0.0);
};

class MrfLayout {
 public:
  // Throws std::invalid_argument for an empty schedule or a negative TE.
  explicit MrfLayout(const MrfParams& p);

  std::size_t argument_count() const { return 3 * rows_; }
  // [flip fractions..., RF phases (deg)..., TR extensions (s)...] of `p`.
  static std::vector<double> arguments(const MrfParams& p);

  template <class Num>
  std::vector<ValueEvent<Num>> events(const std::vector<Num>& args) const;

  // The description at double (validated: TE < TR in every row); the same
  // events as events<double>.
  Description description(const std::vector<double>& args) const;

 private:
  std::size_t rows_ = 0;
  double flip_scale_ = 0.0;  // nominal flip in radians per unit fraction
  double base_tr_s_ = 0.0;
  std::vector<double> te_s_;  // per row
  bool inversion_ = true;
  std::uint32_t inversion_action_ = action::spoil_after;
  double inversion_delay_s_ = 0.0;
  MrfParams params_;  // for the description's name and parameters
};

template <class Num>
std::vector<ValueEvent<Num>> MrfLayout::events(const std::vector<Num>& args) const {
  std::vector<ValueEvent<Num>> out;
  out.reserve(2 * rows_ + 1);
  if (inversion_) {
    out.push_back(
        {EventKind::pulse, inversion_action_, Num(inversion_delay_s_), Num(180.0 * deg), Num(0.0)});
  }
  for (std::size_t n = 0; n < rows_; ++n) {
    const Num& fraction = args[n];
    const Num phase = args[rows_ + n] * deg;
    const Num& tr_extension = args[2 * rows_ + n];
    out.push_back({EventKind::pulse, 0u, Num(te_s_[n]), fraction * flip_scale_, phase});
    out.push_back({EventKind::adc, action::echo_centre | action::shift_after,
                   Num(base_tr_s_ - te_s_[n]) + tr_extension, Num(0.0), phase});
  }
  return out;
}

}  // namespace larmor::sequence
