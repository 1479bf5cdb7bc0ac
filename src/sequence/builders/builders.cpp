#include "sequence/builders/builders.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "sequence/builders/mrf_layout.hpp"
#include "sequence/operators.hpp"

namespace larmor::sequence {

namespace {
void require(bool ok, const std::string& builder, const std::string& what) {
  if (!ok) throw std::invalid_argument(builder + ": " + what);
}
bool finite_positive(double x) { return std::isfinite(x) && x > 0.0; }

// Refuses, before anything is allocated, a train of more than 2^24 events.
// The kernels index 2^31 - 1 (32-bit), but the host's event descriptions of
// such a train alone take 100 GB; the deck fuzz target found a mistyped echo
// count (432333333) that exhausted memory instead of being refused. 2^24 is
// about 800 MB of descriptions, over 2000 times the longest train shipped
// (spgr3d's 7128 events).
void require_event_count(double events, const std::string& builder, const std::string& what) {
  constexpr double limit = double(std::int64_t(1) << 24);
  if (events > limit) {
    // (Counts are products of ints: they may pass what an int64 holds.)
    const std::string count =
        events < 9e18 ? std::to_string(std::int64_t(events)) : std::to_string(events);
    throw std::invalid_argument(builder + ": " + what + " give " + count +
                                " events; trains are limited to " +
                                std::to_string(std::int64_t(limit)) +
                                " events (2^24; the kernels' 32-bit index allows 2^31 - 1, but "
                                "the host's event descriptions would take gigabytes)");
  }
}
}  // namespace

Description build_mese(const MeseParams& p) {
  require(p.echoes >= 1, "mese", "echoes must be at least 1");
  require(finite_positive(p.echo_spacing_s), "mese", "echo spacing must be positive");
  require_event_count(1.0 + 2.0 * p.echoes, "mese", "echoes");
  Description d;
  d.name = "mese";
  d.parameters = {{"echoes", p.echoes},
                  {"echo_spacing_s", p.echo_spacing_s},
                  {"excitation_deg", p.excitation_deg},
                  {"refocusing_deg", p.refocusing_deg}};
  const double half = 0.5 * p.echo_spacing_s;
  d << Excitation{p.excitation_deg, p.excitation_phase_deg, half};
  for (int n = 0; n < p.echoes; ++n) {
    d << Refocusing{p.refocusing_deg, p.refocusing_phase_deg, half, true};
    d << Readout{p.excitation_phase_deg, half, true, AfterReadout::nothing};
  }
  return d;
}

Description build_tse(const TseParams& p) {
  require(p.echoes >= 1, "tse", "echoes must be at least 1");
  require(finite_positive(p.echo_spacing_s), "tse", "echo spacing must be positive");
  require(p.refocusing_deg.size() == 1 || p.refocusing_deg.size() == std::size_t(p.echoes), "tse",
          "refocusing_deg needs one flip or one per echo (" + std::to_string(p.echoes) + "), got " +
              std::to_string(p.refocusing_deg.size()));
  for (double f : p.refocusing_deg)
    require(std::isfinite(f), "tse", "refocusing flips must be finite");
  require_event_count(1.0 + 2.0 * p.echoes, "tse", "echoes");
  Description d;
  d.name = "tse";
  d.parameters = {{"echoes", p.echoes},
                  {"echo_spacing_s", p.echo_spacing_s},
                  {"excitation_deg", p.excitation_deg},
                  {"first_refocusing_deg", p.refocusing_deg.front()}};
  const double half = 0.5 * p.echo_spacing_s;
  d << Excitation{p.excitation_deg, p.excitation_phase_deg, half};
  for (int n = 0; n < p.echoes; ++n) {
    const double flip = p.refocusing_deg[p.refocusing_deg.size() == 1 ? 0 : std::size_t(n)];
    d << Refocusing{flip, p.refocusing_phase_deg, half, true};
    d << Readout{p.excitation_phase_deg, half, true, AfterReadout::nothing};
  }
  return d;
}

Description& operator<<(Description& d, const T2Preparation& prep) {
  require(finite_positive(prep.te_s), "t2prep", "TE must be positive");
  require(prep.refocusings >= 1, "t2prep", "at least one refocusing pulse is needed");
  const double spacing = prep.te_s / prep.refocusings;
  d << Excitation{90.0, 0.0, 0.5 * spacing};
  for (int n = 0; n < prep.refocusings; ++n) {
    const double after = n + 1 < prep.refocusings ? spacing : 0.5 * spacing;
    d << Refocusing{180.0, 90.0, after, false};
  }
  return d << Excitation{90.0, 180.0, 0.0, action::spoil_after};
}

Description build_mprage(const MprageParams& p) {
  require(p.readouts >= 1 && p.shots >= 1, "mprage", "readouts and shots must be at least 1");
  require(finite_positive(p.tr_s), "mprage", "TR must be positive");
  require(std::isfinite(p.te_s) && p.te_s >= 0.0 && p.te_s < p.tr_s, "mprage",
          "TE must lie in [0, TR)");
  require(std::isfinite(p.ti_s) && p.ti_s >= 0.0, "mprage", "TI must be >= 0");
  require(std::isfinite(p.recovery_s) && p.recovery_s >= 0.0, "mprage", "recovery must be >= 0");
  require_event_count(double(p.shots) * (2.0 * p.readouts + 8.0), "mprage", "shots and readouts");
  Description d;
  d.name = "mprage";
  d.parameters = {{"ti_s", p.ti_s},
                  {"readouts", p.readouts},
                  {"flip_deg", p.flip_deg},
                  {"tr_s", p.tr_s},
                  {"te_s", p.te_s},
                  {"recovery_s", p.recovery_s},
                  {"shots", p.shots},
                  {"t2prep_te_s", p.preparation == Preparation::t2 ? p.t2prep_te_s : 0.0}};
  const AfterReadout after =
      p.spoiler == Spoiler::ideal ? AfterReadout::spoil : AfterReadout::shift;
  std::int64_t n = 0;  // readouts so far: the RF spoiling phase runs on across shots
  for (int shot = 0; shot < p.shots; ++shot) {
    if (p.preparation == Preparation::inversion) {
      d << Excitation{.flip_deg = 180.0,
                      .then_s = p.ti_s,
                      .extra_action = action::spoil_after,
                      .b1_scaled = p.inversion_b1_scaled};
    } else {
      d << T2Preparation{p.t2prep_te_s, 1} << Delay{p.ti_s};
    }
    for (int r = 0; r < p.readouts; ++r, ++n) {
      const double phase = p.phase_increment_deg * 0.5 * double(n) * double(n + 1);
      d << Excitation{p.flip_deg, phase, p.te_s};
      d << Readout{phase, p.tr_s - p.te_s, true, after};
    }
    d << Delay{p.recovery_s};
  }
  return d;
}

Description build_dess(const DessParams& p) {
  require(finite_positive(p.tr_s), "dess", "TR must be positive");
  require(std::isfinite(p.te_s) && p.te_s >= 0.0 && 2.0 * p.te_s <= p.tr_s, "dess",
          "TE must lie in [0, TR / 2]");
  require(p.repetitions >= 1 && p.dummy_repetitions >= 0, "dess",
          "repetitions must be >= 1 and dummy_repetitions >= 0");
  require_event_count(3.0 * (double(p.dummy_repetitions) + p.repetitions), "dess",
                      "repetitions and dummy_repetitions");
  Description d;
  d.name = "dess";
  d.parameters = {{"flip_deg", p.flip_deg},
                  {"tr_s", p.tr_s},
                  {"te_s", p.te_s},
                  {"repetitions", p.repetitions},
                  {"dummy_repetitions", p.dummy_repetitions}};
  for (int n = 0; n < p.dummy_repetitions + p.repetitions; ++n) {
    d << Excitation{p.flip_deg, 0.0, p.te_s};
    if (n < p.dummy_repetitions) {
      d << Dephase{p.tr_s - p.te_s};
    } else {
      d << Readout{0.0, p.tr_s - 2.0 * p.te_s, true, AfterReadout::shift};
      d << Readout{0.0, p.te_s, true, AfterReadout::nothing};
    }
  }
  return d;
}

Description build_spgr(const SpgrParams& p) {
  require(p.repetitions >= 1, "spgr", "repetitions must be at least 1");
  require(finite_positive(p.tr_s), "spgr", "TR must be positive");
  require_event_count(2.0 * p.repetitions, "spgr", "repetitions");
  require(std::isfinite(p.te_s) && p.te_s >= 0.0 && p.te_s < p.tr_s, "spgr",
          "TE must lie in [0, TR)");
  Description d;
  d.name = "spgr";
  d.parameters = {{"flip_deg", p.flip_deg},
                  {"tr_s", p.tr_s},
                  {"te_s", p.te_s},
                  {"repetitions", p.repetitions},
                  {"phase_increment_deg", p.phase_increment_deg}};
  const AfterReadout after =
      p.spoiler == Spoiler::ideal ? AfterReadout::spoil : AfterReadout::shift;
  for (int n = 0; n < p.repetitions; ++n) {
    // Quadratic phase in double: n (n + 1) / 2 grows without bound.
    const double phase = p.phase_increment_deg * 0.5 * double(n) * double(n + 1);
    d << Excitation{p.flip_deg, phase, p.te_s};
    d << Readout{phase, p.tr_s - p.te_s, true, after};
  }
  return d;
}

Description build_bssfp(const BssfpParams& p) {
  const double te = p.te_s < 0.0 ? 0.5 * p.tr_s : p.te_s;
  require(finite_positive(p.tr_s), "bssfp", "TR must be positive");
  require(te >= 0.0 && te <= p.tr_s, "bssfp", "TE must lie in [0, TR]");
  require(p.repetitions >= 1 && p.dummy_repetitions >= 0, "bssfp",
          "repetitions must be >= 1 and dummy_repetitions >= 0");
  require(!p.phase_increments_deg.empty(), "bssfp", "at least one phase increment is needed");
  require_event_count(
      2.0 * (double(p.dummy_repetitions) + p.repetitions) * double(p.phase_increments_deg.size()),
      "bssfp", "repetitions, dummy_repetitions and phase_increments_deg");
  Description d;
  d.name = "bssfp";
  d.parameters = {{"flip_deg", p.flip_deg},
                  {"tr_s", p.tr_s},
                  {"te_s", te},
                  {"repetitions", p.repetitions},
                  {"dummy_repetitions", p.dummy_repetitions}};
  for (double increment : p.phase_increments_deg) {
    const int total = p.dummy_repetitions + p.repetitions;
    for (int n = 0; n < total; ++n) {
      const double phase = increment * double(n);
      d << Excitation{p.flip_deg, phase, te};
      if (n >= p.dummy_repetitions) {
        d << Readout{phase, p.tr_s - te, true, AfterReadout::nothing};
      } else {
        d << Delay{p.tr_s - te};
      }
    }
  }
  return d;
}

Description& operator<<(Description& d, const MtSaturation& mt) {
  require(mt.samples >= 1, "mt", "the pulse needs at least one sample");
  require(finite_positive(mt.duration_s), "mt", "the duration must be positive");
  require(std::isfinite(mt.offset_hz) && std::isfinite(mt.flip_deg), "mt",
          "flip and offset must be finite");
  ShapedPulse pulse;
  pulse.flip_deg = mt.flip_deg;
  pulse.duration_s = mt.duration_s;
  pulse.frequency_offset_hz = mt.offset_hz;
  pulse.shape.resize(std::size_t(mt.samples));
  for (int i = 0; i < mt.samples; ++i) {
    const double x = ((i + 0.5) / mt.samples - 0.5) * 5.0;  // in units of sigma
    pulse.shape[std::size_t(i)] = std::exp(-0.5 * x * x);
  }
  return d << pulse << Spoil{};
}

Description build_mt_spgr(const MtSpgrParams& p) {
  require(p.repetitions >= 1, "mt_spgr", "repetitions must be at least 1");
  require(std::isfinite(p.mt_gap_s) && p.mt_gap_s >= 0.0, "mt_spgr", "the MT gap must be >= 0");
  require(std::isfinite(p.te_s) && p.te_s >= 0.0 && p.mt.duration_s + p.mt_gap_s + p.te_s < p.tr_s,
          "mt_spgr", "the MT pulse, its gap and TE must fit in TR");
  require(
      std::isfinite(p.excitation_duration_s) && p.excitation_duration_s >= 0.0 &&
          0.5 * p.excitation_duration_s <= p.mt_gap_s && 0.5 * p.excitation_duration_s <= p.te_s,
      "mt_spgr",
      "the excitation's duration (excitation_duration_ms in a deck) must be >= 0 with its first "
      "half within the MT gap and its second half within TE (the pulse is centred on its "
      "instant)");
  require_event_count(double(p.repetitions) * (p.mt.samples + 4), "mt_spgr",
                      "repetitions x (MT samples + 4)");
  Description d;
  d.name = "mt_spgr";
  d.parameters = {{"flip_deg", p.flip_deg},
                  {"tr_s", p.tr_s},
                  {"te_s", p.te_s},
                  {"repetitions", double(p.repetitions)},
                  {"mt_flip_deg", p.mt.flip_deg},
                  {"mt_duration_s", p.mt.duration_s},
                  {"mt_offset_hz", p.mt.offset_hz},
                  {"excitation_duration_s", p.excitation_duration_s}};
  const AfterReadout after =
      p.spoiler == Spoiler::ideal ? AfterReadout::spoil : AfterReadout::shift;
  for (int n = 0; n < p.repetitions; ++n) {
    d << p.mt << Delay{p.mt_gap_s};
    const double phase = p.phase_increment_deg * 0.5 * double(n) * double(n + 1);
    d << Excitation{p.flip_deg, phase, p.te_s, 0u, p.excitation_duration_s};
    d << Readout{phase, p.tr_s - p.mt.duration_s - p.mt_gap_s - p.te_s, true, after};
  }
  return d;
}

MrfLayout::MrfLayout(const MrfParams& p)
    : rows_(p.schedule.size()),
      flip_scale_(p.nominal_flip_deg * deg),
      base_tr_s_(p.base_tr_s),
      inversion_(p.inversion),
      inversion_action_(action::spoil_after | (p.inversion_b1_scaled ? 0u : action::b1_fixed)),
      inversion_delay_s_(p.inversion_delay_s),
      params_(p) {
  require(!p.schedule.empty(), "mrf", "the schedule is empty");
  te_s_.reserve(rows_);
  for (std::size_t n = 0; n < rows_; ++n) {
    te_s_.push_back(p.base_te_s + p.schedule[n].te_extension_s);
    if (!(te_s_.back() >= 0.0)) {
      require(false, "mrf", "row " + std::to_string(n + 1) + ": TE must be >= 0");
    }
  }
}

std::vector<double> MrfLayout::arguments(const MrfParams& p) {
  const std::size_t n = p.schedule.size();
  std::vector<double> args(3 * n);
  for (std::size_t i = 0; i < n; ++i) {
    args[i] = p.schedule[i].flip_fraction;
    args[n + i] = p.schedule[i].rf_phase_deg;
    args[2 * n + i] = p.schedule[i].tr_extension_s;
  }
  return args;
}

Description MrfLayout::description(const std::vector<double>& args) const {
  require(args.size() == argument_count(), "mrf",
          "expected " + std::to_string(argument_count()) + " values, got " +
              std::to_string(args.size()));
  for (std::size_t n = 0; n < rows_; ++n) {
    if (!(te_s_[n] < base_tr_s_ + args[2 * rows_ + n])) {
      require(false, "mrf", "row " + std::to_string(n + 1) + ": TE must lie in [0, TR)");
    }
  }
  Description d;
  d.name = "mrf";
  d.parameters = {{"nominal_flip_deg", params_.nominal_flip_deg},
                  {"base_tr_s", params_.base_tr_s},
                  {"base_te_s", params_.base_te_s},
                  {"repetitions", double(rows_)},
                  {"inversion_delay_s", inversion_ ? inversion_delay_s_ : 0.0}};
  d.events.reserve(2 * rows_ + 1);
  for (const ValueEvent<double>& v : events(args)) {
    Event e;
    e.kind = v.kind;
    e.action = v.action;
    e.duration_s = v.duration_s;
    e.flip_rad = v.flip_rad;
    e.phase_rad = v.phase_rad;
    d.events.push_back(e);
  }
  return d;
}

Description build_mrf(const MrfParams& p) {
  const MrfLayout layout(p);
  return layout.description(MrfLayout::arguments(p));
}

}  // namespace larmor::sequence
