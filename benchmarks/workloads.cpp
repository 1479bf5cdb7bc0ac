#include "workloads.hpp"

#include <cmath>
#include <complex>
#include <stdexcept>

#include "sequence/builders/builders.hpp"

namespace larmor::benchmarks {

sequence::MrfParams mrf_workload_params(const std::string& schedule_csv) {
  sequence::MrfParams p;
  p.schedule = sequence::read_mrf_schedule_csv(schedule_csv);
  return p;
}

Workload make_workload(const std::string& name, const std::string& schedule_csv) {
  Workload w;
  w.name = name;
  if (name == "mese") {
    sequence::MeseParams p;  // 90, 32 x 180 with crushers, ESP 10 ms
    w.sequence = sequence::build_mese(p);
    w.full_voxels = 1000000;
  } else if (name == "spgr3d") {
    sequence::SpgrParams p;  // 15 deg, 117 deg quadratic, TE 2.5 ms, TR 8 ms, 3564 TRs
    w.sequence = sequence::build_spgr(p);
    w.full_voxels = 1000000;
    w.max_order = 63;
  } else if (name == "mrf") {
    w.sequence = sequence::build_mrf(mrf_workload_params(schedule_csv));
    w.full_voxels = 140000;
    w.max_order = 63;
  } else if (name == "cest") {
    w.sequence = cest_z_spectrum();
    w.full_voxels = 1000000;
  } else {
    throw std::invalid_argument("unknown workload '" + name + "' (mese, spgr3d, mrf, cest)");
  }
  return w;
}

sequence::Description cest_z_spectrum() {
  constexpr double kPi = 3.14159265358979323846;
  constexpr double raster = 1e-6, saturation = 3.0, w1 = 2 * kPi * 42.577;  // 1 uT
  sequence::Description d;
  d.name = "cest";
  for (int k = 0; k <= 40; ++k) {
    sequence::PulseWaveform w;
    w.runs.push_back({w1 * raster, 0.0, raster, std::int64_t(std::llround(saturation / raster))});
    w.rf_frequency_hz = -2000.0 + 100.0 * k;
    d.waveforms.push_back(w);
    sequence::Event sat;
    sat.kind = sequence::EventKind::waveform_pulse;
    sat.waveform = k + 1;
    sat.duration_s = 1e-3;
    sat.action = sequence::action::spoil_after;
    d.events.push_back(sat);
    sequence::Event excite;
    excite.kind = sequence::EventKind::pulse;
    excite.flip_rad = 0.5 * kPi;
    excite.duration_s = 2e-3;
    d.events.push_back(excite);
    sequence::Event adc;
    adc.kind = sequence::EventKind::adc;
    adc.duration_s = 2.0;  // recovery before the next offset
    adc.action = sequence::action::spoil_after;
    d.events.push_back(adc);
  }
  return d;
}

tissue::Tissue workload_tissue(const std::string& name, std::int64_t voxels) {
  tissue::Tissue t;
  t.voxels = voxels;
  t.t1_s.map.resize(std::size_t(voxels));
  t.t2_s.map.resize(std::size_t(voxels));
  t.b1.map.resize(std::size_t(voxels));
  // Additive recurrences with irrational steps (golden-ratio family).
  const double a1 = 0.7548776662466927, a2 = 0.5698402909980532, a3 = 0.6180339887498949;
  double t1_lo = 0.1, t1_hi = 4.0, t2_lo = 0.01, t2_hi = 2.0, b1_lo = 0.6, b1_hi = 1.4;
  if (name == "mese") {
    t1_lo = 1.0, t1_hi = 1.0, t2_lo = 0.02, t2_hi = 2.0, b1_lo = 0.5, b1_hi = 1.2;
  }
  for (std::int64_t i = 0; i < voxels; ++i) {
    const double u1 = std::fmod(0.5 + a1 * double(i), 1.0);
    const double u2 = std::fmod(0.5 + a2 * double(i), 1.0);
    const double u3 = std::fmod(0.5 + a3 * double(i), 1.0);
    const double t2 = t2_lo * std::pow(t2_hi / t2_lo, u2);
    const double t1 = std::max(t1_lo * std::pow(t1_hi / t1_lo, u1), t2);
    t.t1_s.map[std::size_t(i)] = static_cast<float>(t1);
    t.t2_s.map[std::size_t(i)] = static_cast<float>(t2);
    t.b1.map[std::size_t(i)] = static_cast<float>(b1_lo + (b1_hi - b1_lo) * u3);
  }
  return t;
}

std::vector<std::string> known_terms() {
  return {"off_resonance", "diffusion",  "flow",     "transmit",
          "second_pool",   "bound_pool", "in_phase", "slice_profile"};
}

void declare_terms(const std::string& terms, sequence::Description& d, tissue::Tissue& t) {
  std::vector<std::string> names;
  if (terms == "all") {  // every term (the pools are layouts of their own)
    names = {"off_resonance", "diffusion", "flow", "transmit"};
  } else if (terms != "none" && !terms.empty()) {
    std::string::size_type at = 0;
    while (at <= terms.size()) {
      const auto comma = terms.find(',', at);
      names.push_back(
          terms.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
  }
  const std::size_t n = std::size_t(t.voxels);
  // Low-discrepancy fractions, independent of the workload's own.
  const auto fraction = [](std::size_t i, double step) {
    return std::fmod(0.25 + step * double(i), 1.0);
  };
  for (const auto& name : names) {
    if (name == "off_resonance") {
      t.df_hz.map.resize(n);
      for (std::size_t i = 0; i < n; ++i)
        t.df_hz.map[i] = float(-50.0 + 100.0 * fraction(i, 0.4142135623730951));
    } else if (name == "diffusion" || name == "flow") {
      d.crusher.moment_per_m = 1000.0;
      sequence::place_lobes_within_timing(d, 1e-3);
      auto& values = name == "diffusion" ? t.adc_m2_s.map : t.velocity_m_s.map;
      values.resize(n);
      for (std::size_t i = 0; i < n; ++i) {
        const double u = fraction(i, name == "diffusion" ? 0.7320508075688772 : 0.2360679774997897);
        values[i] = name == "diffusion" ? float((0.3 + 2.7 * u) * 1e-9) : float(0.1 * (u - 0.5));
      }
      if (name == "flow") d.crusher.slice_thickness_m = 5e-3;
    } else if (name == "transmit") {
      constexpr int channels = 8;
      d.shims.channels = channels;
      d.shims.weights.clear();
      for (int s = 0; s < 2; ++s) {
        for (int c = 0; c < channels; ++c) {
          d.shims.weights.push_back(std::polar(1.0 / channels, 0.785398 * c * (s + 1)));
        }
      }
      int pulse = 0;
      for (auto& e : d.events) {
        if (e.kind == sequence::EventKind::pulse) e.shim_index = 1 + (pulse++ % 2);
      }
      t.transmit_channels = channels;
      t.transmit.resize(n * channels);
      for (std::size_t i = 0; i < n; ++i) {
        for (int c = 0; c < channels; ++c) {
          t.transmit[i * channels + std::size_t(c)] =
              std::polar(float(0.8 + 0.4 * fraction(i * channels + c, 0.6180339887498949)),
                         float(6.283185 * fraction(i + 7 * std::size_t(c), 0.1414213562373095)));
        }
      }
    } else if (name == "second_pool") {  // myelin water: a pooled layout, not a term
      t.pool_fraction.uniform = 0.15f;
      t.pool_t1_s.uniform = 0.5f;
      t.pool_t2_s.uniform = 0.015f;
      t.pool_exchange_hz.uniform = 10.0f;
    } else if (name == "in_phase") {
      // The sequence, not the tissue: the excitation turned onto the
      // refocusing pulses' phase (the arrangement the real-subspace path
      // takes; docs/physics.md "Real-subspace path").
      const sequence::Event* last = nullptr;
      for (const auto& e : d.events) {
        if (e.kind == sequence::EventKind::pulse) last = &e;
      }
      const double phase = last != nullptr ? last->phase_rad : 0.0;
      for (auto& e : d.events) {
        if (e.kind == sequence::EventKind::pulse) e.phase_rad = phase;
      }
    } else if (name == "slice_profile") {
      // The sequence: a Hann-windowed sinc excitation (the first pulse) and
      // refocusing pulses of 1.5 slice thicknesses, 32 positions.
      sequence::SliceProfileSpec excitation, refocusing;
      excitation.name = "bench excitation";
      refocusing.name = "bench refocusing";
      refocusing.thickness = 1.5;
      refocusing.rephase = 0.0;
      d.slice_profiles = {excitation, refocusing};
      bool first = true;
      for (auto& e : d.events) {
        if (e.kind != sequence::EventKind::pulse) continue;
        e.slice_profile = first ? 1 : 2;
        if (e.flip_rad < 0.0) {  // the same pulse turning the other way
          e.flip_rad = -e.flip_rad;
          e.phase_rad += 3.14159265358979323846;
        }
        first = false;
      }
    } else if (name == "bound_pool") {  // magnetisation transfer
      t.bound_fraction.uniform = 0.12f;
      t.bound_t1_s.uniform = 1.0f;
      t.bound_exchange_hz.uniform = 4.3f;
    } else {
      std::string known;
      for (const auto& k : known_terms()) known += " " + k;
      throw std::invalid_argument("unknown term '" + name + "' (none, all," + known + ")");
    }
  }
}

}  // namespace larmor::benchmarks
