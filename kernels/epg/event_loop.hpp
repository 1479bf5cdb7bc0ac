// The fused event loop, written once over a number type and a state layout.
//
// One launch walks the whole event stream. Teams hold voxels, threads hold
// orders (state_block.hpp); event records are staged a tile at a time in team
// scratch, so every thread reads each event from fast memory, and each event
// pays only for its own kind's work. Memory is touched at the start, at each
// recorded sample and for the tiles; the state never leaves the team.
#pragma once

#include "common/denormals.hpp"
#include "epg/event_table.hpp"
#include "epg/operators.hpp"
#include "epg/state_block.hpp"
#include "epg/tissue_views.hpp"

namespace larmor::epg {

struct ForwardTag {};

// Per-lane tissue constants, read once per voxel before the event loop.
template <class Real, int Lanes>
struct LaneTissue {
  Real m0[Lanes], r1[Lanes], r2[Lanes], b1[Lanes], df_hz[Lanes];
  int voxel[Lanes];
  bool active[Lanes];
  bool precess;  // some lane is off resonance (the same on every thread of a team)
};

template <class Real, int Lanes, class MemorySpace>
KOKKOS_INLINE_FUNCTION void load_lane_tissue(const TissueViews<MemorySpace>& tissue,
                                             int first_voxel, LaneTissue<Real, Lanes>& out) {
  bool precess = false;
  LARMOR_UNROLL
  for (int l = 0; l < Lanes; ++l) {
    const int v = first_voxel + l;
    out.active[l] = v < tissue.voxels;
    // Inactive lanes simulate a harmless copy of the first voxel and never
    // write; this keeps the lane loops free of bounds.
    const int src = out.active[l] ? v : first_voxel;
    out.voxel[l] = v;
    const float t1 = tissue.t1_s.at(src);
    const float t2 = tissue.t2_s.at(src);
    out.m0[l] = Real(tissue.m0.at(src));
    out.r1[l] = Real(t1 > 0.0f ? 1.0f / t1 : 0.0f);  // 1/inf = 0: no relaxation
    out.r2[l] = Real(t2 > 0.0f ? 1.0f / t2 : 0.0f);
    out.b1[l] = Real(tissue.b1.at(src));
    const float df_hz = tissue.df_hz.at(src);
    out.df_hz[l] = Real(df_hz);
    precess = precess || df_hz != 0.0f;
  }
  out.precess = precess;
}

template <class ExecSpace, class Real, int OrdersPerThread, int Lanes>
struct ForwardKernel {
  using memory_space = typename ExecSpace::memory_space;
  using policy = Kokkos::TeamPolicy<ExecSpace, ForwardTag>;
  using member = typename policy::member_type;
  using scratch_records =
      Kokkos::View<EventRecord*, typename ExecSpace::scratch_memory_space, kx::Unmanaged>;
  using State = StateBlock<Real, OrdersPerThread, Lanes>;
  using Exchange = EdgeExchange<Real, Lanes>;

  EventTable<memory_space> events;
  TissueViews<memory_space> tissue;
  Kokkos::View<float***, Kokkos::LayoutRight, memory_space> signals;  // [voxel][sample][re/im]
  int team_threads = 1;
  int tile_events = 256;

  static std::size_t scratch_bytes(int tile_events, int team_threads) {
    return scratch_records::shmem_size(tile_events) + Exchange::bytes(team_threads) + 64;
  }

  KOKKOS_INLINE_FUNCTION void operator()(ForwardTag, const member& team) const {
    const FlushDenormalsOnHost flush_denormals;
    scratch_records tile(team.team_scratch(0), tile_events);
    Exchange exchange;
    exchange.threads = team_threads;
    exchange.data = static_cast<Real*>(team.team_shmem().get_shmem(Exchange::bytes(team_threads)));

    LaneTissue<Real, Lanes> lane;
    load_lane_tissue<Real, Lanes>(tissue, team.league_rank() * Lanes, lane);

    State state;
    state.reset(team.team_rank());
    const int orders = events.orders;

    // Free-evolution factors for the last two distinct intervals: trains
    // repeat their intervals, often alternating two (TE, then TR - TE).
    // Swapping whole arrays keeps every register index compile-time.
    float current_duration = -1.0f, other_duration = -1.0f;
    Evolution<Real> current[Lanes], other[Lanes];
    bool have_flip = false;
    float current_flip = 0.0f;
    FlipFactors<Real> flip[Lanes];
    for (int tile_start = 0; tile_start < events.count; tile_start += tile_events) {
      const int in_tile = kx::min(tile_events, events.count - tile_start);
      team.team_barrier();  // everyone is done with the previous tile
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, in_tile),
                           [&](int i) { tile(i) = events.records(tile_start + i); });
      team.team_barrier();

      for (int i = 0; i < in_tile; ++i) {
        const EventRecord rec = tile(i);
        const std::uint32_t act = action_of(rec);
        const int live = live_orders_of(rec);
        const abi::EventKind kind = kind_of(rec);

        if (act & abi::action::crush_before) state.shift(team, exchange, orders);

        if (kind == abi::EventKind::pulse) {
          // Trains repeat their flip angles: the sine and cosine of flip x B1
          // are taken again only when the nominal flip changes.
          if (!have_flip || rec.flip != current_flip) {
            have_flip = true;
            current_flip = rec.flip;
            LARMOR_UNROLL
            for (int l = 0; l < Lanes; ++l) flip[l] = make_flip(Real(rec.flip) * lane.b1[l]);
          }
          const PhaseFactors<Real> phase = make_phase(Real(rec.cos_phase), Real(rec.sin_phase));
          LaneRotations<Real, Lanes> rotation;
          LARMOR_UNROLL
          for (int l = 0; l < Lanes; ++l) rotation.set(l, make_rotation(flip[l], phase));
          state.rotate(live, rotation);
        } else if (kind == abi::EventKind::adc) {
          if (team.team_rank() == 0) record_sample(rec, lane, state);
        }

        if (act & abi::action::crush_after) state.shift(team, exchange, orders);
        if (act & abi::action::shift_after) state.shift(team, exchange, orders);
        if (act & abi::action::spoil_after) state.spoil();

        if (rec.duration > 0.0f) {
          if (rec.duration != current_duration) {
            const bool reuse = rec.duration == other_duration;
            other_duration = current_duration;
            current_duration = rec.duration;
            LARMOR_UNROLL
            for (int l = 0; l < Lanes; ++l) {
              const Evolution<Real> previous = current[l];
              current[l] = reuse ? other[l]
                                 : make_evolution(Real(rec.duration), lane.r1[l], lane.r2[l],
                                                  lane.df_hz[l], lane.precess);
              other[l] = previous;
            }
          }
          state.evolve(live, current, lane.precess);
        }
      }
    }
  }

  KOKKOS_INLINE_FUNCTION void record_sample(const EventRecord& rec,
                                            const LaneTissue<Real, Lanes>& lane,
                                            const State& state) const {
    LARMOR_UNROLL
    for (int l = 0; l < Lanes; ++l) {
      if (!lane.active[l]) continue;
      Real s_re, s_im;
      demodulate(lane.m0[l], state.fp_re[0][l], state.fp_im[0][l], Real(rec.cos_phase),
                 Real(rec.sin_phase), s_re, s_im);
      signals(lane.voxel[l], rec.output_index, 0) = value_of(s_re);
      signals(lane.voxel[l], rec.output_index, 1) = value_of(s_im);
    }
  }
};

}  // namespace larmor::epg
