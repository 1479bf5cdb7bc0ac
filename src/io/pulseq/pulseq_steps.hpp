// A Pulseq file as the isochromat engine plays it (sequence/step_table.hpp):
// every block's waveforms as they are, nothing judged or rounded.
//
// Breakpoints in each block: its edges, every RF raster cell (on a time
// shape, every raster cell's worth of each span between its points), every
// ADC sample. Between breakpoints without RF, free intervals carry only their
// gradient moment (free precession is exact over any interval); an RF cell
// holds the envelope at its middle, the RF phase at its start in the frame
// that turns with the pulse's frequency offset, and the gradient's mean over
// it. Samples carry the receiver's demodulation: its phase, its frequency's
// ramp from the ADC's start and a 1.5 phase shape. The timing and the
// conventions are the translation's (docs/pulseq.md): blocks end to end,
// RF frequency ramps from the pulse's start (before 1.5) or its centre
// (1.5), ROTATIONS applied to the gradients.
#pragma once

#include <array>
#include <limits>
#include <optional>

#include "io/pulseq/pulseq_file.hpp"
#include "sequence/step_table.hpp"

namespace larmor::io::pulseq {

struct StepOptions {
  // Every ADC sample, or only sample N/2 of each ADC (its centre).
  bool every_sample = true;
  // The voxel's edges [m]; when absent, the file's FOV / matrix, else 1 mm,
  // and along the slice axis the first selective pulse's slice with its tails.
  std::optional<std::array<double, 3>> voxel_size_m;
  // Main field [T] for ppm offsets; when absent, [DEFINITIONS] B0.
  std::optional<double> b0_t;
  // Steps up to this time [s] from the start (the rest is not played).
  double end_time_s = std::numeric_limits<double>::infinity();
  // Refuse files that would make more steps than this.
  long long max_steps = 1ll << 27;
};

// Throws PulseqError naming the file, the block and the reason (missing
// shapes, events past their block, ppm offsets without a field, too many
// steps).
sequence::StepTable to_step_table(const PulseqFile& file, const StepOptions& options = {});

}  // namespace larmor::io::pulseq
