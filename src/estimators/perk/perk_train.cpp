#include "estimators/perk/perk_train.hpp"

#include <KokkosBlas3_gemm.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

#if LARMOR_HAVE_LAPACKE
#include <lapacke.h>
#endif

#include "common/kokkos_compat.hpp"
#include "estimators/one_blas_thread.hpp"
#include "estimators/perk/impl/perk_device.hpp"
#include "simulate/noise.hpp"
#include "simulate/simulator.hpp"

namespace larmor::estimators::perk {
namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

void validate(const PerkSpec& spec) {
  auto fail = [](const std::string& why) { throw std::invalid_argument("PERK training: " + why); };
  if (spec.latent.empty()) fail("no latent (estimated) properties");
  if (int(spec.latent.size()) + (spec.m0 ? 1 : 0) > larmor::perk::max_outputs) {
    fail("more outputs than the kernels hold");
  }
  for (const auto& group : {spec.latent, spec.known, spec.nuisance}) {
    for (const Prior& p : group) {
      const std::string name = tissue::deck_name(p.property);
      if (!(p.low <= p.high) || !std::isfinite(p.low) || !std::isfinite(p.high)) {
        fail(name + ": the prior range must be finite with low <= high");
      }
      if (p.log_uniform && !(p.low > 0.0)) fail(name + ": a log-uniform prior needs low > 0");
    }
  }
  std::vector<int> seen(tissue::all_properties.size(), 0);
  for (const auto& group : {spec.latent, spec.known, spec.nuisance}) {
    for (const Prior& p : group) {
      if (seen[std::size_t(p.property)]++) {
        fail(std::string(tissue::deck_name(p.property)) + " is given twice");
      }
    }
  }
  for (const Prior& p : spec.latent) {
    if (p.property == tissue::Property::m0) {
      fail("m0 cannot be a latent property: the inputs are normalised by the mean magnitude");
    }
  }
  if (spec.known_samples.size() > spec.known.size()) fail("more measured maps than known inputs");
  if (spec.samples < 10 || spec.features < 1) fail("samples must be >= 10 and features >= 1");
  if (!(spec.noise_sigma >= 0.0)) fail("noise_sigma must be >= 0");
  if (!(spec.holdout_fraction > 0.0 && spec.holdout_fraction < 1.0)) {
    fail("holdout_fraction must lie in (0, 1)");
  }
}

double draw(const Prior& p, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double x = u(rng);
  return p.log_uniform ? p.low * std::pow(p.high / p.low, x) : p.low + (p.high - p.low) * x;
}

// Gaussian kernel density estimate of `values` (Silverman's bandwidth),
// sampled and clipped to the prior's range.
std::vector<float> kde_draws(const std::vector<float>& values, const Prior& range, int count,
                             std::mt19937_64& rng) {
  double mean = 0.0, sq = 0.0;
  for (float v : values) mean += v;
  mean /= double(values.size());
  for (float v : values) sq += (v - mean) * (v - mean);
  const double sd = std::sqrt(sq / double(values.size()));
  const double bandwidth = 1.06 * sd * std::pow(double(values.size()), -0.2);
  std::uniform_int_distribution<std::size_t> pick(0, values.size() - 1);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<float> out(static_cast<std::size_t>(count));
  for (float& x : out) {
    x = float(std::clamp(values[pick(rng)] + bandwidth * normal(rng), range.low, range.high));
  }
  return out;
}

// Host row-major H x H double, factored in place; false when not positive
// definite.
bool cholesky_solve(std::vector<double> a, int n, std::vector<double>& rhs, int columns) {
#if LARMOR_HAVE_LAPACKE
  const OneBlasThread deterministic;
  if (LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', n, a.data(), n) != 0) return false;
  return LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', n, columns, a.data(), n, rhs.data(), columns) == 0;
#else
  (void)a, (void)n, (void)rhs, (void)columns;
  throw std::runtime_error(
      "PERK training needs LAPACKE for its Cholesky solve (Debian: liblapacke-dev)");
#endif
}

struct Covariances {
  std::vector<double> zz;  // H x H, centred, / K
  std::vector<double> xz;  // L x H, centred, / K
  std::vector<double> mean_z, mean_x;
};

// Z = sqrt(2/H) cos(F q + phi) for the training inputs, chunk by chunk on the
// device; Z^T Z and [X 1]^T Z by KokkosBlas::gemm.
Covariances covariances(const Kokkos::View<const float**, Kokkos::LayoutRight, Mem>& inputs,
                        const std::vector<double>& x, int outputs,
                        const std::vector<double>& frequencies, const std::vector<double>& phases) {
  const int k_total = int(inputs.extent(0)), q = int(inputs.extent(1));
  const int h = int(phases.size()), l1 = outputs + 1;
  Kokkos::View<double**, Kokkos::LayoutRight, Mem> f("larmor::perk_train_f", h, q);
  Kokkos::View<double*, Mem> phi("larmor::perk_train_phi", h);
  Kokkos::deep_copy(
      f, Kokkos::View<const double**, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged>(
             frequencies.data(), h, q));
  Kokkos::deep_copy(
      phi, Kokkos::View<const double*, Kokkos::HostSpace, kx::Unmanaged>(phases.data(), h));
  Kokkos::View<double**, Kokkos::LayoutLeft, Mem> zz("larmor::perk_train_zz", h, h);
  Kokkos::View<double**, Kokkos::LayoutLeft, Mem> xz("larmor::perk_train_xz", l1, h);
  const int chunk = std::min(k_total, std::max(1, int((std::int64_t(1) << 27) / h)));
  Kokkos::View<double**, Kokkos::LayoutLeft, Mem> z("larmor::perk_train_z", chunk, h);
  Kokkos::View<double**, Kokkos::LayoutLeft, Mem> xc("larmor::perk_train_x", chunk, l1);
  auto xc_host = Kokkos::create_mirror_view(xc);
  const double scale = std::sqrt(2.0 / h);
  for (int k0 = 0; k0 < k_total; k0 += chunk) {
    const int rows = std::min(chunk, k_total - k0);
    auto zr = Kokkos::subview(z, std::make_pair(0, rows), Kokkos::ALL);
    auto xr = Kokkos::subview(xc, std::make_pair(0, rows), Kokkos::ALL);
    Kokkos::parallel_for(
        "larmor::perk_train_features",
        Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2>>({0, 0}, {rows, h}),
        KOKKOS_LAMBDA(int k, int j) {
          double angle = phi(j);
          for (int i = 0; i < q; ++i) angle += f(j, i) * double(inputs(k0 + k, i));
          zr(k, j) = scale * kx::cos(angle);
        });
    for (int k = 0; k < rows; ++k) {
      for (int o = 0; o < outputs; ++o) xc_host(k, o) = x[std::size_t(k0 + k) * outputs + o];
      xc_host(k, outputs) = 1.0;
    }
    Kokkos::deep_copy(xc, xc_host);
    KokkosBlas::gemm("T", "N", 1.0, zr, zr, 1.0, zz);
    KokkosBlas::gemm("T", "N", 1.0, xr, zr, 1.0, xz);
  }
  auto zz_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), zz);
  auto xz_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), xz);
  Covariances c;
  const double inv_k = 1.0 / k_total;
  c.mean_z.resize(std::size_t(h));
  for (int j = 0; j < h; ++j) c.mean_z[j] = xz_h(outputs, j) * inv_k;
  c.mean_x.assign(std::size_t(outputs), 0.0);
  for (int k = 0; k < k_total; ++k)
    for (int o = 0; o < outputs; ++o) c.mean_x[o] += x[std::size_t(k) * outputs + o] * inv_k;
  c.zz.resize(std::size_t(h) * h);
  for (int i = 0; i < h; ++i)
    for (int j = 0; j < h; ++j)
      c.zz[std::size_t(i) * h + j] = zz_h(i, j) * inv_k - c.mean_z[i] * c.mean_z[j];
  c.xz.resize(std::size_t(outputs) * h);
  for (int o = 0; o < outputs; ++o)
    for (int j = 0; j < h; ++j)
      c.xz[std::size_t(o) * h + j] = xz_h(o, j) * inv_k - c.mean_x[o] * c.mean_z[j];
  return c;
}

