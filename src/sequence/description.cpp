#include "sequence/description.hpp"

#include <algorithm>
#include <stdexcept>

namespace larmor::sequence {

int Description::sample_count() const {
  return static_cast<int>(std::count_if(events.begin(), events.end(),
                                        [](const Event& e) { return e.kind == EventKind::adc; }));
}

void keep_last_samples(Description& d, int n) {
  int to_drop = d.sample_count() - n;
  if (n <= 0 || to_drop <= 0) return;
  for (Event& e : d.events) {
    if (to_drop == 0) break;
    if (e.kind == EventKind::adc) {
      e.kind = EventKind::wait;
      e.phase_rad = 0.0;
      --to_drop;
    }
  }
}

int Description::declared_winding() const {
  long long w = 0;
  for (const Event& e : events) w += abi::shifts_of(e.action);
  return w > (1ll << 30) ? (1 << 30) : static_cast<int>(w);
}

double Description::total_duration_s() const {
  double t = 0.0;
  for (const Event& e : events) t += e.duration_s;
  return t;
}

std::vector<double> Description::timestamps_s() const {
  std::vector<double> t(events.size());
  double now = 0.0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    t[i] = now;
    now += events[i].duration_s;
  }
  return t;
}

void Description::append(const Description& other) {
  events.insert(events.end(), other.events.begin(), other.events.end());
  if (!crusher.declared()) crusher = other.crusher;
  if (shims.channels == 0) shims = other.shims;
}

int default_order_count(const Description& d) {
  const int wanted = d.declared_winding() + 1;
  return std::clamp(wanted, abi::min_default_orders, abi::max_default_orders);
}

int resolve_order_count(const Description& d, int requested) {
  const int orders = requested > 0 ? requested : default_order_count(d);
  if (orders > abi::max_orders) {
    throw std::invalid_argument("orders = " + std::to_string(orders) +
                                ": the EPG kernels (larmor::epg::forward) hold at most " +
                                std::to_string(abi::max_orders) + " orders");
  }
  return orders;
}

}  // namespace larmor::sequence
