// Constants the tests share (one definition, so that test units compiled
// together in a unity build do not each define their own).
#pragma once

namespace larmor::test {

inline constexpr double kPi = 3.14159265358979323846;

}  // namespace larmor::test
