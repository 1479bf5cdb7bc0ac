// The forward-mode steps taken by parts (kernels/epg/impl/dual_steps.hpp and the
// host's PartRingStateBlock, each part in a row of its own) against
// the same steps taken with dual numbers in double: the operators of
// operators.hpp applied order by order at Dual<double, 5>. Coefficients that
// depend on the expected tissue directions, on a state without an M0 tangent,
// take the sparse sweep; others every direction. Lanes differ in their
// directions, and orders at or above the live count must stay as they were.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

// The blocks' order loops are host-and-device functions; this test hands them
// host lambdas (a random stream, a vector) and runs them on the host only,
// which nvcc would flag at every instantiation.
#if defined(__NVCC__)
#pragma nv_diag_suppress 20013
#endif

#include "common/dual.hpp"
#include "epg/impl/operators.hpp"
#include "epg/impl/part_ring_state.hpp"
#include "epg/impl/state_block.hpp"

namespace larmor::epg {
namespace {

constexpr int kTangents = tissue_direction::count;
constexpr unsigned kB1 = 1u << tissue_direction::b1, kT1 = 1u << tissue_direction::t1,
                   kT2 = 1u << tissue_direction::t2, kDf = 1u << tissue_direction::df;
using Single = Dual<float, kTangents>;
using Double = Dual<double, kTangents>;

Single to_single(const Double& x) {
  Single s(float(x.value));
  for (int d = 0; d < kTangents; ++d) s.tangent[d] = float(x.tangent[d]);
  return s;
}

Double to_double(const Single& x) {
  Double s(double(x.value));
  for (int d = 0; d < kTangents; ++d) s.tangent[d] = double(x.tangent[d]);
  return s;
}

// The coefficients the blocks were given, exactly, in the reference's type.
RotationCoefficients<Double> to_double(const RotationCoefficients<Single>& s) {
  return {to_double(s.c2),   to_double(s.ca),   to_double(s.u_re), to_double(s.u_im),
          to_double(s.v_re), to_double(s.v_im), to_double(s.h_re), to_double(s.h_im)};
}

// A tissue value with unit tangent along the directions in `mask`.
Double variable(double v, unsigned mask) {
  Double x(v);
  for (int d = 0; d < kTangents; ++d) x.tangent[d] = (mask >> d) & 1u ? 1.0 : 0.0;
  return x;
}

// One order and lane's six components, in the reference's double duals.
using Components = std::array<Double, 6>;

template <class Block>
class ByParts {
 public:
  // Tangents drawn along the directions of `carried`, zero along the others.
  ByParts(int thread, unsigned carried) {
    block_.reset(thread);
    std::mt19937 rng(7 + thread);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    block_.for_each_order(Block::opt * (thread + 1), [&](int, int, auto&... c) {
      ((c.value = uniform(rng)), ...);
      for (int d = 0; d < kTangents; ++d) {
        ((c.tangent[d] = (carried >> d) & 1u ? uniform(rng) : 0.0f), ...);
      }
    });
    block_.carried = carried;
    expected_ = snapshot();
  }

  std::vector<Components> snapshot() {
    std::vector<Components> all;
    block_.for_each_order(
        1 << 20, [&](int, int, auto&... c) { all.push_back(Components{to_double(c)...}); });
    return all;
  }

  // Applies `step` to the reference's orders below `live`.
  template <class Step>
  void expect(int live, const Step& step) {
    std::size_t i = 0;
    block_.for_each_order(1 << 20, [&](int order, int lane, auto&...) {
      if (order < live) step(order, lane, expected_[i]);
      ++i;
    });
  }

  void check(const char* what) {
    const std::vector<Components> got = snapshot();
    ASSERT_EQ(got.size(), expected_.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      for (int c = 0; c < 6; ++c) {
        // Float rounding of a few dozen products of magnitude below about 4.
        EXPECT_NEAR(got[i][c].value, expected_[i][c].value, 4e-6) << what << " " << i << " " << c;
        for (int d = 0; d < kTangents; ++d) {
          EXPECT_NEAR(got[i][c].tangent[d], expected_[i][c].tangent[d], 8e-6)
              << what << " entry " << i << " component " << c << " direction " << d;
        }
      }
    }
  }

  Block& block() { return block_; }

