#include "epg/train_program.hpp"

#include "epg/event_table.hpp"

namespace larmor::epg {

namespace {

// The open step and what has happened since the last pulse.
struct TrainBuilder {
  std::vector<TrainStep> steps;
  TrainStep open{};
  bool is_open = false;
  int pending_shifts = 0;  // since the open step's last part
  double since_pulse = 0.0;
  bool spoiled = false;  // since the last pulse
  bool representable = true;

  void close() {
    if (is_open) steps.push_back(open);
    is_open = false;
  }
  void start() {
    close();
    open = TrainStep{};
    open.output_index = -1;
    is_open = true;
  }
  std::uint32_t take_shifts() {
    if (pending_shifts > train::max_shifts) representable = false;
    const auto n = static_cast<std::uint32_t>(pending_shifts);
    pending_shifts = 0;
    return n;
  }

  void pulse(const EventRecord& r) {
    start();
    open.control = take_shifts() | train::has_pulse;
    if (spoiled) open.control |= train::spoiled_before_pulse;
    if (!follows_b1(r)) open.control |= train::b1_fixed;
    open.live_orders = live_orders_of(r);
    open.flip = r.flip;
    open.cos_phase = r.cos_phase;
    open.sin_phase = r.sin_phase;
    open.pulse_elapsed = static_cast<float>(since_pulse);
    since_pulse = 0.0;
    spoiled = false;
  }

  void sample(const EventRecord& r) {
    // A sample joins the open step unless it has one already; otherwise it
    // opens a step of its own, without a pulse.
    if (is_open && open.output_index < 0) {
      open.control |= take_shifts() << 8;
    } else {
      start();
      open.control = take_shifts();
    }
    if (spoiled) open.control |= train::spoiled_before_sample;
    open.sample_elapsed = static_cast<float>(since_pulse);
    open.receiver_cos = r.cos_phase;
    open.receiver_sin = r.sin_phase;
    open.output_index = r.output_index;
  }
};

}  // namespace

std::vector<TrainStep> build_train_steps(const EventRecord* records, std::size_t count) {
  TrainBuilder b;
  // Up to the last sample: later events change no signal.
  std::size_t end = count;
  while (end > 0 && kind_of(records[end - 1]) != abi::EventKind::adc) --end;
  for (std::size_t i = 0; i < end && b.representable; ++i) {
    const EventRecord& r = records[i];
    const std::uint32_t act = action_of(r);
    if ((act & abi::action::crush_before) != 0) ++b.pending_shifts;
    switch (kind_of(r)) {
      case abi::EventKind::pulse:
        if (slice_profile_of(r) > 0) return {};
        b.pulse(r);
        break;
      case abi::EventKind::adc:
        if (sample_weights_of(r) > 0) return {};
        b.sample(r);
        break;
      case abi::EventKind::wait:
        break;
      default:
        return {};
    }
    b.pending_shifts +=
        int((act & abi::action::crush_after) != 0) + int((act & abi::action::shift_after) != 0);
    if ((act & abi::action::spoil_after) != 0) b.spoiled = true;
    // Summed in double: a float sum of a long train's intervals drifts.
    b.since_pulse += double(r.duration);
  }
  b.close();
  if (!b.representable) return {};
  return b.steps;
}

}  // namespace larmor::epg
