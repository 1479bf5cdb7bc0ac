// The one place that knows which Kokkos version is in use.
//
// larmor builds against Kokkos 3.4 (Debian's trilinos source, patched) and
// against the 4.x/5.x installs of clusters. Everything that differs between
// them is spelled here once; the rest of the code uses these names.
#pragma once

#include <string>

#include <Kokkos_Core.hpp>

#ifndef KOKKOS_VERSION
#error "Kokkos_Core.hpp did not define KOKKOS_VERSION"
#endif

// Unrolls a fixed-count loop in device code, where a rolled loop over a
// register array would put the array in local memory; host code leaves the
// choice to the compiler.
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define LARMOR_UNROLL _Pragma("unroll")
#else
#define LARMOR_UNROLL
#endif

// Inlines a lambda, or a function, into its caller in host code: g++ keeps
// a large body out of line, and a SIMD loop that calls it stays scalar.
// Device code keeps the compiler's choice.
#if defined(__GNUC__) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
#define LARMOR_INLINE_LAMBDA __attribute__((always_inline))
#define LARMOR_HOST_FORCEINLINE_FUNCTION KOKKOS_FORCEINLINE_FUNCTION
#else
#define LARMOR_INLINE_LAMBDA
#define LARMOR_HOST_FORCEINLINE_FUNCTION KOKKOS_INLINE_FUNCTION
#endif

// A host loop over voxel lanes whose iterations touch separate elements of
// several arrays: g++ otherwise checks at run time that the arrays do not
// overlap, and gives up vectorising where that takes too many checks.
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDA_ARCH__)
#define LARMOR_INDEPENDENT_LANES _Pragma("GCC ivdep")
#else
#define LARMOR_INDEPENDENT_LANES
#endif

namespace larmor::kx {

#if KOKKOS_VERSION >= 30700
using Kokkos::cos;
using Kokkos::exp;
using Kokkos::expm1;
using Kokkos::fabs;
using Kokkos::floor;
using Kokkos::log;
using Kokkos::nearbyint;
using Kokkos::sin;
using Kokkos::sqrt;
#else
using Kokkos::Experimental::cos;
using Kokkos::Experimental::exp;
using Kokkos::Experimental::expm1;
using Kokkos::Experimental::fabs;
using Kokkos::Experimental::floor;
using Kokkos::Experimental::log;
using Kokkos::Experimental::nearbyint;
using Kokkos::Experimental::sin;
using Kokkos::Experimental::sqrt;
#endif

template <class T>
KOKKOS_FORCEINLINE_FUNCTION constexpr T min(T a, T b) {
  return b < a ? b : a;
}
template <class T>
KOKKOS_FORCEINLINE_FUNCTION constexpr T max(T a, T b) {
  return a < b ? b : a;
}

inline constexpr double pi = 3.14159265358979323846;

using DefaultExec = Kokkos::DefaultExecutionSpace;
using HostExec = Kokkos::DefaultHostExecutionSpace;
using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;

template <class Exec>
inline constexpr bool is_host_space_v =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Exec::memory_space>::accessible;

inline const char* backend_name() { return DefaultExec::name(); }

// A Kokkos Tools region for the object's lifetime: kp_space_time_stack and
// the profilers nest the launches made inside it under `name`. (Kokkos 4 has
// Profiling::ScopedRegion; 3.4 only the push and pop.)
class ScopedRegion {
 public:
  explicit ScopedRegion(const std::string& name) { Kokkos::Profiling::pushRegion(name); }
  ~ScopedRegion() { Kokkos::Profiling::popRegion(); }
  ScopedRegion(const ScopedRegion&) = delete;
  ScopedRegion& operator=(const ScopedRegion&) = delete;
};

}  // namespace larmor::kx
