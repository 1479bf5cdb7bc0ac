// Reference EPG and isochromat simulators; see epg_reference.hpp for what each is.
//
// Why the isochromat dephasing is +theta_j per shift. Let M+(theta) = Mx + i My
// of the spin at dephasing angle theta and expand it over the orders,
//   M+(theta) = sum_k F_k exp(i k theta),  F_k = mean over theta of M+ exp(-i k theta),
// so that F_0 (the voxel mean) is the signal. The shift of event_abi.hpp is
// F'_k = F_{k-1} for every signed k (F+_k <- F+_{k-1}, F-_k <- F-_{k+1}), so
//   M+'(theta) = sum_k F_{k-1} exp(i k theta) = exp(i theta) M+(theta):
// each spin turns about +z by +theta, the sense in which positive off-resonance
// turns it (F+ *= exp(+i 2 pi df t)). conj(M+) expands over conj(F_{-k}) = F-_k
// and the real Mz over Z_k with Z_{-k} = conj(Z_k), so the Bloch rotation, applied
// spin by spin, acts order by order as the 3x3 EPG matrix, relaxation acts
// alike on every order, and recovery, adding the same amount to every spin,
// feeds Z_0 only. With n spins at theta_j = 2 pi j / n the discrete coefficients
// are sums F_k + F_{k+n} + F_{k-n} + ...; after S shifts only |k| <= S are
// populated, so with n > 2S nothing aliases and the two simulators agree.
// Dephasing by -theta_j instead would relabel spin j as n-j: the same samples,
// but the state read off as F+_k would be conj(F-_k) (the mirror order).
#include "reference/epg_reference.hpp"

#include "sequence/waveform_pulses.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace larmor::reference {
namespace {

using larmor::sequence::Description;
using larmor::sequence::Event;
using larmor::sequence::EventKind;
namespace action = larmor::sequence::action;

constexpr double kPi = 3.14159265358979323846;
constexpr Complex kI{0.0, 1.0};

// exp(-t/T) with T = infinity meaning no relaxation.
double decay(double duration_s, double time_constant_s) {
  if (std::isinf(time_constant_s)) return 1.0;
  return std::exp(-duration_s / time_constant_s);
}

void check_tissue(const Tissue& tissue) {
  if (!(tissue.t1_s > 0.0) || !(tissue.t2_s > 0.0)) {
    throw std::invalid_argument("reference: T1 and T2 must be positive (or infinite)");
  }
}

void check_event(const Event& e) {
  if (!std::isfinite(e.duration_s) || e.duration_s < 0.0) {
    throw std::invalid_argument("reference: event duration must be finite and >= 0");
  }
  if ((e.action & ~action::all_bits) != 0u) {
    throw std::invalid_argument("reference: unknown action bits");
  }
  if (e.kind != EventKind::wait && e.kind != EventKind::pulse && e.kind != EventKind::adc) {
    throw std::invalid_argument(e.kind == EventKind::waveform_pulse
                                    ? "reference: a pulse played from its waveform (give the "
                                      "reference its samples: sequence::expand_waveform_pulses)"
                                    : "reference: unknown event kind");
  }
}

std::array<Complex, 3> apply(const RfMatrix& m, const std::array<Complex, 3>& v) {
  std::array<Complex, 3> out{};
  for (int row = 0; row < 3; ++row) {
    out[row] = m[row][0] * v[0] + m[row][1] * v[1] + m[row][2] * v[2];
  }
  return out;
}

// ---- isochromats ---------------------------------------------------------

// Right-handed rotation by `flip` about the transverse axis at `phase`
// (Rodrigues: R = cos a I + sin a [n]x + (1 - cos a) n n^T with n = (cos p, sin p, 0)).
Rotation rf_rotation(double flip_rad, double phase_rad) {
  const double c = std::cos(flip_rad), s = std::sin(flip_rad);
  const double nx = std::cos(phase_rad), ny = std::sin(phase_rad);
  return {{{c + (1 - c) * nx * nx, (1 - c) * nx * ny, s * ny},
           {(1 - c) * nx * ny, c + (1 - c) * ny * ny, -s * nx},
           {-s * ny, s * nx, c}}};
}

struct Spins {
  std::vector<double> mx, my, mz;
  std::vector<double> cos_dephasing, sin_dephasing;  // of the per-shift angle

