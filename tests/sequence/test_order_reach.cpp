// The orders that reach a sample (sequence::sample_reach_order_count): the
// count is checked against a brute-force search with the double-precision
// reference, which truncates exactly as the kernels do. Truncating at the
// count must reproduce the untruncated samples to the last bit, and
// truncating one order lower must change a sample on the builders' trains
// (there the count is the least that is exact). Flips, B1 and trains are chosen so that every
// pathway has an amplitude well above double round-off, or the search could not see the orders that
// matter.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "epg/event_table.hpp"
#include "reference/epg_reference.hpp"
#include "sequence/builders/builders.hpp"
#include "simulate/simulator.hpp"

namespace larmor::sequence {
namespace {

using reference::Complex;

double largest_difference(const std::vector<Complex>& a, const std::vector<Complex>& b) {
  double d = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

// The least truncation whose samples equal the untruncated ones; also the
// difference one order below it.
struct SearchResult {
  int orders = 0;
  double below = 0.0;
};

SearchResult least_exact_orders(const Description& d, const reference::Tissue& t) {
  const int untruncated = d.declared_winding() + 1;
  const auto want = reference::simulate(d, t, untruncated);
  SearchResult r;
  for (int n = 1; n <= untruncated; ++n) {
    const double diff = largest_difference(reference::simulate(d, t, n), want);
    if (diff <= 1e-15) {
      r.orders = n;
      return r;
    }
    r.below = diff;
  }
  ADD_FAILURE() << "even the untruncated count differs";
  return r;
}

void expect_count_is_least_exact(const Description& d, const reference::Tissue& t) {
  const SearchResult found = least_exact_orders(d, t);
  EXPECT_EQ(sample_reach_order_count(d), found.orders) << d.name;
  // One order fewer changes a sample by far more than round-off.
  if (found.orders > 1) EXPECT_GT(found.below, 1e-12) << d.name;
}

// The count bounds the orders each component may occupy by their largest, so
// where a stream leaves gaps (a Z_3 with no Z_1 or Z_2) it may keep orders no
// sample reads: exact, but not always the least.
void expect_count_is_exact(const Description& d, const reference::Tissue& t) {
  const int count = sample_reach_order_count(d);
  const int untruncated = d.declared_winding() + 1;
  EXPECT_LE(count, untruncated) << d.name;
  EXPECT_GE(count, least_exact_orders(d, t).orders) << d.name;
  EXPECT_LE(largest_difference(reference::simulate(d, t, std::min(count, untruncated)),
                               reference::simulate(d, t, untruncated)),
            1e-15)
      << d.name;
}

reference::Tissue unrelaxed(double b1) {
  reference::Tissue t;
  t.b1 = b1;
  return t;
}

// A CPMG train of n echoes with a crusher either side of each refocusing
// pulse: an F+ state pushed to order j by the crusher before pulse m can be
// non-zero only if j <= 2m - 1, and read only if j <= 2(n - m) + 1 (pulse m
// makes it F-, which the 2(n - m) + 1 shifts left before the last echo can
// bring down); after pulse m, j <= 2m and j + 1 <= 2(n - m) - 1. The count is
// one more than the largest such j: n for even n, n + 1 for odd n.
TEST(OrderReach, cpmg_trains_need_as_many_orders_as_echoes) {
  for (int echoes : {1, 2, 5, 12, 32}) {
    MeseParams p;
    p.echoes = echoes;
    p.refocusing_deg = 90.0;  // every pathway has weight 1/2 per pulse
    const Description d = build_mese(p);
    EXPECT_EQ(sample_reach_order_count(d), echoes % 2 == 0 ? echoes : echoes + 1)
        << echoes << " echoes";
    expect_count_is_least_exact(d, unrelaxed(1.0));
  }
}

TEST(OrderReach, gradient_spoiled_and_variable_flip_trains) {
  SpgrParams spgr;
  spgr.repetitions = 30;
  spgr.flip_deg = 50.0;
  expect_count_is_least_exact(build_spgr(spgr), unrelaxed(0.9));
  TseParams tse;
  tse.echoes = 9;
  tse.refocusing_deg = {160, 120, 100, 90, 90, 80, 90, 100, 110};
  expect_count_is_least_exact(build_tse(tse), unrelaxed(0.85));
}

// Random streams: every kind and action bit, spoilers, waits and samples in
// any order, including shifts before the first pulse and after the last
// sample (neither needs an order). Exact on every one, the least on most.
TEST(OrderReach, random_streams) {
  std::mt19937 rng(31);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 40; ++trial) {
    Description d;
    d.name = "random " + std::to_string(trial);
    const int events = 6 + int(30 * u(rng));
    for (int i = 0; i < events; ++i) {
      Event e;
      const double k = u(rng);
      e.kind = k < 0.45 ? EventKind::pulse : (k < 0.8 ? EventKind::adc : EventKind::wait);
      e.phase_rad = 6.0 * u(rng);
      if (e.kind == EventKind::pulse) {
        e.flip_rad = 0.7 + 1.6 * u(rng);
        if (u(rng) < 0.6) e.action |= abi::action::crush_before;
        if (u(rng) < 0.6) e.action |= abi::action::crush_after;
      } else {
        if (u(rng) < 0.6) e.action |= abi::action::shift_after;
        if (u(rng) < 0.1) e.action |= abi::action::spoil_after;
      }
      d.events.push_back(e);
    }
    if (d.sample_count() == 0) continue;
    expect_count_is_exact(d, unrelaxed(0.8 + 0.4 * u(rng)));
  }
}

TEST(OrderReach, the_simulator_runs_the_reaching_orders_and_keeps_the_truncation) {
  MeseParams p;  // 32 echoes: a winding of 64, so the default keeps orders 0..63
  const simulate::Simulator sim(build_mese(p));
  EXPECT_EQ(sim.max_order(), 63);
  EXPECT_EQ(sim.states(), 64);
  EXPECT_EQ(sim.kernel_states(), 32);
  simulate::Options few;
  few.max_order = 19;  // a requested truncation below the reach stays as asked
  EXPECT_EQ(simulate::Simulator(build_mese(p), few).kernel_states(), 20);
}

// The orders each event's record counts live, written out by hand for a
// stream of six events: `filled` grows with the shifts so far; `read` also
// stops at the shifts left before the last sample reads F+_0 (F_k needs k
// shifts to reach it), so it falls again at the stream's end; `all` counts
// every order.
TEST(OrderReach, records_count_the_orders_filled_and_still_read) {
  using abi::action::crush_after;
  using abi::action::crush_before;
  using abi::action::shift_after;
  Description d;
  d.name = "six events";
  const auto add = [&](EventKind kind, std::uint32_t action) {
    Event e;
    e.kind = kind;
    e.flip_rad = kind == EventKind::pulse ? 1.0 : 0.0;
    e.duration_s = 1e-3;
    e.action = action;
    d.events.push_back(e);
  };
  // Shifts so far (this event's included); shifts left from its start to the last read.
  add(EventKind::pulse, crush_after);                 // 1; 4
  add(EventKind::adc, 0);                             // 1; 3
  add(EventKind::pulse, crush_before | crush_after);  // 3; 3
  add(EventKind::wait, shift_after);                  // 4; 1
  add(EventKind::adc, 0);                             // 4; 0 (the last sample)
  add(EventKind::pulse, crush_after);                 // 5; none: nothing reads it
  const auto packed = pack(d);
  const auto live = [&](epg::LiveOrders rule) {
    std::vector<int> l;
    for (const auto& r : epg::build_event_records(packed.ref(), 10, 2, rule)) {
      l.push_back(epg::live_orders_of(r));
    }
    return l;
  };
  EXPECT_EQ(live(epg::LiveOrders::filled), (std::vector<int>{2, 2, 4, 5, 5, 6}));
  EXPECT_EQ(live(epg::LiveOrders::read), (std::vector<int>{2, 2, 4, 2, 1, 1}));
  EXPECT_EQ(live(epg::LiveOrders::all), (std::vector<int>(6, 10)));
}

}  // namespace
}  // namespace larmor::sequence