// The training tissue: latent properties from their priors (also the
// regression targets x, [sample][output]), nuisance from theirs, known from
// the measured maps' density (or their priors).
struct TrainingTissue {
  tissue::Tissue tissue;
  std::vector<double> x;
};

TrainingTissue draw_training_tissue(const PerkSpec& spec, int l, std::mt19937_64& rng) {
  const int k_all = spec.samples, n = int(spec.known.size()), latent = int(spec.latent.size());
  TrainingTissue out;
  tissue::Tissue& t = out.tissue;
  t.voxels = k_all;
  out.x.resize(std::size_t(k_all) * l);
  for (int o = 0; o < latent; ++o) {
    auto& map = t[spec.latent[o].property].map;
    map.resize(std::size_t(k_all));
    for (int k = 0; k < k_all; ++k) {
      const double v = draw(spec.latent[o], rng);
      map[k] = float(v);
      out.x[std::size_t(k) * l + o] = map[k];
    }
  }
  for (const Prior& p : spec.nuisance) {
    auto& map = t[p.property].map;
    map.resize(std::size_t(k_all));
    for (auto& v : map) v = float(draw(p, rng));
  }
  for (int i = 0; i < n; ++i) {
    auto& map = t[spec.known[i].property].map;
    if (i < int(spec.known_samples.size()) && !spec.known_samples[i].empty()) {
      map = kde_draws(spec.known_samples[i], spec.known[i], k_all, rng);
    } else {
      map.resize(std::size_t(k_all));
      for (auto& v : map) v = float(draw(spec.known[i], rng));
    }
  }
  t.validate("PERK training tissue");
  return out;
}