  explicit Spins(int n) : mx(n, 0.0), my(n, 0.0), mz(n, 1.0), cos_dephasing(n), sin_dephasing(n) {
    for (int j = 0; j < n; ++j) {
      cos_dephasing[j] = std::cos(isochromat_dephasing_rad(j, n));
      sin_dephasing[j] = std::sin(isochromat_dephasing_rad(j, n));
    }
  }
  int size() const { return int(mx.size()); }

  void rotate(const Rotation& r) {
    for (int j = 0; j < size(); ++j) {
      const double x = mx[j], y = my[j], z = mz[j];
      mx[j] = r[0][0] * x + r[0][1] * y + r[0][2] * z;
      my[j] = r[1][0] * x + r[1][1] * y + r[1][2] * z;
      mz[j] = r[2][0] * x + r[2][1] * y + r[2][2] * z;
    }
  }
  void turn_about_z(int j, double c, double s) {
    const double x = mx[j], y = my[j];
    mx[j] = c * x - s * y;
    my[j] = s * x + c * y;
  }
  void shift() {
    for (int j = 0; j < size(); ++j) turn_about_z(j, cos_dephasing[j], sin_dephasing[j]);
  }
  void spoil() {
    std::fill(mx.begin(), mx.end(), 0.0);
    std::fill(my.begin(), my.end(), 0.0);
  }
  void relax_and_precess(double duration_s, const Tissue& tissue) {
    const double e1 = decay(duration_s, tissue.t1_s), e2 = decay(duration_s, tissue.t2_s);
    const double angle = 2.0 * kPi * tissue.df_hz * duration_s;
    const double c = e2 * std::cos(angle), s = e2 * std::sin(angle);
    for (int j = 0; j < size(); ++j) {
      turn_about_z(j, c, s);  // relaxation folded in: it commutes with the turn
      mz[j] = mz[j] * e1 + (1.0 - e1);
    }
  }
  Complex mean_transverse() const {
    Complex sum = 0.0;
    for (int j = 0; j < size(); ++j) sum += Complex(mx[j], my[j]);
    return sum / double(size());
  }
};

Spins run_isochromats(const Description& d, const Tissue& tissue, int n_isochromats,
                      std::vector<Complex>& samples, const PulseOverride& pulse = {}) {
  check_tissue(tissue);
  if (n_isochromats < 1) throw std::invalid_argument("reference: need at least one isochromat");
  Spins spins(n_isochromats);
  // A lobe with a duration: the spins relax and precess through it.
  const auto shift = [&] {
    spins.shift();
    spins.relax_and_precess(d.crusher.duration_s, tissue);
  };
  for (const Event& e : d.events) {
    check_event(e);
    if (e.action & action::crush_before) shift();
    if (e.kind == EventKind::pulse) {
      const double b1 = (e.action & action::b1_fixed) != 0 ? 1.0 : tissue.b1;
      spins.rotate(pulse ? pulse(std::size_t(&e - d.events.data()))
                         : rf_rotation(e.flip_rad * b1, e.phase_rad));
    }
    if (e.kind == EventKind::adc) {
      if (e.voxel_weights != 0) {
        throw std::invalid_argument(
            "reference: the isochromats span one crusher turn; a sample weighted over a voxel "
            "needs the EPG reference (voxel_mean)");
      }
      samples.push_back(tissue.m0 * spins.mean_transverse() * std::polar(1.0, -e.phase_rad));
    }
    if (e.action & action::crush_after) shift();
    if (e.action & action::shift_after) shift();
    if (e.action & action::spoil_after) spins.spoil();
    spins.relax_and_precess(e.duration_s, tissue);
  }
  return spins;
}

}  // namespace

// ---- EPG -----------------------------------------------------------------

