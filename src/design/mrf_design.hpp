// The variables of a fingerprinting-train design: each row's flip angle and,
// optionally, its repetition time, scaled into the unit box from their
// bounds; the map to the train's events, and the chain rule back from event
// derivatives to the variables.
#pragma once

#include <vector>

#include "sequence/builders/builders.hpp"
#include "sequence/description.hpp"

namespace larmor::design {

struct MrfDesignSpace {
  sequence::MrfParams start;  // the rows and everything not optimised
  bool flips = true;
  bool repetition_times = false;
  double flip_min_deg = 0.0, flip_max_deg = 90.0;
  double tr_min_s = 0.0, tr_max_s = 0.0;

  // Refuses empty or inverted bounds and a TR bound at or below a row's TE.
  void validate() const;
  std::size_t rows() const { return start.schedule.size(); }
  std::size_t size() const { return rows() * ((flips ? 1 : 0) + (repetition_times ? 1 : 0)); }

  // Row values to [0, 1] (clipped to the bounds) and back.
  std::vector<double> encode(const sequence::MrfParams& p) const;
  sequence::MrfParams decode(const std::vector<double>& x) const;

  // d objective / d x from the derivatives per event of the train built from
  // decode(x) ([event][flip (rad), phase (rad), duration (s)]).
  std::vector<double> chain(const sequence::Description& train,
                            const std::vector<double>& event_gradients) const;
};

}  // namespace larmor::design
