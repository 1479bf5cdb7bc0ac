// Absorption lineshapes of a bound (macromolecular) pool, for magnetisation
// transfer: a pulse of power omega1^2 at an offset Delta saturates the bound
// pool's longitudinal magnetisation at the rate W = pi omega1^2 g(2 pi Delta)
// (Henkelman et al., MRM 29:759, 1993), g normalised over angular frequency
// (integral of g d omega = 1; units s/rad). With the power integral of a
// pulse, sum omega1^2 dt (the `saturation` each pulse sample carries), the
// bound pool keeps exp(-pi g sum omega1^2 dt) of its Mz through the pulse.
//
//   Gaussian        g = T2 / sqrt(2 pi) exp(-(w T2)^2 / 2)
//   Lorentzian      g = (T2 / pi) / (1 + (w T2)^2)
//   super-Lorentzian (lipid bilayers, the usual tissue model):
//                   g = sqrt(2 / pi) int_0^1 T2 / |3u^2 - 1| exp(-2 (w T2 / (3u^2 - 1))^2) du
//
// The super-Lorentzian diverges on resonance (the magic angle); below
// `super_lorentzian_cutoff_hz` it is held at its value at the cutoff, the
// usual practical choice (the pool is saturated by off-resonant pulses; an
// on-resonance excitation's bound-pool saturation is then an estimate).
#pragma once

#include <string>

namespace larmor::tissue {

enum class Lineshape { gaussian, lorentzian, super_lorentzian };

// "gaussian", "lorentzian", "super_lorentzian"; throws std::invalid_argument
// naming the text otherwise.
Lineshape lineshape_named(const std::string& name);
const char* lineshape_name(Lineshape shape);

inline constexpr double super_lorentzian_cutoff_hz = 1000.0;

// g(2 pi offset_hz) for a bound pool of transverse relaxation t2_s > 0
// (s/rad). Throws std::invalid_argument for t2_s <= 0 or non-finite input.
double absorption_lineshape(Lineshape shape, double offset_hz, double t2_s);

// The fraction of the bound pool's Mz left after a pulse of power integral
// omega1_squared_dt = sum omega1^2 dt (rad^2/s) at offset_hz.
double bound_pool_saturation(Lineshape shape, double offset_hz, double t2_s,
                             double omega1_squared_dt);

}  // namespace larmor::tissue
