// Double-precision reference simulators for testing the EPG kernels.
//
// Two implementations that share no code with the fused kernels (nor with each
// other) and follow the event semantics of kernels/epg/event_abi.hpp:
//
//  * simulate(): an extended phase graph written over ONE signed transverse
//    array F_k, k in [-(K-1), K-1], with F+_k = F_k and F-_k = conj(F_{-k}).
//    The RF pulse is an explicit 3x3 complex matrix on (F+_k, F-_k, Z_k), a
//    shift is a move of the whole array one index up, and free precession is
//    one common factor for every F_k. Truncation at K orders is exactly the
//    kernels': whatever is pushed past order K-1 is lost.
//
//  * simulate_isochromats(): a Bloch simulation of n spins evenly spread over
//    one cycle of the crusher's dephasing, with real 3x3 rotations. It does not
//    truncate; it aliases orders modulo n instead, so with n > 2 * (number of
//    shifts in the stream) it equals the untruncated EPG to round-off.
//
// Isochromat sign convention (derived in epg_reference.cpp, pinned by a test):
// spin j sits at dephasing angle theta_j = 2 pi j / n and one shift rotates it
// about +z by +theta_j, the same sense as positive off-resonance, so its
// transverse magnetisation M+_j = Mx + i My gains exp(+i theta_j). The EPG
// states are then the Fourier coefficients
//   F_k = mean_j M+_j exp(-i k theta_j),   Z_k = mean_j Mz_j exp(-i k theta_j).
//
// Both ignore saturation and rf_frequency_hz: they model one pool and
// instantaneous pulses. Both play a pulse played from its waveform
// (EventKind::waveform_pulse) as the hard pulses at its samples
// (sequence::expand_waveform_pulses, pinned against a file's samples in
// test_pulseq_events.cpp), which the kernels integrate per voxel instead. simulate() also models
// the declared terms (diffusion, flow and washout against the description's crusher, a transmit
// array combined by its shim settings), each written from the physics of its own signed order (see
// epg_reference.cpp); the isochromats do not.
#pragma once

#include <array>
#include <complex>
#include <functional>
#include <limits>
#include <vector>

#include "sequence/description.hpp"

namespace larmor::reference {

using Complex = std::complex<double>;

inline constexpr double kNoRelaxation = std::numeric_limits<double>::infinity();

// A voxel. T1 and T2 may be infinite (no relaxation); they default to that so
// a default-constructed Tissue is well defined.
struct Tissue {
  double m0 = 1.0;
  double t1_s = kNoRelaxation;
  double t2_s = kNoRelaxation;
  double b1 = 1.0;     // transmit scale: effective flip = nominal flip * b1
  double df_hz = 0.0;  // off-resonance
  double adc_m2_s = 0.0;
  double velocity_m_s = 0.0;      // along the crusher's axis
  std::vector<Complex> transmit;  // per-channel field (empty: no array)
};

// A pulse's field relative to nominal: the transmit array's channels combined
// by shim setting `shim`'s weights, 1 without an array or for setting 0.
Complex transmit_field(const larmor::sequence::Description& d, const Tissue& tissue, int shim);

// The RF rotation as the matrix acting on the column (F+_k, F-_k, Z_k):
// row-major, rf[row][column]; the form of Weigel 2015 (J Magn Reson Imaging 41:266).
using RfMatrix = std::array<std::array<Complex, 3>, 3>;
RfMatrix rf_matrix(double flip_rad, double phase_rad);

// EPG state over K orders, stored as the signed transverse array and Z_0..Z_{K-1}.
class EpgState {
 public:
  explicit EpgState(int orders);  // equilibrium: Z_0 = 1, everything else 0

  int orders() const { return orders_; }
  Complex f(int signed_order) const;  // F_k, k in [-(K-1), K-1]
  Complex f_plus(int k) const { return f(k); }
  Complex f_minus(int k) const { return std::conj(f(-k)); }
  Complex z(int k) const;

  void set_f(int signed_order, Complex value);
  void set_z(int k, Complex value);  // Z_0 is real: a complex Z_0 is refused

  // The operators, each exactly as event_abi.hpp defines it.
  void rotate(double flip_rad, double phase_rad);
  void shift();
  void spoil();
  void relax_and_precess(double duration_s, const Tissue& tissue);
  // Diffusion, flow phase and washout over a gradient-free interval, and the
  // shift as a crusher lobe of duration `lobe_s` moving every signed order up.
  void transport(double duration_s, const Tissue& tissue,
                 const larmor::sequence::CrusherGradient& crusher);
  void lobe_shift(const Tissue& tissue, const larmor::sequence::CrusherGradient& crusher);
  void wash_out(double duration_s, const Tissue& tissue,
                const larmor::sequence::CrusherGradient& crusher);

 private:
  int index(int signed_order) const { return signed_order + orders_ - 1; }

  int orders_;
  std::vector<Complex> f_;  // f_[k + K - 1] = F_k
  std::vector<Complex> z_;  // z_[k] = Z_k
};

// What a sample records: F_0, or for a sample with voxel weights (1-based
// `table` into the description's VoxelIntegral) the voxel's mean of the
// signed orders, each F_k times the box's mean of exp(i 2 pi (k u + r).x).
Complex voxel_mean(const larmor::sequence::Description& d, const EpgState& state, int table);

// Plays the events on `state`, appending one sample per adc event.
void run_events(const larmor::sequence::Description& d, const Tissue& tissue, EpgState& state,
                std::vector<Complex>& samples);

// Samples of `d` from equilibrium with `orders` EPG orders (>= 1).
std::vector<Complex> simulate(const larmor::sequence::Description& d, const Tissue& tissue,
                              int orders);

// The phase [rad] spin j of n gains per shift: +2 pi j / n (see above).
double isochromat_dephasing_rad(int j, int n_isochromats);

// A rotation of (Mx, My, Mz), row-major.
using Rotation = std::array<std::array<double, 3>, 3>;
// The rotation an isochromat run plays for the pulse at event index i in
// place of the instantaneous one (shaped pulses: slice_reference.hpp).
using PulseOverride = std::function<Rotation(std::size_t)>;

// Samples of `d` from equilibrium over n_isochromats (>= 1) spins.
std::vector<Complex> simulate_isochromats(const larmor::sequence::Description& d,
                                          const Tissue& tissue, int n_isochromats,
                                          const PulseOverride& pulse = {});

// The final isochromat magnetisation projected onto EPG orders 0..orders-1 by
// the Fourier convention above; for comparing states, not just samples.
EpgState isochromat_final_states(const larmor::sequence::Description& d, const Tissue& tissue,
                                 int n_isochromats, int orders);

}  // namespace larmor::reference
