#include "app/fit.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>

#include "app/isochromat_atoms.hpp"
#include "app/perk_model_file.hpp"
#include "app/tissue_source.hpp"
#include "estimators/dictionary/dictionary.hpp"
#include "estimators/nlls/nlls.hpp"
#include "estimators/perk/impl/perk_device.hpp"
#include "io/nifti_file.hpp"
#include "simulate/isochromat_simulator.hpp"
#include "simulate/simulator.hpp"

namespace larmor::app {
namespace {

using clock = std::chrono::steady_clock;
double since(clock::time_point t) {
  return std::chrono::duration<double>(clock::now() - t).count();
}

// Non-finite or all-zero signals give no estimate that can be trusted (an
// all-zero voxel fits to plausible-looking values). Scanned as the signals
// are read; refuse_any() refuses them on every rank alike, naming the first
// such voxel by the volume's index.
class SignalCheck {
 public:
  explicit SignalCheck(const Measured& m) : m_(m) {}

  // This rank's voxels [first, first + count) of `mine`, at `signals`.
  void scan(const float* signals, std::int64_t first, std::int64_t count) {
    const std::int64_t values = 2 * std::int64_t(m_.samples);
    for (std::int64_t v = 0; v < count; ++v) {
      bool finite = true, zero = true;
      for (std::int64_t k = 0; k < values; ++k) {
        const float x = signals[std::size_t(v * values + k)];
        finite = finite && std::isfinite(x);
        zero = zero && x == 0.0f;
      }
      if (finite && !zero) continue;
      if (bad_++ == 0) {
        error_ = m_.file + ": voxel " +
                 std::to_string(m_.index[std::size_t(m_.mine.begin + first + v)]) +
                 " of the volume has " + (finite ? "all-zero" : "non-finite") +
                 " signals; no estimate of it can be trusted (leave it out of the voxel list or "
                 "the mask)";
      }
    }
  }

  // Collective.
  void refuse_any(const parallel::Communicator& comm) const {
    const std::int64_t total = comm.all_reduce_sum(bad_);
    std::string error = error_;
    if (total > 0 && !error.empty()) {
      error += " (" + std::to_string(total) + " such voxel(s) in all)";
    }
    comm.throw_if_any_failed(bad_ == 0, error);
  }

