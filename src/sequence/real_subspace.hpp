// The real-subspace test and rewrite (docs/physics.md, "Real-subspace path").
//
// If every pulse's phase is one axis phase p0 modulo a half turn, every pulse
// turns about a transverse axis (no RF frequency offset), and nothing turns
// the states about z between pulses (no off-resonance, flow phase or
// transmit-array phase), then in the frame turned by p0 the states stay on one
// axis for the whole train:
//   F+_k = i e^{i p0} a_k,  F-_k = i e^{-i p0} b_k,  Z_k = c_k,  a, b, c real.
// That subspace is the +1 eigenspace of the map F -> -conj(F), Z -> conj(Z) in
// the turned frame, which every rotation about the axis, the shift and
// relaxation commute with, and equilibrium (Z_0 = 1) and T1 recovery lie in.
// A pulse a half turn round is the same pulse turning the other way, so the
// rewrite folds the half turn into the flip's sign; a sample demodulated at
// phase q reads M0 a_0 i e^{i (p0 - q)}, its own factor. The real steps, for a
// rotation by the signed flip f about the axis:
//   a' = cos^2(f/2) a + sin^2(f/2) b - sin f c
//   b' = sin^2(f/2) a + cos^2(f/2) b + sin f c
//   c' = sin f (a - b) / 2 + cos f c
// the shift a_k <- a_{k-1}, b_k <- b_{k+1}, a_0 <- -b_0 (the conjugate
// coupling is a sign), relaxation by E2 on a and b and E1 on c (1 - E1 added
// to c_0); diffusion's factors are real and keep the axis.
//
// An excitation a quarter turn from the refocusing pulses (the classic CPMG
// 90x-180y, larmor's `mese` builder) is not on one axis: the excitation puts
// the magnetisation on the other eigenspace (F real, Z imaginary) while T1
// recovery and the excitation's leftover Z feed this one, so the states fill
// the plane (tests/sequence/test_real_subspace.cpp shows it on the reference).
#pragma once

#include <complex>
#include <string>
#include <vector>

#include "sequence/description.hpp"

namespace larmor::sequence {

// What a run declares beyond the sequence: each of these leaves the axis.
struct RealSubspaceDeclarations {
  bool off_resonance = false;   // some voxel's df != 0 (derivatives at df = 0 stay)
  bool flow = false;            // flow's phase per order
  bool transmit_array = false;  // each voxel's field turns its pulses' axes
  bool pools = false;           // pooled models run kernels of their own
  bool carried_state = false;   // a carried state may lie anywhere
};

struct RealSubspacePlan {
  bool eligible = false;
  std::string reason;     // why not (names the event or the declaration); empty if eligible
  double axis_rad = 0.0;  // p0 in [0, pi): the first turning pulse's phase modulo a half turn
  // Why the reverse sweep may not take the rewrite although the forward run
  // may (a pulse of zero flip off the axis); empty if it may.
  std::string reverse_reason;
  // Per event: the flip with the half turn folded in (pulses; 0 otherwise),
  // and its sign (+1 or -1), which a derivative along the flip carries back.
  std::vector<double> signed_flip_rad;
  std::vector<int> flip_sign;
  // Per sample (adc events in stream order): the sample is M0 a_0 times this.
  std::vector<std::complex<double>> sample_factor;
};

// Why `declared` leaves the axis whatever the sequence (empty: it does not).
std::string real_subspace_refusal(const RealSubspaceDeclarations& declared);

// Tests `d` under `declared` and, where its states stay on one axis, writes
// the rewrite. A pulse is on the axis when its phase is within tolerance_rad
// of p0 modulo a half turn; pulses of zero flip are ignored.
RealSubspacePlan plan_real_subspace(const Description& d, const RealSubspaceDeclarations& declared,
                                    double tolerance_rad = 1e-6);

}  // namespace larmor::sequence
