// The chunked matching of dictionary.hpp: a chunk of voxels to the device
// (from the staging buffer or the caller's memory), projected onto the
// dictionary's basis when it is compressed, matched by the fused kernel, and
// only each voxel's best atom and product back to the host.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "common/kokkos_compat.hpp"
#include "estimators/dictionary/device_atoms.hpp"
#include "match/inner_products.hpp"
#include "simulate/memory_budget.hpp"

namespace larmor::estimators::dictionary {
namespace {

using Mem = Exec::memory_space;
#if defined(KOKKOS_ENABLE_CUDA)
using StagingSpace = std::conditional_t<std::is_same_v<Exec, Kokkos::Cuda>,
                                        Kokkos::CudaHostPinnedSpace, Kokkos::HostSpace>;
#else
using StagingSpace = Kokkos::HostSpace;
#endif
// Host backends read the staged (or the caller's) signals where they are.
constexpr bool reads_host_memory = std::is_same_v<Mem, Kokkos::HostSpace>;
using HostRows = Kokkos::View<float***, Kokkos::LayoutRight, Kokkos::HostSpace, kx::Unmanaged>;
using Range = std::pair<std::int64_t, std::int64_t>;

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

void MatchResult::resize(std::int64_t voxels) {
  atom.resize(std::size_t(voxels));
  m0.resize(std::size_t(voxels));
  correlation.resize(std::size_t(voxels));
}

struct Matcher::State {
  DeviceRows atoms, basis;
  std::vector<float> norms;
  int samples = 0, coefficients = 0;
  std::int64_t chunk = 0;
  Kokkos::View<float***, Kokkos::LayoutRight, StagingSpace> staging;
  DeviceRows raw, coordinates;
  match::BestAtoms<Mem> best;
  // Mirrors of `best` (the same memory on host backends).
  Kokkos::View<int*, Mem>::HostMirror host_atom;
  Kokkos::View<float* [3], Kokkos::LayoutRight, Mem>::HostMirror host_product;
  MatchTimings timings;

