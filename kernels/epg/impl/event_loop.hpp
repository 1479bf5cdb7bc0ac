// The fused event loop, written once over a number type and a state layout.
//
// One launch walks the whole event stream. Teams hold voxels, threads hold
// orders (state_block.hpp); event records are staged a tile at a time in team
// scratch, so every thread reads each event from fast memory, and each event
// pays only for its own kind's work. Memory is touched at the start, at each
// recorded sample and for the tiles; the state never leaves the team.
#pragma once

#include "common/denormals.hpp"
#include "common/dual.hpp"
#include "epg/event_table.hpp"
#include "epg/impl/axis_dual_state.hpp"
#include "epg/impl/axis_state.hpp"
#include "epg/impl/lane_tissue.hpp"
#include "epg/impl/operators.hpp"
#include "epg/impl/part_ring_state.hpp"
#include "epg/impl/ring_state.hpp"
#include "epg/impl/state_block.hpp"
#include "epg/impl/transport.hpp"

namespace larmor::epg {

struct ForwardTag {};

// A team holds `groups` voxel groups side by side, each of `Lanes` voxels
// spread over `group_threads` threads: several small groups fill a warp while
// each thread keeps enough orders to amortise the per-event work.
// `OnAxis`: the real-subspace path (axis_state.hpp), for an event table
// rewritten onto the pulses' axis (EventTable::on_axis). `WarpGroup` > 0: a
// device team is one full warp of groups of that many threads, fixed at
// compile time (WarpExchange); 0: the launch shape's counts, read at run time.
// `Waveforms` (with `Declared`): the variant that plays pulses from their
// waveforms (waveform_pulse.hpp), compiled for one layout per number type:
// the integration's registers would slow every other declared run.
template <class ExecSpace, class Real, int OrdersPerThread, int Lanes, bool Declared = false,
          bool OnAxis = false, int WarpGroup = 0, bool Waveforms = false>
struct ForwardKernel {
  using memory_space = typename ExecSpace::memory_space;
  using policy = Kokkos::TeamPolicy<ExecSpace, ForwardTag>;
  using member = typename policy::member_type;
  using scratch_records =
      Kokkos::View<EventRecord*, typename ExecSpace::scratch_memory_space, kx::Unmanaged>;
  // Host threads hold every order and shift by moving ring offsets (forward
  // mode: each dual number's parts in rows of their own, so that the lanes
  // vectorise); device threads hold register blocks and trade block edges.
  using HostRing = std::conditional_t<dual_steps::applies_v<Real>,
                                      PartRingStateBlock<Real, OrdersPerThread, Lanes>,
                                      RingStateBlock<Real, OrdersPerThread, Lanes>>;
  using ComplexState = std::conditional_t<kx::is_host_space_v<ExecSpace>, HostRing,
                                          StateBlock<Real, OrdersPerThread, Lanes>>;
  using AxisState = std::conditional_t<kx::is_host_space_v<ExecSpace>,
                                       AxisRingStateBlock<Real, OrdersPerThread, Lanes>,
                                       AxisStateBlock<Real, OrdersPerThread, Lanes>>;
  using State = std::conditional_t<OnAxis, AxisState, ComplexState>;
  static constexpr bool fixed_warp = WarpGroup > 0;
  using Exchange = std::conditional_t<fixed_warp, WarpExchange<Real, Lanes, WarpGroup>,
                                      EdgeExchange<Real, Lanes>>;
  // Forward runs defer the relaxation between pulses to the next pulse,
  // which applies it as a column scaling of its rotation (PendingInterval,
  // PendingComplexRotation): one pass over the orders per pulse. Forward
  // mode keeps the separate steps (along df the relaxation is not diagonal),
  // and so do the declared terms off the axis (diffusion and flow differ
  // between orders; a carried state is stored relaxed).
  static constexpr bool defers_relaxation = std::is_same_v<Real, float> && (OnAxis || !Declared);
  // Device blocks defer the shifts too (PendingInterval::shifts): each pulse
  // folds them into its rotation, so the loop moves no registers to shift.
  // A host ring shifts by moving two offsets, so deferring saves no work
  // there, and measured slower (docs/performance.md, "Device kernels":
  // `larmor-bench -w mese -t in_phase` on one host core).
  static constexpr bool defers_shifts =
      defers_relaxation && OnAxis && !Declared && !kx::is_host_space_v<ExecSpace>;