// The regression inputs [sample][q] of every training sample (each rank
// simulates a slice: signals, the level target (the noiseless mean magnitude
// at M0 = 1, written into x's last column when spec.m0), noise from a
// generator keyed by sample (the same values for any split), then the
// inputs; rows of [inputs, level] gathered and broadcast). `d`: the samples
// per signal.
std::vector<float> training_inputs(const sequence::Description& sequence, const PerkSpec& spec,
                                   TrainingTissue& training, int l, int& d, int& q,
                                   const parallel::Communicator* comm) {
  const int ranks = comm ? comm->size() : 1, rank = comm ? comm->rank() : 0;
  const int k_all = spec.samples, n = int(spec.known.size()), latent = int(spec.latent.size());
  const tissue::Tissue& t = training.tissue;
  simulate::Options options;
  options.max_order = spec.max_order;
  options.progress = spec.progress;
  const simulate::Simulator sim(sequence, options);
  d = sim.samples();
  if (d < 1) throw std::invalid_argument("PERK training: the sequence records no samples");
  q = d + n;
  if (q > larmor::perk::max_inputs) {
    throw std::invalid_argument("PERK training: " + std::to_string(q) +
                                " inputs exceed the kernels' limit of " +
                                std::to_string(larmor::perk::max_inputs));
  }
  const std::int64_t per = (k_all + ranks - 1) / ranks;
  const std::int64_t begin = std::min<std::int64_t>(k_all, per * rank);
  const std::int64_t end = std::min<std::int64_t>(k_all, begin + per);
  const int row = q + 1;
  std::vector<float> rows(std::size_t(end - begin) * row);
  {
    std::vector<float> signals = sim.run(t.slice(begin, end));
    std::vector<const float*> known;
    for (int i = 0; i < n; ++i) known.push_back(t[spec.known[i].property].map.data() + begin);
    std::vector<float> level(std::size_t(end - begin));
    for (std::int64_t k = 0; k < end - begin; ++k) {
      level[std::size_t(k)] = float(mean_magnitude(signals.data() + std::size_t(k) * d * 2, d));
    }
    simulate::add_complex_noise(signals, d, begin, spec.noise_sigma, spec.seed ^ 0x5045524b4e4full);
    const std::vector<float> inputs = perk_inputs(signals.data(), end - begin, d, known);
    for (std::int64_t k = 0; k < end - begin; ++k) {
      std::copy_n(inputs.data() + std::size_t(k) * q, q, rows.data() + std::size_t(k) * row);
      rows[std::size_t(k) * row + q] = level[std::size_t(k)];
    }
  }
  if (ranks > 1) {
    const auto gathered = comm->gather_rows(rows.data(), end - begin, row * sizeof(float));
    std::string bytes(gathered.bytes.begin(), gathered.bytes.end());
    comm->broadcast(bytes);
    rows.resize(std::size_t(k_all) * row);
    if (bytes.size() != rows.size() * sizeof(float)) {
      throw std::runtime_error("PERK training: the gathered training inputs are incomplete");
    }
    std::copy(bytes.begin(), bytes.end(), reinterpret_cast<char*>(rows.data()));
  }
  std::vector<float> q_all(std::size_t(k_all) * q);
  for (int k = 0; k < k_all; ++k) {
    std::copy_n(rows.data() + std::size_t(k) * row, q, q_all.data() + std::size_t(k) * q);
    if (spec.m0) training.x[std::size_t(k) * l + latent] = rows[std::size_t(k) * row + q];
  }
  return q_all;
}

