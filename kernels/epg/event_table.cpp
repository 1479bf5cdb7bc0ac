#include "epg/event_table.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace larmor::epg {

namespace {
std::string where(std::int64_t i, const char* field) {
  return "event " + std::to_string(i) + ", field '" + field + "'";
}
}  // namespace

void check_order_limit(int orders, const std::string& kernel_name) {
  if (orders < 1 || orders > abi::max_orders) {
    throw std::invalid_argument(kernel_name + ": " + std::to_string(orders) +
                                " orders requested, but the kernel holds at most " +
                                std::to_string(abi::max_orders) +
                                " (one order per thread of a 1024-thread tile)");
  }
}

void check_slice_profiles(int used, int held, int positions, const std::string& kernel_name,
                          const char* unsupported) {
  if (used == 0 && positions <= 1) return;
  if (unsupported != nullptr) {
    throw std::invalid_argument(kernel_name + ": slice-selective pulses are not supported here (" +
                                unsupported + "); make the pulses instantaneous");
  }
  if (used > held) {
    throw std::invalid_argument(kernel_name + ": the pulses use " + std::to_string(used) +
                                " slice profiles but the run holds " + std::to_string(held) +
                                " tables (build them with sequence::build_slice_profile_table)");
  }
}

void check_waveforms(int used, int held, const std::string& kernel_name, const char* unsupported) {
  if (used == 0) return;
  if (unsupported != nullptr) {
    throw std::invalid_argument(kernel_name + ": pulses played from their waveforms are not " +
                                "supported here (" + unsupported +
                                "); expand them into hard pulses "
                                "(sequence::expand_waveform_pulses)");
  }
  if (used > held) {
    throw std::invalid_argument(kernel_name + ": the pulses use " + std::to_string(used) +
                                " waveforms but the run holds " + std::to_string(held) +
                                " (build them with sequence::build_waveform_table)");
  }
}

void check_sample_weights(int used, int held, int orders, int positions, int run_orders,
                          int run_positions, const std::string& kernel_name) {
  if (used == 0) return;
  if (used > held) {
    throw std::invalid_argument(kernel_name + ": the samples use " + std::to_string(used) +
                                " voxel-weight tables but the run holds " + std::to_string(held) +
                                " (build them with sequence::build_voxel_weight_table)");
  }
  if (orders != run_orders || positions != run_positions) {
    throw std::invalid_argument(
        kernel_name + ": the voxel weights are over " + std::to_string(orders) + " orders and " +
        std::to_string(positions) + " positions, the run has " + std::to_string(run_orders) +
        " and " + std::to_string(run_positions));
  }
}

