// Slice-selective pulse tables (src/sequence/slice_profile.hpp,
// kernels/epg/slice_profile.hpp): the integrated rotation against the hard
// pulse at the slice centre, against a Runge-Kutta integration of the Bloch
// equation (tests/reference/slice_reference.hpp), and against the small-tip Fourier profile; the
// table's Hermite read-back against direct integration; refusals by name.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <complex>
#include <stdexcept>

#include "common/dual.hpp"
#include "epg/slice_profile.hpp"
#include "reference/slice_reference.hpp"
#include "sequence/packing.hpp"
#include "sequence/slice_profile.hpp"

namespace larmor::sequence {
namespace {

constexpr double pi = 3.14159265358979323846;
using Vec = std::array<double, 3>;

Vec cross(const Vec& a, const Vec& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}

// The quaternion's rotation of a vector, v' = q v q*.
Vec rotate(const Quaternion& q, const Vec& v) {
  const double w = q[0];
  const Vec u{q[1], q[2], q[3]};
  const Vec uv = cross(u, v), uuv = cross(u, uv);
  Vec r;
  for (int i = 0; i < 3; ++i) r[i] = v[i] + 2.0 * (w * uv[i] + uuv[i]);
  return r;
}

SliceProfileSpec sinc_spec(double rephase, double thickness = 1.0) {
  SliceProfileSpec s;
  s.name = "test";
  s.time_bandwidth = 4.0;
  s.rephase = rephase;
  s.thickness = thickness;
  return s;
}

TEST(SliceProfile, centre_of_the_slice_is_the_hard_pulse) {
  const auto s = sinc_spec(0.5);
  const auto w = pulse_waveform(s);
  for (double flip : {0.0, 0.3, 1.5707963, 2.6, 3.14159265, 4.0}) {
    Quaternion d;
    const Quaternion q = shaped_pulse_rotation(s, w, 0.0, flip, &d);
    EXPECT_NEAR(q[0], std::cos(0.5 * flip), 1e-12);
    EXPECT_NEAR(q[1], std::sin(0.5 * flip), 1e-12);
    EXPECT_NEAR(q[2], 0.0, 1e-12);
    EXPECT_NEAR(q[3], 0.0, 1e-12);
    EXPECT_NEAR(d[0], -0.5 * std::sin(0.5 * flip), 1e-12);
    EXPECT_NEAR(d[1], 0.5 * std::cos(0.5 * flip), 1e-12);
  }
}

TEST(SliceProfile, rotation_matches_runge_kutta_bloch_integration) {
  for (double rephase : {0.0, 0.5}) {
    const auto s = sinc_spec(rephase, 1.5);
    const auto w = hann_windowed_sinc(s.time_bandwidth, 200);
    for (double z : {-0.9, -0.41, 0.0, 0.23, 0.5, 0.77, 1.3}) {
      for (double flip : {0.5, 1.5707963, 2.9, 3.6}) {
        const Quaternion q = shaped_pulse_rotation(s, w, z, flip);
        const auto matrix = reference::shaped_pulse_matrix(s, w, z, flip, 0.0, 8);
        EXPECT_NEAR(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3], 1.0, 1e-12);
        for (const Vec& m0 : {Vec{0, 0, 1}, Vec{1, 0, 0}, Vec{0, 1, 0}}) {
          const Vec got = rotate(q, m0);
          Vec expected{};
          for (int i = 0; i < 3; ++i) {
            for (int k = 0; k < 3; ++k) expected[i] += matrix[i][k] * m0[k];
          }
          for (int i = 0; i < 3; ++i) {
            ASSERT_NEAR(got[i], expected[i], 1e-8) << "z " << z << " flip " << flip << " i " << i;
          }
        }
      }
    }
  }
}

TEST(SliceProfile, small_tip_profile_is_the_waveforms_fourier_transform) {
  // Small tip: Mxy(z) = -i flip S(z) with S the waveform's transform at the
  // offset, referred to the pulse's centre (rephase 1/2); error O(flip^3).
  const auto s = sinc_spec(0.5);
  const auto w = pulse_waveform(s);
  const double flip = 0.02;
  double area = 0.0;
  for (double v : w) area += v;
  for (double z : {0.0, 0.2, 0.45, 0.5, 0.6, 0.9}) {
    std::complex<double> transform = 0.0;
    for (std::size_t k = 0; k < w.size(); ++k) {
      const double tau = (double(k) + 0.5) / double(w.size()) - 0.5;
      transform += w[k] / area * std::exp(std::complex<double>(0, 2 * pi * 4.0 * z * tau));
    }
    const Vec m = rotate(shaped_pulse_rotation(s, w, z, flip), Vec{0, 0, 1});
    const std::complex<double> expected = std::complex<double>(0, -1) * flip * transform;
    EXPECT_NEAR(m[0], expected.real(), 2e-3 * flip) << z;
    EXPECT_NEAR(m[1], expected.imag(), 2e-3 * flip) << z;
  }
}

Description slice_description(int positions) {
  Description d;
  d.name = "slice-test";
  d.slice_profiles = {sinc_spec(0.5), sinc_spec(0.0, 1.5)};
  for (auto& s : d.slice_profiles) s.positions = positions;
  Event exc;
  exc.kind = EventKind::pulse;
  exc.flip_rad = pi / 2;
  exc.slice_profile = 1;
  Event ref = exc;
  ref.flip_rad = 2.6;
  ref.slice_profile = 2;
  d.events = {exc, ref};
  return d;
}

TEST(SliceProfile, table_read_back_matches_direct_integration) {
  const Description d = slice_description(12);
  const SliceProfileTable t = build_slice_profile_table(d);
  ASSERT_EQ(t.profiles, 2);
  ASSERT_EQ(t.positions, 12);
  EXPECT_NEAR(t.max_flip[1], slice_profile_max_b1 * 2.6, 1e-12);
  double weights = 0.0;
  for (double w : t.position_weight) weights += w;
  EXPECT_NEAR(weights, d.slice_profiles[0].extent, 1e-12);
  epg::SliceProfileViews<Kokkos::HostSpace> v;
  v.nodes = Kokkos::View<const float****, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged>(
      t.nodes.data(), t.profiles, t.positions, t.flip_nodes, 8);
  std::vector<float> steps{float(t.flip_step[0]), float(t.flip_step[1])};
  v.flip_step = Kokkos::View<const float*, Kokkos::HostSpace, kx::Unmanaged>(steps.data(), 2);
  v.positions = t.positions;
  for (int p = 0; p < 2; ++p) {
    const auto& spec = d.slice_profiles[std::size_t(p)];
    const auto w = pulse_waveform(spec);
    for (int j : {0, 3, 6, 11}) {
      for (double share : {0.0031, 0.23, 0.61, 0.88, 0.997}) {
        const double flip = share * t.max_flip[std::size_t(p)];
        Quaternion dq;
        const Quaternion q = shaped_pulse_rotation(spec, w, t.position[std::size_t(j)], flip, &dq);
        using D = Dual<float, 1>;
        const D x = D::variable(float(flip), 0);
        const auto r = epg::read_slice_rotation(v, p, j, x);
        const D got[4] = {r.w, r.x, r.y, r.z};
        for (int c = 0; c < 4; ++c) {
          // Hermite error at 129 nodes is far below float round-off.
          ASSERT_NEAR(got[c].value, q[std::size_t(c)], 2e-6) << p << " " << j << " " << flip;
          ASSERT_NEAR(got[c].tangent[0], dq[std::size_t(c)], 2e-4) << p << " " << j << " " << flip;
        }
      }
    }
  }
}

TEST(SliceProfile, general_rotation_coefficients_reduce_to_the_hard_pulse) {
  // a = cos(flip/2), b = sin(flip/2) at RF phase p: make_rotation's matrix.
  const double flip = 1.1, p = 0.7;
  const epg::PulseQuaternion<double> q{std::cos(flip / 2), std::sin(flip / 2), 0.0, 0.0};
  const auto g = epg::make_general_rotation(q, std::cos(p), std::sin(p));
  const auto r =
      epg::make_rotation(epg::make_flip(flip), epg::make_phase(std::cos(p), std::sin(p)));
  EXPECT_NEAR(g.c2_im, 0.0, 1e-15);
  for (auto [a, b] : {std::pair{g.r.c2, r.c2},
                      {g.r.ca, r.ca},
                      {g.r.u_re, r.u_re},
                      {g.r.u_im, r.u_im},
                      {g.r.v_re, r.v_re},
                      {g.r.v_im, r.v_im},
                      {g.r.h_re, r.h_re},
                      {g.r.h_im, r.h_im}}) {
    EXPECT_NEAR(a, b, 1e-14);
  }
}

TEST(SliceProfile, refusals_name_the_profile_and_the_event) {
  const auto refuses = [](Description d, const char* text) {
    try {
      pack(d);
      build_slice_profile_table(d);
      ADD_FAILURE() << "accepted; expected '" << text << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  Description d = slice_description(8);
  d.slice_profiles[1].positions = 9;
  refuses(d, "same positions");
  d = slice_description(8);
  d.slice_profiles[0].rephase = 1.5;
  refuses(d, "rephase");
  d = slice_description(8);
  d.slice_profiles[0].waveform = {1.0, -1.0};
  refuses(d, "zero area");
  d = slice_description(8);
  d.events[0].slice_profile = 3;
  refuses(d, "slice_profile 3");
  d = slice_description(8);
  d.events[1].flip_rad = -1.0;
  refuses(d, "flip angle >= 0");
  d = slice_description(8);
  d.slice_profiles[0].positions = 0;
  refuses(d, "positions must lie");
}

}  // namespace
}  // namespace larmor::sequence