 private:
  Block block_;
  std::vector<Components> expected_;
};

// `extra`: a direction lane 1's flip depends on besides B1; `carried`: the
// directions of the state's tangents.
template <class Block>
void rotations_match_the_dual_product(int thread, unsigned extra, unsigned carried) {
  ByParts<Block> t(thread, carried);
  constexpr int lanes = Block::lanes;
  LaneRotations<Single, lanes> rotation;
  rotation.directions = 0;
  for (int l = 0; l < lanes; ++l) {
    const Double flip = variable(0.4 + 0.3 * l, kB1 | (l == 1 ? extra : 0u)) * Double(1.1);
    const FlipFactors<Double> f = make_flip(flip);
    const FlipFactors<Single> single = {to_single(f.c2), to_single(f.s2), to_single(f.sa),
                                        to_single(f.ca)};
    rotation.directions |= dual_steps::directions_of(single);
    const RotationCoefficients<Single> r = make_rotation(
        single, make_phase(Single(std::cos(0.7f * l + 0.2f)), Single(std::sin(0.7f * l + 0.2f))));
    rotation.set(l, r);
  }
  EXPECT_EQ(rotation.directions, kB1 | extra);
  const int live = Block::opt * thread + Block::opt - 1;  // the block's last order stays
  t.block().rotate(live, rotation);
  t.expect(live, [&](int, int lane, Components& c) {
    rotate(to_double(rotation.get(lane)), c[0], c[1], c[2], c[3], c[4], c[5]);
  });
  t.check("rotation");
  EXPECT_EQ(t.block().carried, carried | kB1 | extra);
}

// `extra`: a direction lane 1's T2 depends on besides T2.
template <class Block>
void evolutions_match_the_dual_product(int thread, bool precess, bool spoil, unsigned extra,
                                       unsigned carried) {
  ByParts<Block> t(thread, carried);
  constexpr int lanes = Block::lanes;
  Evolution<Single> ev[lanes];
  Evolution<Double> exact[lanes];
  unsigned directions = 0;
  for (int l = 0; l < lanes; ++l) {
    // Lane 0 depends on T2 alone; the others also on T1 and df.
    const Double r1 = l == 0 ? Double(1.0) : Double(1.0) / variable(0.9 + 0.1 * l, kT1);
    const Double r2 = Double(1.0) / variable(0.08 + 0.01 * l, kT2 | (l == 1 ? extra : 0u));
    const Double df = l == 0 ? Double(3.0) : variable(2.0 + l, kDf);
    exact[l] = make_evolution(Double(0.011), r1, r2, df, precess);
    ev[l] = {to_single(exact[l].e1), to_single(exact[l].e2), to_single(exact[l].rot_re),
             to_single(exact[l].rot_im), to_single(exact[l].recovery)};
    directions |= dual_steps::directions_of(ev[l]);
    exact[l] = {to_double(ev[l].e1), to_double(ev[l].e2), to_double(ev[l].rot_re),
                to_double(ev[l].rot_im), to_double(ev[l].recovery)};
    if (spoil) exact[l].e2 = exact[l].rot_re = exact[l].rot_im = Double(0.0);
  }
  // Without precession df reaches no factor.
  EXPECT_EQ(directions, kT1 | kT2 | (precess ? kDf : 0u) | extra);
  const int live = Block::opt * thread + Block::opt - 1;
  t.block().evolve(live, ev, precess, spoil, directions);
  t.expect(live, [&](int order, int lane, Components& c) {
    if (precess) {
      evolve_transverse(exact[lane], c[0], c[1], c[2], c[3]);
    } else {
      decay_transverse(exact[lane], c[0], c[1], c[2], c[3]);
    }
    evolve_longitudinal(exact[lane], order == 0, c[4], c[5]);
  });
  t.check(spoil ? "spoiled evolution" : precess ? "evolution" : "decay");
  EXPECT_EQ(t.block().carried, carried | directions);
}

using DeviceBlock = StateBlock<Single, 4, 2>;
using HostRing = PartRingStateBlock<Single, 6, 8>;

// The sparse sweep (B1 alone, a state without an M0 tangent), then every
// direction: a flip that also depends on T1, or a state with an M0 tangent.
TEST(DualSteps, RotationsMatchTheDualProduct) {
  const unsigned expected = dual_steps::expected_carried_v<kTangents>, all = (1u << kTangents) - 1u;
  for (const auto& [extra, carried] :
       {std::pair{0u, expected}, std::pair{kT1, expected}, std::pair{0u, all}}) {
    rotations_match_the_dual_product<DeviceBlock>(0, extra, carried);
    rotations_match_the_dual_product<DeviceBlock>(1, extra, carried);
    rotations_match_the_dual_product<HostRing>(0, extra, carried);
  }
}

TEST(DualSteps, EvolutionsMatchTheDualProduct) {
  const unsigned expected = dual_steps::expected_carried_v<kTangents>, all = (1u << kTangents) - 1u;
  for (const auto& [extra, carried] :
       {std::pair{0u, expected}, std::pair{kB1, expected}, std::pair{0u, all}}) {
    for (const bool precess : {true, false}) {
      for (const bool spoil : {false, true}) {
        evolutions_match_the_dual_product<DeviceBlock>(0, precess, spoil, extra, carried);
        evolutions_match_the_dual_product<DeviceBlock>(1, precess, spoil, extra, carried);
        evolutions_match_the_dual_product<HostRing>(0, precess, spoil, extra, carried);
      }
    }
  }
}

// Coefficients without tangents (a constant step, mask 0) leave every tangent
// the value's step applied to it.
TEST(DualSteps, ConstantCoefficientsAddNoDirection) {
  ByParts<DeviceBlock> t(0, dual_steps::expected_carried_v<kTangents>);
  LaneRotations<Single, 2> rotation;
  rotation.directions = 0;
  for (int l = 0; l < 2; ++l) {
    const RotationCoefficients<float> r =
        make_rotation(make_flip(0.5f + l), make_phase(std::cos(0.3f), std::sin(0.3f)));
    EXPECT_EQ(dual_steps::directions_of(Single(r.c2)), 0u);
    rotation.set(l, {Single(r.c2), Single(r.ca), Single(r.u_re), Single(r.u_im), Single(r.v_re),
                     Single(r.v_im), Single(r.h_re), Single(r.h_im)});
  }
  t.block().rotate(4, rotation);
  t.expect(4, [&](int, int lane, Components& c) {
    rotate(to_double(rotation.get(lane)), c[0], c[1], c[2], c[3], c[4], c[5]);
  });
  t.check("constant rotation");
}

}  // namespace
}  // namespace larmor::epg