RfMatrix rf_matrix(double flip_rad, double phase_rad) {
  const double half_cos2 = std::pow(std::cos(flip_rad / 2), 2);
  const double half_sin2 = std::pow(std::sin(flip_rad / 2), 2);
  const double s = std::sin(flip_rad), c = std::cos(flip_rad);
  const Complex e1 = std::polar(1.0, phase_rad), e2 = std::polar(1.0, 2.0 * phase_rad);
  return {{{half_cos2, e2 * half_sin2, -kI * e1 * s},
           {std::conj(e2) * half_sin2, half_cos2, kI * std::conj(e1) * s},
           {-0.5 * kI * std::conj(e1) * s, 0.5 * kI * e1 * s, c}}};
}

EpgState::EpgState(int orders) : orders_(orders) {
  if (orders < 1) throw std::invalid_argument("EpgState: orders must be >= 1");
  f_.assign(2 * std::size_t(orders) - 1, Complex(0.0));
  z_.assign(orders, Complex(0.0));
  z_[0] = 1.0;
}

Complex EpgState::f(int signed_order) const {
  if (signed_order <= -orders_ || signed_order >= orders_) {
    throw std::out_of_range("EpgState::f: order " + std::to_string(signed_order));
  }
  return f_[index(signed_order)];
}

Complex EpgState::z(int k) const {
  if (k < 0 || k >= orders_) throw std::out_of_range("EpgState::z: order " + std::to_string(k));
  return z_[k];
}

void EpgState::set_f(int signed_order, Complex value) {
  (void)f(signed_order);  // range check
  f_[index(signed_order)] = value;
}

void EpgState::set_z(int k, Complex value) {
  (void)z(k);
  if (k == 0 && value.imag() != 0.0) throw std::invalid_argument("EpgState: Z_0 must be real");
  z_[k] = value;
}

void EpgState::rotate(double flip_rad, double phase_rad) {
  const RfMatrix rf = rf_matrix(flip_rad, phase_rad);
  // Order 0: F+_0 and F-_0 are one entry. The matrix maps (F, conj F, real Z) to
  // (F', conj F', real Z') exactly; check it to round-off rather than assume it.
  const Complex f0 = f_[index(0)];
  const std::array<Complex, 3> out0 = apply(rf, {f0, std::conj(f0), z_[0]});
  const double scale = 1.0 + std::abs(f0) + std::abs(z_[0]);
  if (std::abs(out0[1] - std::conj(out0[0])) > 1e-12 * scale ||
      std::abs(out0[2].imag()) > 1e-12 * scale) {
    throw std::logic_error("EpgState::rotate: F-_0 and conj(F+_0) disagree after the pulse");
  }
  f_[index(0)] = out0[0];
  z_[0] = out0[2].real();
  for (int k = 1; k < orders_; ++k) {
    const std::array<Complex, 3> out = apply(rf, {f_[index(k)], std::conj(f_[index(-k)]), z_[k]});
    f_[index(k)] = out[0];
    f_[index(-k)] = std::conj(out[1]);
    z_[k] = out[2];
  }
}

void EpgState::shift() {
  // F_k <- F_{k-1} over the whole signed array: F+ climbs, F- descends, the old
  // F-_1 becomes F+_0's conjugate partner, F+_{K-1} falls off, F_{-(K-1)} is new.
  for (std::size_t i = f_.size() - 1; i > 0; --i) f_[i] = f_[i - 1];
  f_[0] = 0.0;
}

void EpgState::spoil() { std::fill(f_.begin(), f_.end(), Complex(0.0)); }

void EpgState::relax_and_precess(double duration_s, const Tissue& tissue) {
  const double e1 = decay(duration_s, tissue.t1_s), e2 = decay(duration_s, tissue.t2_s);
  // F+_k gains exp(+i phi) and F-_k exp(-i phi), so F_{-k} = conj(F-_k) gains
  // exp(+i phi) as well: one factor for the whole signed array.
  const Complex transverse = e2 * std::polar(1.0, 2.0 * kPi * tissue.df_hz * duration_s);
  for (Complex& value : f_) value *= transverse;
  for (int k = 1; k < orders_; ++k) z_[k] *= e1;
  z_[0] = z_[0] * e1 + (1.0 - e1);
}

