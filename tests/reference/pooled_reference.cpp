#include "reference/pooled_reference.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

namespace larmor::reference {
namespace {

using larmor::sequence::Description;
using larmor::sequence::Event;
using larmor::sequence::EventKind;
namespace action = larmor::sequence::action;

constexpr double kPi = 3.14159265358979323846;

double rate(double t) { return std::isinf(t) ? 0.0 : 1.0 / t; }

// Pools as indices: free pools first, then the bound pool.
struct Model {
  int free = 1, pools = 1;
  std::vector<double> r1, r2, eq;
  std::vector<std::vector<double>> k;  // k[i][j]: from i to j
  double df = 0.0;
};

Model model_of(const PooledTissue& t) {
  Model m;
  m.free = t.second_pool() ? 2 : 1;
  m.pools = m.free + (t.bound_pool() ? 1 : 0);
  m.r1.assign(std::size_t(m.pools), 0.0);
  m.r2.assign(std::size_t(m.free), 0.0);
  m.eq.assign(std::size_t(m.pools), 0.0);
  m.k.assign(std::size_t(m.pools), std::vector<double>(std::size_t(m.pools), 0.0));
  m.df = t.free.df_hz;
  m.eq[0] = 1.0 - t.pool_fraction - t.bound_fraction;
  m.r1[0] = rate(t.free.t1_s);
  m.r2[0] = rate(t.free.t2_s);
  if (m.free == 2) {
    m.eq[1] = t.pool_fraction;
    m.r1[1] = rate(t.pool_t1_s);
    m.r2[1] = rate(t.pool_t2_s);
    m.k[0][1] = t.pool_exchange_hz;
    m.k[1][0] = t.pool_exchange_hz * m.eq[0] / m.eq[1];  // detailed balance
  }
  if (t.bound_pool()) {
    const int b = m.pools - 1, f = m.free - 1;
    m.eq[std::size_t(b)] = t.bound_fraction;
    m.r1[std::size_t(b)] = rate(t.bound_t1_s);
    m.k[std::size_t(f)][std::size_t(b)] = t.bound_exchange_hz;
    m.k[std::size_t(b)][std::size_t(f)] =
        t.bound_exchange_hz * m.eq[std::size_t(f)] / t.bound_fraction;
  }
  return m;
}

// One order's values across the pools (at most three: two free pools and a
// bound one), held in place: the finite-difference tests run the reference
// thousands of times.
struct PoolVector {
  std::array<Complex, 3> v{};
  std::size_t n = 0;

