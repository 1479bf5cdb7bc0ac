// The grouped reverse sweep's moves of a thread's block (adjoint_grouped.hpp):
// the loop over its live orders and lanes, its checkpoint and stretch rows,
// and the row moves of a shift. `LaneLoops`: a host thread holding every
// order of `L` voxels, whose loops run to the event's live orders and whose
// moves are block copies; otherwise a device thread's register block,
// unrolled whole.
#pragma once

#include <cstddef>
#include <cstring>

#include "common/dual.hpp"
#include "common/kokkos_compat.hpp"
#include "epg/impl/state_block.hpp"

namespace larmor::epg::adjoint_detail {

// `count` elements from `from` to the overlapping `to`, for the host threads'
// block moves. Only host sweeps call it, but nvcc's device pass checks every
// host-and-device function of a host instance and warns of memmove there: the
// device pass sees an element loop instead.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION void move_elements(T* to, const T* from, std::size_t count) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  if (to < from) {
    for (std::size_t i = 0; i < count; ++i) to[i] = from[i];
  } else {
    for (std::size_t i = count; i > 0; --i) to[i - 1] = from[i - 1];
  }
#else
  std::memmove(static_cast<void*>(to), from, sizeof(T) * count);  // floats or duals of floats
#endif
}

// The rows of an OPT-order block starting at `first_order` that an event
// with `live` orders reads, which a reverse sweep keeps of the state before
// it: its live orders and the one above, which a shift moves down (above,
// the state is zero or never read again).
template <int OPT>
KOKKOS_FORCEINLINE_FUNCTION int read_rows(int first_order, int live) {
  const int n = live + 1 - first_order;
  return n < 0 ? 0 : (n > OPT ? OPT : n);
}

template <class Real, int OPT, int L, bool LaneLoops>
struct BlockMoves {
  using Block = StateBlock<Real, OPT, L>;
  static constexpr int parts = part_count_v<Real>;
  static constexpr bool lane_loops = LaneLoops;

  // `f(j, l)` for the live orders [0, here) of a thread's block and each
  // lane: unrolled over the block with a guard on a device (registers need
  // compile-time indices), a loop to `here` vectorised over the lanes on a
  // host thread with lanes. `f` must carry nothing from one lane to the next.
  template <class F>
  static KOKKOS_FORCEINLINE_FUNCTION void for_live(int here, F&& f) {
    if constexpr (lane_loops) {
      for (int j = 0; j < here; ++j) {
#pragma omp simd
        for (int l = 0; l < L; ++l) f(j, l);
      }
    } else {
      LARMOR_UNROLL
      for (int j = 0; j < OPT; ++j) {
        if (j < here) {
          LARMOR_UNROLL
          for (int l = 0; l < L; ++l) f(j, l);
        }
      }
    }
  }

  static KOKKOS_FORCEINLINE_FUNCTION Real* component(Block& b, int c) {
    Real* parts_of_block[6] = {&b.fp_re[0][0], &b.fp_im[0][0], &b.fm_re[0][0],
                               &b.fm_im[0][0], &b.z_re[0][0],  &b.z_im[0][0]};
    return parts_of_block[c];
  }