 private:
  const Measured& m_;
  std::int64_t bad_ = 0;
  std::string error_;
};

// PERK: every rank shares the training (or rank 0 loads the model and
// broadcasts it); every rank estimates its voxels with the deterministic
// kernel. Returns the estimator's summary.
std::string perk_fit(FitDeck& fd, const parallel::Communicator& comm, bool talk, int d,
                     const parallel::Range& mine, const std::vector<float>& signals,
                     const std::vector<std::vector<float>>& known_all, std::vector<FitMap>& outputs,
                     estimators::perk::TrainingReport& report, double& train_s, double& estimate_s,
                     const PhaseEnd& end_phase) {
  using Exec = Kokkos::DefaultExecutionSpace;
  using Mem = Exec::memory_space;
  auto t0 = clock::now();
  // Training is shared by every rank (train_perk with the communicator: the
  // same model for any rank count); a saved model is read by rank 0 and
  // broadcast.
  std::string image;
  bool ok = true;
  std::string error;
  estimators::perk::PerkModel trained;
  const bool train = fd.model_path.empty();
  if (train) {
    fd.perk.known_samples = known_all;
    if (talk) {
      std::printf("larmor fit: training PERK on %d simulated samples, %d features, %d rank(s)...\n",
                  fd.perk.samples, fd.perk.features, comm.size());
      std::fflush(stdout);
    }
    try {
      trained = estimators::perk::train_perk(fd.deck.sequence, fd.perk, &report, &comm);
      if (!fd.save_model_path.empty() && comm.is_root()) {
        save_perk_model(trained, fd.save_model_path);
      }
    } catch (const std::exception& e) {
      ok = false;
      error = e.what();
    }
  } else if (comm.is_root()) {
    try {
      image = load_perk_model(fd.model_path).to_bytes();
    } catch (const std::exception& e) {
      ok = false;
      error = e.what();
    }
  }
  end_phase("train", "compute");
  comm.throw_if_any_failed(ok, error);
  if (!train) comm.broadcast(image);
  const estimators::perk::PerkModel model =
      train ? std::move(trained) : estimators::perk::PerkModel::from_bytes(image);
  if (model.signals != d || model.known.size() != fd.perk.known.size()) {
    throw std::invalid_argument("the model takes " + std::to_string(model.signals) +
                                " signals and " + std::to_string(model.known.size()) +
                                " known maps; the deck gives " + std::to_string(d) + " and " +
                                std::to_string(fd.perk.known.size()));
  }
  train_s = since(t0);
  end_phase("broadcast", "comm");

  t0 = clock::now();
  std::vector<const float*> known;
  for (const auto& k : known_all) known.push_back(k.data() + mine.begin);
  const int l = int(model.outputs.size());
  Kokkos::View<float**, Kokkos::LayoutRight, Mem> inputs("larmor::fit_inputs", mine.size(),
                                                         model.inputs());
  Kokkos::View<float*, Mem> mean("larmor::fit_mean_magnitude", mine.size());
  Kokkos::View<float**, Kokkos::LayoutRight, Mem> estimates("larmor::fit_estimates", mine.size(),
                                                            l);
  estimators::perk::inputs_on(Exec(), signals.data(), mine.size(), d, known, inputs, mean);
  perk::apply(Exec(), estimators::perk::upload<Mem>(model), inputs, estimates, true);
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), estimates);
  auto host_mean = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), mean);
  for (int o = 0; o < l; ++o) {
    const double from_si = 1.0 / tissue::to_si(model.outputs[o]);
    FitMap out;
    out.name = tissue::deck_name(model.outputs[o]);
    out.local.resize(static_cast<std::size_t>(mine.size()));
    const bool level = model.outputs[o] == tissue::Property::m0;
    for (std::int64_t v = 0; v < mine.size(); ++v) {
      out.local[v] = level ? estimators::perk::m0_from_level(host_mean(v), host(v, o))
                           : float(host(v, o) * from_si);
    }
    if (level) {  // scored against a truth map where there is one
      out.scored = true;
      out.low = 0.0;
      out.high = std::numeric_limits<double>::infinity();
    }
    for (const auto& p : fd.perk.latent) {
      if (p.property == model.outputs[o]) {
        out.scored = true;
        out.low = p.low * from_si;
        out.high = p.high * from_si;
      }
    }
    outputs.push_back(std::move(out));
  }
  estimate_s = since(t0);
  end_phase("estimate", "compute");
  char text[160];
  std::snprintf(text, sizeof text,
                "PERK %d features, lambda %g, rho 2^%.0f, holdout RMS relative error %.3g %%",
                model.features, model.lambda, std::log2(model.rho), 100 * model.holdout_cost);
  return text;
}

// Voxels per matching chunk: its two staging buffers (page-locked host
// memory on a device) kept to a fraction of a node's memory whatever the
// sample count.
std::int64_t match_chunk_voxels(std::int64_t voxels, int samples) {
  constexpr std::int64_t staging_bytes = std::int64_t(1) << 28;
  const std::int64_t voxel_bytes = std::int64_t(samples) * 2 * std::int64_t(sizeof(float));
  // Small enough for the progress to move (a sixty-fourth of the voxels),
  // large enough to keep a GPU busy.
  const std::int64_t for_progress = std::max<std::int64_t>((voxels + 63) / 64, 4096);
  return std::clamp<std::int64_t>(std::min(staging_bytes / voxel_bytes, for_progress), 1,
                                  std::max<std::int64_t>(voxels, 1));
}