  explicit PoolVector(int size) : n(std::size_t(size)) {
    if (size > 3) throw std::invalid_argument("pooled reference: at most three pools");
  }
  std::size_t size() const { return n; }
  Complex& operator[](std::size_t i) { return v[i]; }
  const Complex& operator[](std::size_t i) const { return v[i]; }
};

// Adds to `out` pool i's exchange with the first `count` pools: what leaves
// it for each (k_ij v_i) and what arrives from each (k_ji v_j).
void add_exchange(Complex& out, const Model& m, const PoolVector& v, int i, int count) {
  for (int j = 0; j < count; ++j) {
    if (j == i) continue;
    out += -m.k[std::size_t(i)][std::size_t(j)] * v[std::size_t(i)] +
           m.k[std::size_t(j)][std::size_t(i)] * v[std::size_t(j)];
  }
}

// y' = f(y) for one order's vector; RK4 over `duration` in `steps` steps.
template <class Rhs>
void integrate(PoolVector& y, double duration, int steps, Rhs rhs) {
  const double h = duration / steps;
  for (int s = 0; s < steps; ++s) {
    const PoolVector k1 = rhs(y);
    PoolVector y2 = y, y3 = y, y4 = y;
    for (std::size_t i = 0; i < y.size(); ++i) y2[i] += 0.5 * h * k1[i];
    const PoolVector k2 = rhs(y2);
    for (std::size_t i = 0; i < y.size(); ++i) y3[i] += 0.5 * h * k2[i];
    const PoolVector k3 = rhs(y3);
    for (std::size_t i = 0; i < y.size(); ++i) y4[i] += h * k3[i];
    const PoolVector k4 = rhs(y4);
    for (std::size_t i = 0; i < y.size(); ++i)
      y[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
  }
}

// A homogeneous linear y' = A y: RK4 is linear in y, so its result for any
// start is the matrix whose columns are its results for the unit vectors.
// Integrating those once per interval and applying the matrix to every order
// gives each order what integrating it alone would, in far fewer steps.
struct Propagator {
  std::array<PoolVector, 3> column{PoolVector(0), PoolVector(0), PoolVector(0)};
  std::size_t n = 0;

  template <class Rhs>
  Propagator(int size, double duration, int steps, Rhs rhs) : n(std::size_t(size)) {
    for (std::size_t j = 0; j < n; ++j) {
      PoolVector e(size);
      e[j] = 1.0;
      integrate(e, duration, steps, rhs);
      column[j] = e;
    }
  }
  void apply(PoolVector& y) const {
    PoolVector out(static_cast<int>(n));
    for (std::size_t j = 0; j < n; ++j) {
      for (std::size_t i = 0; i < n; ++i) out[i] += column[j][i] * y[j];
    }
    y = out;
  }
};

}  // namespace

std::vector<Complex> simulate_pooled(const Description& d, const PooledTissue& tissue, int orders) {
  const Model m = model_of(tissue);
  std::vector<EpgState> free;  // each free pool's F and Z
  for (int p = 0; p < m.free; ++p) {
    free.emplace_back(orders);
    free.back().set_z(0, m.eq[std::size_t(p)]);
  }
  std::vector<Complex> bound(std::size_t(orders), 0.0);  // the bound pool's Z_k
  if (m.pools > m.free) bound[0] = m.eq.back();
  double fastest = std::abs(2 * kPi * m.df);
  for (int i = 0; i < m.pools; ++i) {
    double out = m.r1[std::size_t(i)] + (i < m.free ? m.r2[std::size_t(i)] : 0.0);
    for (int j = 0; j < m.pools; ++j) out += m.k[std::size_t(i)][std::size_t(j)];
    fastest = std::max(fastest, out);
  }
  std::vector<Complex> samples;
  const auto shift_all = [&] {
    for (auto& s : free) s.shift();
  };
  for (const Event& e : d.events) {
    if (e.action & action::crush_before) shift_all();
    if (e.kind == EventKind::pulse) {
      // Every pool sees the same field: b1 times the shim setting's array field.
      const double b1 = (e.action & action::b1_fixed) != 0 ? 1.0 : tissue.free.b1;
      const Complex field = b1 * transmit_field(d, tissue.free, e.shim_index);
      for (auto& s : free) s.rotate(e.flip_rad * std::abs(field), e.phase_rad + std::arg(field));
      if (m.pools > m.free && e.saturation > 0.0f) {
        // The pool's power scales with the square of the transmit field.
        const double kept = larmor::tissue::bound_pool_saturation(
            tissue.bound_lineshape, e.rf_frequency_hz, tissue.bound_t2_s,
            double(e.saturation) * std::norm(field));
        for (auto& z : bound) z *= kept;
      }
    }
    if (e.kind == EventKind::adc) {
      Complex f0 = 0.0;
      for (const auto& s : free) f0 += voxel_mean(d, s, e.voxel_weights);
      samples.push_back(tissue.free.m0 * f0 * std::polar(1.0, -e.phase_rad));
    }
    if (e.action & action::crush_after) shift_all();
    if (e.action & action::shift_after) shift_all();
    if (e.action & action::spoil_after) {
      for (auto& s : free) s.spoil();
    }
    // Relaxation and exchange act on every order alike, so the lobes' time
    // (which the shifts above took at once) joins the interval.
    const double interval_s = e.duration_s + d.lobe_time_after_s(std::size_t(&e - d.events.data()));
    if (interval_s <= 0.0) continue;
    const int steps = 8 + int(std::ceil(interval_s * fastest / 0.01));
    // Transverse: the free pools' F with exchange between free pools and the
    // common precession, alike for every signed order.
    const Propagator transverse(m.free, interval_s, steps, [&](const PoolVector& v) {
      PoolVector dv(m.free);
      for (int i = 0; i < m.free; ++i) {
        Complex out = Complex(-m.r2[std::size_t(i)], 2 * kPi * m.df) * v[std::size_t(i)];
        add_exchange(out, m, v, i, m.free);
        dv[std::size_t(i)] = out;
      }
      return dv;
    });
    for (int n = -(orders - 1); n < orders; ++n) {
      PoolVector y(m.free);
      for (int p = 0; p < m.free; ++p) y[std::size_t(p)] = free[std::size_t(p)].f(n);
      transverse.apply(y);
      for (int p = 0; p < m.free; ++p) free[std::size_t(p)].set_f(n, y[std::size_t(p)]);
    }
    // Longitudinal: every pool's Z with exchange; recovery toward equilibrium
    // at k = 0 only (integrated as it is), the orders above decay alike.
    const auto longitudinal = [&](bool recovers) {
      return [&m, recovers](const PoolVector& v) {
        PoolVector dv(m.pools);
        for (int i = 0; i < m.pools; ++i) {
          Complex out =
              -m.r1[std::size_t(i)] * (v[std::size_t(i)] - (recovers ? m.eq[std::size_t(i)] : 0.0));
          add_exchange(out, m, v, i, m.pools);
          dv[std::size_t(i)] = out;
        }
        return dv;
      };
    };
    const Propagator decay(m.pools, interval_s, steps, longitudinal(false));
    for (int k = 0; k < orders; ++k) {
      PoolVector y(m.pools);
      for (int p = 0; p < m.free; ++p) y[std::size_t(p)] = free[std::size_t(p)].z(k);
      if (m.pools > m.free) y[std::size_t(m.pools - 1)] = bound[std::size_t(k)];
      if (k == 0) {
        integrate(y, interval_s, steps, longitudinal(true));
      } else {
        decay.apply(y);
      }
      for (int p = 0; p < m.free; ++p) {
        free[std::size_t(p)].set_z(
            k, k == 0 ? Complex(y[std::size_t(p)].real(), 0.0) : y[std::size_t(p)]);
      }
      if (m.pools > m.free) bound[std::size_t(k)] = y[std::size_t(m.pools - 1)];
    }
  }
  return samples;
}

}  // namespace larmor::reference
