// Flushes denormal floats to zero on x86 hosts for the lifetime of a guard.
//
// Ideal refocusing leaves pathways whose amplitudes shrink by ~1e-8 per pulse
// (sin(pi) in float), so a spin-echo train reaches the denormal range within
// a few pulses. Many x86 cores take a microcode assist for every denormal
// operand, which makes such trains several times slower (docs/performance.md,
// "Host kernels"; `larmor-bench -w mese` on the host measures it). Values
// below 1e-38 of M0 carry no signal; GPUs run denormals at full speed and
// need no guard.
#pragma once

#include <Kokkos_Core.hpp>

#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__) && \
    (defined(__x86_64__) || defined(_M_X64))
#include <xmmintrin.h>
#define LARMOR_HOST_MXCSR 1
#endif

namespace larmor {

class FlushDenormalsOnHost {
 public:
  KOKKOS_FORCEINLINE_FUNCTION FlushDenormalsOnHost() {
#if defined(LARMOR_HOST_MXCSR)
    saved_ = _mm_getcsr();
    _mm_setcsr(saved_ | 0x8040u);  // flush-to-zero and denormals-are-zero
#endif
  }
  KOKKOS_FORCEINLINE_FUNCTION ~FlushDenormalsOnHost() {
#if defined(LARMOR_HOST_MXCSR)
    _mm_setcsr(saved_);
#endif
  }
  FlushDenormalsOnHost(const FlushDenormalsOnHost&) = delete;
  FlushDenormalsOnHost& operator=(const FlushDenormalsOnHost&) = delete;

 private:
  unsigned saved_ = 0;
};

}  // namespace larmor
