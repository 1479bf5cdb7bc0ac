#include "estimators/dictionary/dictionary.hpp"

#include "estimators/dictionary/device_atoms.hpp"

#include <KokkosBlas3_gemm.hpp>
#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <utility>

#if LARMOR_HAVE_LAPACKE
#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <lapacke.h>
#endif

#include "common/kokkos_compat.hpp"
#include "estimators/one_blas_thread.hpp"
#include "match/inner_products.hpp"
#include "simulate/simulator.hpp"

namespace larmor::estimators::dictionary {
namespace {

using Mem = Exec::memory_space;

// The properties that vary over the atoms, and their values per atom.
void set_properties(const tissue::Tissue& tissue, Dictionary& d) {
  for (tissue::Property p : tissue::all_properties) {
    if (tissue[p].is_map()) d.properties.push_back(p);
  }
  d.values.resize(std::size_t(d.atoms) * d.properties.size());
  for (std::int64_t a = 0; a < d.atoms; ++a) {
    for (std::size_t p = 0; p < d.properties.size(); ++p) {
      d.values[std::size_t(a) * d.properties.size() + p] = tissue[d.properties[p]].at(a);
    }
  }
}

// Normalises the atoms in place, then hands them to `d`; refuses an atom
// without a usable norm.
void normalise(const DeviceRows& atoms, Dictionary& d) {
  Kokkos::View<float*, Mem> norms("larmor::atom_norms", std::size_t(d.atoms));
  const std::int64_t bad = match::normalise(Exec(), atoms, norms);
  if (bad >= 0) {
    std::ostringstream what;
    what << "dictionary: atom " << bad;
    for (std::size_t p = 0; p < d.properties.size(); ++p) {
      what << (p == 0 ? " (" : ", ") << tissue::deck_name(d.properties[p]) << " "
           << d.values[std::size_t(bad) * d.properties.size() + p] / tissue::to_si(d.properties[p]);
    }
    what << (d.properties.empty() ? "" : ")")
         << " has zero norm (no signal to match against) or a non-finite one";
    throw std::invalid_argument(what.str());
  }
  d.norms.resize(std::size_t(d.atoms));
  Kokkos::deep_copy(
      Kokkos::View<float*, Kokkos::HostSpace, kx::Unmanaged>(d.norms.data(), d.norms.size()),
      norms);
  auto device = std::make_shared<DeviceAtoms>();
  device->unit_atoms = atoms;
  d.device = device;
}

}  // namespace

std::vector<float> Dictionary::host_basis() const {
  if (!device) return {};
  const DeviceRows& basis = device->basis;
  std::vector<float> out(basis.size());
  Kokkos::deep_copy(Kokkos::View<float***, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged>(
                        out.data(), basis.extent(0), basis.extent(1), basis.extent(2)),
                    basis);
  return out;
}

Dictionary make_dictionary(const std::vector<float>& signals, int samples,
                           const tissue::Tissue& tissue) {
  const kx::ScopedRegion region("larmor::dictionary::normalise");
  Dictionary d;
  d.samples = d.original_samples = samples;
  d.atoms = tissue.voxels;
  if (std::int64_t(signals.size()) != d.atoms * samples * 2) {
    throw std::invalid_argument("dictionary: the signals do not match the atom count");
  }
  set_properties(tissue, d);
  const DeviceRows atoms("larmor::atoms", std::size_t(d.atoms), samples, 2);
  Kokkos::deep_copy(
      atoms, Kokkos::View<const float***, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged>(
                 signals.data(), std::size_t(d.atoms), samples, 2));
  normalise(atoms, d);
  return d;
}

Dictionary simulate_dictionary(const simulate::Simulator& sim, const tissue::Tissue& grid) {
  const kx::ScopedRegion region("larmor::dictionary::simulate");
  Dictionary d;
  d.samples = d.original_samples = sim.samples();
  d.atoms = grid.voxels;
  set_properties(grid, d);
  const DeviceRows atoms(Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::atoms"),
                         std::size_t(d.atoms), d.samples, 2);
  sim.run_into_device<Exec>(grid, atoms.data());
  normalise(atoms, d);
  return d;
}

Dictionary compress(const Dictionary& d, int rank, double energy,
                    const std::function<void(std::int64_t, std::int64_t)>& progress) {
  const kx::ScopedRegion region("larmor::dictionary::compress");
#if LARMOR_HAVE_LAPACKE
  if (d.compressed) throw std::invalid_argument("dictionary: already compressed");
  if (!d.device) throw std::invalid_argument("dictionary: its device memory was released");
  using Z = Kokkos::complex<double>;
  const int n = d.samples;
  // The Gram matrix over blocks of atoms: g = sum X X^H with X = A^T (n x
  // atoms), i.e. conj(A^H A), accumulated in double on the device.
  Kokkos::View<Z**, Kokkos::LayoutLeft, Mem> g("larmor::gram", n, n);
  const std::int64_t block =
      std::clamp<std::int64_t>((std::int64_t(1) << 25) / std::max(n, 1), 1, d.atoms);
  Kokkos::View<Z**, Kokkos::LayoutLeft, Mem> x("larmor::gram_block", n, block);
  const DeviceRows atoms = d.device->unit_atoms;
  for (std::int64_t a0 = 0; a0 < d.atoms; a0 += block) {
    const std::int64_t count = std::min(block, d.atoms - a0);
    Kokkos::parallel_for(
        "larmor::dictionary::gram_block",
        Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2>>({std::int64_t(0), std::int64_t(0)},
                                                     {std::int64_t(n), block}),
        KOKKOS_LAMBDA(std::int64_t k, std::int64_t a) {
          x(k, a) = a < count ? Z(atoms(a0 + a, k, 0), atoms(a0 + a, k, 1)) : Z(0.0, 0.0);
        });
    KokkosBlas::gemm("N", "C", Z(1.0, 0.0), x, x, Z(a0 == 0 ? 0.0 : 1.0, 0.0), g);
    if (progress) {
      Exec().fence();
      progress(a0 + count, 2 * d.atoms);
    }
  }
  auto gh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g);
  std::vector<std::complex<double>> gram(std::size_t(n) * n);  // column-major A^H A
  double trace = 0.0;
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < n; ++i)
      gram[std::size_t(j) * n + i] =
          std::conj(std::complex<double>(gh(i, j).real(), gh(i, j).imag()));
    trace += gh(j, j).real();
  }
  // The leading eigenpairs only: the energy criterion needs their sum and the
  // trace, not the whole spectrum. Too few for `energy`: twice as many.
  const OneBlasThread deterministic;
  std::vector<double> w(static_cast<std::size_t>(n));
  std::vector<std::complex<double>> z;
  std::vector<lapack_int> support;
  int wanted = rank > 0 ? std::min(rank, n) : std::min(n, 64);
  int kept = 0;
  double kept_energy = 0.0;
  for (;;) {
    std::vector<std::complex<double>> a = gram;
    z.assign(std::size_t(n) * wanted, 0.0);
    support.assign(std::size_t(2 * wanted), 0);
    lapack_int found = 0;
    if (LAPACKE_zheevr(LAPACK_COL_MAJOR, 'V', 'I', 'U', n, a.data(), n, 0.0, 0.0, n - wanted + 1, n,
                       0.0, &found, w.data(), z.data(), n, support.data()) != 0 ||
        found != wanted) {
      throw std::runtime_error("dictionary: the eigen-decomposition of the Gram matrix failed");
    }
    kept = 0;
    kept_energy = 0.0;
    if (rank > 0) {
      kept = wanted;
      for (int k = 0; k < wanted; ++k) kept_energy += std::max(w[std::size_t(k)], 0.0);
      break;
    }
    while (kept < wanted && kept_energy < energy * trace) {  // eigenvalues ascend
      kept_energy += std::max(w[std::size_t(wanted - 1 - kept++)], 0.0);
    }
    if (kept_energy >= energy * trace || wanted == n) break;
    wanted = std::min(n, 2 * wanted);
  }
  std::vector<float> basis(std::size_t(kept) * n * 2);
  for (int k = 0; k < kept; ++k) {
    const std::complex<double>* v = z.data() + std::size_t(wanted - 1 - k) * n;
    for (int i = 0; i < n; ++i) {
      basis[(std::size_t(k) * n + i) * 2] = float(v[i].real());
      basis[(std::size_t(k) * n + i) * 2 + 1] = float(v[i].imag());
    }
  }
  Dictionary c;
  c.atoms = d.atoms;
  c.samples = kept;
  c.original_samples = n;
  c.norms = d.norms;
  c.properties = d.properties;
  c.values = d.values;
  c.energy_kept = trace > 0.0 ? kept_energy / trace : 1.0;
  c.compressed = true;
  auto device = std::make_shared<DeviceAtoms>();
  device->basis = DeviceRows("larmor::basis", std::size_t(kept), n, 2);
  Kokkos::deep_copy(
      device->basis,
      Kokkos::View<const float***, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged>(
          basis.data(), std::size_t(kept), n, 2));
  device->unit_atoms =
      DeviceRows(Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::compressed_atoms"),
                 std::size_t(d.atoms), kept, 2);
  // In blocks of atoms, so that the progress moves through the second pass.
  const std::int64_t project_block = std::min(d.atoms, std::max<std::int64_t>(d.atoms / 32, 4096));
  for (std::int64_t a0 = 0; a0 < d.atoms; a0 += project_block) {
    const auto part = std::make_pair(a0, std::min(d.atoms, a0 + project_block));
    match::project(Exec(), device->basis, Kokkos::subview(atoms, part, Kokkos::ALL, Kokkos::ALL),
                   Kokkos::subview(device->unit_atoms, part, Kokkos::ALL, Kokkos::ALL));
    if (progress) {
      Exec().fence();
      progress(d.atoms + part.second, 2 * d.atoms);
    }
  }
  Exec().fence();
  c.device = device;
  return c;
#else
  (void)d, (void)rank, (void)energy;
  throw std::runtime_error("dictionary compression needs LAPACKE (Debian: liblapacke-dev)");
#endif
}

}  // namespace larmor::estimators::dictionary