// Dictionary matching: every rank builds the same dictionary from the deck's
// [tissue] grid (and compresses it), then matches its voxels.
// `simulate_atoms` runs the grid's atoms on the deck's engine.
using AtomSimulation =
    std::function<estimators::dictionary::Dictionary(const tissue::Tissue& atoms)>;
std::string dictionary_fit(const FitDeck& fd, const parallel::Communicator& comm,
                           const std::string& deck_path, const AtomSimulation& simulate_atoms,
                           const Measured& data, std::vector<FitMap>& outputs, double& train_s,
                           double& compress_s, double& estimate_s, const PhaseEnd& end_phase) {
  const parallel::Range& mine = data.mine;
  auto t0 = clock::now();
  if (fd.deck.tissue.mode != TissueSpec::Mode::grid || fd.deck.tissue.values.empty()) {
    throw std::invalid_argument(deck_path +
                                ": method = \"dictionary\" needs a [tissue] grid (the atoms)");
  }
  const parallel::Communicator self(MPI_COMM_SELF);
  const LocalVoxels atoms = load_local_tissue(fd.deck.tissue, self, deck_path);
  estimators::dictionary::Dictionary dict = simulate_atoms(atoms.tissue);
  end_phase("dictionary", "compute");
  const auto compress_start = clock::now();
  if (fd.compress_energy > 0.0) {
    dict = estimators::dictionary::compress(dict, 0, fd.compress_energy, fd.compress_progress);
    end_phase("compress", "compute");
  }
  compress_s = since(compress_start);
  train_s = since(t0);
  t0 = clock::now();
  // Chunk by chunk through the matcher's staging buffers (read there from the
  // file when streamed, while the device matches the chunk before), reporting
  // the chunks done. A rank's failure reaches every rank before the next
  // collective; so do refused signals, before any voxel's atom is used.
  estimators::dictionary::MatchResult r;
  r.resize(mine.size());
  SignalCheck check(data);
  std::string failure;
  try {
    if (fd.match_progress) fd.match_progress(0, mine.size());
    if (mine.size() > 0) {
      estimators::dictionary::Matcher matcher(dict, match_chunk_voxels(mine.size(), data.samples));
      for (std::int64_t v0 = 0; v0 < mine.size(); v0 += matcher.chunk_voxels()) {
        const std::int64_t count = std::min(matcher.chunk_voxels(), mine.size() - v0);
        data.read_signals(v0, count, matcher.staging());
        if (data.streamed) check.scan(matcher.staging(), v0, count);
        matcher.match_staged(count, r, v0);  // the voxels before v0 are done
        if (fd.match_progress && v0 > 0) fd.match_progress(v0, mine.size());
      }
      matcher.finish();
      if (fd.match_progress) fd.match_progress(mine.size(), mine.size());
    }
  } catch (const std::exception& e) {
    failure = e.what();
  }
  comm.throw_if_any_failed(failure.empty(), failure);
  check.refuse_any(comm);
  const std::size_t np = dict.properties.size();
  for (std::size_t p = 0; p < np; ++p) {
    FitMap out;
    out.name = tissue::deck_name(dict.properties[p]);
    const double from_si = 1.0 / tissue::to_si(dict.properties[p]);
    out.scored = true;
    out.low = std::numeric_limits<double>::infinity();
    out.high = -out.low;
    for (std::int64_t a = 0; a < dict.atoms; ++a) {
      const double x = dict.values[std::size_t(a) * np + p] * from_si;
      out.low = std::min(out.low, x);
      out.high = std::max(out.high, x);
    }
    for (std::int64_t v = 0; v < mine.size(); ++v) {
      out.local.push_back(float(dict.values[std::size_t(r.atom[v]) * np + p] * from_si));
    }
    outputs.push_back(std::move(out));
  }
  FitMap m0{"m0", {}, false, 0.0, 0.0}, corr{"correlation", {}, false, 0.0, 0.0};
  for (std::int64_t v = 0; v < mine.size(); ++v) {
    m0.local.push_back(std::abs(r.m0[v]));
    corr.local.push_back(r.correlation[v]);
  }
  outputs.push_back(std::move(m0));
  outputs.push_back(std::move(corr));
  estimate_s = since(t0);
  end_phase("estimate", "compute");
  return "dictionary of " + std::to_string(dict.atoms) + " atoms, " +
         (!dict.compressed ? std::string("uncompressed")
                           : "compressed to rank " + std::to_string(dict.samples));
}

