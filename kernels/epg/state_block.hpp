// The state layout: which thread of a team holds which orders of which voxels.
//
// A team walks one event stream for `Lanes` voxels. Its threads split the
// orders into contiguous blocks: thread t holds orders [t * OPT, t * OPT + OPT)
// of every lane, in registers on a GPU (all indices below are compile-time
// after unrolling) and in L1-resident arrays on the host, where the lane loop
// is the SIMD loop. A shift moves states across block edges, so only the edge
// values go through team scratch; everything else moves within a thread.
#pragma once

#include "common/kokkos_compat.hpp"
#include "epg/operators.hpp"

#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define LARMOR_UNROLL _Pragma("unroll")
#else
#define LARMOR_UNROLL
#endif

namespace larmor::epg {

// Scratch holding the edge values a shift exchanges between threads: two
// buffers used alternately, so one barrier per shift suffices.
template <class Real, int Lanes>
struct EdgeExchange {
  Real* data = nullptr;  // [2 buffers][4 components][threads][Lanes]
  int threads = 1;

  static KOKKOS_INLINE_FUNCTION std::size_t bytes(int threads) {
    return sizeof(Real) * 2 * 4 * std::size_t(threads) * Lanes;
  }
  KOKKOS_FORCEINLINE_FUNCTION Real& at(int buffer, int component, int thread, int lane) const {
    return data[((buffer * 4 + component) * threads + thread) * Lanes + lane];
  }
};

template <class Real, int OrdersPerThread, int Lanes>
struct StateBlock {
  static constexpr int opt = OrdersPerThread;
  static constexpr int lanes = Lanes;

  Real fp_re[opt][lanes], fp_im[opt][lanes];
  Real fm_re[opt][lanes], fm_im[opt][lanes];
  Real z_re[opt][lanes], z_im[opt][lanes];
  int first_order = 0;  // of this thread's block
  int exchange_parity = 0;

  KOKKOS_INLINE_FUNCTION void reset(int thread) {
    first_order = thread * opt;
    LARMOR_UNROLL
    for (int j = 0; j < opt; ++j) {
      LARMOR_UNROLL
      for (int l = 0; l < lanes; ++l) {
        fp_re[j][l] = fp_im[j][l] = fm_re[j][l] = fm_im[j][l] = Real(0.0f);
        z_re[j][l] = Real((first_order + j) == 0 ? 1.0f : 0.0f);
        z_im[j][l] = Real(0.0f);
      }
    }
  }

  // Number of this thread's orders below `live`.
  KOKKOS_FORCEINLINE_FUNCTION int live_here(int live) const {
    const int n = live - first_order;
    return n < 0 ? 0 : (n > opt ? opt : n);
  }

  KOKKOS_INLINE_FUNCTION void rotate(int live, const FlipFactors<Real> (&flip)[lanes],
                                     const PhaseFactors<Real>& phase) {
    const int n = live_here(live);
    LARMOR_UNROLL
    for (int j = 0; j < opt; ++j) {
      if (j < n) {
        LARMOR_UNROLL
        for (int l = 0; l < lanes; ++l) {
          epg::rotate(flip[l], phase, fp_re[j][l], fp_im[j][l], fm_re[j][l], fm_im[j][l],
                      z_re[j][l], z_im[j][l]);
        }
      }
    }
  }

  KOKKOS_INLINE_FUNCTION void evolve(int live, const Evolution<Real> (&ev)[lanes]) {
    const int n = live_here(live);
    LARMOR_UNROLL
    for (int j = 0; j < opt; ++j) {
      if (j < n) {
        const bool order_zero = (first_order + j) == 0;
        LARMOR_UNROLL
        for (int l = 0; l < lanes; ++l) {
          evolve_transverse(ev[l], fp_re[j][l], fp_im[j][l], fm_re[j][l], fm_im[j][l]);
          evolve_longitudinal(ev[l], order_zero, z_re[j][l], z_im[j][l]);
        }
      }
    }
  }

  KOKKOS_INLINE_FUNCTION void spoil() {
    LARMOR_UNROLL
    for (int j = 0; j < opt; ++j) {
      LARMOR_UNROLL
      for (int l = 0; l < lanes; ++l) {
        fp_re[j][l] = fp_im[j][l] = fm_re[j][l] = fm_im[j][l] = Real(0.0f);
      }
    }
  }

  // Dephase by one order: F+_k <- F+_{k-1}, F-_k <- F-_{k+1}, F-_{K-1} <- 0
  // (it came from beyond the last order), then F+_0 <- conj(F-_0). `orders` is
  // the run's order count K; states pushed past K-1 are dropped.
  template <class Member>
  KOKKOS_INLINE_FUNCTION void shift(const Member& team, const EdgeExchange<Real, lanes>& x,
                                    int orders) {
    const int thread = team.team_rank();
    const int threads = x.threads;
    const int buf = exchange_parity;
    exchange_parity ^= 1;
    if (threads > 1) {
      LARMOR_UNROLL
      for (int l = 0; l < lanes; ++l) {
        x.at(buf, 0, thread, l) = fp_re[opt - 1][l];
        x.at(buf, 1, thread, l) = fp_im[opt - 1][l];
        x.at(buf, 2, thread, l) = fm_re[0][l];
        x.at(buf, 3, thread, l) = fm_im[0][l];
      }
      team.team_barrier();
    }
    LARMOR_UNROLL
    for (int l = 0; l < lanes; ++l) {
      LARMOR_UNROLL
      for (int j = opt - 1; j > 0; --j) {
        fp_re[j][l] = fp_re[j - 1][l];
        fp_im[j][l] = fp_im[j - 1][l];
      }
      LARMOR_UNROLL
      for (int j = 0; j < opt - 1; ++j) {
        fm_re[j][l] = fm_re[j + 1][l];
        fm_im[j][l] = fm_im[j + 1][l];
      }
      const bool has_next = thread + 1 < threads;
      fm_re[opt - 1][l] = has_next ? x.at(buf, 2, thread + 1, l) : Real(0.0f);
      fm_im[opt - 1][l] = has_next ? x.at(buf, 3, thread + 1, l) : Real(0.0f);
      if (thread > 0) {
        fp_re[0][l] = x.at(buf, 0, thread - 1, l);
        fp_im[0][l] = x.at(buf, 1, thread - 1, l);
      } else {
        fp_re[0][l] = fm_re[0][l];
        fp_im[0][l] = -fm_im[0][l];
      }
    }
    // A block may extend past the run's last order (K not a multiple of the
    // block size): keep those slots at zero so nothing flows back from them.
    LARMOR_UNROLL
    for (int j = 0; j < opt; ++j) {
      if (first_order + j >= orders) {
        LARMOR_UNROLL
        for (int l = 0; l < lanes; ++l) {
          fp_re[j][l] = fp_im[j][l] = fm_re[j][l] = fm_im[j][l] = Real(0.0f);
        }
      }
    }
  }
};

}  // namespace larmor::epg
