// The chunked matching of dictionary.hpp: a chunk of voxels to the device
// from a staging slot, projected onto the dictionary's basis when it is
// compressed, matched by the fused kernel, and only each voxel's best atom
// and product back to the host, while the caller fills the other slot.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "common/kokkos_compat.hpp"
#include "estimators/dictionary/device_atoms.hpp"
#include "match/inner_products.hpp"
#include "simulate/impl/memory_budget.hpp"

namespace larmor::estimators::dictionary {
namespace {

using Mem = Exec::memory_space;
#if defined(KOKKOS_ENABLE_CUDA)
using StagingSpace = std::conditional_t<std::is_same_v<Exec, Kokkos::Cuda>,
                                        Kokkos::CudaHostPinnedSpace, Kokkos::HostSpace>;
#else
using StagingSpace = Kokkos::HostSpace;
#endif
// Host backends read the staged signals where they are.
constexpr bool reads_host_memory = std::is_same_v<Mem, Kokkos::HostSpace>;
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

// Two staging slots: the caller fills one while the device matches the
// other's chunk. A slot's chunk is launched (copy in, projection, match, copy
// of the results back into the slot's page-locked result buffers) without
// waiting; its results are unpacked into the caller's MatchResult once the
// device has finished it: when the next chunk is launched, or at finish().
struct Matcher::State {
  struct Slot {
    Kokkos::View<float***, Kokkos::LayoutRight, StagingSpace> signals;
    Kokkos::View<int*, StagingSpace> atom;
    Kokkos::View<float* [3], Kokkos::LayoutRight, StagingSpace> product;
  };
  struct Pending {
    int slot = -1;  // none
    MatchResult* out = nullptr;
    std::int64_t offset = 0, count = 0;
  };

  DeviceRows atoms, basis;
  std::vector<float> norms;
  int samples = 0, coefficients = 0;
  std::int64_t chunk = 0;
  MatchPhases phases = MatchPhases::overlapped;
  Slot slots[2];
  int filling = 0;
  Pending pending;
  DeviceRows raw, coordinates;
  match::BestAtoms<Mem> best;
  MatchTimings timings;

  // Waits for the chunk in flight and writes its results.
  void finish() {
    if (pending.slot < 0) return;
    Exec().fence();
    const Slot& from = slots[pending.slot];
    MatchResult& out = *pending.out;
    for (std::int64_t v = 0; v < pending.count; ++v) {
      const int a = from.atom(v);
      const std::size_t i = std::size_t(pending.offset + v);
      const float re = from.product(v, 0), im = from.product(v, 1), norm = from.product(v, 2);
      out.atom[i] = a;
      out.m0[i] = std::complex<float>(re, im) / norms[std::size_t(a)];
      out.correlation[i] = norm > 0.0f ? std::hypot(re, im) / norm : 0.0f;
    }
    pending = Pending{};
  }

  // The phase ending now: fenced and timed when asked, else left running.
  void phase_end(double& seconds, std::chrono::steady_clock::time_point& t0) {
    if (phases != MatchPhases::timed) return;
    Exec().fence();
    seconds += since(t0);
    t0 = std::chrono::steady_clock::now();
  }