// Signed order n dephases by n q (q = 2 pi x the crusher moment, rad/m).
// Over a gradient-free interval t a spin moving at v through the pattern
// exp(i n q x) sees exp(i n q (x - v t)), and diffusion attenuates it by
// exp(-D (n q)^2 t). Z_k is the pattern exp(i k q x) of Mz: the same.
// Washout replaces the fraction 1 - w, w = exp(-|v| t / thickness), of the
// spins by relaxed ones (Z_0 = 1, nothing else).
void EpgState::transport(double duration_s, const Tissue& tissue,
                         const larmor::sequence::CrusherGradient& crusher) {
  const double q = 2.0 * kPi * crusher.moment_per_m;
  for (int n = -(orders_ - 1); n < orders_; ++n) {
    const double dephasing = n * q;
    f_[index(n)] *= std::exp(-tissue.adc_m2_s * dephasing * dephasing * duration_s) *
                    std::polar(1.0, -dephasing * tissue.velocity_m_s * duration_s);
  }
  for (int k = 1; k < orders_; ++k) {
    const double dephasing = k * q;
    z_[k] *= std::exp(-tissue.adc_m2_s * dephasing * dephasing * duration_s) *
             std::polar(1.0, -dephasing * tissue.velocity_m_s * duration_s);
  }
  wash_out(duration_s, tissue, crusher);
}

void EpgState::wash_out(double duration_s, const Tissue& tissue,
                        const larmor::sequence::CrusherGradient& crusher) {
  if (crusher.slice_thickness_m > 0.0) {
    const double w =
        std::exp(-std::abs(tissue.velocity_m_s) * duration_s / crusher.slice_thickness_m);
    for (Complex& value : f_) value *= w;
    for (int k = 1; k < orders_; ++k) z_[k] *= w;
    z_[0] = w * z_[0] + (1.0 - w);
  }
}

// During a lobe of duration tau the dephasing of signed order n grows
// linearly from n q to (n + 1) q: the b-value is the integral of its square,
// q^2 tau ((n + 1/2)^2 + 1/12), and the flow phase that of its mean, q v tau
// (n + 1/2). Z does not move; it sees a static pattern for tau. The lobe
// takes time: relaxation, precession and washout run through it.
void EpgState::lobe_shift(const Tissue& tissue, const larmor::sequence::CrusherGradient& crusher) {
  const double q = 2.0 * kPi * crusher.moment_per_m, tau = crusher.duration_s;
  for (int n = -(orders_ - 1); n < orders_; ++n) {
    const double mean = n + 0.5;
    f_[index(n)] *= std::exp(-tissue.adc_m2_s * q * q * tau * (mean * mean + 1.0 / 12.0)) *
                    std::polar(1.0, -q * mean * tissue.velocity_m_s * tau);
  }
  for (int k = 1; k < orders_; ++k) {
    z_[k] *= std::exp(-tissue.adc_m2_s * std::pow(k * q, 2) * tau) *
             std::polar(1.0, -k * q * tissue.velocity_m_s * tau);
  }
  shift();
  relax_and_precess(tau, tissue);
  wash_out(tau, tissue, crusher);
}

Complex transmit_field(const Description& d, const Tissue& tissue, int shim) {
  if (shim <= 0 || d.shims.channels == 0 || tissue.transmit.empty()) return 1.0;
  Complex b = 0.0;
  for (int c = 0; c < d.shims.channels; ++c) {
    b += d.shims.weights[std::size_t((shim - 1) * d.shims.channels + c)] *
         tissue.transmit[std::size_t(c)];
  }
  return b;
}