// Nonlinear least squares: every rank fits its own voxels (each voxel's fit
// is independent of the others).
std::string nlls_fit(const FitDeck& fd, const simulate::Simulator& sim, const parallel::Range& mine,
                     const std::vector<float>& signals,
                     const std::vector<std::vector<float>>& known_all, std::vector<FitMap>& outputs,
                     double& estimate_s, const PhaseEnd& end_phase) {
  const auto t0 = clock::now();
  tissue::Tissue t;
  t.voxels = mine.size();
  for (std::size_t k = 0; k < fd.perk.known.size(); ++k) {
    const auto& all = known_all[k];
    t[fd.perk.known[k].property].map.assign(all.begin() + mine.begin, all.begin() + mine.end);
  }
  for (const auto& p : fd.perk.nuisance) t[p.property].uniform = float(p.low);
  estimators::nlls::NllsSpec spec;
  spec.estimate = fd.perk.latent;
  spec.iterations = fd.nlls_iterations;
  const estimators::nlls::NllsResult r = estimators::nlls::fit_nlls(sim, t, signals, spec);
  const int np = r.parameters;
  for (int j = 0; j < np; ++j) {
    FitMap out;
    const tissue::Property p = j == 0 ? tissue::Property::m0 : spec.estimate[j - 1].property;
    const double from_si = 1.0 / tissue::to_si(p);
    out.name = tissue::deck_name(p);
    out.scored = true;
    out.low = j == 0 ? 0.0 : spec.estimate[j - 1].low * from_si;
    out.high =
        j == 0 ? std::numeric_limits<double>::infinity() : spec.estimate[j - 1].high * from_si;
    for (std::int64_t v = 0; v < mine.size(); ++v) {
      out.local.push_back(float(r.values[std::size_t(v) * np + j] * from_si));
    }
    outputs.push_back(std::move(out));
  }
  estimate_s = since(t0);
  end_phase("estimate", "compute");
  return "NLLS (Levenberg-Marquardt, " + std::to_string(spec.iterations) +
         " iterations at most, magnitudes)";
}

void check_index(const std::string& file, const std::vector<std::int64_t>& index,
                 std::int64_t volume) {
  std::vector<std::int64_t> first_row(std::size_t(std::max<std::int64_t>(volume, 0)), -1);
  for (std::size_t row = 0; row < index.size(); ++row) {
    const std::int64_t i = index[row];
    if (i < 0 || i >= volume) {
      throw std::invalid_argument(file + ": voxel index " + std::to_string(i) + " (row " +
                                  std::to_string(row) + ") lies outside the volume of " +
                                  std::to_string(volume) + " voxels");
    }
    if (first_row[std::size_t(i)] >= 0) {
      throw std::invalid_argument(file + ": voxel " + std::to_string(i) + " appears twice (rows " +
                                  std::to_string(first_row[std::size_t(i)]) + " and " +
                                  std::to_string(row) + "): each voxel has one row of signals");
    }
    first_row[std::size_t(i)] = std::int64_t(row);
  }
}

}  // namespace

std::int64_t Measured::volume() const {
  std::int64_t volume = 1;
  for (auto s : shape) volume *= s;
  return volume;
}

void Measured::read_signals(std::int64_t first, std::int64_t count, float* out) const {
  const std::size_t values = 2 * std::size_t(samples);
  if (!streamed) {
    std::copy_n(signals.data() + std::size_t(first) * values, std::size_t(count) * values, out);
  } else {
    hdf5->read_rows_float(signals_dataset, mine.begin + first, count, out);
  }
}

