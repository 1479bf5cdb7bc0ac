// Pulseq event, shape and extension sections. Column layouts depend on the
// version (docs: shared/reference/pulseq-mrd.md); units become SI here.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "io/pulseq/pulseq_detail.hpp"

namespace larmor::io::pulseq {

std::vector<double> decompress_shape(const std::vector<double>& compressed, int max_samples) {
  std::vector<double> derivative;
  const std::size_t limit = max_samples < 0 ? 0 : static_cast<std::size_t>(max_samples);
  auto too_many = [&] {
    return std::invalid_argument("decodes to more than " + std::to_string(max_samples) +
                                 " samples");
  };
  std::size_t i = 0;
  while (i < compressed.size()) {
    const double value = compressed[i];
    if (i + 1 < compressed.size() && compressed[i + 1] == value) {
      // Two equal values open a run; the next value counts the extra repeats.
      if (i + 2 >= compressed.size()) throw std::invalid_argument("run without a repeat count");
      const double count = compressed[i + 2];
      if (!(count >= 0) || std::floor(count) != count) {
        throw std::invalid_argument("bad repeat count " + std::to_string(count));
      }
      // Compare before adding so a huge count cannot allocate.
      if (count + 2 > static_cast<double>(limit - derivative.size())) throw too_many();
      derivative.insert(derivative.end(), static_cast<std::size_t>(count) + 2, value);
      i += 3;
    } else {
      if (derivative.size() >= limit) throw too_many();
      derivative.push_back(value);
      i += 1;
    }
  }
  double sum = 0.0;
  for (double& sample : derivative) sample = (sum += sample);
  return derivative;
}

namespace detail {
namespace {

constexpr double kMicro = 1e-6;
constexpr double kNano = 1e-9;
// Bounds memory on corrupt input; real shapes are far shorter.
constexpr int kMaxShapeSamples = 1 << 26;

template <class T>
void insert_unique(const Context& ctx, const Row& row, const std::string& section,
                   std::map<int, T>& table, const T& value) {
  if (!table.emplace(value.id, value).second) {
    ctx.fail(row.line, section, "duplicate id " + std::to_string(value.id));
  }
}

void check_shape(const Context& ctx, const Row& row, const std::string& section,
                 const PulseqFile& file, int shape_id, const char* role) {
  if (shape_id != 0 && file.shapes.count(shape_id) == 0) {
    ctx.fail(
        row.line, section,
        std::string(role) + " shape " + std::to_string(shape_id) + " is not defined in [SHAPES]");
  }
}

}  // namespace

void parse_rf(const Context& ctx, const Section& section, PulseqFile& file) {
  const std::string& name = section.name;
  const Version& version = file.version;
  for (const Row& row : section.rows) {
    const std::size_t n = row.tokens.size();
    RfEvent rf;
    rf.id = ctx.integer(row, 0, name);
    rf.amplitude_hz = ctx.number(row, 1, name);
    rf.mag_shape = ctx.integer(row, 2, name);
    rf.phase_shape = ctx.integer(row, 3, name);
    // Remaining columns: (time) (center) delay (freq_ppm phase_ppm) freq phase (use).
    std::size_t next = 4;
    if (!version.at_least(1, 4)) {
      if (n != 7 && n != 6) ctx.wrong_columns(row, name, "7 (or 6 without delay)");
    } else if (version.minor == 4 || n == 8) {  // 1.5.0 files exist with 1.4 RF rows
      if (n != 8) {
        ctx.wrong_columns(row, name, version.minor == 4 ? "8" : "12 (or 8 in the 1.4 layout)");
      }
      rf.time_shape = ctx.integer(row, next++, name);
    } else {
      if (n != 12) ctx.wrong_columns(row, name, "12 (or 8 in the 1.4 layout)");
      rf.time_shape = ctx.integer(row, next++, name);
      rf.center_s = ctx.number(row, next++, name) * kMicro;
    }
    if (n != 6) rf.delay_s = ctx.number(row, next++, name) * kMicro;  // JEMRIS omits it
    if (n == 12) {
      rf.freq_ppm = ctx.number(row, next++, name);
      rf.phase_ppm = ctx.number(row, next++, name);
    }
    rf.freq_hz = ctx.number(row, next++, name);
    rf.phase_rad = ctx.number(row, next++, name);
    if (n == 12) {
      const std::string& use = row.tokens[next];
      if (use.size() != 1 || std::string("erispou").find(use[0]) == std::string::npos) {
        ctx.fail(row.line, name, "RF use must be one of e r i s p o u, found '" + use + "'");
      }
      rf.use = use[0];
    }
    check_shape(ctx, row, name, file, rf.mag_shape, "magnitude");
    check_shape(ctx, row, name, file, rf.phase_shape, "phase");
    check_shape(ctx, row, name, file, rf.time_shape, "time");
    insert_unique(ctx, row, name, file.rf, rf);
  }
}

void parse_gradients(const Context& ctx, const Section& section, PulseqFile& file) {
  const std::string& name = section.name;
  const Version& version = file.version;
  for (const Row& row : section.rows) {
    const std::size_t n = row.tokens.size();
    GradientEvent gradient;
    gradient.id = ctx.integer(row, 0, name);
    gradient.amplitude_hz_per_m = ctx.number(row, 1, name);
    std::size_t next = 2;
    bool has_delay = true;
    if (!version.at_least(1, 4)) {
      if (n != 4 && n != 3) ctx.wrong_columns(row, name, "4 (or 3 without delay)");
      gradient.shape = ctx.integer(row, next++, name);
      has_delay = n == 4;
    } else if (version.minor == 4 || n == 5) {
      if (n != 5) ctx.wrong_columns(row, name, version.minor == 4 ? "5" : "7");
      gradient.shape = ctx.integer(row, next++, name);
      gradient.time_shape = ctx.integer(row, next++, name);
    } else {
      if (n != 7 && n != 6) ctx.wrong_columns(row, name, "7 (or 6 without delay)");
      gradient.first = ctx.number(row, next++, name);
      gradient.last = ctx.number(row, next++, name);
      gradient.shape = ctx.integer(row, next++, name);
      gradient.time_shape = ctx.integer(row, next++, name);
      has_delay = n == 7;
    }
    if (has_delay) gradient.delay_s = ctx.number(row, next, name) * kMicro;
    if (gradient.shape == 0) ctx.fail(row.line, name, "arbitrary gradient without a shape");
    check_shape(ctx, row, name, file, gradient.shape, "gradient");
    check_shape(ctx, row, name, file, gradient.time_shape, "time");
    insert_unique(ctx, row, name, file.gradients, gradient);
  }
}

void parse_traps(const Context& ctx, const Section& section, PulseqFile& file) {
  const std::string& name = section.name;
  for (const Row& row : section.rows) {
    const std::size_t n = row.tokens.size();
    if (n != 6 && n != 5) ctx.wrong_columns(row, name, "6 (or 5 without delay)");
    TrapEvent trap;
    trap.id = ctx.integer(row, 0, name);
    trap.amplitude_hz_per_m = ctx.number(row, 1, name);
    trap.rise_s = ctx.number(row, 2, name) * kMicro;
    trap.flat_s = ctx.number(row, 3, name) * kMicro;
    trap.fall_s = ctx.number(row, 4, name) * kMicro;
    if (n == 6) trap.delay_s = ctx.number(row, 5, name) * kMicro;
    // Trapezoids and arbitrary gradients share one id space.
    if (file.gradients.count(trap.id) != 0) {
      ctx.fail(row.line, name,
               "duplicate id " + std::to_string(trap.id) + " (also in [GRADIENTS])");
    }
    insert_unique(ctx, row, name, file.traps, trap);
  }
}

void parse_adc(const Context& ctx, const Section& section, PulseqFile& file) {
  const std::string& name = section.name;
  const bool v15 = file.version.at_least(1, 5);
  for (const Row& row : section.rows) {
    const std::size_t n = row.tokens.size();
    if (v15 ? (n != 9 && n != 6) : (n != 6 && n != 5)) {
      ctx.wrong_columns(row, name, v15 ? "9 (or 6 in the 1.4 layout)" : "6 (or 5 without delay)");
    }
    AdcEvent adc;
    adc.id = ctx.integer(row, 0, name);
    adc.samples = ctx.integer(row, 1, name);
    if (adc.samples <= 0) ctx.fail(row.line, name, "ADC needs at least one sample");
    adc.dwell_s = ctx.number(row, 2, name) * kNano;
    std::size_t next = 3;
    if (n != 5) adc.delay_s = ctx.number(row, next++, name) * kMicro;
    if (n == 9) {
      adc.freq_ppm = ctx.number(row, next++, name);
      adc.phase_ppm = ctx.number(row, next++, name);
    }
    adc.freq_hz = ctx.number(row, next++, name);
    adc.phase_rad = ctx.number(row, next++, name);
    if (n == 9) adc.phase_shape = ctx.integer(row, next, name);
    check_shape(ctx, row, name, file, adc.phase_shape, "phase");
    insert_unique(ctx, row, name, file.adc, adc);
  }
}

void parse_delays(const Context& ctx, const Section& section, PulseqFile& file) {
  for (const Row& row : section.rows) {
    if (row.tokens.size() != 2) ctx.wrong_columns(row, section.name, "2");
    DelayEvent delay;
    delay.id = ctx.integer(row, 0, section.name);
    delay.delay_s = ctx.number(row, 1, section.name) * kMicro;
    insert_unique(ctx, row, section.name, file.delays, delay);
  }
}

void parse_shapes(const Context& ctx, const Section& section, PulseqFile& file) {
  const std::string& name = section.name;
  const bool raw_allowed = file.version.at_least(1, 4);
  const Row* shape_row = nullptr;  // the `shape_id` row of the shape being read
  Shape shape;
  std::vector<double> stored;
  auto finish = [&] {
    if (shape_row == nullptr) return;
    const std::string label = "shape " + std::to_string(shape.id);
    if (shape.samples <= 0) ctx.fail(shape_row->line, name, label + " has no num_samples");
    if (stored.empty()) ctx.fail(shape_row->line, name, label + " has no values (truncated?)");
    // 1.4+ writers store a shape raw exactly when that is no longer than compressed.
    if (raw_allowed && stored.size() == static_cast<std::size_t>(shape.samples)) {
      shape.values = stored;
    } else {
      try {
        shape.values = decompress_shape(stored, shape.samples);
      } catch (const std::invalid_argument& e) {
        ctx.fail(shape_row->line, name, label + ": " + e.what());
      }
    }
    if (shape.values.size() != static_cast<std::size_t>(shape.samples)) {
      ctx.fail(shape_row->line, name,
               label + " cut short: " + std::to_string(shape.values.size()) + " of " +
                   std::to_string(shape.samples) + " samples");
    }
    insert_unique(ctx, *shape_row, name, file.shapes, shape);
  };
  for (const Row& row : section.rows) {
    const std::string& key = row.tokens[0];
    if (key == "shape_id") {
      finish();
      if (row.tokens.size() != 2) ctx.wrong_columns(row, name, "2");
      shape = Shape{};
      stored.clear();
      shape.id = ctx.integer(row, 1, name);
      shape_row = &row;
    } else if (key == "num_samples") {
      if (shape_row == nullptr) ctx.fail(row.line, name, "num_samples before shape_id");
      if (row.tokens.size() != 2) ctx.wrong_columns(row, name, "2");
      if (!stored.empty() || shape.samples != 0) {
        ctx.fail(row.line, name, "num_samples must come once, before the values");
      }
      shape.samples = ctx.integer(row, 1, name);
      if (shape.samples <= 0 || shape.samples > kMaxShapeSamples) {
        ctx.fail(row.line, name, "num_samples out of range");
      }
    } else {
      if (shape_row == nullptr) ctx.fail(row.line, name, "shape values before shape_id");
      if (shape.samples == 0) ctx.fail(row.line, name, "shape values before num_samples");
      // Compressed data never exceeds the sample count by more than a run's count column.
      if (stored.size() + row.tokens.size() > 2 * static_cast<std::size_t>(shape.samples) + 2) {
        ctx.fail(row.line, name,
                 "more values than shape " + std::to_string(shape.id) + " can hold");
      }
      for (std::size_t column = 0; column < row.tokens.size(); ++column) {
        stored.push_back(ctx.number(row, column, name));
      }
    }
  }
  finish();
}

void parse_extensions(const Context& ctx, const Section& section, PulseqFile& file) {
  const std::string& name = section.name;
  std::map<int, int> row_lines;          // linked-list row id -> line, for later errors
  ExtensionSpec* current = nullptr;      // the table being read after `extension NAME id`
  std::map<int, int> declaration_lines;  // declared id -> line
  for (const Row& row : section.rows) {
    if (row.tokens[0] == "extension") {
      if (row.tokens.size() != 3) ctx.wrong_columns(row, name, "3 (extension NAME id)");
      ExtensionSpec spec;
      spec.name = row.tokens[1];
      spec.id = ctx.integer(row, 2, name);
      spec.known = is_known_extension(spec.name);
      if (!spec.known) {
        const auto& required = file.definitions.required_extensions;
        if (std::find(required.begin(), required.end(), spec.name) != required.end()) {
          ctx.fail(row.line, name, "required extension " + spec.name + " is not supported");
        }
        ctx.warn(row.line, name, "unknown extension " + spec.name + " skipped");
      }
      insert_unique(ctx, row, name, file.extension_specs, spec);
      declaration_lines[spec.id] = row.line;
      current = &file.extension_specs[spec.id];
    } else if (current == nullptr) {
      if (row.tokens.size() != 4) ctx.wrong_columns(row, name, "4 (id type ref next)");
      ExtensionRow ext{ctx.integer(row, 0, name), ctx.integer(row, 1, name),
                       ctx.integer(row, 2, name), ctx.integer(row, 3, name)};
      insert_unique(ctx, row, name, file.extensions, ext);
      row_lines[ext.id] = row.line;
    } else if (current->known) {
      ExtensionSpecRow spec_row;
      spec_row.id = ctx.integer(row, 0, name);
      for (std::size_t column = 1; column < row.tokens.size(); ++column) {
        double value = 0.0;
        if (parse_number(row.tokens[column], value)) {
          spec_row.values.push_back(value);
        } else if (column + 1 == row.tokens.size()) {
          spec_row.word = row.tokens[column];  // a label name or a soft-delay hint
        } else {
          ctx.fail(row.line, name,
                   "non-numeric field '" + row.tokens[column] + "' in column " +
                       std::to_string(column + 1));
        }
      }
      if (!current->rows.emplace(spec_row.id, spec_row).second) {
        ctx.fail(row.line, name,
                 "duplicate id " + std::to_string(spec_row.id) + " in extension " + current->name);
      }
    }
  }
  // The linked list must point at declared extensions and existing rows.
  for (const auto& [id, ext] : file.extensions) {
    const int line = row_lines[id];
    const auto spec = file.extension_specs.find(ext.type);
    if (spec == file.extension_specs.end()) {
      ctx.fail(line, name, "extension type " + std::to_string(ext.type) + " is not declared");
    }
    if (spec->second.known && spec->second.rows.count(ext.ref) == 0) {
      ctx.fail(line, name, spec->second.name + " has no row " + std::to_string(ext.ref));
    }
    if (ext.next != 0 && file.extensions.count(ext.next) == 0) {
      ctx.fail(line, name, "next extension " + std::to_string(ext.next) + " does not exist");
    }
  }
}

}  // namespace detail
}  // namespace larmor::io::pulseq