Complex voxel_mean(const Description& d, const EpgState& state, int table) {
  if (table == 0) return state.f(0);
  const auto& v = d.voxel;
  const auto& r = v.residuals_per_m.at(std::size_t(table - 1));
  Complex sum = 0.0;
  for (int k = -(state.orders() - 1); k < state.orders(); ++k) {
    // The box's mean of exp(i 2 pi m.x): a sinc per edge, the centre's phase.
    double magnitude = 1.0, phase = 0.0;
    for (std::size_t a = 0; a < 3; ++a) {
      const double m = k * v.order_moment_per_m[a] + r[a];
      const double x = kPi * m * v.edges_m[a];
      magnitude *= x == 0.0 ? 1.0 : std::sin(x) / x;
      phase += 2.0 * kPi * m * v.centre_m[a];
    }
    sum += state.f(k) * std::polar(magnitude, phase);
  }
  return sum;
}

void run_events(const Description& d, const Tissue& tissue, EpgState& state,
                std::vector<Complex>& samples) {
  check_tissue(tissue);
  const auto shift = [&] {
    if (d.crusher.duration_s > 0.0) {
      state.lobe_shift(tissue, d.crusher);
    } else {
      state.shift();
    }
  };
  for (const Event& e : d.events) {
    check_event(e);
    if (e.action & action::crush_before) shift();
    if (e.kind == EventKind::pulse) {
      const Complex b = transmit_field(d, tissue, e.shim_index);
      const double b1 = (e.action & action::b1_fixed) != 0 ? 1.0 : tissue.b1;
      state.rotate(e.flip_rad * b1 * std::abs(b), e.phase_rad + std::arg(b));
    }
    if (e.kind == EventKind::adc) {
      samples.push_back(tissue.m0 * voxel_mean(d, state, e.voxel_weights) *
                        std::polar(1.0, -e.phase_rad));
    }
    if (e.action & action::crush_after) shift();
    if (e.action & action::shift_after) shift();
    if (e.action & action::spoil_after) state.spoil();
    state.relax_and_precess(e.duration_s, tissue);
    state.transport(e.duration_s, tissue, d.crusher);
  }
}

std::vector<Complex> simulate(const Description& d, const Tissue& tissue, int orders) {
  if (larmor::sequence::has_waveform_pulses(d)) {
    return simulate(larmor::sequence::expand_waveform_pulses(d), tissue, orders);
  }
  EpgState state(orders);
  std::vector<Complex> samples;
  run_events(d, tissue, state, samples);
  return samples;
}

double isochromat_dephasing_rad(int j, int n_isochromats) {
  return 2.0 * kPi * double(j) / double(n_isochromats);
}

std::vector<Complex> simulate_isochromats(const Description& d, const Tissue& tissue,
                                          int n_isochromats, const PulseOverride& pulse) {
  if (larmor::sequence::has_waveform_pulses(d)) {
    return simulate_isochromats(larmor::sequence::expand_waveform_pulses(d), tissue, n_isochromats,
                                pulse);
  }
  std::vector<Complex> samples;
  run_isochromats(d, tissue, n_isochromats, samples, pulse);
  return samples;
}

EpgState isochromat_final_states(const Description& d, const Tissue& tissue, int n_isochromats,
                                 int orders) {
  std::vector<Complex> samples;
  const Spins spins = run_isochromats(d, tissue, n_isochromats, samples);
  EpgState state(orders);
  const double n = double(spins.size());
  for (int k = -(orders - 1); k < orders; ++k) {
    Complex f_k = 0.0, z_k = 0.0;
    for (int j = 0; j < spins.size(); ++j) {
      // The Fourier kernel is written from theta_j itself, not from the
      // dephasing function, so that a flipped dephasing sign shows as mirrored orders.
      const double theta_j = 2.0 * kPi * double(j) / n;
      const Complex kernel = std::polar(1.0, -k * theta_j);
      f_k += Complex(spins.mx[j], spins.my[j]) * kernel;
      z_k += spins.mz[j] * kernel;
    }
    state.set_f(k, f_k / n);
    if (k == 0) state.set_z(0, (z_k / n).real());
    if (k > 0) state.set_z(k, z_k / n);
  }
  return state;
}

}  // namespace larmor::reference