Measured read_measured(const FitDeck& fd, const std::string& deck_path,
                       const parallel::Communicator& comm) {
  Measured m;
  m.file = fd.data_path;
  m.signals_dataset = fd.signals_dataset;
  const bool nifti = io::is_nifti_path(fd.data_path);
  std::int64_t volume = 1;
  if (nifti) {
    // Every rank reads the series (nifti2 reads whole files) and keeps its rows.
    const io::NiftiSeries series = io::read_nifti_series(fd.data_path);
    m.shape.assign(series.shape.begin(), series.shape.end());
    volume = series.shape[0] * series.shape[1] * series.shape[2];
    if (series.samples > std::numeric_limits<int>::max()) {
      throw std::invalid_argument(fd.data_path + ": too many samples per voxel");
    }
    m.samples = int(series.samples);
    auto sample = [&](std::int64_t voxel, std::int64_t s, int part) {
      return series.values[std::size_t(2 * (s * volume + voxel) + part)];
    };
    if (!fd.mask_path.empty()) {
      const std::vector<float> mask = io::read_nifti_volume(fd.mask_path, series.shape);
      for (std::int64_t i = 0; i < volume; ++i) {
        if (mask[std::size_t(i)] != 0.0f) m.index.push_back(i);
      }
    } else {
      for (std::int64_t i = 0; i < volume; ++i) {
        for (std::int64_t s = 0; s < series.samples; ++s) {
          if (sample(i, s, 0) != 0.0f || sample(i, s, 1) != 0.0f) {
            m.index.push_back(i);
            break;
          }
        }
      }
    }
    m.voxels = std::int64_t(m.index.size());
    m.mine = parallel::partition_evenly(m.voxels, comm.size(), comm.rank());
    m.signals.resize(std::size_t(m.mine.size() * m.samples * 2));
    for (std::int64_t v = 0; v < m.mine.size(); ++v) {
      const std::int64_t voxel = m.index[std::size_t(m.mine.begin + v)];
      for (int s = 0; s < m.samples; ++s) {
        for (int part = 0; part < 2; ++part) {
          m.signals[std::size_t((v * m.samples + s) * 2 + part)] = sample(voxel, s, part);
        }
      }
    }
  } else {
    m.hdf5 = std::make_unique<io::H5Reader>(fd.data_path, comm);
    const auto& in = *m.hdf5;
    const auto dims = in.dims(fd.signals_dataset);
    if (dims.size() != 3 || dims[2] != 2) {
      throw std::invalid_argument(fd.data_path + ": " + fd.signals_dataset +
                                  " must be [voxels][samples][2]");
    }
    m.voxels = std::int64_t(dims[0]);
    m.samples = int(dims[1]);
    m.mine = parallel::partition_evenly(m.voxels, comm.size(), comm.rank());
    // Dictionary matching reads its voxels chunk by chunk.
    m.streamed = fd.method == "dictionary";
    if (!m.streamed)
      m.signals = in.read_rows_float(fd.signals_dataset, m.mine.begin, m.mine.size());
    m.index = in.read_all_int64(fd.index_dataset);
    m.shape = in.read_all_int64(fd.shape_dataset);
    for (auto s : m.shape) volume *= s;
    if (std::int64_t(m.index.size()) != m.voxels) {
      throw std::invalid_argument(fd.data_path + ": " + fd.index_dataset + " has " +
                                  std::to_string(m.index.size()) + " entries for " +
                                  std::to_string(m.voxels) + " voxels");
    }
  }
  // No voxel is no work: said now, not after training a model for nothing.
  if (m.voxels == 0) {
    throw std::invalid_argument(
        fd.data_path + ": " +
        (nifti ? std::string(fd.mask_path.empty() ? "every voxel's every sample is zero"
                                                  : fd.mask_path + " selects no voxel (every "
                                                                   "value is 0)")
               : fd.signals_dataset + " holds no voxel") +
        ": nothing to fit");
  }
  if (m.samples == 0) {
    throw std::invalid_argument(fd.data_path + ": the signals have no sample: nothing to fit");
  }
  check_index(fd.data_path, m.index, volume);
  if (!m.streamed) {
    SignalCheck check(m);
    check.scan(m.signals.data(), 0, m.mine.size());
    check.refuse_any(comm);
  }
  for (std::size_t k = 0; k < fd.perk.known.size(); ++k) {
    const std::string& ds = fd.known_datasets[k];
    const char* name = tissue::deck_name(fd.perk.known[k].property);
    if (ds.empty()) {
      throw std::invalid_argument(deck_path + ": [estimator] known." + name +
                                  " needs a map = \"/dataset\" in the data file, or a NIfTI file");
    }
    // A volume dataset of the data file, or a NIfTI file (relative to the deck).
    const std::vector<float> map =
        io::is_nifti_path(ds) ? io::read_nifti_volume(ds, {m.shape.size() == 3 ? m.shape[0] : 0,
                                                           m.shape.size() == 3 ? m.shape[1] : 0,
                                                           m.shape.size() == 3 ? m.shape[2] : 0})
                              : m.hdf5->read_all_float(ds);
    if (std::int64_t(map.size()) != volume) {
      throw std::invalid_argument(fd.data_path + ": " + ds + " does not have the volume's size");
    }
    const double si = tissue::to_si(fd.perk.known[k].property);
    std::vector<float> at_voxels(static_cast<std::size_t>(m.voxels));
    for (std::int64_t v = 0; v < m.voxels; ++v) at_voxels[v] = float(map[m.index[v]] * si);
    m.known_all.push_back(std::move(at_voxels));
  }
  return m;
}

