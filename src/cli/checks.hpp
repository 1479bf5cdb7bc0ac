// Checks of command-line numbers that say what is wrong in a user's terms:
// non-finite values (nan, inf) are refused, and ranges are written as the
// numbers they are (no 300-digit largest double).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace larmor::cli {

namespace detail {
inline bool read_number(const std::string& text, double& value) {
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return end != text.c_str() && *end == '\0';
}
}  // namespace detail

// A finite number above `above` (or at least it, when `inclusive`) and at most `at_most`.
inline CLI::Validator finite_number(double above, bool inclusive, double at_most,
                                    const std::string& what) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v = 0.0;
        if (!detail::read_number(text, v) || !std::isfinite(v)) {
          return "'" + text + "' is not a finite number (" + what + ")";
        }
        if (inclusive ? v < above : v <= above) {
          return "'" + text + "' must be " + (inclusive ? "at least " : "above ") +
                 CLI::detail::to_string(above) + " (" + what + ")";
        }
        if (v > at_most) {
          return "'" + text + "' must be at most " + CLI::detail::to_string(at_most) + " (" + what +
                 ")";
        }
        return "";
      },
      what);
}

// A whole number from 1 to `at_most`.
inline CLI::Validator whole_count(long long at_most, const std::string& what) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v = 0.0;
        if (!detail::read_number(text, v) || !std::isfinite(v) || v != std::floor(v) || v < 1.0 ||
            v > double(at_most)) {
          return "'" + text + "' must be a whole number from 1 to " + std::to_string(at_most) +
                 " (" + what + ")";
        }
        return "";
      },
      what);
}

// Levenshtein distance, for suggesting the command a typo meant.
inline std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace larmor::cli
