#include "sequence/real_subspace.hpp"

#include <cmath>
#include <string>
#include <utility>

namespace larmor::sequence {

namespace {

constexpr double kPi = 3.14159265358979323846;

RealSubspacePlan refused(std::string reason) {
  RealSubspacePlan p;
  p.reason = std::move(reason);
  return p;
}

std::string degrees(double rad) {
  const double deg = rad * 180.0 / kPi;
  std::string s = std::to_string(std::round(deg * 100.0) / 100.0);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s + " deg";
}

// A phase measured in half turns from the axis: how far it lies from the
// nearest whole half turn [rad], and the sign that half turn gives a flip.
struct HalfTurns {
  double off_rad;
  int flip_sign;
};
HalfTurns half_turns_from(double phase_rad, double axis_rad) {
  const double turns = (phase_rad - axis_rad) / kPi;
  const double whole = std::round(turns);
  return {std::abs(turns - whole) * kPi, std::fmod(std::abs(whole), 2.0) == 1.0 ? -1 : 1};
}

}  // namespace

std::string real_subspace_refusal(const RealSubspaceDeclarations& declared) {
  if (declared.off_resonance) {
    return "off-resonance is declared: it is refocused at the echo centres, not between them";
  }
  if (declared.flow) return "flow is declared: its phase per order leaves the axis";
  if (declared.transmit_array) {
    return "a transmit array is declared: its phase turns each voxel's pulse axes";
  }
  if (declared.pools) return "a pooled model runs kernels of its own";
  if (declared.carried_state) return "a carried state may lie off the axis";
  return {};
}

RealSubspacePlan plan_real_subspace(const Description& d, const RealSubspaceDeclarations& declared,
                                    double tolerance_rad) {
  if (std::string reason = real_subspace_refusal(declared); !reason.empty()) {
    return refused(std::move(reason));
  }

  RealSubspacePlan p;
  const std::size_t n = d.events.size();
  p.signed_flip_rad.assign(n, 0.0);
  p.flip_sign.assign(n, 1);
  bool have_axis = false;
  for (std::size_t i = 0; i < n; ++i) {
    const Event& e = d.events[i];
    if (e.kind == EventKind::waveform_pulse) {
      return refused("event " + std::to_string(i) +
                     ": a pulse played from its waveform relaxes and precesses as it turns");
    }
    if (e.kind != EventKind::pulse) continue;
    if (e.slice_profile > 0) {
      return refused("event " + std::to_string(i) +
                     ": a slice-selective pulse's rotation axis has a component along z");
    }
    if (e.flip_rad == 0.0) continue;
    if (e.rf_frequency_hz != 0.0) {
      return refused("event " + std::to_string(i) + ": a pulse " +
                     std::to_string(e.rf_frequency_hz) +
                     " Hz off resonance turns about an axis with a z component");
    }
    if (!have_axis) {
      have_axis = true;
      p.axis_rad = e.phase_rad - kPi * std::floor(e.phase_rad / kPi);  // [0, pi)
    }
    const HalfTurns h = half_turns_from(e.phase_rad, p.axis_rad);
    if (h.off_rad > tolerance_rad) {
      return refused("event " + std::to_string(i) + ": its phase is " + degrees(h.off_rad) +
                     " from the axis of the first pulse (" + degrees(p.axis_rad) +
                     " modulo 180 deg), so the states leave the axis");
    }
    p.flip_sign[i] = h.flip_sign;
    p.signed_flip_rad[i] = p.flip_sign[i] * e.flip_rad;
  }
  // A pulse of zero flip is the identity wherever it turns, but its flip
  // derivative turns the states about its own axis: the reverse sweep's
  // sequence gradients stay on the axis only where that is the axis too.
  for (std::size_t i = 0; i < n && p.reverse_reason.empty(); ++i) {
    const Event& e = d.events[i];
    if (e.kind != EventKind::pulse || e.flip_rad != 0.0) continue;
    const HalfTurns h = half_turns_from(e.phase_rad, p.axis_rad);
    if (e.rf_frequency_hz != 0.0 || h.off_rad > tolerance_rad) {
      p.reverse_reason = "event " + std::to_string(i) +
                         ": a pulse of zero flip off the axis (its flip derivative leaves it)";
    } else {
      p.flip_sign[i] = h.flip_sign;
    }
  }
  for (const Event& e : d.events) {
    if (e.kind != EventKind::adc) continue;
    // M0 F+_0 e^{-i q} with F+_0 = i e^{i p0} a_0.
    p.sample_factor.push_back(std::complex<double>(0.0, 1.0) *
                              std::polar(1.0, p.axis_rad - e.phase_rad));
  }
  p.eligible = true;
  return p;
}

}  // namespace larmor::sequence
