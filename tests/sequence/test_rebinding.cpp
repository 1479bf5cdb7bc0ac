// Value rebinding: a bound mrf train agrees bit for bit with fresh packing
// at values it was never read at; layouts whose entries draw on several
// arguments, or are not affine, are refused, and the refusal is remembered.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "sequence/rebinding.hpp"

namespace larmor::sequence {
namespace {

MrfParams small_train(int rows) {
  MrfParams p;
  for (int i = 0; i < rows; ++i) {
    p.schedule.push_back(
        {0.2 + 0.5 * std::sin(0.1 * i), 7.0 * i, 1e-3 * (i % 4), i % 5 == 0 ? 2e-4 : 0.0});
  }
  return p;
}

TEST(ValueRebinding, MrfAgreesBitForBitWithFreshPacking) {
  const MrfParams params = small_train(300);
  const MrfLayout layout(params);
  ValueBinding<MrfLayout> binding(layout);
  const std::vector<double> base = MrfLayout::arguments(params);
  // The first call packs afresh (it is the same as build_mrf) and binds.
  EXPECT_TRUE(first_difference(binding.pack(base), pack(build_mrf(params))).empty());
  ASSERT_EQ(binding.state(), ValueBinding<MrfLayout>::State::bound) << binding.refusal();
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> fraction(0.0, 1.5), phase(-720.0, 720.0),
      extension(0.0, 5e-3);
  for (int call = 0; call < 25; ++call) {
    std::vector<double> values(base.size());
    for (std::size_t i = 0; i < 300; ++i) {
      values[i] = fraction(rng);
      values[300 + i] = phase(rng);
      values[600 + i] = extension(rng);
    }
    const PackedSequence& rebound = binding.pack(values);
    const PackedSequence fresh = pack(layout.description(values));
    EXPECT_EQ(first_difference(rebound, fresh), "") << "call " << call;
    // Sample times are the running sums of the rebuilt intervals.
    EXPECT_EQ(rebound.sample_times_s, fresh.sample_times_s);
  }
}

TEST(ValueRebinding, ReboundValuesAreValidated) {
  const MrfParams params = small_train(20);
  ValueBinding<MrfLayout> binding{MrfLayout(params)};
  std::vector<double> values = MrfLayout::arguments(params);
  binding.pack(values);
  ASSERT_EQ(binding.state(), ValueBinding<MrfLayout>::State::bound);
  values[40 + 3] = -1.0;  // row 3's TR extension: TR - TE < 0
  try {
    binding.pack(values);
    FAIL() << "a negative interval was rebound";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("sequence 'mrf', event 8"), std::string::npos) << e.what();
  }
}

// A layout of one wait whose duration is a0 + a1 (two sources) or a0^2 (not
// affine): both refused, the refusal remembered, and every call still right.
struct TwoArgumentLayout {
  bool squared = false;
  std::size_t argument_count() const { return 2; }
  template <class Num>
  std::vector<ValueEvent<Num>> events(const std::vector<Num>& a) const {
    ValueEvent<Num> wait;
    wait.duration_s = squared ? a[0] * a[0] + Num(1.0) : a[0] + a[1] + Num(1.0);
    ValueEvent<Num> sample;
    sample.kind = EventKind::adc;
    return {wait, sample};
  }
  Description description(const std::vector<double>& a) const {
    Description d;
    d.name = "two";
    for (const auto& v : events(a)) {
      Event e;
      e.kind = v.kind;
      e.duration_s = v.duration_s;
      d.events.push_back(e);
    }
    return d;
  }
};

TEST(ValueRebinding, SeveralSourcesRefused) {
  ValueBinding<TwoArgumentLayout> binding{TwoArgumentLayout{false}};
  binding.pack({0.5, 0.25});
  ASSERT_EQ(binding.state(), ValueBinding<TwoArgumentLayout>::State::refused);
  EXPECT_NE(binding.refusal().find("event 0's duration draws on more than one argument"),
            std::string::npos)
      << binding.refusal();
  EXPECT_EQ(binding.pack({2.0, 3.0}).duration[0], 6.0f);  // packed afresh
  EXPECT_EQ(binding.state(), ValueBinding<TwoArgumentLayout>::State::refused);
}

TEST(ValueRebinding, NonAffineRefusedByVerification) {
  // At zero arguments a0^2 has value 1 and tangent 0: it looks constant, and
  // only the check at another point reveals it.
  ValueBinding<TwoArgumentLayout> binding{TwoArgumentLayout{true}};
  binding.pack({0.5, 0.0});
  ASSERT_EQ(binding.state(), ValueBinding<TwoArgumentLayout>::State::refused);
  EXPECT_NE(binding.refusal().find("a rebuild disagrees with a fresh packing: duration of event 0"),
            std::string::npos)
      << binding.refusal();
  EXPECT_EQ(binding.pack({3.0, 0.0}).duration[0], 10.0f);
}

}  // namespace
}  // namespace larmor::sequence