  EventTable<memory_space> events;
  TissueViews<memory_space> tissue;
  Kokkos::View<float***, Kokkos::LayoutRight, memory_space> signals;  // [voxel][sample][re/im]
  // Dual-number runs only: [voxel][direction][sample][re/im].
  Kokkos::View<float****, Kokkos::LayoutRight, memory_space> tangents;
  // A steady-state iteration's carried state, [voxel][component][order]
  // (StateBlock::load): where to start (empty: equilibrium) and where to
  // leave the final state (empty: not kept).
  Kokkos::View<const float***, Kokkos::LayoutRight, memory_space> state_in;
  Kokkos::View<float***, Kokkos::LayoutRight, memory_space> state_out;
  int team_threads = 1;
  int groups = 1;
  int group_threads = 1;
  bool warp_shuffle = false;
  int tile_events = 256;

  static std::size_t scratch_bytes(int tile_events, int team_threads) {
    return scratch_records::shmem_size(tile_events) + Exchange::bytes(team_threads) + 64;
  }

  KOKKOS_INLINE_FUNCTION void operator()(ForwardTag, const member& team) const {
    const FlushDenormalsOnHost flush_denormals;
    scratch_records tile(team.team_scratch(0), tile_events);
    Exchange exchange = team_exchange<Exchange>(team, team_threads, group_threads, warp_shuffle);
    const int threads_per_group = fixed_warp ? WarpGroup : group_threads;
    const int groups_per_team = fixed_warp ? 32 / WarpGroup : groups;
    const int group = team.team_rank() / threads_per_group;
    const int thread = team.team_rank() - group * threads_per_group;
    LaneTissue<Real, Lanes> lane;
    load_lane_tissue<Real, Lanes, Declared>(
        tissue, (team.league_rank() * groups_per_team + group) * Lanes, lane);

    State state;
    if constexpr (OnAxis) {
      state.reset(thread, events.orders);
    } else {
      state.reset(thread);
    }
    PendingInterval pending;
    IntervalCache<Lanes, true> pulse_interval;
    IntervalCache<Lanes, false> sample_interval;
    // A carried state may fill every order from the start: its event table
    // counts every order live (epg::LiveOrders::all).
    // Only the full variant loads one: compiled into the plain kernel, the
    // load changes how g++ compiles the host loops and slows every plain run
    // (docs/performance.md, "Host kernels"; `larmor-bench -w mese` on the
    // host).
    if constexpr (Declared) {
      if (state_in.extent(0) > 0) state.load(state_in, lane.voxel, lane.active, events.orders);
    }
    SampleWriter writer = sample_writer(lane);

    // Free-evolution factors for the last two distinct intervals: trains
    // repeat their intervals, often alternating two (TE, then TR - TE). Each
    // slot stays in its own registers (no copying between them); a new
    // interval replaces the slot not used last.
    float duration_a = -1.0f, duration_b = -1.0f;
    bool b_used_last = false;
    Evolution<Real> slot_a[Lanes], slot_b[Lanes];
    LARMOR_UNROLL
    for (int l = 0; l < Lanes; ++l)
      slot_a[l] = slot_b[l] = {Real(1.0f), Real(1.0f), Real(1.0f), Real(0.0f), Real(0.0f)};
    // Forward mode: the directions of each slot's and the flips' tangents,
    // taken when they are made (dual_steps.hpp).
    unsigned directions_a = 0, directions_b = 0, flip_directions = 0;
    bool have_flip = false;
    float current_flip = 0.0f;
    bool current_scaled = true;
    FlipFactors<Real> flip[Lanes];
    // A transmit array: the shim of the cached flips and each lane's phase.
    const bool transmit = Declared && tissue.transmit.channels > 0;
    int current_shim = 0;
    float transmit_cos[Lanes], transmit_sin[Lanes];
    LARMOR_UNROLL
    for (int l = 0; l < Lanes; ++l) transmit_cos[l] = 1.0f, transmit_sin[l] = 0.0f;
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
        const bool spoil = (act & abi::action::spoil_after) != 0;

        if constexpr (defers_shifts) {
          pending.shifts += (act & abi::action::crush_before) != 0 ? 1 : 0;
          // One site for the shifts the instant cannot take in its stride.
          const int reach = kind == abi::EventKind::pulse ? State::pulse_reach
                            : kind == abi::EventKind::adc ? State::sample_reach
                                                          : pending.shifts;
          if (pending.shifts > reach) {
            state.shift_times(team, exchange, pending.shifts - reach);
            pending.shifts = reach;
          }
        } else if (act & abi::action::crush_before) {
          shift(team, exchange, state, lane, live);
        }

        if (Waveforms && kind == abi::EventKind::waveform_pulse) {
          waveform_pulse(rec, lane, state, live);
        } else if (Declared && !OnAxis && kind == abi::EventKind::pulse &&
                   slice_profile_of(rec) > 0) {
          slice_selective_pulse(rec, lane, state, live);
        } else if (kind == abi::EventKind::pulse) {
          // Trains repeat their flip angles: the sine and cosine of flip x B1
          // are taken again only when the nominal flip (or the shim, or
          // whether B1 scales it) changes.
          const int shim = transmit ? shim_of(rec) : 0;
          const bool scaled = follows_b1(rec);
          if (!have_flip || rec.flip != current_flip || shim != current_shim ||
              scaled != current_scaled) {
            have_flip = true;
            current_flip = rec.flip;
            current_shim = shim;
            current_scaled = scaled;
            flip_directions = 0;
            LARMOR_UNROLL
            for (int l = 0; l < Lanes; ++l) {
              if (transmit) {
                const TransmitField f = tissue.transmit.field(lane.source(l), shim);
                flip[l] = make_flip(Real(rec.flip * f.gain) * pulse_b1(rec, lane.b1[l]));
                transmit_cos[l] = f.cos_phase;
                transmit_sin[l] = f.sin_phase;
              } else {
                flip[l] = make_flip(Real(rec.flip) * pulse_b1(rec, lane.b1[l]));
              }
              flip_directions |= dual_steps::directions_of(flip[l]);
            }
          }
          LaneRotations<Real, Lanes> rotation;
          // The phase factors below are constants: the flips' directions are
          // the rotation's.
          rotation.directions = flip_directions;
          if (transmit) {
            // The array's field turns each voxel's axis by its own phase.
            LARMOR_UNROLL
            for (int l = 0; l < Lanes; ++l) {
              const float c = rec.cos_phase * transmit_cos[l] - rec.sin_phase * transmit_sin[l];
              const float s = rec.sin_phase * transmit_cos[l] + rec.cos_phase * transmit_sin[l];
              rotation.set(l, make_rotation(flip[l], make_phase(Real(c), Real(s))));
            }
          } else {
            // An on-axis table has every pulse at phase 0 (the rewrite folds
            // the half turns into the flips): the constant phase drops its
            // products from the coefficients.
            const PhaseFactors<Real> phase =
                OnAxis ? make_phase(Real(1.0f), Real(0.0f))
                       : make_phase(Real(rec.cos_phase), Real(rec.sin_phase));
            LARMOR_UNROLL
            for (int l = 0; l < Lanes; ++l) rotation.set(l, make_rotation(flip[l], phase));
          }
          if constexpr (defers_relaxation && !OnAxis) {
            const PendingComplexRotation<Lanes> pending_rotation(
                rotation, deferred_evolution(pulse_interval, pending, lane));
            state.rotate_pending(live, pending_rotation, lane.precess);
            pending = PendingInterval{};
          } else if constexpr (defers_relaxation) {
            const PendingRotation<Lanes> pending_rotation(
                rotation, deferred_factors(pulse_interval, pending, lane));
            if constexpr (defers_shifts) {
              state.rotate_pending(live, pending_rotation, pending.shifts, team, exchange);
            } else {
              state.rotate_pending(live, pending_rotation);
            }
            pending = PendingInterval{};
          } else {
            state.rotate(live, rotation);
          }
        } else if (Declared && kind == abi::EventKind::adc && sample_weights_of(rec) > 0) {
          if constexpr (Declared) {
            record_weighted_sample(team, exchange, thread, rec, lane, state, writer, live);
          }
        } else if (kind == abi::EventKind::adc) {
          if constexpr (defers_relaxation && !OnAxis) {
            // As below: every thread looks up the factors.
            const PendingEvolution<Lanes> f = deferred_evolution(sample_interval, pending, lane);
            if (thread == 0) record_sample(rec, lane, state, writer, nullptr, 0, &f);
          } else if constexpr (defers_relaxation) {
            // Every thread looks up the factors, so that the group's interval
            // caches stay alike and later lookups do not diverge.
            const PendingFactors<Lanes> f = deferred_factors(sample_interval, pending, lane);
            if (thread == 0) record_sample(rec, lane, state, writer, f.e2, pending.shifts);
          } else {
            if (thread == 0) record_sample(rec, lane, state, writer);
          }
        }

        if constexpr (defers_shifts) {
          pending.shifts += ((act & abi::action::crush_after) != 0 ? 1 : 0) +
                            ((act & abi::action::shift_after) != 0 ? 1 : 0);
        } else {
          if (act & abi::action::crush_after) shift(team, exchange, state, lane, live);
          if (act & abi::action::shift_after) shift(team, exchange, state, lane, live);
        }

        if constexpr (defers_relaxation) {
          pending.spoiled = pending.spoiled || spoil;
          pending.elapsed += rec.duration;
        } else if (rec.duration > 0.0f) {
          const bool use_b = evolution_slot_b(rec.duration, duration_a, duration_b, b_used_last,
                                              lane, slot_a, slot_b, directions_a, directions_b);
          if (use_b) {
            state.evolve(live, slot_b, lane.precess, spoil, directions_b);
          } else {
            state.evolve(live, slot_a, lane.precess, spoil, directions_a);
          }
          if (Declared && tissue.transport()) {
            const float free_s = free_duration_of(rec, tissue.terms.lobe_s);
            LaneWalks<Lanes> walks;
            LARMOR_UNROLL
            for (int l = 0; l < Lanes; ++l) {
              walks.set(l, interval_walk(lane.transport[l], free_s, state.first_order));
            }
            if (tissue.flow) {
              state.template transport<transport_families::all, true>(live, walks);
            } else {
              state.template transport<transport_families::all, false>(live, walks);
            }
          }
        } else if (spoil) {
          state.spoil();
        }
      }
    }
    // The store stays in both variants (the plain one never receives a
    // carried state): without it g++ compiles the plain host kernel as slowly
    // as with the load above. That is g++'s code generation, found by
    // measuring (`larmor-bench -w mese` on the host), not derived.
    if (state_out.extent(0) > 0) {
      if constexpr (defers_shifts) state.shift_times(team, exchange, pending.shifts);
      if constexpr (defers_relaxation && !OnAxis) {
        const PendingEvolution<Lanes> f = deferred_evolution(pulse_interval, pending, lane);
        Evolution<Real> evolution[Lanes];
        LARMOR_UNROLL
        for (int l = 0; l < Lanes; ++l) evolution[l] = f.lane(l);
        state.evolve(events.orders, evolution, lane.precess, false);
      } else if constexpr (defers_relaxation) {
        state.relax_pending(deferred_factors(pulse_interval, pending, lane));
      }
      state.store(state_out, lane.voxel, lane.active, events.orders);
    }
  }

  // A slice-selective pulse: each lane's rotation at its slice position and
  // effective flip, read from the pulse's table (slice_profile.hpp). A
  // transmit array's field scales the flip and turns the pulse's phase, as
  // for an instantaneous pulse (the tables take flip x field x B1, and the
  // RF phase factors out of them).
  KOKKOS_INLINE_FUNCTION void slice_selective_pulse(const EventRecord& rec,
                                                    const LaneTissue<Real, Lanes>& lane,
                                                    State& state, int live) const {
    if constexpr (!OnAxis) {
      GeneralRotation<Real> rotation[Lanes];
      const int profile = slice_profile_of(rec) - 1;
      LARMOR_UNROLL
      for (int l = 0; l < Lanes; ++l) {
        const PulseAxis axis = pulse_axis(rec, tissue.transmit.field(lane.source(l), shim_of(rec)));
        const PulseQuaternion<Real> q =
            read_slice_rotation(tissue.slice, profile, lane.position[l],
                                Real(rec.flip * axis.gain) * pulse_b1(rec, lane.b1[l]));
        rotation[l] = make_general_rotation(q, Real(axis.cos_phase), Real(axis.sin_phase));
      }
      state.rotate_general(live, rotation);
    }
  }

  // A pulse played from its waveform: each lane integrates it at its own
  // relaxation and off-resonance (waveform_pulse.hpp), every order takes the
  // map, order 0 what recovered, and diffusion and flow act over the pulse's
  // length (without a gradient, alike on every state of an order, so they
  // commute with the pulse).
  KOKKOS_INLINE_FUNCTION void waveform_pulse(const EventRecord& rec,
                                             const LaneTissue<Real, Lanes>& lane, State& state,
                                             int live) const {
    if constexpr (Waveforms && Declared && !OnAxis) {
      const int index = waveform_of(rec) - 1;
      const WaveformViews<memory_space>& w = tissue.waveforms;
      GeneralRotation<Real> rotation[Lanes];
      StateTriple<Real> recovered[Lanes];
      LARMOR_UNROLL
      for (int l = 0; l < Lanes; ++l) {
        const PulseAxis axis = pulse_axis(rec, tissue.transmit.field(lane.source(l), shim_of(rec)));
        const WaveformMap<Real> m = integrate_waveform(
            w, index, Real(axis.gain * w.flip_scale(index, rec.flip)) * pulse_b1(rec, lane.b1[l]),
            axis.cos_phase, axis.sin_phase, lane.r1[l], lane.r2[l], lane.df_hz[l]);
        rotation[l] = linear_part(m);
        recovered[l] = m.offset;
      }
      state.rotate_general(live, rotation);
      state.for_each_order(1, [&](int order, int l, Real& p_re, Real& p_im, Real& m_re, Real& m_im,
                                  Real& z_re, Real& z_im) {
        if (order != 0) return;
        p_re += recovered[l].p_re, p_im += recovered[l].p_im;
        m_re += recovered[l].m_re, m_im += recovered[l].m_im;
        z_re += recovered[l].z_re, z_im += recovered[l].z_im;
      });
      if (tissue.transport()) {
        LaneWalks<Lanes> walks;
        LARMOR_UNROLL
        for (int l = 0; l < Lanes; ++l) {
          walks.set(l, interval_walk(lane.transport[l], w.length_s(index), state.first_order));
        }
        if (tissue.flow) {
          state.template transport<transport_families::all, true>(live, walks);
        } else {
          state.template transport<transport_families::all, false>(live, walks);
        }
      }
    }
  }

  // One shift; a declared crusher lobe adds its diffusion and flow factors.
  KOKKOS_FORCEINLINE_FUNCTION void shift(const member& team, Exchange& exchange, State& state,
                                         const LaneTissue<Real, Lanes>& lane, int live) const {
    state.shift(team, exchange);
    if (Declared && tissue.lobes()) {
      // One family at a time: one walk's registers live at once.
      if (tissue.flow) {
        lobe<transport_families::plus, true>(state, lane, live);
        lobe<transport_families::minus, true>(state, lane, live);
        lobe<transport_families::z, true>(state, lane, live);
      } else {
        lobe<transport_families::plus, false>(state, lane, live);
        lobe<transport_families::minus, false>(state, lane, live);
        lobe<transport_families::z, false>(state, lane, live);
      }
    }
  }

  template <int Family, bool Complex>
  KOKKOS_FORCEINLINE_FUNCTION void lobe(State& state, const LaneTissue<Real, Lanes>& lane,
                                        int live) const {
    LaneWalks<Lanes> walk;
    LARMOR_UNROLL
    for (int l = 0; l < Lanes; ++l) {
      walk.set(l, lobe_walk<Family>(lane.transport[l], tissue.terms.lobe_s, state.first_order));
    }
    state.template transport<Family, Complex>(live, walk);
  }

  // Which of the two cached interval slots holds `duration`'s factors (b:
  // true); a new duration replaces the slot not used last.
  KOKKOS_FORCEINLINE_FUNCTION static bool evolution_slot_b(
      float duration, float& duration_a, float& duration_b, bool& b_used_last,
      const LaneTissue<Real, Lanes>& lane, Evolution<Real> (&slot_a)[Lanes],
      Evolution<Real> (&slot_b)[Lanes], unsigned& directions_a, unsigned& directions_b) {
    bool use_b = duration == duration_b;
    if (!use_b && duration != duration_a) {
      use_b = !b_used_last;
      if (use_b) {
        duration_b = duration;
        directions_b = fill_evolution(duration, lane, slot_b);
      } else {
        duration_a = duration;
        directions_a = fill_evolution(duration, lane, slot_a);
      }
    }
    b_used_last = use_b;
    return use_b;
  }

  // The factors of the relaxation deferred since the last pulse (float runs
  // on the axis), from the cache of the pulses' or the samples' intervals.
  template <bool WithT1>
  KOKKOS_FORCEINLINE_FUNCTION static PendingFactors<Lanes> deferred_factors(
      IntervalCache<Lanes, WithT1>& interval, const PendingInterval& pending,
      const LaneTissue<Real, Lanes>& lane) {
    interval.look_up(pending.elapsed, lane.r1, lane.r2);
    return PendingFactors<Lanes>(interval, pending.spoiled);
  }

  // The same for the complex kernels: the pending free evolution.
  template <bool WithT1>
  KOKKOS_FORCEINLINE_FUNCTION static PendingEvolution<Lanes> deferred_evolution(
      IntervalCache<Lanes, WithT1>& interval, const PendingInterval& pending,
      const LaneTissue<Real, Lanes>& lane) {
    interval.look_up(pending.elapsed, lane.r1, lane.r2);
    return PendingEvolution<Lanes>(interval, pending, lane.df_hz, lane.precess);
  }

  // Returns the directions of the factors' tangents (forward mode).
  KOKKOS_FORCEINLINE_FUNCTION static unsigned fill_evolution(float duration,
                                                             const LaneTissue<Real, Lanes>& lane,
                                                             Evolution<Real> (&slot)[Lanes]) {
    unsigned directions = 0;
    LARMOR_UNROLL
    for (int l = 0; l < Lanes; ++l) {
      slot[l] = make_evolution(Real(duration), lane.r1[l], lane.r2[l], lane.df_hz[l], lane.precess);
      directions |= dual_steps::directions_of(slot[l]);
    }
    return directions;
  }

  // Where each lane's samples go: its voxel's row of the signal array, found
  // once so that a sample costs two stores (null for inactive lanes).
  struct SampleWriter {
    float* row[Lanes];
  };

  KOKKOS_INLINE_FUNCTION SampleWriter sample_writer(const LaneTissue<Real, Lanes>& lane) const {
    SampleWriter w;
    LARMOR_UNROLL
    for (int l = 0; l < Lanes; ++l) {
      w.row[l] = lane.active[l] && signals.extent(1) > 0 ? &signals(lane.voxel[l], 0, 0) : nullptr;
    }
    return w;
  }

  // (`decay`, `shifts`: where relaxation and shifts are deferred on the
  // axis, the transverse decay and the shifts not yet applied to the state;
  // `evolution`: the complex kernels' pending evolution, of which F+ takes
  // rot.)
  KOKKOS_FORCEINLINE_FUNCTION void record_sample(
      const EventRecord& rec, const LaneTissue<Real, Lanes>& lane, const State& state,
      const SampleWriter& writer, const float* decay = nullptr, int shifts = 0,
      const PendingEvolution<Lanes>* evolution = nullptr) const {
    LARMOR_UNROLL
    for (int l = 0; l < Lanes; ++l) {
      if (writer.row[l] == nullptr) continue;
      Real fp_re = state.fp0_re(l), fp_im = state.fp0_im(l);
      if constexpr (defers_shifts) {
        const Real plus_zero = state.plus_zero_after(l, shifts);
        fp_re = sample_re(plus_zero);
        fp_im = sample_im(plus_zero);
      }
      if constexpr (defers_relaxation && !OnAxis) {
        const float rot_re = evolution->rot_re[l], rot_im = evolution->rot_im[l];
        const Real re = fp_re;
        fp_re = rot_re * re - rot_im * fp_im;
        fp_im = rot_re * fp_im + rot_im * re;
      } else if constexpr (defers_relaxation) {
        fp_re *= decay[l];
        fp_im *= decay[l];
      }
      store_sample(rec, lane, l, fp_re, fp_im, writer);
    }
  }

  // A sample weighted over the voxel (SampleWeightViews): every thread sums
  // its live orders' share for each lane at the lane's slice position, the
  // group's first thread adds the others' and records the sum. Declared
  // variant only, where relaxation and shifts are not deferred.
  KOKKOS_INLINE_FUNCTION void record_weighted_sample(const member& team, Exchange& exchange,
                                                     int thread, const EventRecord& rec,
                                                     const LaneTissue<Real, Lanes>& lane,
                                                     State& state, const SampleWriter& writer,
                                                     int live) const {
    const int table = sample_weights_of(rec);
    const SampleWeightViews<memory_space>& w = tissue.weights;
    Real sum[2][Lanes];
    for (int l = 0; l < Lanes; ++l) sum[0][l] = sum[1][l] = Real(0.0f);
    state.for_each_order(
        live, [&](int k, int l, auto& fp_re, auto& fp_im, auto& fm_re, auto& fm_im, auto&, auto&) {
          w.add_order(table, lane.position[l], k, fp_re, fp_im, fm_re, fm_im, sum[0][l], sum[1][l]);
        });
    exchange.sum_to_first(team, thread, sum);
    if (thread != 0) return;
    for (int l = 0; l < Lanes; ++l) {
      if (writer.row[l] != nullptr) store_sample(rec, lane, l, sum[0][l], sum[1][l], writer);
    }
  }

  // Lane l's sample (times M0, demodulated by the receiver phase) into its
  // slot, with its tangents in forward mode.
  KOKKOS_FORCEINLINE_FUNCTION void store_sample(const EventRecord& rec,
                                                const LaneTissue<Real, Lanes>& lane, int l,
                                                const Real& fp_re, const Real& fp_im,
                                                const SampleWriter& writer) const {
    Real s_re, s_im;
    demodulate(lane.m0[l], fp_re, fp_im, Real(rec.cos_phase), Real(rec.sin_phase), s_re, s_im);
    float* out = writer.row[l] + 2 * rec.output_index;
#if defined(__CUDA_ARCH__)
    // One 8-byte store (a sample's pair is 8-byte aligned: [voxel][sample][2]).
    *reinterpret_cast<float2*>(out) = make_float2(value_of(s_re), value_of(s_im));
#else
    out[0] = value_of(s_re);
    out[1] = value_of(s_im);
#endif
    if constexpr (tangent_count_v < Real >> 0) {
      for (int k = 0; k < tangent_count_v<Real>; ++k) {
        tangents(lane.voxel[l], k, rec.output_index, 0) = tangent_of(s_re, k);
        tangents(lane.voxel[l], k, rec.output_index, 1) = tangent_of(s_im, k);
      }
    }
  }
};

}  // namespace larmor::epg
