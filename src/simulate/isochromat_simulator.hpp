// The isochromat engine's host side: where a voxel's isochromats sit, how
// many the sequence needs, and runs of a step table over a tissue's voxels
// on a Kokkos backend (kernels/bloch/isochromats.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bloch/step_abi.hpp"
#include "sequence/step_table.hpp"
#include "simulate/frequency_spread.hpp"
#include "tissue/tissue.hpp"

namespace larmor::simulate {

struct IsochromatSettings {
  // The voxel's edges and centre [m] in the physical frame.
  std::array<double, 3> voxel_size_m{1e-3, 1e-3, 1e-3};
  std::array<double, 3> centre_m{0.0, 0.0, 0.0};
  // What the grid must resolve: a coherence whose share of the voxel's
  // signal is above `accuracy` is summed with an error below it.
  double accuracy = 1e-3;
  // The longest T2 [s] of the run's tissue: a coherence lives as many
  // pulse-to-pulse spans as T2 leaves it above `accuracy`. Absent: every
  // span of the sequence.
  std::optional<double> longest_t2_s;
  // Isochromats per voxel: absent, as the windings need (up to
  // max_isochromats, beyond which the run is refused); given, this many,
  // shared between the axes the gradients wind along.
  std::optional<std::int64_t> isochromats;
  std::int64_t max_isochromats = std::int64_t(1) << 22;
  // Samples keep the encodes rewound before the next pulse (raw k-space);
  // otherwise they are taken out and a sample is the voxel's own signal
  // (sequence::mark_rewound_encodes).
  bool keep_encodes = false;
};

// The isochromats per axis and why, for the run's report.
struct IsochromatPlan {
  std::array<int, 3> counts{1, 1, 1};
  std::array<double, 3> windings_turns{0.0, 0.0, 0.0};  // the most a coherence winds per axis
  int lives_spans = 0;                                  // pulse-to-pulse spans a coherence lives
  std::string report;
  // Set where `isochromats` gives fewer than the windings need: what aliases.
  std::string warning;
  std::int64_t size() const { return std::int64_t(counts[0]) * counts[1] * counts[2]; }
};

// The grid the table needs. Along an axis where the moment winds up to W
// turns across the voxel, n isochromats on the midpoints sum exp(2 pi i W s)
// to the voxel's mean with a relative error of about (pi W / n)^2 / 6, and
// alias W to W - n: n is the larger of W + 1 and the count that keeps that
// error below the accuracy. Throws std::invalid_argument when the grid would
// exceed max_isochromats, with the windings and the option that overrides it.
IsochromatPlan plan_isochromats(const sequence::StepTable& table,
                                const IsochromatSettings& settings);

class IsochromatSimulator {
 public:
  IsochromatSimulator(sequence::StepTable table, const IsochromatSettings& settings);

  const sequence::StepTable& table() const { return table_; }
  const IsochromatPlan& plan() const { return plan_; }
  std::size_t samples() const { return table_.samples(); }

  // A voxel's frequency spread for its T2 and T2' (one offset of weight 1
  // where T2' is infinite): lorentzian_spread over the longest dephasing a
  // coherence of the voxel lives (the sequence's duration, or as long as its
  // T2 leaves it above the accuracy) in units of its T2'. It depends on the
  // voxel alone, as its isochromats do.
  FrequencySpread frequency_spread(double t2_s, double t2_prime_s) const;
  // The most offsets a voxel of `tissue` is repeated at (1 without T2'),
  // and where `all` is not null, the offsets of all its voxels summed.
  // Throws std::invalid_argument where a voxel's isochromats times its
  // offsets would exceed max_isochromats, naming its T2' and both counts.
  std::int64_t most_frequency_offsets(const tissue::Tissue& tissue,
                                      std::int64_t* all = nullptr) const;

  // signals[voxel][sample][re, im] (tissue.voxels x samples() x 2) and, where
  // not null, mz[voxel][sample], each voxel's mean over its isochromats, in
  // caller memory on the host. M0, T1, T2, B1, df and T2' are read per voxel
  // (T2' repeats a voxel's isochromats at its frequency_spread's offsets); the other
  // properties (pools, diffusion, flow, transmit arrays) are refused.
  // Where `centres_m` is not null, it holds each voxel's centre [m] ([voxel]
  // [x, y, z], physical) in place of the settings' one centre.
  template <class ExecSpace>
  void run_into(const tissue::Tissue& tissue, float* signals, float* mz,
                const double* centres_m = nullptr) const;

  // The same on the default backend.
  void run(const tissue::Tissue& tissue, float* signals, float* mz,
           const double* centres_m = nullptr) const;

  // The raw k-space of the voxels at `centres_m` (as above): every voxel's
  // samples, summed in double in voxel order ([sample][re, im]), voxels run
  // in batches of at most `batch_voxels`. Needs settings.keep_encodes
  // (std::logic_error otherwise).
  std::vector<double> kspace(const tissue::Tissue& tissue, const double* centres_m,
                             std::int64_t batch_voxels) const;

 private:
  sequence::StepTable table_;
  IsochromatSettings settings_;
  IsochromatPlan plan_;
};

// Why the isochromat engine cannot run `tissue` (empty: it can).
std::string isochromat_tissue_refusal(const tissue::Tissue& tissue);

}  // namespace larmor::simulate
