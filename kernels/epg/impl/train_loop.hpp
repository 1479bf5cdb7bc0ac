// The train kernel: the forward run of an event table compiled into a train
// of steps (train_program.hpp), on the complex states, at float, without
// declared terms.
//
// The general event loop (event_loop.hpp) decodes every record on every
// thread and repeats each voxel's per-event scalars (the flip's sine and
// cosine, the interval exponentials, the rotation with the evolution folded
// in) on every thread of the voxel's group. Here a batch of steps is first
// turned into per-voxel factors, each thread of a group taking its share of
// the batch's steps for the group's voxels, into team scratch; the loop that
// turns the states then reads a step's factors and does only the state work:
// shifts, one rotation, one sample.
#pragma once

#include <utility>

#include "common/denormals.hpp"
#include "epg/event_table.hpp"
#include "epg/impl/event_loop.hpp"
#include "epg/impl/pending_interval.hpp"
#include "epg/impl/renamed_shifts.hpp"
#include "epg/train_program.hpp"

namespace larmor::epg {

struct TrainTag {};

// A step's factors for one voxel: the rotation after the evolution since the
// previous pulse (PendingComplexRotation's fields) and the sample's factor w
// (the signal is w F+_0 of the stored state: M0, the evolution since the
// pulse and the receiver's demodulation).
namespace step_field {
inline constexpr int c2 = 0, c2_im = 1, ca = 2, u_re = 3, u_im = 4, v_re = 5, v_im = 6, h_re = 7,
                     h_im = 8, zero_re = 9, zero_im = 10, zero_z = 11, w_re = 12, w_im = 13,
                     count = 16;  // padded to four 16-byte words
}
// The order TrainKernel::rotation reads as three four-word vectors.
static_assert(step_field::c2 == 0 && step_field::c2_im == 1 && step_field::ca == 2 &&
                  step_field::u_re == 3 && step_field::u_im == 4 && step_field::v_re == 5 &&
                  step_field::v_im == 6 && step_field::h_re == 7 && step_field::h_im == 8 &&
                  step_field::zero_re == 9 && step_field::zero_im == 10 && step_field::zero_z == 11,
              "the rotation's factors are the first twelve fields, in this order");

// The free evolution over `t` for rates r1, r2 and off-resonance df: e1 and
// a = e2 e^{i 2 pi df t} (on F+); `spoiled` zeroes the transverse part.
struct StepEvolution {
  float e1, a_re, a_im;
};
KOKKOS_FORCEINLINE_FUNCTION StepEvolution step_evolution(float t, float r1, float r2, float df_hz,
                                                         bool spoiled, bool precess) {
  StepEvolution e;
  e.e1 = relaxation_decay(t, r1);
  const float e2 = spoiled ? 0.0f : relaxation_decay(t, r2);
  e.a_re = e2;
  e.a_im = 0.0f;
  if (precess) {
    float s, c;
    sincos_turns(df_hz * t, s, c);
    e.a_re = e2 * c;
    e.a_im = e2 * s;
  }
  return e;
}

// Writes lane l's factors of `step` to field f at out[f * Lanes + l].
template <int Lanes>
KOKKOS_FORCEINLINE_FUNCTION void write_step_factors(const TrainStep& step,
                                                    const LaneTissue<float, Lanes>& lane, int l,
                                                    float* out) {
  namespace f = step_field;
  const std::uint32_t control = step.control;
  if (control & train::has_pulse) {
    const float b1 = (control & train::b1_fixed) ? 1.0f : lane.b1[l];
    const RotationCoefficients<float> rotation =
        make_rotation(make_flip(step.flip * b1), make_phase(step.cos_phase, step.sin_phase));
    const StepEvolution e =
        step_evolution(step.pulse_elapsed, lane.r1[l], lane.r2[l], lane.df_hz[l],
                       (control & train::spoiled_before_pulse) != 0, lane.precess);
    PendingComplexRotation<1> r;
    r.set(0, rotation, e.a_re, e.a_im, e.e1, 1.0f - e.e1);
    out[f::c2 * Lanes + l] = r.r.c2[0];
    out[f::c2_im * Lanes + l] = r.c2_im[0];
    out[f::ca * Lanes + l] = r.r.ca[0];
    out[f::u_re * Lanes + l] = r.r.u_re[0];
    out[f::u_im * Lanes + l] = r.r.u_im[0];
    out[f::v_re * Lanes + l] = r.r.v_re[0];
    out[f::v_im * Lanes + l] = r.r.v_im[0];
    out[f::h_re * Lanes + l] = r.r.h_re[0];
    out[f::h_im * Lanes + l] = r.r.h_im[0];
    out[f::zero_re * Lanes + l] = r.zero_re[0];
    out[f::zero_im * Lanes + l] = r.zero_im[0];
    out[f::zero_z * Lanes + l] = r.zero_z[0];
  }
  if (step.output_index >= 0) {
    const StepEvolution e =
        step_evolution(step.sample_elapsed, lane.r1[l], lane.r2[l], lane.df_hz[l],
                       (control & train::spoiled_before_sample) != 0, lane.precess);
    // w = M0 a e^{-i phase}
    const float c = step.receiver_cos, s = step.receiver_sin, m0 = lane.m0[l];
    out[f::w_re * Lanes + l] = m0 * (e.a_re * c + e.a_im * s);
    out[f::w_im * Lanes + l] = m0 * (e.a_im * c - e.a_re * s);
  }
}

// Teams and groups as in ForwardKernel (`WarpGroup` > 0: one full warp of
// groups of that many threads, fixed at compile time).
template <class ExecSpace, int OrdersPerThread, int Lanes, int WarpGroup = 0>
struct TrainKernel {
  using memory_space = typename ExecSpace::memory_space;
  using policy = Kokkos::TeamPolicy<ExecSpace, TrainTag>;
  using member = typename policy::member_type;
  using State = std::conditional_t<kx::is_host_space_v<ExecSpace>,
                                   RingStateBlock<float, OrdersPerThread, Lanes>,
                                   StateBlock<float, OrdersPerThread, Lanes>>;
  static constexpr bool fixed_warp = WarpGroup > 0;
  using Exchange = std::conditional_t<fixed_warp, WarpExchange<float, Lanes, WarpGroup>,
                                      EdgeExchange<float, Lanes>>;
  static constexpr int fields = step_field::count;
  // A step's words in scratch: control, output index, live orders, padding.
  static constexpr int step_word_count = 4;