std::vector<EventRecord> build_event_records(const abi::PackedEventsRef& ev, int orders,
                                             int sample_count, LiveOrders live_rule) {
  check_order_limit(orders, "epg::build_event_records");
  if (ev.count < 0 || ev.count > std::numeric_limits<std::int32_t>::max()) {
    throw std::invalid_argument("epg::build_event_records: " + std::to_string(ev.count) +
                                " events do not fit the kernels' 32-bit event index");
  }
  std::vector<EventRecord> out(static_cast<std::size_t>(ev.count));
  // LiveOrders::read: the shifts from each event's start until the last
  // sample reads F+_0 (after its own event's crush_before shift).
  std::vector<int> shifts_left;
  if (live_rule == LiveOrders::read) {
    shifts_left.assign(out.size(), 0);
    int left = -1;  // after the last sample
    for (std::int64_t i = ev.count - 1; i >= 0; --i) {
      const std::uint32_t act = ev.action[i];
      const bool adc = ev.kind[i] == static_cast<std::uint8_t>(abi::EventKind::adc);
      if (adc && ev.slice_profile != nullptr && ev.slice_profile[i] > 0) {
        left = orders;  // voxel weights read every order
      } else if (left >= 0) {
        left = std::min(orders, left + abi::shifts_of(act));
      } else if (adc) {
        left = (act & abi::action::crush_before) != 0 ? 1 : 0;
      }
      shifts_left[static_cast<std::size_t>(i)] = left < 0 ? 0 : left;
    }
  }
  const bool from_equilibrium = live_rule != LiveOrders::all;
  int shifts = 0;
  for (std::int64_t i = 0; i < ev.count; ++i) {
    const auto kind = ev.kind[i];
    if (kind > static_cast<std::uint8_t>(abi::EventKind::waveform_pulse)) {
      throw std::invalid_argument(where(i, "kind") + ": unknown event kind " +
                                  std::to_string(kind));
    }
    const std::uint32_t act = ev.action[i];
    if ((act & ~abi::action::all_bits) != 0) {
      throw std::invalid_argument(where(i, "action") + ": unknown action bits");
    }
    if (!std::isfinite(ev.duration[i]) || ev.duration[i] < 0.0f) {
      throw std::invalid_argument(where(i, "duration") + ": must be finite and >= 0");
    }
    if (!std::isfinite(ev.flip[i]) || !std::isfinite(ev.phase[i])) {
      throw std::invalid_argument(where(i, "flip/phase") + ": must be finite");
    }
    const std::int32_t slot = ev.output_index[i];
    const bool is_adc = kind == static_cast<std::uint8_t>(abi::EventKind::adc);
    if (is_adc ? (slot < 0 || slot >= sample_count) : slot != -1) {
      throw std::invalid_argument(
          where(i, "output_index") + ": " + std::to_string(slot) +
          (is_adc ? " is outside the sample range" : " must be -1 for a non-adc event"));
    }
    shifts += abi::shifts_of(act);
    // Everything starts in Z_0 and only shifts raise the order, so after
    // `shifts` shifts no order above `shifts` can be non-zero.
    int live = from_equilibrium && shifts + 1 < orders ? shifts + 1 : orders;
    if (live_rule == LiveOrders::read) {
      live = std::min(live, shifts_left[static_cast<std::size_t>(i)] + 1);
    }
    EventRecord& r = out[static_cast<std::size_t>(i)];
    r.duration = ev.duration[i];
    r.flip = ev.flip[i];
    r.cos_phase = static_cast<float>(std::cos(ev.phase[i]));
    r.sin_phase = static_cast<float>(std::sin(ev.phase[i]));
    // The stream wraps, as a carried state's period does (from equilibrium
    // the first event's crush_before lobe acts on nothing).
    const int lobes = abi::lobes_in_interval(act, ev.action[i + 1 < ev.count ? i + 1 : 0]);
    r.control = act | (std::uint32_t(lobes) << 6) | (std::uint32_t(kind) << 8) |
                (std::uint32_t(live) << 16);
    const bool is_pulse = abi::is_rf(static_cast<abi::EventKind>(kind));
    const bool is_waveform = kind == static_cast<std::uint8_t>(abi::EventKind::waveform_pulse);
    if ((act & abi::action::b1_fixed) != 0 && !is_pulse) {
      throw std::invalid_argument(where(i, "action") + ": b1_fixed marks a pulse, not a " +
                                  (is_adc ? "sample" : "wait"));
    }
    const std::int32_t shim = ev.shim_index != nullptr ? ev.shim_index[i] : 0;
    if (shim < 0 || (!is_pulse && shim != 0)) {
      throw std::invalid_argument(where(i, "shim_index") + ": " + std::to_string(shim) +
                                  (is_pulse ? " is negative" : " must be 0 for a non-pulse event"));
    }
    const std::int32_t profile = ev.slice_profile != nullptr ? ev.slice_profile[i] : 0;
    if (profile < 0 || (is_pulse && profile > abi::max_slice_profiles) ||
        (!is_pulse && !is_adc && profile != 0) || (is_waveform && profile == 0)) {
      throw std::invalid_argument(
          where(i, "slice_profile") + ": " + std::to_string(profile) +
          (is_waveform ? " is outside [1, " + std::to_string(abi::max_slice_profiles) +
                             "] (a waveform pulse's waveform)"
           : is_pulse ? " is outside [0, " + std::to_string(abi::max_slice_profiles) + "]"
           : is_adc   ? " is negative"
                      : " must be 0 for a wait"));
    }
    if (shim != 0 && (act & abi::action::b1_fixed) != 0) {
      throw std::invalid_argument(where(i, "shim_index") +
                                  ": a pulse not scaled by the transmit field (b1_fixed) "
                                  "cannot use a transmit shim setting");
    }
    if (shim > abi::max_shim_settings) {
      throw std::invalid_argument(where(i, "shim_index") + ": " + std::to_string(shim) +
                                  " exceeds the kernels' " +
                                  std::to_string(abi::max_shim_settings) + " settings");
    }
    r.output_index = is_pulse ? (shim | (profile << 16)) : slot;
    r.rf_frequency_hz = ev.rf_frequency_hz[i];
    r.sample_weights = is_adc ? profile : 0;
  }
  return out;
}

}  // namespace larmor::epg