// The model of one grid point: its features (f, phi) and the solved
// weights W^T [feature][output], offset so that the mean input gives the
// mean output.
PerkModel model_of(const PerkSpec& spec, int d, int l, const std::vector<double>& f,
                   const std::vector<double>& phi, const Covariances& c,
                   const std::vector<double>& wt) {
  const int h = spec.features;
  PerkModel m;
  m.signals = d;
  for (const Prior& p : spec.known) m.known.push_back(p.property);
  for (const Prior& p : spec.latent) m.outputs.push_back(p.property);
  if (spec.m0) m.outputs.push_back(tissue::Property::m0);
  m.features = h;
  m.frequencies.assign(f.begin(), f.end());
  m.phases.assign(phi.begin(), phi.end());
  m.weights.resize(std::size_t(l) * h);
  m.offsets.resize(std::size_t(l));
  const double scale = std::sqrt(2.0 / h);
  for (int o = 0; o < l; ++o) {
    double offset = c.mean_x[o];
    for (int j = 0; j < h; ++j) {
      const double w = wt[std::size_t(j) * l + o];
      m.weights[std::size_t(o) * h + j] = float(scale * w);
      offset -= w * c.mean_z[j];
    }
    m.offsets[o] = float(offset);
  }
  return m;
}

// A model's RMS relative error over the outputs of the holdout samples (the
// rows of x from k_train on); infinity when not finite.
template <class HoldoutInputs>
double holdout_cost(const PerkModel& m, const HoldoutInputs& hold_in,
                    const Kokkos::View<float**, Kokkos::LayoutRight, Mem>& estimates,
                    const std::vector<double>& x, int k_train, int l) {
  const int k_hold = int(hold_in.extent(0));
  larmor::perk::apply(Exec(), upload<Mem>(m), hold_in, estimates, true);
  auto est = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), estimates);
  double cost = 0.0;
  for (int k = 0; k < k_hold; ++k) {
    for (int o = 0; o < l; ++o) {
      const double truth = x[std::size_t(k_train + k) * l + o];
      const double e = (est(k, o) - truth) / truth;
      cost += e * e;
    }
  }
  cost = std::sqrt(cost / (double(k_hold) * l));
  return std::isfinite(cost) ? cost : std::numeric_limits<double>::infinity();
}