  EventTable<memory_space> events;
  TissueViews<memory_space> tissue;
  Kokkos::View<float***, Kokkos::LayoutRight, memory_space> signals;  // [voxel][sample][re/im]
  int team_threads = 1;
  int groups = 1;
  int group_threads = 1;
  bool warp_shuffle = false;
  int batch = 32;      // steps whose factors are staged at a time
  bool rename = true;  // walk runs of single-shift steps renamed (devices)

  static KOKKOS_INLINE_FUNCTION std::size_t factor_bytes(int batch, int groups) {
    return sizeof(float) * fields * Lanes * std::size_t(batch) * std::size_t(groups);
  }
  static std::size_t scratch_bytes(int batch, int team_threads, int groups) {
    return factor_bytes(batch, groups) + step_word_count * sizeof(int) * std::size_t(batch) +
           Exchange::bytes(team_threads) + 128;
  }

  KOKKOS_INLINE_FUNCTION void operator()(TrainTag, const member& team) const {
    const FlushDenormalsOnHost flush_denormals;
    const int threads_per_group = fixed_warp ? WarpGroup : group_threads;
    const int groups_per_team = fixed_warp ? 32 / WarpGroup : groups;
    const int group = team.team_rank() / threads_per_group;
    const int thread = team.team_rank() - group * threads_per_group;
    // 16-byte aligned: a device thread reads a step's factors and words as
    // four-word vectors.
    float* factors = static_cast<float*>(
        team.team_shmem().get_shmem_aligned(factor_bytes(batch, groups_per_team), 16));
    int* step_words = static_cast<int*>(
        team.team_shmem().get_shmem_aligned(step_word_count * sizeof(int) * batch, 16));
    Exchange exchange = team_exchange<Exchange>(team, team_threads, group_threads, warp_shuffle);
    LaneTissue<float, Lanes> lane;
    load_lane_tissue<float, Lanes, false>(
        tissue, (team.league_rank() * groups_per_team + group) * Lanes, lane);
    float* row[Lanes];
    LARMOR_UNROLL
    for (int l = 0; l < Lanes; ++l) {
      row[l] = lane.active[l] && signals.extent(1) > 0 ? &signals(lane.voxel[l], 0, 0) : nullptr;
    }
    State state;
    state.reset(thread);
    float* own = factors + std::size_t(group) * batch * fields * Lanes;

    for (int first = 0; first < events.train_steps; first += batch) {
      const int in_batch = kx::min(batch, events.train_steps - first);
      team.team_barrier();  // the previous batch is done with
      for (int j = thread; j < in_batch; j += threads_per_group) {
        const TrainStep step = events.train(first + j);
        LARMOR_UNROLL
        for (int l = 0; l < Lanes; ++l) write_step_factors(step, lane, l, own + j * fields * Lanes);
        if (group == 0) {
          step_words[4 * j] = static_cast<int>(step.control);
          step_words[4 * j + 1] = step.output_index;
          step_words[4 * j + 2] = step.live_orders;
        }
      }
      team.team_barrier();

      for (int j = 0; j < in_batch;) {
        if constexpr (renames) {
          if (rename && j + OrdersPerThread <= in_batch &&
              walk_renamed(team, exchange, state, lane, row, own, step_words, j,
                           threads_per_group * OrdersPerThread)) {
            j += OrdersPerThread;
            continue;
          }
        }
        walk_step(team, exchange, state, thread, lane, row, own + j * fields * Lanes,
                  step_words + 4 * j);
        ++j;
      }
    }
  }