FitResult estimate_maps(FitDeck& fd, const std::string& deck_path,
                        const parallel::Communicator& comm, const Measured& data, bool talk,
                        const PhaseEnd& end_phase) {
  const int d = data.samples;
  const auto check_samples = [&](std::size_t recorded) {
    if (int(recorded) != d) {
      throw std::invalid_argument(fd.data_path + ": " + fd.signals_dataset + " has " +
                                  std::to_string(d) + " samples per voxel; the deck's sequence " +
                                  "records " + std::to_string(recorded));
    }
  };
  FitResult r;
  if (fd.deck.isochromats) {  // method = "dictionary" (read_fit_deck refuses the others)
    const simulate::IsochromatSimulator engine(*fd.deck.steps, fd.deck.isochromat);
    check_samples(engine.samples());
    const AtomSimulation on_isochromats = [&](const tissue::Tissue& atoms) {
      return isochromat_dictionary(engine, fd.deck, atoms, comm, deck_path);
    };
    r.summary = dictionary_fit(fd, comm, deck_path, on_isochromats, data, r.maps, r.train_s,
                               r.compress_s, r.estimate_s, end_phase) +
                "; atoms on the isochromat engine (" + fd.deck.engine_reason +
                "): " + engine.plan().report;
    return r;
  }
  const simulate::Simulator sim(fd.deck.sequence, fd.deck.simulation);
  check_samples(sim.samples());
  if (fd.method == "nlls") {
    r.summary =
        nlls_fit(fd, sim, data.mine, data.signals, data.known_all, r.maps, r.estimate_s, end_phase);
  } else if (fd.method == "perk") {
    r.summary = perk_fit(fd, comm, talk, d, data.mine, data.signals, data.known_all, r.maps,
                         r.report, r.train_s, r.estimate_s, end_phase);
  } else {
    const AtomSimulation on_epg = [&sim](const tissue::Tissue& atoms) {
      return estimators::dictionary::simulate_dictionary(sim, atoms);
    };
    r.summary = dictionary_fit(fd, comm, deck_path, on_epg, data, r.maps, r.train_s, r.compress_s,
                               r.estimate_s, end_phase);
  }
  return r;
}

