// Pulseq (.seq) files, versions 1.2 to 1.5, read into a plain data model: the
// rows of each section with units converted to SI and shapes decompressed. No
// translation to simulation events happens here. Every error names the file,
// the line and the section; the reader never trusts its input.
#pragma once

#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace larmor::io::pulseq {

struct PulseqError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline constexpr double kNotGiven = std::numeric_limits<double>::quiet_NaN();

struct Version {
  int major = 0;
  int minor = 0;
  std::string revision;  // may be non-numeric, e.g. "1post1"
  bool at_least(int wanted_major, int wanted_minor) const {
    return major > wanted_major || (major == wanted_major && minor >= wanted_minor);
  }
};

struct Definitions {
  std::map<std::string, std::string> values;  // name -> the rest of its line, as written
  // Pre-1.4 files imply these rasters; 1.4+ files state them.
  double gradient_raster_s = 10e-6;
  double rf_raster_s = 1e-6;
  double adc_raster_s = 0.1e-6;
  double block_duration_raster_s = 10e-6;
  std::vector<std::string> required_extensions;
  std::string name;  // the `Name` definition, decoded if written as ASCII codes
};

struct Block {
  int id = 0;
  double duration_s = 0.0;  // 1.4+: dur x BlockDurationRaster; pre-1.4: 0 (derived later)
  int delay_id = 0;         // pre-1.4 only
  int rf = 0, gx = 0, gy = 0, gz = 0, adc = 0, ext = 0;  // 0: none
};

struct RfEvent {
  int id = 0;
  double amplitude_hz = 0.0;
  int mag_shape = 0, phase_shape = 0, time_shape = 0;  // time_shape 0: default raster
  double center_s = kNotGiven;                         // 1.5 only
  double delay_s = 0.0, freq_hz = 0.0, phase_rad = 0.0;
  double freq_ppm = 0.0, phase_ppm = 0.0;  // 1.5 only
  char use = 'u';                          // 1.5: e r i s p o u
};

// An arbitrary (shaped) gradient; gradient ids are shared with TrapEvent.
struct GradientEvent {
  int id = 0;
  double amplitude_hz_per_m = 0.0;
  double first = kNotGiven, last = kNotGiven;  // Hz/m, 1.5 only
  int shape = 0, time_shape = 0;
  double delay_s = 0.0;
};

struct TrapEvent {
  int id = 0;
  double amplitude_hz_per_m = 0.0;
  double rise_s = 0.0, flat_s = 0.0, fall_s = 0.0, delay_s = 0.0;
};

struct AdcEvent {
  int id = 0;
  int samples = 0;
  double dwell_s = 0.0, delay_s = 0.0, freq_hz = 0.0, phase_rad = 0.0;
  double freq_ppm = 0.0, phase_ppm = 0.0;  // 1.5 only
  int phase_shape = 0;                     // 1.5 only
};

struct DelayEvent {  // pre-1.4 [DELAYS]
  int id = 0;
  double delay_s = 0.0;
};

struct Shape {
  int id = 0;
  int samples = 0;
  std::vector<double> values;  // decompressed, `samples` long
};

// [EXTENSIONS] linked-list row: `type` is a declared extension id, `next` 0 ends.
struct ExtensionRow {
  int id = 0, type = 0, ref = 0, next = 0;
};

// A row of a known extension's table: its numbers and, for extensions such as
// LABELSET/LABELINC or soft DELAYS, a trailing word (the label or hint).
struct ExtensionSpecRow {
  int id = 0;
  std::vector<double> values;  // the columns after the id
  std::string word;            // empty when the row has none
};

struct ExtensionSpec {
  std::string name;  // TRIGGERS, LABELSET, LABELINC, DELAYS, ROTATIONS, RF_SHIMS, ...
  int id = 0;
  bool known = false;                    // unknown ones keep no rows
  std::map<int, ExtensionSpecRow> rows;  // by row id
};

struct Signature {
  bool present = false;
  std::string type, hash;
  bool matches = false;
};

struct PulseqFile {
  std::string path;
  Version version;
  Definitions definitions;
  std::vector<Block> blocks;  // in file order
  std::map<int, RfEvent> rf;
  std::map<int, GradientEvent> gradients;
  std::map<int, TrapEvent> traps;
  std::map<int, AdcEvent> adc;
  std::map<int, DelayEvent> delays;
  std::map<int, Shape> shapes;
  std::map<int, ExtensionRow> extensions;
  std::map<int, ExtensionSpec> extension_specs;  // by declared extension id
  Signature signature;

  // Parses `path`; throws PulseqError. Recoverable oddities (unknown
  // extensions, signature mismatch, missing 1.4 rasters) go to `warnings`.
  static PulseqFile read(const std::string& path, std::vector<std::string>* warnings = nullptr);
  // The same from the file's bytes; `path` names it in messages (the fuzz
  // target and in-memory sources use this).
  static PulseqFile parse(const std::string& content, const std::string& path,
                          std::vector<std::string>* warnings = nullptr);

  // Lookups by id; nullptr when absent.
  const RfEvent* find_rf(int id) const { return find(rf, id); }
  const GradientEvent* find_gradient(int id) const { return find(gradients, id); }
  const TrapEvent* find_trap(int id) const { return find(traps, id); }
  const AdcEvent* find_adc(int id) const { return find(adc, id); }
  const Shape* find_shape(int id) const { return find(shapes, id); }
  // The declared extension with this NAME; nullptr when not declared.
  const ExtensionSpec* find_extension(const std::string& name) const;

 private:
  template <class T>
  static const T* find(const std::map<int, T>& table, int id) {
    const auto it = table.find(id);
    return it == table.end() ? nullptr : &it->second;
  }
};

// Decodes a compressed shape (run-length-encoded derivative, then cumulative
// sum). Throws std::invalid_argument for a bad count or more than `max_samples`
// values; exposed for tests.
std::vector<double> decompress_shape(const std::vector<double>& compressed, int max_samples);

// Lower-case hex MD5 of `bytes` (RFC 1321).
std::string md5_hex(const std::string& bytes);

}  // namespace larmor::io::pulseq
