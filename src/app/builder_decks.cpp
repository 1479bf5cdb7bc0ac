// The shipped builders' [sequence] keys, in the deck's units, as each
// builder's parameters (docs/input-deck.md).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "app/impl/deck_section.hpp"
#include "sequence/builders/builders.hpp"

namespace larmor::app::detail {

namespace fs = std::filesystem;

namespace {

// The keys of a gradient-echo train: its flip, repetition and echo times.
template <class Params>
void read_flip_tr_te(const Section& s, Params& p) {
  p.flip_deg = s.number("flip_deg", p.flip_deg);
  p.tr_s = ms(s.positive("tr_ms", p.tr_s * 1e3));
  p.te_s = ms(s.number("te_ms", p.te_s * 1e3));
}

sequence::Spoiler spoiler_of(const Section& s) {
  const std::string spoiler = s.string("spoiler", "gradient");
  if (spoiler == "ideal") return sequence::Spoiler::ideal;
  if (spoiler != "gradient") s.fail("spoiler", "must be \"gradient\" or \"ideal\"");
  return sequence::Spoiler::gradient_shift;
}

// The keys of an RF-spoiled gradient-echo train (spgr, and mt_spgr's
// readout): the above, its length, the RF phase increment and the spoiler.
template <class Params>
void read_spoiled_train(const Section& s, Params& p) {
  read_flip_tr_te(s, p);
  p.repetitions = s.integer("repetitions", p.repetitions, 1);
  p.phase_increment_deg = s.number("phase_increment_deg", p.phase_increment_deg);
  p.spoiler = spoiler_of(s);
}

sequence::MeseParams mese_params(const Section& s) {
  using namespace sequence;
  MeseParams p;
  p.echoes = s.integer("echoes", p.echoes, 1);
  p.echo_spacing_s = ms(s.positive("echo_spacing_ms", p.echo_spacing_s * 1e3));
  p.excitation_deg = s.number("excitation_deg", p.excitation_deg);
  p.excitation_phase_deg = s.number("excitation_phase_deg", p.excitation_phase_deg);
  p.refocusing_deg = s.number("refocusing_deg", p.refocusing_deg);
  p.refocusing_phase_deg = s.number("refocusing_phase_deg", p.refocusing_phase_deg);
  return p;
}

sequence::TseParams tse_params(const Section& s) {
  using namespace sequence;
  TseParams p;
  p.echoes = s.integer("echoes", p.echoes, 1);
  p.echo_spacing_s = ms(s.positive("echo_spacing_ms", p.echo_spacing_s * 1e3));
  p.excitation_deg = s.number("excitation_deg", p.excitation_deg);
  p.excitation_phase_deg = s.number("excitation_phase_deg", p.excitation_phase_deg);
  if (s.has("refocusing_deg")) {
    const toml::node* n = s.node("refocusing_deg");
    p.refocusing_deg = n->is_array() ? s.numbers("refocusing_deg")
                                     : std::vector<double>{s.number("refocusing_deg", 180.0)};
    if (p.refocusing_deg.size() != 1 && p.refocusing_deg.size() != std::size_t(p.echoes)) {
      s.fail("refocusing_deg", "needs one flip or one per echo (" + std::to_string(p.echoes) +
                                   "), got " + std::to_string(p.refocusing_deg.size()));
    }
  }
  p.refocusing_phase_deg = s.number("refocusing_phase_deg", p.refocusing_phase_deg);
  return p;
}

sequence::MprageParams mprage_params(const Section& s) {
  using namespace sequence;
  MprageParams p;
  const std::string prep = s.string("preparation", "inversion");
  if (prep == "inversion") {
    p.preparation = Preparation::inversion;
  } else if (prep == "t2") {
    p.preparation = Preparation::t2;
  } else {
    s.fail("preparation", "must be \"inversion\" or \"t2\"");
  }
  p.inversion_b1_scaled = s.boolean("inversion_b1_scaled", p.inversion_b1_scaled);
  if (p.preparation != Preparation::inversion && s.has("inversion_b1_scaled")) {
    s.fail("inversion_b1_scaled", "needs preparation = \"inversion\"");
  }
  p.ti_s = ms(s.number("ti_ms", p.ti_s * 1e3));
  p.t2prep_te_s = ms(s.positive("t2prep_te_ms", p.t2prep_te_s * 1e3));
  p.readouts = s.integer("readouts", p.readouts, 1);
  read_flip_tr_te(s, p);
  p.recovery_s = ms(s.number("recovery_ms", p.recovery_s * 1e3));
  p.shots = s.integer("shots", p.shots, 1);
  p.phase_increment_deg = s.number("phase_increment_deg", p.phase_increment_deg);
  p.spoiler = spoiler_of(s);
  return p;
}

sequence::DessParams dess_params(const Section& s) {
  using namespace sequence;
  DessParams p;
  read_flip_tr_te(s, p);
  p.dummy_repetitions = s.integer("dummy_repetitions", p.dummy_repetitions, 0);
  p.repetitions = s.integer("repetitions", p.repetitions, 1);
  return p;
}

sequence::SpgrParams spgr_params(const Section& s) {
  using namespace sequence;
  SpgrParams p;
  read_spoiled_train(s, p);
  return p;
}

sequence::BssfpParams bssfp_params(const Section& s) {
  using namespace sequence;
  BssfpParams p;
  p.flip_deg = s.number("flip_deg", p.flip_deg);
  p.tr_s = ms(s.positive("tr_ms", p.tr_s * 1e3));
  p.te_s = s.has("te_ms") ? ms(s.number("te_ms", 0.0)) : -1.0;
  p.repetitions = s.integer("repetitions", p.repetitions, 1);
  p.dummy_repetitions = s.integer("dummy_repetitions", p.dummy_repetitions, 0);
  if (s.has("phase_increments_deg")) {
    p.phase_increments_deg = s.numbers("phase_increments_deg");
    if (p.phase_increments_deg.empty()) s.fail("phase_increments_deg", "must not be empty");
  }
  return p;
}

sequence::MtSpgrParams mt_spgr_params(const Section& s) {
  using namespace sequence;
  MtSpgrParams p;
  read_spoiled_train(s, p);
  p.mt.flip_deg = s.number("mt_flip_deg", p.mt.flip_deg);
  p.mt.duration_s = ms(s.positive("mt_duration_ms", p.mt.duration_s * 1e3));
  p.mt.offset_hz = s.number("mt_offset_hz", p.mt.offset_hz);
  p.mt.samples = s.integer("mt_samples", p.mt.samples, 1);
  p.mt_gap_s = ms(s.number("mt_gap_ms", p.mt_gap_s * 1e3));
  p.excitation_duration_s = ms(s.number("excitation_duration_ms", p.excitation_duration_s * 1e3));
  return p;
}

// [sequence] of the mrf builder: the schedule CSV (beside the deck) and the
// train around it.
sequence::MrfParams mrf_params(const Section& s, const fs::path& deck_dir,
                               std::vector<std::string>& inputs) {
  using namespace sequence;
  MrfParams p;
  const std::string schedule = s.string("schedule", "");
  if (schedule.empty()) s.fail("schedule", "is required: the CSV file of the train");
  const fs::path file = fs::path(schedule).is_absolute() ? fs::path(schedule) : deck_dir / schedule;
  inputs.push_back(file.string());
  p.schedule = read_mrf_schedule_csv(file.string());
  p.nominal_flip_deg = s.number("nominal_flip_deg", p.nominal_flip_deg);
  p.base_tr_s = ms(s.positive("base_tr_ms", p.base_tr_s * 1e3));
  p.base_te_s = ms(s.number("base_te_ms", p.base_te_s * 1e3));
  p.inversion = s.boolean("inversion", p.inversion);
  p.inversion_b1_scaled = s.boolean("inversion_b1_scaled", p.inversion_b1_scaled);
  p.inversion_delay_s = ms(s.number("inversion_delay_ms", p.inversion_delay_s * 1e3));
  const int limit = s.integer("repetitions", static_cast<int>(p.schedule.size()), 1);
  if (limit < static_cast<int>(p.schedule.size())) p.schedule.resize(std::size_t(limit));
  return p;
}

}  // namespace

sequence::Description build_shipped_sequence(const std::string& builder, const Section& s,
                                             const fs::path& deck_dir,
                                             std::optional<sequence::MrfParams>& mrf,
                                             std::vector<std::string>& inputs) {
  if (builder == "mese") return sequence::build_mese(mese_params(s));
  if (builder == "tse") return sequence::build_tse(tse_params(s));
  if (builder == "mprage") return sequence::build_mprage(mprage_params(s));
  if (builder == "dess") return sequence::build_dess(dess_params(s));
  if (builder == "spgr") return sequence::build_spgr(spgr_params(s));
  if (builder == "bssfp") return sequence::build_bssfp(bssfp_params(s));
  if (builder == "mt_spgr") return sequence::build_mt_spgr(mt_spgr_params(s));
  if (builder == "mrf") {
    mrf = mrf_params(s, deck_dir, inputs);
    return sequence::build_mrf(*mrf);
  }
  std::string known;
  for (const auto& n : builder_names()) known += (known.empty() ? "" : ", ") + n;
  s.fail("builder", "'" + builder + "' is not a shipped builder (" + known + ")");
}

}  // namespace larmor::app::detail
