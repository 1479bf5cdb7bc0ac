#include "sequence/step_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace larmor::sequence {

void StepTableWriter::push(int kind, double dt, const std::array<double, 6>& fields) {
  const auto single = [](double v) {
    const float f = float(v);
    if (!std::isfinite(f)) {
      throw std::range_error("a step's value (" + std::to_string(v) +
                             ") does not fit single precision");
    }
    return f;
  };
  table_.records.push_back(float(kind));
  table_.records.push_back(single(dt));
  for (double f : fields) table_.records.push_back(single(f));
}

void StepTableWriter::grow_span(const std::array<double, 3>& moment) {
  for (int a = 0; a < 3; ++a) {
    span_moment_[a] += moment[a];
    table_.largest_swing_per_m[a] =
        std::max(table_.largest_swing_per_m[a], std::fabs(span_moment_[a]));
  }
}

void StepTableWriter::free(double dt, const std::array<double, 3>& moment_per_m) {
  pending_dt_ += dt;
  table_.duration_s += dt;
  for (int a = 0; a < 3; ++a) pending_moment_[a] += moment_per_m[a];
  grow_span(moment_per_m);
}

void StepTableWriter::flush() {
  if (pending_dt_ <= 0.0) return;
  push(bloch::free_step, pending_dt_,
       {pending_moment_[0], pending_moment_[1], pending_moment_[2], 0.0, 0.0, 0.0});
  ++table_.free_steps;
  pending_dt_ = 0.0;
  pending_moment_ = {0.0, 0.0, 0.0};
}

void StepTableWriter::rf(double dt, double w1_re, double w1_im,
                         const std::array<double, 3>& gradient_hz_per_m, double offset_hz,
                         char use) {
  flush();
  table_.duration_s += dt;
  const std::size_t step = table_.steps();
  if (step == 0 || int(table_.records[(step - 1) * bloch::step_floats]) != bloch::rf_step) {
    table_.pulse_use.emplace_back(step, use);
  }
  push(bloch::rf_step, dt,
       {w1_re, w1_im, gradient_hz_per_m[0], gradient_hz_per_m[1], gradient_hz_per_m[2], offset_hz});
  ++table_.rf_steps;
  grow_span({gradient_hz_per_m[0] * dt, gradient_hz_per_m[1] * dt, gradient_hz_per_m[2] * dt});
}

void StepTableWriter::sample(double demod_re, double demod_im, double time_s, int block, int index,
                             bool adc_centre) {
  flush();
  const std::size_t slot = table_.samples();
  if (std::int64_t(slot) >= bloch::max_sample_slots) {
    throw std::invalid_argument(
        "more than 2^24 samples: the isochromat engine numbers them in float");
  }
  push(bloch::sample_step, 0.0, {demod_re, demod_im, double(slot), 0.0, 0.0, 0.0});
  table_.sample_time_s.push_back(time_s);
  table_.sample_block.push_back(block);
  table_.sample_index.push_back(index);
  table_.sample_is_adc_centre.push_back(adc_centre ? 1 : 0);
}

void StepTableWriter::end_span(double now_s) {
  if (in_span_) {
    ++table_.spans;
    const double length = now_s - span_start_s_;
    bool moves = false;
    for (int a = 0; a < 3; ++a) {
      table_.largest_span_moment_per_m[a] =
          std::max(table_.largest_span_moment_per_m[a], std::fabs(span_moment_[a]));
      moves = moves || span_moment_[a] != 0.0;
    }
    if (moves && length > 0.0 &&
        (table_.shortest_span_s == 0.0 || length < table_.shortest_span_s)) {
      table_.shortest_span_s = length;
    }
  }
  in_span_ = true;
  span_start_s_ = now_s;
  span_moment_ = {0.0, 0.0, 0.0};
}

namespace {

// Along each axis the moment since the last pulse's centre, its largest size
// in the span, and the span's samples with their moments.
struct RewoundSpans {
  StepTable& table;
  std::array<double, 3> moment{0.0, 0.0, 0.0}, largest{0.0, 0.0, 0.0};
  std::vector<std::pair<std::size_t, std::array<double, 3>>> samples;
  bool after_pulse = false;

  void add(const std::array<double, 3>& m) {
    for (int a = 0; a < 3; ++a) {
      moment[a] += m[a];
      largest[a] = std::max(largest[a], std::fabs(moment[a]));
    }
  }
  // A pulse's centre or the end: the span's moment is `moment`.
  void close() {
    for (const auto& [step, at] : samples) {
      float* r = &table.records[step * bloch::step_floats];
      for (int a = 0; a < 3; ++a) {
        // Rewound: back to zero but for the float rounding of the moments.
        const bool rewound =
            after_pulse && largest[a] > 0.0 && std::fabs(moment[a]) <= 1e-4 * largest[a];
        r[bloch::step_field::rewound + a] = rewound ? float(at[a]) : 0.0f;
      }
    }
    samples.clear();
    moment = {0.0, 0.0, 0.0};
    largest = {0.0, 0.0, 0.0};
  }
};

}  // namespace