std::vector<std::vector<float>> gather_maps(const std::vector<FitMap>& maps, const Measured& data,
                                            const parallel::Communicator& comm) {
  const std::int64_t volume = data.volume();
  std::vector<std::vector<float>> volumes;  // per output, the volume (filled on rank 0)
  for (const FitMap& o : maps) {
    const auto gathered = comm.gather_rows(o.local.data(), data.mine.size(), sizeof(float));
    // (Every rank holds a volume: the collective write checks its size.)
    volumes.emplace_back(static_cast<std::size_t>(volume), std::numeric_limits<float>::quiet_NaN());
    if (comm.is_root()) {
      const float* all = reinterpret_cast<const float*>(gathered.bytes.data());
      for (std::int64_t v = 0; v < data.voxels; ++v) volumes.back()[data.index[v]] = all[v];
    }
  }
  return volumes;
}

void write_maps(const std::string& output, const FitDeck& fd, const Measured& data,
                const std::vector<FitMap>& maps, const std::vector<std::vector<float>>& volumes,
                const std::string& summary, const parallel::Communicator& comm) {
  const std::int64_t n = data.voxels;
  const parallel::Range& mine = data.mine;
  const std::vector<std::int64_t>& shape = data.shape;
  io::H5Writer out(output, comm);
  for (std::size_t k = 0; k < maps.size(); ++k) {
    const FitMap& o = maps[k];
    out.write_rows("/estimates/" + o.name, {std::uint64_t(n)}, mine.begin, o.local.data(),
                   mine.size());
    out.write_whole("/maps/" + o.name, std::vector<std::uint64_t>(shape.begin(), shape.end()),
                    volumes[k]);
  }
  out.write_rows("/voxel_index", {std::uint64_t(n)}, mine.begin, data.index.data() + mine.begin,
                 mine.size());
  out.write_whole("/volume_shape", {std::uint64_t(shape.size())}, shape);
  out.set_attribute("/", "method", fd.method);
  out.set_attribute("/", "estimator", summary);
  out.set_attribute("/", "data", fd.data_path);
  out.commit();
  // NIfTI copies of the volume maps, when asked (rank 0, each atomically).
  if (fd.nifti_output && comm.is_root()) {
    if (shape.size() != 3) throw std::invalid_argument(output + ": NIfTI maps need a 3-D volume");
    const std::string stem = output.size() > 3 && output.compare(output.size() - 3, 3, ".h5") == 0
                                 ? output.substr(0, output.size() - 3)
                                 : output;
    for (const FitMap& o : maps) {
      io::write_nifti_volume(stem + "_" + o.name + ".nii", {shape[0], shape[1], shape[2]},
                             volumes[std::size_t(&o - maps.data())]);
    }
  }
}

std::optional<TruthScore> score_against_truth(const FitMap& o, const std::vector<float>& map,
                                              const Measured& data) {
  if (!o.scored || !data.hdf5 || !data.hdf5->exists("/" + o.name)) return std::nullopt;
  const std::vector<float> truth = data.hdf5->read_all_float("/" + o.name);
  std::vector<double> rel;
  std::int64_t outside = 0;
  for (std::int64_t v = 0; v < data.voxels; ++v) {
    const double t = truth[data.index[v]];
    if (!(t >= o.low && t <= o.high)) {
      ++outside;
    } else if (t != 0.0) {
      rel.push_back(std::fabs(map[data.index[v]] / t - 1.0));
    }
  }
  if (rel.empty()) return std::nullopt;
  std::sort(rel.begin(), rel.end());
  TruthScore s;
  s.scored = rel.size();
  s.outside = outside;
  s.median = rel[rel.size() / 2];
  s.p90 = rel[rel.size() * 9 / 10];
  return s;
}

}  // namespace larmor::app
