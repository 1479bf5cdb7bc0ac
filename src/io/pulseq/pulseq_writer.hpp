// Writing a description as a Pulseq 1.4 file that pulseq_events.hpp reads
// back to the same instants, gaps and signal (docs/pulseq.md).
//
// Every pulse is a 20 us hard pulse centred on its instant, every ADC one
// 10 us sample centred on its instant, every shift a trapezoid of the
// declared crusher moment along z, every spoiling trapezoids of twice that
// moment along x and y; waits are empty blocks. The crusher moment is
// declared in [DEFINITIONS] (LarmorCrusherMoment) and the file is signed.
// Descriptions whose instants are closer than their blocks need, or that do
// not lie on the 1 us raster, are refused naming the event.
#pragma once

#include <string>

#include "sequence/description.hpp"

namespace larmor::io::pulseq {

struct WriteOptions {
  // The moment of one shift along z, 1/m. 0: the description's declared
  // moment, or one cycle per millimetre (1000) where it declares none. A
  // value other than a declared moment is refused: diffusion and flow would
  // read back at another moment.
  double crusher_moment_per_m = 0.0;
};

// The moment format_pulseq writes (the rules above).
double written_crusher_moment(const sequence::Description& d, const WriteOptions& options);

std::string format_pulseq(const sequence::Description& d, const WriteOptions& options = {});

// Atomic: a temporary file beside `path`, then a rename.
void write_pulseq(const std::string& path, const sequence::Description& d,
                  const WriteOptions& options = {});

}  // namespace larmor::io::pulseq
