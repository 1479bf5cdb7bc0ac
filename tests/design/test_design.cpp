// Sequence design: Cramer-Rao bounds against a closed-form Fisher matrix, the
// design gradient (forward over reverse, then the chain rule to the schedule
// variables) against central differences of an objective computed entirely
// in double precision from the reference simulator, the bounded optimiser on
// problems with known minimisers, and the design deck's refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <filesystem>
#include <fstream>
#include <random>

#include "app/design_deck.hpp"
#include "design/crlb.hpp"
#include "design/mrf_design.hpp"
#include "design/spg.hpp"
#include "reference/epg_reference.hpp"
#include "sequence/builders/builders.hpp"

namespace larmor {
namespace {

using Complex = std::complex<double>;

// Ideal CPMG echoes y_n = -i M0 exp(-n tau / T2) with (M0, T2) estimated:
// F = (1/sigma^2) sum_n e_n^2 [[1, M0 n tau / T2^2], [., (M0 n tau / T2^2)^2]].
TEST(Crlb, matches_the_closed_form_fisher_matrix_of_a_cpmg_decay) {
  sequence::MeseParams p;
  p.echoes = 20;
  p.echo_spacing_s = 0.012;
  const double m0 = 1.2, t2 = 0.09, sigma = 0.02;
  tissue::Tissue prior;
  prior.voxels = 1;
  prior.m0.uniform = float(m0);
  prior.t1_s.uniform = 1.0f;
  prior.t2_s.uniform = float(t2);
  design::CrlbSpec spec;
  spec.estimated = {0, 2};
  spec.weights = {0.5, 2.0};
  spec.noise_sigma = sigma;
  const auto got = design::evaluate_crlb(sequence::build_mese(p), prior, spec, false);
  double a = 0, b = 0, c = 0;
  for (int n = 1; n <= p.echoes; ++n) {
    const double e = std::exp(-n * p.echo_spacing_s / t2);
    const double dt2 = m0 * n * p.echo_spacing_s / (t2 * t2) * e;
    a += e * e;
    b += e * dt2;
    c += dt2 * dt2;
  }
  const double det = (a * c - b * b) / std::pow(sigma, 4);
  const double var_m0 = c / (sigma * sigma) / det, var_t2 = a / (sigma * sigma) / det;
  ASSERT_TRUE(got.finite);
  EXPECT_NEAR(got.relative_sd[0], std::sqrt(var_m0) / m0, 1e-5 * std::sqrt(var_m0) / m0);
  EXPECT_NEAR(got.relative_sd[1], std::sqrt(var_t2) / t2, 1e-5 * std::sqrt(var_t2) / t2);
  const double want = 0.5 * var_m0 / (m0 * m0) + 2.0 * var_t2 / (t2 * t2);
  EXPECT_NEAR(got.objective, want, 2e-5 * want);
}

// A parameter the train cannot see (T1 of a CPMG train with ideal pulses)
// makes the Fisher matrix singular: reported, not a number.
TEST(Crlb, reports_a_singular_fisher_matrix) {
  sequence::MeseParams p;
  p.echoes = 8;
  tissue::Tissue prior;
  prior.voxels = 1;
  prior.t1_s.uniform = 1.0f;
  prior.t2_s.uniform = 0.08f;
  design::CrlbSpec spec;
  spec.estimated = {1, 2};
  spec.weights = {1.0, 1.0};
  const auto got = design::evaluate_crlb(sequence::build_mese(p), prior, spec, false);
  EXPECT_FALSE(got.finite);
  EXPECT_TRUE(std::isinf(got.objective));
}

TEST(Crlb, refuses_a_relative_bound_at_zero) {
  tissue::Tissue prior;
  prior.voxels = 1;
  prior.t1_s.uniform = 1.0f;
  prior.t2_s.uniform = 0.08f;
  design::CrlbSpec spec;
  spec.estimated = {4};  // df = 0 Hz
  spec.weights = {1.0};
  try {
    design::validate(spec, prior);
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'df'"), std::string::npos) << e.what();
  }
}

// The same objective written out in double precision: Jacobians by central
// differences of the reference simulator, the Fisher matrix inverted by
// Cramer's rule for 3 x 3.
double reference_objective(const sequence::Description& d,
                           const std::vector<reference::Tissue>& prior, int orders, double sigma,
                           bool time_normalised) {
  double phi = 0.0;
  for (const auto& x : prior) {
    std::vector<std::vector<Complex>> jac;
    const double theta[3] = {x.m0, x.t1_s, x.t2_s};
    for (int p = 0; p < 3; ++p) {
      reference::Tissue lo = x, hi = x;
      double* lo_slot[] = {&lo.m0, &lo.t1_s, &lo.t2_s};
      double* hi_slot[] = {&hi.m0, &hi.t1_s, &hi.t2_s};
      const double h = 1e-6 * theta[p];
      *lo_slot[p] -= h;
      *hi_slot[p] += h;
      const auto ylo = reference::simulate(d, lo, orders), yhi = reference::simulate(d, hi, orders);
      std::vector<Complex> col(ylo.size());
      for (std::size_t n = 0; n < ylo.size(); ++n) col[n] = (yhi[n] - ylo[n]) / (2 * h);
      jac.push_back(col);
    }
    double f[3][3];
    for (int p = 0; p < 3; ++p) {
      for (int q = 0; q < 3; ++q) {
        double s = 0.0;
        for (std::size_t n = 0; n < jac[0].size(); ++n)
          s += std::real(std::conj(jac[p][n]) * jac[q][n]);
        f[p][q] = s / (sigma * sigma);
      }
    }
    const double det = f[0][0] * (f[1][1] * f[2][2] - f[1][2] * f[2][1]) -
                       f[0][1] * (f[1][0] * f[2][2] - f[1][2] * f[2][0]) +
                       f[0][2] * (f[1][0] * f[2][1] - f[1][1] * f[2][0]);
    const double inv11 = (f[0][0] * f[2][2] - f[0][2] * f[2][0]) / det;
    const double inv22 = (f[0][0] * f[1][1] - f[0][1] * f[1][0]) / det;
    // Weights: T1 and T2 one each, M0 a nuisance.
    phi += (inv11 / (x.t1_s * x.t1_s) + inv22 / (x.t2_s * x.t2_s)) / double(prior.size());
  }
  if (time_normalised) {
    double t = 0.0;
    for (const auto& e : d.events) t += e.duration_s;
    phi *= t;
  }
  return phi;
}

struct DesignCase {
  design::MrfDesignSpace space;
  tissue::Tissue prior;
  std::vector<reference::Tissue> reference_prior;
  design::CrlbSpec spec;
};

DesignCase small_design(bool time_normalised) {
  DesignCase c;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  sequence::MrfParams p;
  for (int n = 0; n < 12; ++n) p.schedule.push_back({0.15 + 0.6 * u(rng), 0.0, 3e-3 * u(rng), 0.0});
  c.space.start = p;
  c.space.repetition_times = true;
  c.space.flip_min_deg = 2.0;
  c.space.flip_max_deg = 80.0;
  c.space.tr_min_s = 0.012;
  c.space.tr_max_s = 0.024;
  const double t1[] = {0.8, 1.4}, t2[] = {0.06, 0.11};
  c.prior.voxels = 2;
  for (int v = 0; v < 2; ++v) {
    c.prior.t1_s.map.push_back(float(t1[v]));
    c.prior.t2_s.map.push_back(float(t2[v]));
    c.prior.m0.map.push_back(1.0f);
    reference::Tissue x;
    x.t1_s = double(float(t1[v]));
    x.t2_s = double(float(t2[v]));
    c.reference_prior.push_back(x);
  }
  c.spec.estimated = {0, 1, 2};
  c.spec.weights = {0.0, 1.0, 1.0};
  c.spec.noise_sigma = 0.01;
  c.spec.max_order = 15;
  c.spec.time_normalised = time_normalised;
  return c;
}

// d objective / d (each row's flip and TR), in the unit-box variables: the
// forward-over-reverse gradient and the chain rule against central
// differences of reference_objective.
TEST(Design, gradient_matches_differences_of_a_double_precision_objective) {
  for (bool time_normalised : {false, true}) {
    SCOPED_TRACE(time_normalised ? "time normalised" : "plain");
    const DesignCase c = small_design(time_normalised);
    const auto x = c.space.encode(c.space.start);
    const auto train = sequence::build_mrf(c.space.decode(x));
    const auto ev = design::evaluate_crlb(train, c.prior, c.spec, true);
    const auto grad = c.space.chain(train, ev.event_gradients);
    const int orders = sequence::resolve_state_count(train, c.spec.max_order);
    const auto objective = [&](const std::vector<double>& y) {
      return reference_objective(sequence::build_mrf(c.space.decode(y)), c.reference_prior, orders,
                                 c.spec.noise_sigma, time_normalised);
    };
    EXPECT_NEAR(ev.objective, objective(x), 1e-4 * ev.objective);
    double scale = 0.0;
    for (double g : grad) scale = std::max(scale, std::abs(g));
    ASSERT_EQ(grad.size(), c.space.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double k = 1e-4;
      auto hi = x, lo = x;
      hi[i] += k;
      lo[i] -= k;
      const double fd = (objective(hi) - objective(lo)) / (2 * k);
      // Float Jacobians through a 3 x 3 inverse: seen within 3.3e-6 of the
      // largest component on the host; 2e-5 leaves room for other backends'
      // contractions while a 0.01 % error in the largest one still fails.
      EXPECT_NEAR(grad[i], fd, 2e-5 * scale) << "variable " << i;
    }
  }
}

// Minimising the small design reduces the bounds, and every accepted step
// lowers the objective below the best of the last few (non-monotone test).
TEST(Design, optimisation_lowers_the_bounds) {
  const DesignCase c = small_design(true);
  const auto objective = [&](const std::vector<double>& y, std::vector<double>* g) {
    const auto train = sequence::build_mrf(c.space.decode(y));
    const auto ev = design::evaluate_crlb(train, c.prior, c.spec, g != nullptr);
    if (g) *g = c.space.chain(train, ev.event_gradients);
    return ev.objective;
  };
  design::SpgOptions o;
  o.max_iterations = 15;
  const auto r = design::minimise_in_unit_box(objective, c.space.encode(c.space.start), o);
  ASSERT_GE(r.history.size(), 2u);
  EXPECT_LT(r.objective, 0.7 * r.history.front().objective);
  for (double v : r.x) {
    EXPECT_GE(v, 0.0);
    EXPECT_LE(v, 1.0);
  }
}

// Minimum of sum (x_i - c_i)^2 over the box: c clipped to [0, 1].
TEST(Spg, finds_the_clipped_minimiser_of_a_quadratic) {
  const std::vector<double> centre = {-0.5, 0.3, 1.7, 0.9};
  const auto f = [&](const std::vector<double>& x, std::vector<double>* g) {
    double s = 0.0;
    if (g) g->resize(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      s += (x[i] - centre[i]) * (x[i] - centre[i]);
      if (g) (*g)[i] = 2 * (x[i] - centre[i]);
    }
    return s;
  };
  const auto r = design::minimise_in_unit_box(f, {0.5, 0.5, 0.5, 0.5}, {});
  const double want[] = {0.0, 0.3, 1.0, 0.9};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(r.x[std::size_t(i)], want[i], 1e-8) << i;
}

// Rosenbrock's function in u = 2 x - 0.5 (u in [-0.5, 1.5]^2): minimum at
// u = (1, 1), x = (0.75, 0.75), inside the box.
TEST(Spg, minimises_the_rosenbrock_function) {
  const auto f = [](const std::vector<double>& x, std::vector<double>* g) {
    const double a = 2 * x[0] - 0.5, b = 2 * x[1] - 0.5;
    if (g) {
      *g = {2 * (-2 * (1 - a) - 400 * a * (b - a * a)), 2 * 200 * (b - a * a)};
    }
    return (1 - a) * (1 - a) + 100 * (b - a * a) * (b - a * a);
  };
  design::SpgOptions o;
  o.max_iterations = 5000;
  o.tolerance = 1e-10;
  const auto r = design::minimise_in_unit_box(f, {0.1, 0.9}, o);
  EXPECT_NEAR(r.x[0], 0.75, 1e-4);
  EXPECT_NEAR(r.x[1], 0.75, 1e-4);
}

TEST(Design, schedule_csv_round_trips) {
  const DesignCase c = small_design(false);
  const auto path = std::filesystem::temp_directory_path() / "larmor-design-roundtrip.csv";
  std::ofstream(path) << sequence::format_mrf_schedule_csv(c.space.start.schedule);
  const auto back = sequence::read_mrf_schedule_csv(path.string());
  ASSERT_EQ(back.size(), c.space.start.schedule.size());
  for (std::size_t n = 0; n < back.size(); ++n) {
    EXPECT_NEAR(back[n].flip_fraction, c.space.start.schedule[n].flip_fraction, 1e-8);
    EXPECT_NEAR(back[n].tr_extension_s, c.space.start.schedule[n].tr_extension_s, 1e-11);
  }
  std::filesystem::remove(path);
}

// Each bad design deck is refused with the file, the line and the key.
TEST(DesignDeck, refusals_name_the_file_and_key) {
  const auto dir = std::filesystem::temp_directory_path() / "larmor-design-decks";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "s.csv") << "f,p,tr,te\n0.2,0,0,0\n0.3,0,0,0\n";
  const std::string head =
      "[sequence]\nbuilder = \"mrf\"\nschedule = \"s.csv\"\n[tissue]\nt1_ms = 800.0\nt2_ms = "
      "80.0\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[design]\noptimise = [\"te\"]\n", "optimise names 'te'"},
      {"[design]\noptimise = [\"tr\"]\n", "tr_ms is required"},
      {"[design]\noptimise = [\"tr\"]\ntr_ms = [2.0, 20.0]\n", "not below the smallest TR"},
      {"[design]\nestimate = [\"m0\", \"t2\"]\nweights = { t1 = 1.0 }\n", "not estimated"},
      {"[design]\nflip_deg = [30.0, 10.0]\n", "flip_deg must be [min, max]"},
      {"[design]\nnoise_sigma = -1.0\n", "noise_sigma must be positive"},
      {"[design]\nstep = 3\n", "step is not a known key"},
      {"", "[design] section is required"},
  };
  for (const auto& [body, expected] : cases) {
    const auto deck = dir / "bad.toml";
    std::ofstream(deck) << head << body;
    try {
      app::read_design_deck(deck.string());
      ADD_FAILURE() << "accepted: " << body;
    } catch (const app::DeckError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("bad.toml"), std::string::npos) << what;
      EXPECT_NE(what.find(expected), std::string::npos) << what;
    }
  }
  std::ofstream(dir / "spgr.toml")
      << "[sequence]\nbuilder = \"spgr\"\n[tissue]\nt1_ms = 800.0\n[design]\n";
  EXPECT_THROW(app::read_design_deck((dir / "spgr.toml").string()), app::DeckError);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace larmor