// The tuning grid's default bandwidths (lambda) and ridges (rho).
std::vector<double> default_lambdas() {
  return {std::pow(2.0, -0.5), 1.0, std::pow(2.0, 0.5), 2.0, std::pow(2.0, 1.5)};
}
std::vector<double> default_rhos() {
  return {std::pow(2.0, -40), std::pow(2.0, -34), std::pow(2.0, -28), std::pow(2.0, -22),
          std::pow(2.0, -16)};
}

// The grid point of least finite hold-out cost (the first of equal costs),
// every point's cost recorded in the report; refused when none is finite.
int grid_winner(const std::vector<double>& lambdas, const std::vector<double>& rhos,
                const std::vector<double>& costs, TrainingReport& report) {
  int winner = -1;
  for (std::size_t g = 0; g < costs.size(); ++g) {
    report.grid.push_back({lambdas[g / rhos.size()], rhos[g % rhos.size()], costs[g]});
    if (std::isfinite(costs[g]) && (winner < 0 || costs[g] < costs[std::size_t(winner)])) {
      winner = int(g);
    }
  }
  if (winner < 0) {
    throw std::runtime_error("PERK training: no (lambda, rho) of the grid gave a usable model");
  }
  return winner;
}

}  // namespace

PerkModel train_perk(const sequence::Description& sequence, const PerkSpec& spec,
                     TrainingReport* report_out, const parallel::Communicator* comm) {
  const kx::ScopedRegion region("larmor::perk::train");
  const int ranks = comm ? comm->size() : 1, rank = comm ? comm->rank() : 0;
  validate(spec);
  const auto start = Clock::now();
  TrainingReport report;
  std::mt19937_64 rng(spec.seed);
  const int k_all = spec.samples, n = int(spec.known.size());
  const int latent = int(spec.latent.size()), l = latent + (spec.m0 ? 1 : 0);

  // Training tissue: latent from the priors, known from the maps' density.
  TrainingTissue training = draw_training_tissue(spec, l, rng);
  std::vector<double>& x = training.x;
  auto t0 = Clock::now();
  int d = 0, q = 0;
  const std::vector<float> q_all = training_inputs(sequence, spec, training, l, d, q, comm);
  report.simulate_s = since(t0);

  // Split: the draws are independent, so the last samples are the holdout.
  const int k_hold = std::max(1, int(spec.holdout_fraction * k_all));
  const int k_train = k_all - k_hold;
  Kokkos::View<float**, Kokkos::LayoutRight, Mem> inputs("larmor::perk_train_inputs", k_all, q);
  Kokkos::deep_copy(
      inputs, Kokkos::View<const float**, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged>(
                  q_all.data(), k_all, q));
  const auto train_in = Kokkos::subview(inputs, std::make_pair(0, k_train), Kokkos::ALL);
  const auto hold_in = Kokkos::subview(inputs, std::make_pair(k_train, k_all), Kokkos::ALL);
  std::vector<double> length(std::size_t(q), 0.0);
  for (int k = 0; k < k_train; ++k)
    for (int i = 0; i < q; ++i) length[i] += std::fabs(q_all[std::size_t(k) * q + i]) / k_train;
  for (double& v : length) v = v > 0.0 ? v : 1.0;

  const std::vector<double> lambdas = spec.lambdas.empty() ? default_lambdas() : spec.lambdas;
  const std::vector<double> rhos = spec.rhos.empty() ? default_rhos() : spec.rhos;
  const int h = spec.features;
  PerkModel best;
  best.holdout_cost = std::numeric_limits<double>::infinity();
  Kokkos::View<float**, Kokkos::LayoutRight, Mem> estimates("larmor::perk_holdout", k_hold, l);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  // Grid point g = (lambda index) x |rhos| + (rho index) belongs to rank
  // floor(g x ranks / points) (contiguous blocks: a rank needs the
  // covariances of few lambdas); every rank draws every lambda's features
  // (the same random stream as one rank) and computes the covariances of the
  // lambdas it needs.
  const int points = int(lambdas.size() * rhos.size());
  auto owner = [&](int g) { return int(std::int64_t(g) * ranks / points); };
  std::vector<double> costs(std::size_t(points), 0.0);
  int best_point = -1;
  std::int64_t mine = 0, mine_done = 0;
  for (int g = 0; g < points; ++g) mine += owner(g) == rank ? 1 : 0;
  if (spec.tuning_progress) spec.tuning_progress(0, mine);
  for (std::size_t li = 0; li < lambdas.size(); ++li) {
    const double lambda = lambdas[li];
    std::vector<double> f(static_cast<std::size_t>(h) * q), phi(static_cast<std::size_t>(h));
    for (int j = 0; j < h; ++j) {
      for (int i = 0; i < q; ++i) f[std::size_t(j) * q + i] = normal(rng) / (lambda * length[i]);
      phi[j] = 2.0 * kx::pi * unit(rng);
    }
    bool needed = false;
    for (std::size_t ri = 0; ri < rhos.size(); ++ri) {
      needed |= owner(int(li * rhos.size() + ri)) == rank;
    }
    if (!needed) continue;
    t0 = Clock::now();
    const Covariances c = covariances(train_in, x, l, f, phi);
    report.features_s += since(t0);
    for (std::size_t ri = 0; ri < rhos.size(); ++ri) {
      const int point = int(li * rhos.size() + ri);
      if (owner(point) != rank) continue;
      // Counted as it starts: each path below (a failed solve included) ends it.
      struct Count {
        const PerkSpec& spec;
        std::int64_t& done;
        std::int64_t total;
        ~Count() {
          if (spec.tuning_progress) spec.tuning_progress(++done, total);
        }
      } count{spec, mine_done, mine};
      const double rho = rhos[ri];
      t0 = Clock::now();
      std::vector<double> a = c.zz;
      for (int j = 0; j < h; ++j) a[std::size_t(j) * h + j] += rho;
      std::vector<double> wt(std::size_t(h) * l);  // W^T, H x L
      for (int j = 0; j < h; ++j)
        for (int o = 0; o < l; ++o) wt[std::size_t(j) * l + o] = c.xz[std::size_t(o) * h + j];
      const bool solved = cholesky_solve(std::move(a), h, wt, l);
      report.solve_s += since(t0);
      if (!solved) {
        costs[std::size_t(point)] = std::numeric_limits<double>::infinity();
        continue;
      }
      PerkModel m = model_of(spec, d, l, f, phi, c, wt);
      const double cost = holdout_cost(m, hold_in, estimates, x, k_train, l);
      costs[std::size_t(point)] = cost;
      if (cost < best.holdout_cost) {
        best_point = point;
        m.lambda = lambda;
        m.rho = rho;
        m.noise_sigma = spec.noise_sigma;
        m.holdout_cost = cost;
        m.sequence = sequence.name;
        best = std::move(m);
      }
    }
  }
  // Every point's cost everywhere (each was computed by one rank), the best
  // (the first of equal costs, as one rank would pick) from its owner.
  if (ranks > 1) comm->all_reduce_sum(costs);
  const int winner = grid_winner(lambdas, rhos, costs, report);
  if (ranks > 1) {
    std::string image = owner(winner) == rank ? best.to_bytes() : std::string();
    comm->broadcast(image, owner(winner));
    best = PerkModel::from_bytes(image);
  } else if (best_point != winner) {
    throw std::logic_error("PERK training: the best grid point was not kept");
  }
  report.total_s = since(start);
  if (report_out != nullptr) *report_out = report;
  return best;
}

}  // namespace larmor::estimators::perk