  struct StepWords {
    std::uint32_t control;
    int output, live;
  };
  KOKKOS_FORCEINLINE_FUNCTION static StepWords step_words_at(const int* words) {
#if defined(__CUDA_ARCH__)
    const int4 w = *reinterpret_cast<const int4*>(words);
    return {static_cast<std::uint32_t>(w.x), w.y, w.z};
#else
    return {static_cast<std::uint32_t>(words[0]), words[1], words[2]};
#endif
  }

  // One step of any shape: shifts, the pulse, shifts, the sample.
  template <class Exch>
  KOKKOS_FORCEINLINE_FUNCTION void walk_step(const member& team, Exch& exchange, State& state,
                                             int thread, const LaneTissue<float, Lanes>& lane,
                                             float* const (&row)[Lanes], const float* f,
                                             const int* words) const {
    const StepWords w = step_words_at(words);
    const std::uint32_t control = w.control;
    const int output = w.output, live = w.live;
    for (int k = shifts_before_pulse(control); k > 0; --k) state.shift(team, exchange);
    if (control & train::has_pulse) state.rotate_pending(live, rotation(f), lane.precess);
    for (int k = shifts_before_sample(control); k > 0; --k) state.shift(team, exchange);
    if (output >= 0 && thread == 0) {
      float fp0_re[Lanes], fp0_im[Lanes];
      LARMOR_UNROLL
      for (int l = 0; l < Lanes; ++l) fp0_re[l] = state.fp0_re(l), fp0_im[l] = state.fp0_im(l);
      record(f, fp0_re, fp0_im, row, output);
    }
  }

  // Device blocks shift by renaming registers (renamed_shifts.hpp) through
  // runs of OrdersPerThread steps that each shift once before their pulse and
  // not before their sample: a gradient echo's or a fingerprinting train's
  // every repetition.
  static constexpr bool renames = !kx::is_host_space_v<ExecSpace>;

  // Walks steps [j, j + OrdersPerThread) renamed if each has that shape
  // (true), else nothing (false). `group_slots`: the orders a group holds.
  template <class Exch>
  KOKKOS_FORCEINLINE_FUNCTION bool walk_renamed(const member& team, Exch& exchange, State& state,
                                                const LaneTissue<float, Lanes>& lane,
                                                float* const (&row)[Lanes], const float* own,
                                                const int* step_words, int j,
                                                int group_slots) const {
    int live = group_slots;
    LARMOR_UNROLL
    for (int k = 0; k < OrdersPerThread; ++k) {
      const StepWords w = step_words_at(step_words + 4 * (j + k));
      if (!shifts_once_then_pulses(w.control)) return false;
      live = kx::min(live, w.live);
    }
    // Each step reads its words again: holding the run's words through it
    // costs registers, and occupancy, that the loads do not.
    const int* w = step_words + 4 * j;
    const bool all_live = live >= group_slots;
    with_precession(lane.precess, [&](auto precess) {
      constexpr bool P = decltype(precess)::value;
      if (all_live) {
        walk_renamed_steps<true, P>(team, exchange, state, row, own + j * fields * Lanes, w,
                                    std::make_integer_sequence<int, OrdersPerThread>{});
      } else {
        walk_renamed_steps<false, P>(team, exchange, state, row, own + j * fields * Lanes, w,
                                     std::make_integer_sequence<int, OrdersPerThread>{});
      }
    });
    return true;
  }