  // Launches the first `count` voxels of slot `k` as voxels [offset, ...) of
  // `out`. Host backends read the slot where it is; device backends copy it
  // (page-locked: at full speed, without the host waiting).
  void launch(int k, std::int64_t count, MatchResult& out, std::int64_t offset) {
    const Exec exec;
    const Slot& slot = slots[k];
    auto t0 = std::chrono::steady_clock::now();
    DeviceRows rows(reinterpret_cast<float*>(slot.signals.data()), std::size_t(count), samples, 2);
    if constexpr (!reads_host_memory) {
      rows = Kokkos::subview(raw, Range(0, count), Kokkos::ALL, Kokkos::ALL);
      Kokkos::deep_copy(exec, rows,
                        Kokkos::subview(slot.signals, Range(0, count), Kokkos::ALL, Kokkos::ALL));
    }
    phase_end(timings.transfer_s, t0);
    DeviceRows matched = rows;
    if (basis.extent(0) > 0) {
      matched = Kokkos::subview(coordinates, Range(0, count), Kokkos::ALL, Kokkos::ALL);
      match::project(exec, basis, rows, matched);
      phase_end(timings.project_s, t0);
    }
    match::best_atoms(exec, atoms, matched, best);
    Kokkos::deep_copy(exec, Kokkos::subview(slot.atom, Range(0, count)),
                      Kokkos::subview(best.atom, Range(0, count)));
    Kokkos::deep_copy(exec, Kokkos::subview(slot.product, Range(0, count), Kokkos::ALL),
                      Kokkos::subview(best.product, Range(0, count), Kokkos::ALL));
    phase_end(timings.match_s, t0);
    pending = Pending{k, &out, offset, count};
  }
};

Matcher::Matcher(const Dictionary& d, std::int64_t chunk_voxels, MatchPhases phases)
    : state_(new State) {
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
  s.phases = phases;
  // A chunk: its signals, coordinates and results; a quarter of what the
  // device can spare, and no more than fills it several times over.
  const double per_voxel = 8.0 * (s.samples + s.coefficients) + 16.0;
  s.chunk = chunk_voxels > 0
                ? chunk_voxels
                : std::clamp<std::int64_t>(
                      std::int64_t(0.5 * simulate::launch_memory_budget<Exec>() / per_voxel), 1,
                      std::int64_t(1) << 17);
  const auto chunk = std::size_t(s.chunk);
  for (State::Slot& slot : s.slots) {
    slot.signals = decltype(slot.signals)(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::match_staging"), chunk, s.samples,
        2);
    slot.atom = decltype(slot.atom)(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::match_atom_staging"), chunk);
    slot.product = decltype(slot.product)(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "larmor::match_product_staging"), chunk);
  }
  if (!reads_host_memory) {
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
}

// A chunk still in flight is waited for (its memory is in use), not unpacked:
// its MatchResult may be gone.
Matcher::~Matcher() { Exec().fence(); }

std::int64_t Matcher::chunk_voxels() const { return state_->chunk; }

float* Matcher::staging() { return state_->slots[state_->filling].signals.data(); }

const MatchTimings& Matcher::timings() const {
  if (state_->phases != MatchPhases::timed) {
    throw std::logic_error("dictionary matching: phase timings need a timed matcher");
  }
  return state_->timings;
}

void Matcher::match_staged(std::int64_t count, MatchResult& out, std::int64_t offset) {
  const kx::ScopedRegion region("larmor::dictionary::match");
  State& s = *state_;
  if (count < 0 || count > s.chunk) {
    throw std::invalid_argument("dictionary matching: " + std::to_string(count) +
                                " staged voxels for a staging buffer of " +
                                std::to_string(s.chunk));
  }
  if (offset < 0 || offset > std::int64_t(out.atom.size()) - count) {
    throw std::invalid_argument("dictionary matching: voxels [" + std::to_string(offset) + ", " +
                                std::to_string(offset + count) + ") outside a result of " +
                                std::to_string(out.atom.size()));
  }
  // The device works through the chunk in flight while the caller filled
  // this slot; only now is it waited for.
  s.finish();
  if (count == 0) return;
  s.launch(s.filling, count, out, offset);
  s.filling ^= 1;
}

void Matcher::finish() {
  const kx::ScopedRegion region("larmor::dictionary::match");
  state_->finish();
}

void Matcher::match(const float* signals, std::int64_t count, MatchResult& out,
                    std::int64_t offset) {
  const std::size_t values = std::size_t(state_->samples) * 2;
  for (std::int64_t v0 = 0; v0 < count; v0 += state_->chunk) {
    const std::int64_t n = std::min(state_->chunk, count - v0);
    std::memcpy(staging(), signals + std::size_t(v0) * values,
                sizeof(float) * std::size_t(n) * values);
    match_staged(n, out, offset + v0);
  }
  finish();
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
