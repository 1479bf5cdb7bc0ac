// larmor fit DECK.toml: whole-volume parameter estimation with PERK
// (docs/estimators.md). Reads the measured signals and known maps (HDF5),
// trains the estimator on rank 0 (or loads one) and broadcasts it, estimates
// each rank's share of the voxels with the fused kernel (deterministic: the
// maps are the same for any rank count), and writes the maps collectively and
// atomically, with progress and a timing summary. When the data file holds
// truth maps of the estimated properties (a larmor phantom does), the error
// against them is reported, and --truth-tolerance makes it a pass/fail check.
//
//   /estimates/<property>  float32 [voxels]        in deck units
//   /maps/<property>       float32 [nz][ny][nx]    NaN outside the voxels
//   /voxel_index           int64   [voxels]
//   /volume_shape          int64   [3]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include "commands.hpp"
#include "estimators/perk/perk_device.hpp"
#include "estimators/perk/perk_train.hpp"
#include "formats/fit_deck.hpp"
#include "formats/hdf5_file.hpp"
#include "parallel/partition.hpp"

namespace larmor::drivers {

void add_fit(CLI::App& app, FitArgs& args) {
  CLI::App* cmd = app.add_subcommand("fit", "Estimate tissue maps from measured signals (PERK)");
  cmd->add_option("deck", args.deck, "Fit deck (TOML)")->required();
  cmd->add_option("-o,--output", args.output, "Maps file (overrides [output] path)");
  cmd->add_option("--truth-tolerance", args.truth_tolerance,
                  "Fail when the median relative error against truth maps in the data exceeds this")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("-q,--quiet", args.quiet, "Print only errors and the summary");
}

namespace {

using clock = std::chrono::steady_clock;
double since(clock::time_point t) {
  return std::chrono::duration<double>(clock::now() - t).count();
}

}  // namespace

int run_fit(const FitArgs& args, const parallel::Communicator& comm) {
  using Exec = Kokkos::DefaultExecutionSpace;
  using Mem = Exec::memory_space;
  const auto start = clock::now();
  const bool talk = comm.is_root() && !args.quiet;
  formats::FitDeck fd = formats::read_fit_deck(args.deck);
  const std::string output = args.output.empty() ? fd.deck.output_path : args.output;
  if (output.empty()) throw std::invalid_argument(args.deck + ": no [output] path and no -o");

  // Measured data: this rank's rows, and the known maps at its voxels.
  auto t0 = clock::now();
  const formats::H5Reader in(fd.data_path, comm);
  const auto dims = in.dims(fd.signals_dataset);
  if (dims.size() != 3 || dims[2] != 2) {
    throw std::invalid_argument(fd.data_path + ": " + fd.signals_dataset +
                                " must be [voxels][samples][2]");
  }
  const std::int64_t n = std::int64_t(dims[0]);
  const int d = int(dims[1]);
  const parallel::Range mine = parallel::partition_evenly(n, comm.size(), comm.rank());
  const std::vector<float> signals =
      in.read_rows_float(fd.signals_dataset, mine.begin, mine.size());
  const std::vector<float> index_f = in.read_all_float(fd.index_dataset);
  std::vector<std::int64_t> index(index_f.begin(), index_f.end());
  const std::vector<float> shape_f = in.read_all_float(fd.shape_dataset);
  std::vector<std::int64_t> shape(shape_f.begin(), shape_f.end());
  std::int64_t volume = 1;
  for (auto s : shape) volume *= s;
  if (std::int64_t(index.size()) != n) {
    throw std::invalid_argument(fd.data_path + ": " + fd.index_dataset + " has " +
                                std::to_string(index.size()) + " entries for " + std::to_string(n) +
                                " voxels");
  }
  for (auto i : index) {
    if (i < 0 || i >= volume) {
      throw std::invalid_argument(fd.data_path + ": a voxel index lies outside the volume");
    }
  }
  std::vector<std::vector<float>> known_all;  // every voxel (rank 0 trains on their density)
  for (std::size_t k = 0; k < fd.perk.known.size(); ++k) {
    const std::string& ds = fd.known_datasets[k];
    const char* name = tissue::deck_name(fd.perk.known[k].property);
    if (ds.empty()) {
      throw std::invalid_argument(args.deck + ": [estimator] known." + name +
                                  " needs a map = \"/dataset\" in the data file");
    }
    const std::vector<float> map = in.read_all_float(ds);
    if (std::int64_t(map.size()) != volume) {
      throw std::invalid_argument(fd.data_path + ": " + ds + " does not have the volume's size");
    }
    const double si = tissue::to_si(fd.perk.known[k].property);
    std::vector<float> at_voxels(static_cast<std::size_t>(n));
    for (std::int64_t v = 0; v < n; ++v) at_voxels[v] = float(map[index[v]] * si);
    known_all.push_back(std::move(at_voxels));
  }
  const double read_s = since(t0);

  // The estimator: trained on rank 0 and broadcast, or loaded.
  t0 = clock::now();
  const simulate::Simulator sim(fd.deck.sequence, fd.deck.simulation);
  if (sim.samples() != d) {
    throw std::invalid_argument(fd.data_path + ": " + fd.signals_dataset + " has " +
                                std::to_string(d) + " samples per voxel; the deck's sequence " +
                                "records " + std::to_string(sim.samples()));
  }
  std::string image;
  estimators::TrainingReport report;
  bool ok = true;
  std::string error;
  if (comm.is_root()) {
    try {
      estimators::PerkModel model;
      if (!fd.model_path.empty()) {
        model = estimators::load_perk_model(fd.model_path);
      } else {
        fd.perk.known_samples = known_all;
        if (talk) {
          std::printf("larmor fit: training PERK on %d simulated samples, %d features...\n",
                      fd.perk.samples, fd.perk.features);
          std::fflush(stdout);
        }
        model = estimators::train_perk(fd.deck.sequence, fd.perk, &report);
        if (!fd.save_model_path.empty()) estimators::save_perk_model(model, fd.save_model_path);
      }
      if (model.signals != d || model.known.size() != fd.perk.known.size()) {
        throw std::invalid_argument("the model takes " + std::to_string(model.signals) +
                                    " signals and " + std::to_string(model.known.size()) +
                                    " known maps; the deck gives " + std::to_string(d) + " and " +
                                    std::to_string(fd.perk.known.size()));
      }
      image = model.to_bytes();
    } catch (const std::exception& e) {
      ok = false;
      error = e.what();
    }
  }
  comm.throw_if_any_failed(ok, error);
  comm.broadcast(image);
  const estimators::PerkModel model = estimators::PerkModel::from_bytes(image);
  const double train_s = since(t0);

  // Estimates of this rank's voxels.
  t0 = clock::now();
  std::vector<const float*> known;
  for (const auto& k : known_all) known.push_back(k.data() + mine.begin);
  const std::vector<float> q = estimators::perk_inputs(signals.data(), mine.size(), d, known);
  const int l = int(model.outputs.size());
  Kokkos::View<float**, Kokkos::LayoutRight, Mem> inputs("larmor::fit_inputs", mine.size(),
                                                         model.inputs());
  Kokkos::View<float**, Kokkos::LayoutRight, Mem> estimates("larmor::fit_estimates", mine.size(),
                                                            l);
  Kokkos::deep_copy(
      inputs, Kokkos::View<const float**, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged>(
                  q.data(), mine.size(), model.inputs()));
  perk::apply(Exec(), estimators::upload<Mem>(model), inputs, estimates, true);
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), estimates);
  const double estimate_s = since(t0);

  // Output.
  t0 = clock::now();
  formats::H5Writer out(output, comm);
  std::vector<std::vector<float>> columns(static_cast<std::size_t>(l));
  for (int o = 0; o < l; ++o) {
    const double from_si = 1.0 / tissue::to_si(model.outputs[o]);
    columns[o].resize(std::size_t(mine.size()));
    for (std::int64_t v = 0; v < mine.size(); ++v) columns[o][v] = float(host(v, o) * from_si);
    const std::string name = tissue::deck_name(model.outputs[o]);
    out.write_rows("/estimates/" + name, {std::uint64_t(n)}, mine.begin, columns[o].data(),
                   mine.size());
    const auto gathered = comm.gather_rows(columns[o].data(), mine.size(), sizeof(float));
    std::vector<float> map(static_cast<std::size_t>(volume),
                           std::numeric_limits<float>::quiet_NaN());
    if (comm.is_root()) {
      const float* all = reinterpret_cast<const float*>(gathered.bytes.data());
      for (std::int64_t v = 0; v < n; ++v) map[index[v]] = all[v];
    }
    std::vector<std::uint64_t> vdims(shape.begin(), shape.end());
    out.write_whole("/maps/" + name, vdims, map);
    // Against truth maps in the data, when present: scored where the truth
    // lies inside the prior (the estimator is not trained beyond it).
    if (comm.is_root() && in.exists("/" + name)) {
      const std::vector<float> truth = in.read_all_float("/" + name);
      double low = -std::numeric_limits<double>::infinity(), high = -low;
      for (const auto& p : fd.perk.latent) {
        if (p.property == model.outputs[o]) low = p.low * from_si, high = p.high * from_si;
      }
      std::vector<double> rel;
      std::int64_t outside = 0;
      for (std::int64_t v = 0; v < n; ++v) {
        const double t = truth[index[v]];
        if (!(t >= low && t <= high)) {
          ++outside;
        } else if (t != 0.0) {
          rel.push_back(std::fabs(map[index[v]] / t - 1.0));
        }
      }
      if (!rel.empty()) {
        std::sort(rel.begin(), rel.end());
        const double median = rel[rel.size() / 2], p90 = rel[rel.size() * 9 / 10];
        std::printf(
            "larmor fit: %s against the truth in the data, %zu voxels inside the prior: "
            "median |relative error| %.3g %%, 90th percentile %.3g %% (%lld outside, not "
            "scored)\n",
            name.c_str(), rel.size(), 100 * median, 100 * p90, static_cast<long long>(outside));
        if (args.truth_tolerance > 0 && !(median <= args.truth_tolerance)) {
          ok = false;
          error = name + ": median relative error " + std::to_string(median) +
                  " exceeds --truth-tolerance " + std::to_string(args.truth_tolerance);
        }
      }
    }
  }
  out.write_rows("/voxel_index", {std::uint64_t(n)}, mine.begin, index.data() + mine.begin,
                 mine.size());
  out.write_whole("/volume_shape", {std::uint64_t(shape.size())}, shape);
  out.set_attribute("/", "method", std::string("perk"));
  out.set_attribute("/", "features", model.features);
  out.set_attribute("/", "lambda", model.lambda);
  out.set_attribute("/", "rho", model.rho);
  out.set_attribute("/", "holdout_rms_relative_error", model.holdout_cost);
  out.set_attribute("/", "data", fd.data_path);
  out.commit();
  const double write_s = since(t0);
  comm.throw_if_any_failed(ok, error);
  if (comm.is_root()) {
    std::printf(
        "larmor fit: %lld voxels on %d rank(s), %s backend; PERK %d features, lambda %g, "
        "rho 2^%.0f, holdout RMS relative error %.3g %%\n",
        static_cast<long long>(n), comm.size(), kx::backend_name(), model.features, model.lambda,
        std::log2(model.rho), 100 * model.holdout_cost);
    std::printf(
        "larmor fit: read %.3f s, train %.3f s (simulate %.3f, features %.3f, solve "
        "%.3f), estimate %.3f s, write %.3f s, total %.3f s\n",
        read_s, train_s, report.simulate_s, report.features_s, report.solve_s, estimate_s, write_s,
        since(start));
    std::printf("larmor fit: wrote %s\n", output.c_str());
  }
  return 0;
}

}  // namespace larmor::drivers