  template <bool AllLive, bool Precess, class Exch, int... Phase>
  KOKKOS_FORCEINLINE_FUNCTION void walk_renamed_steps(const member& team, Exch& exchange,
                                                      State& state, float* const (&row)[Lanes],
                                                      const float* f, const int* w,
                                                      std::integer_sequence<int, Phase...>) const {
    (walk_renamed_step<Phase, AllLive, Precess>(team, exchange, state, row,
                                                f + Phase * fields * Lanes, w + 4 * Phase),
     ...);
  }

  // Step with the block renamed by Phase shifts: its shift leaves it renamed
  // by Phase + 1.
  template <int Phase, bool AllLive, bool Precess, class Exch>
  KOKKOS_FORCEINLINE_FUNCTION void walk_renamed_step(const member& team, Exch& exchange,
                                                     State& state, float* const (&row)[Lanes],
                                                     const float* f, const int* words) const {
    constexpr int opt = OrdersPerThread;
    const StepWords w = step_words_at(words);
    renamed::shift<Phase>(state, team, exchange);
    renamed::rotate_pending<Phase + 1, AllLive, Precess>(state, w.live, rotation(f));
    constexpr int p0 = renamed::fp_row<opt, Phase + 1>(0);
    if (w.output >= 0 && state.thread_in_group == 0) {
      record(f, state.fp_re[p0], state.fp_im[p0], row, w.output);
    }
  }

  // A device thread of one lane reads the twelve factors as three vectors.
#if defined(__CUDA_ARCH__)
  static constexpr bool vector_factors = Lanes == 1;
#else
  static constexpr bool vector_factors = false;
#endif

  KOKKOS_FORCEINLINE_FUNCTION static PendingComplexRotation<Lanes> rotation(const float* f) {
    namespace s = step_field;
    PendingComplexRotation<Lanes> r;
    if constexpr (vector_factors) {
#if defined(__CUDA_ARCH__)
      const float4* q = reinterpret_cast<const float4*>(f);
      const float4 a = q[0], b = q[1], c = q[2];
      r.r.c2[0] = a.x, r.c2_im[0] = a.y, r.r.ca[0] = a.z, r.r.u_re[0] = a.w;
      r.r.u_im[0] = b.x, r.r.v_re[0] = b.y, r.r.v_im[0] = b.z, r.r.h_re[0] = b.w;
      r.r.h_im[0] = c.x, r.zero_re[0] = c.y, r.zero_im[0] = c.z, r.zero_z[0] = c.w;
#endif
    } else {
      LARMOR_UNROLL
      for (int l = 0; l < Lanes; ++l) {
        r.r.c2[l] = f[s::c2 * Lanes + l];
        r.c2_im[l] = f[s::c2_im * Lanes + l];
        r.r.ca[l] = f[s::ca * Lanes + l];
        r.r.u_re[l] = f[s::u_re * Lanes + l];
        r.r.u_im[l] = f[s::u_im * Lanes + l];
        r.r.v_re[l] = f[s::v_re * Lanes + l];
        r.r.v_im[l] = f[s::v_im * Lanes + l];
        r.r.h_re[l] = f[s::h_re * Lanes + l];
        r.r.h_im[l] = f[s::h_im * Lanes + l];
        r.zero_re[l] = f[s::zero_re * Lanes + l];
        r.zero_im[l] = f[s::zero_im * Lanes + l];
        r.zero_z[l] = f[s::zero_z * Lanes + l];
      }
    }
    return r;
  }

  // The sample w F+_0 of each lane, F+_0 given as its rows' values.
  KOKKOS_FORCEINLINE_FUNCTION static void record(const float* f, const float (&fp0_re)[Lanes],
                                                 const float (&fp0_im)[Lanes],
                                                 float* const (&row)[Lanes], int output) {
    namespace s = step_field;
    LARMOR_UNROLL
    for (int l = 0; l < Lanes; ++l) {
      if (row[l] == nullptr) continue;
      const float w_re = f[s::w_re * Lanes + l], w_im = f[s::w_im * Lanes + l];
      const float p_re = fp0_re[l], p_im = fp0_im[l];
      float* out = row[l] + 2 * output;
      const float re = w_re * p_re - w_im * p_im, im = w_re * p_im + w_im * p_re;
#if defined(__CUDA_ARCH__)
      *reinterpret_cast<float2*>(out) = make_float2(re, im);
#else
      out[0] = re;
      out[1] = im;
#endif
    }
  }
};

}  // namespace larmor::epg