  // Voxels [offset, offset + rows.extent(0)) of `out` from `rows` (device).
  void run(const DeviceRows& rows, MatchResult& out, std::int64_t offset) {
    const std::int64_t count = std::int64_t(rows.extent(0));
    auto t0 = std::chrono::steady_clock::now();
    DeviceRows matched = rows;
    if (basis.extent(0) > 0) {
      matched = Kokkos::subview(coordinates, Range(0, count), Kokkos::ALL, Kokkos::ALL);
      match::project(Exec(), basis, rows, matched);
      Exec().fence();
      timings.project_s += since(t0);
      t0 = std::chrono::steady_clock::now();
    }
    match::best_atoms(Exec(), atoms, matched, best);
    Kokkos::deep_copy(Kokkos::subview(host_atom, Range(0, count)),
                      Kokkos::subview(best.atom, Range(0, count)));
    Kokkos::deep_copy(Kokkos::subview(host_product, Range(0, count), Kokkos::ALL),
                      Kokkos::subview(best.product, Range(0, count), Kokkos::ALL));
    timings.match_s += since(t0);
    for (std::int64_t v = 0; v < count; ++v) {
      const int a = host_atom(v);
      const std::size_t i = std::size_t(offset + v);
      const float re = host_product(v, 0), im = host_product(v, 1), norm = host_product(v, 2);
      out.atom[i] = a;
      out.m0[i] = std::complex<float>(re, im) / norms[std::size_t(a)];
      out.correlation[i] = norm > 0.0f ? std::hypot(re, im) / norm : 0.0f;
    }
  }
};

Matcher::Matcher(const Dictionary& d, std::int64_t chunk_voxels) : state_(new State) {
  const kx::ScopedRegion region("larmor::dictionary::staging");
  State& s = *state_;
  if (!d.device) {
    throw std::invalid_argument("dictionary matching: the dictionary's device memory was released");
  }
  if (d.atoms <= 0 || d.device->unit_atoms.extent(0) == 0) {
    throw std::invalid_argument("dictionary matching: the dictionary has no atoms");
  }
  s.atoms = d.device->unit_atoms;
  s.basis = d.device->basis;
  s.norms = d.norms;
  s.samples = d.original_samples;
  s.coefficients = d.samples;
  // A chunk: its signals, coordinates and results; a quarter of what the
  // device can spare, and no more than fills it several times over.
  const double per_voxel = 8.0 * (s.samples + s.coefficients) + 16.0;
  s.chunk = chunk_voxels > 0
                ? chunk_voxels
                : std::clamp<std::int64_t>(
                      std::int64_t(0.5 * simulate::reverse_memory_budget<Exec>() / per_voxel), 1,
                      std::int64_t(1) << 17);
  const auto chunk = std::size_t(s.chunk);
  s.staging =
      decltype(s.staging)(Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::match_staging"),
                          chunk, s.samples, 2);
  if (reads_host_memory) {
    s.raw = DeviceRows(reinterpret_cast<float*>(s.staging.data()), chunk, s.samples, 2);
  } else {
    s.raw = DeviceRows(Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::match_signals"),
                       chunk, s.samples, 2);
  }
  if (d.compressed) {
    s.coordinates =
        DeviceRows(Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::match_coordinates"),
                   chunk, s.coefficients, 2);
  }
  s.best.atom = Kokkos::View<int*, Mem>("larmor::match_atom", chunk);
  s.best.product =
      Kokkos::View<float* [3], Kokkos::LayoutRight, Mem>("larmor::match_product", chunk);
  s.host_atom = Kokkos::create_mirror_view(s.best.atom);
  s.host_product = Kokkos::create_mirror_view(s.best.product);
}

Matcher::~Matcher() = default;

std::int64_t Matcher::chunk_voxels() const { return state_->chunk; }

float* Matcher::staging() { return state_->staging.data(); }

const MatchTimings& Matcher::timings() const { return state_->timings; }

void Matcher::match_staged(std::int64_t count, MatchResult& out, std::int64_t offset) {
  const kx::ScopedRegion region("larmor::dictionary::match");
  State& s = *state_;
  if (count < 0 || count > s.chunk) {
    throw std::invalid_argument("dictionary matching: " + std::to_string(count) +
                                " staged voxels for a staging buffer of " +
                                std::to_string(s.chunk));
  }
  if (count == 0) return;
  const auto t0 = std::chrono::steady_clock::now();
  const DeviceRows rows = Kokkos::subview(s.raw, Range(0, count), Kokkos::ALL, Kokkos::ALL);
  if (!reads_host_memory) {
    Kokkos::deep_copy(rows, Kokkos::subview(s.staging, Range(0, count), Kokkos::ALL, Kokkos::ALL));
    Exec().fence();
  }
  s.timings.transfer_s += since(t0);
  s.run(rows, out, offset);
}

void Matcher::match(const float* signals, std::int64_t count, MatchResult& out,
                    std::int64_t offset) {
  const kx::ScopedRegion region("larmor::dictionary::match");
  State& s = *state_;
  for (std::int64_t v0 = 0; v0 < count; v0 += s.chunk) {
    const std::int64_t n = std::min(s.chunk, count - v0);
    const HostRows host(const_cast<float*>(signals) + std::size_t(v0) * s.samples * 2,
                        std::size_t(n), s.samples, 2);
    const auto t0 = std::chrono::steady_clock::now();
    DeviceRows rows;
    if constexpr (reads_host_memory) {
      rows = DeviceRows(host.data(), std::size_t(n), s.samples, 2);
    } else {
      rows = Kokkos::subview(s.raw, Range(0, n), Kokkos::ALL, Kokkos::ALL);
      Kokkos::deep_copy(rows, host);
      Exec().fence();
    }
    s.timings.transfer_s += since(t0);
    s.run(rows, out, offset + v0);
  }
}

MatchResult match(const Dictionary& d, const std::vector<float>& signals, std::int64_t voxels,
                  std::int64_t chunk_voxels) {
  if (std::int64_t(signals.size()) != voxels * d.original_samples * 2) {
    throw std::invalid_argument("dictionary matching: the signals do not have " +
                                std::to_string(d.original_samples) + " samples per voxel");
  }
  MatchResult out;
  out.resize(voxels);
  if (voxels == 0) return out;
  Matcher m(d, chunk_voxels > 0 ? chunk_voxels : std::min<std::int64_t>(voxels, 1 << 17));
  m.match(signals.data(), voxels, out, 0);
  return out;
}

}  // namespace larmor::estimators::dictionary
