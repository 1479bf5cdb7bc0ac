// The isochromat engine's step records as the kernel reads them (no Kokkos
// here: the host code that writes them includes this alone). What each
// record does is in isochromats.hpp.
#pragma once

#include <cstdint>

namespace larmor::bloch {

// A step record: eight floats, the first the kind, the second dt (s).
enum StepKind : int { free_step = 0, rf_step = 1, sample_step = 2 };
inline constexpr int step_floats = 8;
namespace step_field {
inline constexpr int kind = 0, dt = 1;
// free: moment m (1/m, physical x y z)
inline constexpr int moment = 2;
// rf: w1 (rad/s), mean gradient (Hz/m), offset (Hz)
inline constexpr int w1_re = 2, w1_im = 3, gradient = 4, offset_hz = 7;
// sample: demodulation c + i s, the sample's slot (an integer below 2^24),
// and the encodes to take out of it (1/m, x y z: moments rewound before the
// next pulse; zero keeps the raw sample)
inline constexpr int demod_re = 2, demod_im = 3, slot = 4, rewound = 5;
}  // namespace step_field
// Slots are written as floats: exact integers below this.
inline constexpr std::int64_t max_sample_slots = std::int64_t(1) << 24;

}  // namespace larmor::bloch
