// Small .seq texts for the Pulseq Bloch reference's tests: numbers written
// to full precision, shape sections, parsing, a tissue, a sinc lobe.
#pragma once

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "io/pulseq/pulseq_file.hpp"
#include "reference/constants.hpp"
#include "reference/pulseq_bloch.hpp"

namespace larmor::reference::pulseq_test_text {

using larmor::test::kPi;
inline const Complex kI{0.0, 1.0};

inline std::string num(double value) {
  std::ostringstream s;
  s.precision(17);
  s << value;
  return s.str();
}

inline std::string shape(int id, const std::vector<double>& values) {
  std::string text =
      "shape_id " + std::to_string(id) + "\nnum_samples " + std::to_string(values.size()) + "\n";
  for (double v : values) text += num(v) + "\n";
  return text + "\n";
}

inline io::pulseq::PulseqFile parse(const std::string& text) {
  return io::pulseq::PulseqFile::parse(text, "test.seq");
}

inline Tissue tissue(double t1, double t2, double df, double m0 = 1.0) {
  Tissue t;
  t.m0 = m0;
  t.t1_s = t1;
  t.t2_s = t2;
  t.df_hz = df;
  return t;
}

// A three-lobe sinc, u from -2 to 2 as `fraction` goes from 0 to 1.
inline double sinc_lobes(double fraction) {
  const double u = 4 * fraction - 2;
  return u == 0.0 ? 1.0 : std::sin(kPi * u) / (kPi * u);
}

}  // namespace larmor::reference::pulseq_test_text