  // A store row holds the group's orders, each order's lanes side by side:
  // a stretch row those an event reads (read_rows), a checkpoint row all (a
  // replay from it runs events whose live orders grow). A host thread with
  // lanes copies the first `orders` rows of its block: at float as six block
  // copies, at dual numbers each part's floats as one run through plain
  // pointers (the View's indexing per element keeps the loop scalar). A
  // device thread copies its whole block (a guard per row slowed runs whose
  // orders are all live), or nothing where every order it holds is above
  // those the event reads.
  template <class Store>
  static KOKKOS_INLINE_FUNCTION void save(const Store& store, int row, int slot, Block& b,
                                          int orders = OPT) {
    if constexpr (lane_loops && parts == 1) {
      for (int c = 0; c < 6; ++c) {
        std::memcpy(&store(row, slot, c, 0), component(b, c),
                    sizeof(float) * L * std::size_t(orders));
      }
    } else if constexpr (lane_loops) {
      for (int c = 0; c < 6; ++c) {
        const Real* x = component(b, c);
        float* to[parts];
        for (int p = 0; p < parts; ++p) to[p] = &store(row, slot, c * parts + p, 0);
        for (int i = 0; i < L * orders; ++i) {
          LARMOR_UNROLL
          for (int p = 0; p < parts; ++p) to[p][i] = part_of(x[i], p);
        }
      }
    } else {
      if (!lane_loops && orders == 0) return;
      LARMOR_UNROLL
      for (int c = 0; c < 6; ++c) {
        const Real* x = component(b, c);
        LARMOR_UNROLL
        for (int p = 0; p < parts; ++p) {
          LARMOR_UNROLL
          for (int j = 0; j < (lane_loops ? orders : OPT); ++j) {
            LARMOR_UNROLL
            for (int l = 0; l < L; ++l) {
              store(row, slot, c * parts + p, (b.first_order + j) * L + l) =
                  part_of(x[j * L + l], p);
            }
          }
        }
      }
    }
  }
  template <class Store>
  static KOKKOS_INLINE_FUNCTION void load(const Store& store, int row, int slot, Block& b,
                                          int orders = OPT) {
    if constexpr (lane_loops && parts == 1) {
      for (int c = 0; c < 6; ++c) {
        std::memcpy(component(b, c), &store(row, slot, c, 0),
                    sizeof(float) * L * std::size_t(orders));
      }
    } else if constexpr (lane_loops) {
      for (int c = 0; c < 6; ++c) {
        Real* x = component(b, c);
        const float* from[parts];
        for (int p = 0; p < parts; ++p) from[p] = &store(row, slot, c * parts + p, 0);
        for (int i = 0; i < L * orders; ++i) {
          LARMOR_UNROLL
          for (int p = 0; p < parts; ++p) part_of(x[i], p) = from[p][i];
        }
      }
    } else {
      if (!lane_loops && orders == 0) return;
      LARMOR_UNROLL
      for (int c = 0; c < 6; ++c) {
        Real* x = component(b, c);
        LARMOR_UNROLL
        for (int p = 0; p < parts; ++p) {
          LARMOR_UNROLL
          for (int j = 0; j < (lane_loops ? orders : OPT); ++j) {
            LARMOR_UNROLL
            for (int l = 0; l < L; ++l) {
              part_of(x[j * L + l], p) =
                  store(row, slot, c * parts + p, (b.first_order + j) * L + l);
            }
          }
        }
      }
    }
  }

  // A device thread's slot of a stretch kept in team scratch: every value of
  // its block, `stride` (the team's threads) apart, so that a warp's stores
  // of one value fill consecutive banks. `at` is the thread's first value in
  // the slot; `f(offset, value)` for each value of the block.
  template <class F>
  static KOKKOS_FORCEINLINE_FUNCTION void for_column(int stride, Block& b, F&& f) {
    static_assert(L == 1 && !lane_loops, "a device thread holds one voxel");
    LARMOR_UNROLL
    for (int c = 0; c < 6; ++c) {
      LARMOR_UNROLL
      for (int p = 0; p < parts; ++p) {
        LARMOR_UNROLL
        for (int j = 0; j < OPT; ++j)
          f(((c * parts + p) * OPT + j) * stride, part_of(component(b, c)[j], p));
      }
    }
  }
  static KOKKOS_FORCEINLINE_FUNCTION void save_column(float* at, int stride, Block& b) {
    for_column(stride, b, [&](int i, float& v) LARMOR_INLINE_LAMBDA { at[i] = v; });
  }
  static KOKKOS_FORCEINLINE_FUNCTION void load_column(const float* at, int stride, Block& b) {
    for_column(stride, b, [&](int i, float& v) LARMOR_INLINE_LAMBDA { v = at[i]; });
  }

  // Every row of `x` one order down (x_j <- x_{j+1}) or up; the vacated end
  // row is the caller's. A host thread with lanes moves only the rows of an
  // event's `here` live orders and the one above (above, the state is zero
  // or never read again and the adjoint dead: neither reaches a live order),
  // as one block (element loops over strided lanes stay scalar).
  static KOKKOS_FORCEINLINE_FUNCTION int moved_rows(int here) {
    return here < OPT ? here + 1 : OPT;
  }
  static KOKKOS_FORCEINLINE_FUNCTION void rows_down(Real (&x)[OPT][L], int here) {
    if constexpr (lane_loops) {
      const int rows = moved_rows(here);
      if (rows > 1) move_elements(&x[0][0], &x[1][0], std::size_t(rows - 1) * L);
    } else {
      (void)here;
      LARMOR_UNROLL
      for (int j = 0; j < OPT - 1; ++j) {
        LARMOR_UNROLL
        for (int l = 0; l < L; ++l) x[j][l] = x[j + 1][l];
      }
    }
  }
  static KOKKOS_FORCEINLINE_FUNCTION void rows_up(Real (&x)[OPT][L], int here) {
    if constexpr (lane_loops) {
      const int rows = moved_rows(here);
      if (rows > 1) move_elements(&x[1][0], &x[0][0], std::size_t(rows - 1) * L);
    } else {
      (void)here;
      LARMOR_UNROLL
      for (int j = OPT - 1; j > 0; --j) {
        LARMOR_UNROLL
        for (int l = 0; l < L; ++l) x[j][l] = x[j - 1][l];
      }
    }
  }
};

}  // namespace larmor::epg::adjoint_detail
