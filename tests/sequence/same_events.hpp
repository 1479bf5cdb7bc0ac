// Two descriptions hold the same events: kind, actions, duration, flip and
// phase, event by event (times and angles to double rounding).
#pragma once

#include <gtest/gtest.h>

#include "sequence/description.hpp"

namespace larmor::sequence {

inline void expect_same_events(const Description& a, const Description& b) {
  ASSERT_EQ(a.events.size(), b.events.size());
  for (std::size_t i = 0; i < a.events.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(a.events[i].kind, b.events[i].kind);
    EXPECT_EQ(a.events[i].action, b.events[i].action);
    EXPECT_NEAR(a.events[i].duration_s, b.events[i].duration_s, 1e-15);
    EXPECT_NEAR(a.events[i].flip_rad, b.events[i].flip_rad, 1e-15);
    EXPECT_NEAR(a.events[i].phase_rad, b.events[i].phase_rad, 1e-15);
  }
}

}  // namespace larmor::sequence
