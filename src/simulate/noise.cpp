#include "simulate/noise.hpp"

#include <cmath>

namespace larmor::simulate {
namespace {

// SplitMix64's finaliser: a bijective 64-bit mix.
std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// (0, 1), never 0 (the logarithm below).
double unit_of(std::uint64_t bits) { return (double(bits >> 11) + 0.5) * 0x1.0p-53; }

}  // namespace

void add_complex_noise(std::vector<float>& signals, int samples, std::int64_t first_voxel,
                       double sigma, std::uint64_t seed) {
  if (!(sigma > 0.0) || samples <= 0) return;
  const std::size_t voxels = signals.size() / (2 * std::size_t(samples));
  for (std::size_t v = 0; v < voxels; ++v) {
    const std::uint64_t key = splitmix(seed ^ splitmix(std::uint64_t(first_voxel) + v));
    for (int s = 0; s < samples; ++s) {
      // Box-Muller: one pair of normals per sample (re, im).
      const std::uint64_t a = splitmix(key + 2 * std::uint64_t(s));
      const std::uint64_t b = splitmix(key + 2 * std::uint64_t(s) + 1);
      const double radius = sigma * std::sqrt(-2.0 * std::log(unit_of(a)));
      const double angle = 6.283185307179586 * unit_of(b);
      float* z = signals.data() + (v * std::size_t(samples) + std::size_t(s)) * 2;
      z[0] += float(radius * std::cos(angle));
      z[1] += float(radius * std::sin(angle));
    }
  }
}

}  // namespace larmor::simulate
