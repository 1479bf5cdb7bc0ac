// The shipped sequence builders. Each turns a few protocol parameters into a
// description made of the operators in operators.hpp.
#pragma once

#include <string>
#include <vector>

#include "sequence/description.hpp"

// Kept in larmor::sequence, not sequence::builders: about 280 unqualified call sites use it.
namespace larmor::sequence {

// Multi-echo spin echo (CPMG): excitation, then `echoes` refocusing pulses
// between crushers, an echo-centre readout midway between refocusing pulses.
struct MeseParams {
  int echoes = 32;
  double echo_spacing_s = 0.010;
  double excitation_deg = 90.0;
  double excitation_phase_deg = 0.0;
  double refocusing_deg = 180.0;
  double refocusing_phase_deg = 90.0;  // CPMG: a quarter turn from the excitation
};
Description build_mese(const MeseParams& p);

enum class Spoiler { gradient_shift, ideal };

// RF-spoiled gradient echo: pulse phases follow the quadratic schedule
// phi_n = increment * n (n + 1) / 2, the receiver follows the pulse, and an
// unbalanced spoiler dephases one order after each readout (or ideal spoiling).
struct SpgrParams {
  double flip_deg = 15.0;
  double tr_s = 0.008;
  double te_s = 0.0025;
  int repetitions = 3564;
  double phase_increment_deg = 117.0;
  Spoiler spoiler = Spoiler::gradient_shift;
};
Description build_spgr(const SpgrParams& p);

// Balanced SSFP, one train per phase-cycling increment: pulse n of a train has
// phase n * increment and the receiver follows it; `dummy_repetitions` reach
// the steady state unrecorded before `repetitions` recorded ones.
struct BssfpParams {
  double flip_deg = 30.0;
  double tr_s = 0.005;
  double te_s = -1.0;  // < 0: TR / 2
  int dummy_repetitions = 400;
  int repetitions = 1;
  std::vector<double> phase_increments_deg = {180.0};
};
Description build_bssfp(const BssfpParams& p);

// Turbo spin echo with a variable refocusing train: mese with one refocusing
// flip per echo (`refocusing_deg` of length 1 repeats it).
struct TseParams {
  int echoes = 16;
  double echo_spacing_s = 0.008;
  double excitation_deg = 90.0;
  double excitation_phase_deg = 0.0;
  std::vector<double> refocusing_deg = {180.0};
  double refocusing_phase_deg = 90.0;
};
Description build_tse(const TseParams& p);

// T2 preparation: tip down (90 at phase 0), `refocusings` refocusing pulses
// (180 at phase 90, CPMG) spaced te / refocusings with half a spacing before
// the first and after the last, tip back up (90 at phase 180), spoil what is
// left transverse. With ideal pulses it stores exp(-te / T2) whatever T1 and
// the off-resonance.
struct T2Preparation {
  double te_s = 0.05;
  int refocusings = 1;
};
Description& operator<<(Description& d, const T2Preparation& prep);

// Magnetisation-prepared gradient echo (MPRAGE-style): per shot, a
// preparation (an inversion, spoiled after it, or a T2 preparation), a delay
// `ti_s` to the first readout, `readouts` spoiled gradient echoes (RF phase
// quadratic with `phase_increment_deg` and one shift per readout, or ideal
// spoiling), then a recovery delay; `shots` shots, every readout recorded.
enum class Preparation { inversion, t2 };
struct MprageParams {
  Preparation preparation = Preparation::inversion;
  bool inversion_b1_scaled = true;  // false: an ideal inversion whatever B1 is
  double ti_s = 0.9;
  double t2prep_te_s = 0.05;
  int readouts = 64;
  double flip_deg = 8.0;
  double tr_s = 0.007;
  double te_s = 0.003;
  double recovery_s = 0.5;
  int shots = 2;
  double phase_increment_deg = 117.0;
  Spoiler spoiler = Spoiler::gradient_shift;
};
Description build_mprage(const MprageParams& p);

// Double-echo steady state (DESS): per repetition a pulse (constant phase,
// no RF spoiling), the FID echo S+ sampled at TE, an unbalanced gradient that
// dephases one order, and the echo S- sampled TE before the next pulse (the
// sample records F+_0 there, the conjugate of the refocused F-_0). `dummy`
// repetitions reach the steady state unrecorded; each recorded repetition
// gives two samples, S+ then S-.
struct DessParams {
  double flip_deg = 30.0;
  double tr_s = 0.020;
  double te_s = 0.005;
  int dummy_repetitions = 300;
  int repetitions = 1;
};
Description build_dess(const DessParams& p);

// Magnetisation-transfer saturation: an off-resonant Gaussian pulse (the
// envelope exp(-t^2 / (2 sigma^2)) with sigma = duration / 5, cut at
// +-2.5 sigma), given by its on-resonance flip angle, duration and frequency
// offset, split into `samples` hard pulses (ShapedPulse: each carries the
// offset and its power for a bound pool; for the free pool it is a direct
// saturation), then ideal spoiling of what it left transverse.
struct MtSaturation {
  double flip_deg = 500.0;
  double duration_s = 0.010;
  double offset_hz = 1200.0;
  int samples = 256;  // keep offset x duration / samples well below 1
};
Description& operator<<(Description& d, const MtSaturation& mt);

// MT-weighted spoiled gradient echo (the MTsat protocol's MT scan): per
// repetition an MtSaturation, `mt_gap_s` to the excitation, then an RF-spoiled
// gradient echo as in build_spgr (quadratic RF phase, the receiver following,
// one shift after the readout or ideal spoiling). The excitation is a hard
// pulse, instantaneous unless `excitation_duration_s` > 0 gives it a
// rectangle (centred on its instant, half of it within the gap and half
// within TE) and so a power integral that saturates a bound pool too.
struct MtSpgrParams {
  MtSaturation mt;
  double mt_gap_s = 0.0005;
  double excitation_duration_s = 0.0;
  double flip_deg = 6.0;
  double tr_s = 0.028;
  double te_s = 0.003;
  int repetitions = 200;
  double phase_increment_deg = 117.0;
  Spoiler spoiler = Spoiler::gradient_shift;
};
Description build_mt_spgr(const MtSpgrParams& p);

// One row of a fingerprinting schedule (the snapMRF CSV layout).
struct MrfRow {
  double flip_fraction = 0.0;  // of the nominal flip angle
  double rf_phase_deg = 0.0;
  double tr_extension_s = 0.0;  // added to the base TR
  double te_extension_s = 0.0;  // added to the base TE
};

// Inversion-prepared FISP fingerprinting train: an inversion (transverse
// spoiled after it), a delay, then one excitation and one readout per row with
// a gradient shift after each readout.
struct MrfParams {
  std::vector<MrfRow> schedule;
  double nominal_flip_deg = 60.0;
  double base_tr_s = 0.016;
  double base_te_s = 0.0035;
  bool inversion = true;
  bool inversion_b1_scaled = true;  // false: an ideal inversion whatever B1 is
  double inversion_delay_s = 0.020;
};
Description build_mrf(const MrfParams& p);

// Reads a schedule CSV (header line, then four numeric columns: flip fraction,
// RF phase in degrees, TR extension in ms, TE extension in ms). Errors name the
// file and line.
std::vector<MrfRow> read_mrf_schedule_csv(const std::string& path);

// The same layout as text (full precision), for read_mrf_schedule_csv.
std::string format_mrf_schedule_csv(const std::vector<MrfRow>& rows);

}  // namespace larmor::sequence