namespace {

// Walks the table in time order: each free interval's moment and each RF
// cell's gradient moment to `add` (1/m), the cell at a pulse's middle split
// there; `sample(step, record)` at each sample; `centre(first_step, flip)` at
// each pulse's middle (a pulse: a run of RF cells; flip: the cells' nominal
// |w1| dt summed, rad).
template <class Add, class Sample, class Centre>
void walk_moments(const StepTable& table, Add&& add, Sample&& sample, Centre&& centre) {
  namespace f = bloch::step_field;
  const std::size_t steps = table.steps();
  const auto record = [&](std::size_t i) { return &table.records[i * bloch::step_floats]; };
  const auto gradient_moment = [](const float* cell, double t) {
    return std::array<double, 3>{cell[f::gradient] * t, cell[f::gradient + 1] * t,
                                 cell[f::gradient + 2] * t};
  };
  for (std::size_t i = 0; i < steps;) {
    const float* r = record(i);
    const int kind = int(r[f::kind]);
    if (kind == bloch::free_step) {
      add(std::array<double, 3>{r[f::moment], r[f::moment + 1], r[f::moment + 2]});
    } else if (kind == bloch::sample_step) {
      sample(i, r);
    } else {
      std::size_t end = i;
      double length = 0.0, flip = 0.0;
      while (end < steps && int(record(end)[f::kind]) == bloch::rf_step) {
        const float* cell = record(end);
        length += cell[f::dt];
        flip += std::hypot(double(cell[f::w1_re]), double(cell[f::w1_im])) * cell[f::dt];
        ++end;
      }
      const double half = 0.5 * length;
      double elapsed = 0.0;
      bool centred = false;
      for (std::size_t c = i; c < end; ++c) {
        const float* cell = record(c);
        const double dt = cell[f::dt];
        if (!centred && elapsed + dt >= half) {
          const double before = std::clamp(half - elapsed, 0.0, dt);
          add(gradient_moment(cell, before));
          centre(i, flip);
          centred = true;
          add(gradient_moment(cell, dt - before));
        } else {
          add(gradient_moment(cell, dt));
        }
        elapsed += dt;
      }
      i = end;
      continue;
    }
    ++i;
  }
}

}  // namespace

void mark_rewound_encodes(StepTable& table) {
  RewoundSpans spans{table};
  walk_moments(
      table, [&](const std::array<double, 3>& m) { spans.add(m); },
      [&](std::size_t step, const float*) { spans.samples.emplace_back(step, spans.moment); },
      [&](std::size_t, double) {
        spans.close();
        spans.after_pulse = true;
      });
  spans.close();
}

void keep_encodes(StepTable& table) {
  for (std::size_t i = 0; i < table.steps(); ++i) {
    float* r = &table.records[i * bloch::step_floats];
    if (int(r[bloch::step_field::kind]) != bloch::sample_step) continue;
    for (int a = 0; a < 3; ++a) r[bloch::step_field::rewound + a] = 0.0f;
  }
}

std::vector<std::array<double, 3>> sample_kspace_per_m(const StepTable& table) {
  std::vector<std::array<double, 3>> out(table.samples(), {0.0, 0.0, 0.0});
  std::array<double, 3> k{0.0, 0.0, 0.0};
  walk_moments(
      table,
      [&](const std::array<double, 3>& m) {
        for (std::size_t a = 0; a < 3; ++a) k[a] += m[a];
      },
      [&](std::size_t, const float* r) {
        const auto slot = std::size_t(r[bloch::step_field::slot]);
        if (slot < out.size()) out[slot] = k;
      },
      [&](std::size_t first_step, double flip) {
        const auto given = std::lower_bound(
            table.pulse_use.begin(), table.pulse_use.end(), first_step,
            [](const std::pair<std::size_t, char>& p, std::size_t step) { return p.first < step; });
        char use =
            given != table.pulse_use.end() && given->first == first_step ? given->second : 'u';
        if (use == 'u') use = flip > refocusing_flip_rad ? 'r' : 'e';
        for (double& v : k) {
          if (use == 'e') v = 0.0;
          if (use == 'r') v = -v;
        }
      });
  return out;
}

}  // namespace larmor::sequence
