// Internals shared by the Pulseq reader's source files: the tokenised rows of
// a section and the error/number helpers that know the file, line and section.
#pragma once

#include <array>
#include <complex>
#include <string>
#include <vector>

#include "io/pulseq/pulseq_events.hpp"
#include "io/pulseq/pulseq_file.hpp"

namespace larmor::io::pulseq::detail {

struct Row {
  int line = 0;
  std::vector<std::string> tokens;
};

struct Section {
  std::string name;  // without brackets, e.g. "RF"
  int header_line = 0;
  std::vector<Row> rows;
};

class Context {
 public:
  Context(std::string path, std::vector<std::string>* warnings)
      : path_(std::move(path)), warnings_(warnings) {}

  [[noreturn]] void fail(int line, const std::string& section, const std::string& what) const;
  void warn(int line, const std::string& section, const std::string& what) const;

  // Whole-token numbers; anything else (including nan/inf) is an error.
  double number(const Row& row, std::size_t column, const std::string& section) const;
  int integer(const Row& row, std::size_t column, const std::string& section) const;
  [[noreturn]] void wrong_columns(const Row& row, const std::string& section,
                                  const std::string& expected) const;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<std::string>* warnings_;
};

bool parse_number(const std::string& token, double& value);
bool is_known_extension(const std::string& name);

// Section parsers (pulseq_sections.cpp). They fill `file` and check ids.
void parse_rf(const Context& ctx, const Section& section, PulseqFile& file);
void parse_gradients(const Context& ctx, const Section& section, PulseqFile& file);
void parse_traps(const Context& ctx, const Section& section, PulseqFile& file);
void parse_adc(const Context& ctx, const Section& section, PulseqFile& file);
void parse_delays(const Context& ctx, const Section& section, PulseqFile& file);
void parse_shapes(const Context& ctx, const Section& section, PulseqFile& file);
void parse_extensions(const Context& ctx, const Section& section, PulseqFile& file);

// ---- Translation -------------------------------------------------------

using Vec3 = std::array<double, 3>;
using Mat3 = std::array<Vec3, 3>;

inline double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
inline Vec3 add(const Vec3& a, const Vec3& b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2]}; }
inline Vec3 minus(const Vec3& a, const Vec3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
inline Vec3 scaled(double s, const Vec3& a) { return {s * a[0], s * a[1], s * a[2]}; }
// Turns a moment [1/m] winds across a box voxel with edges `voxel` [m].
inline double turns_across(const Vec3& moment, const Vec3& voxel) {
  double turns = 0.0;
  for (int i = 0; i < 3; ++i) turns += (moment[i] < 0 ? -moment[i] : moment[i]) * voxel[i];
  return turns;
}

// Refusals that name the file and the blocks.
struct Failure {
  const PulseqFile& file;
  [[noreturn]] void operator()(int first_block, int last_block, const std::string& why) const;
};

// One gradient axis of a block: pieces linear in block-local time, sorted and
// not overlapping, with the moment accumulated at the end of each.
struct AxisWaveform {
  struct Segment {
    double t0, t1, g0, g1;  // s, Hz/m
  };
  std::vector<Segment> segments;
  std::vector<double> cumulative;  // moment [1/m] at the end of each segment
  void add(double t0, double t1, double g0, double g1);
  double moment_until(double t) const;
  double value_at(double t) const;
};

struct BlockGradients {
  std::array<AxisWaveform, 3> axes;
  Mat3 rotation{{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};  // ROTATIONS extension
  double end = 0.0;                                  // latest gradient end in the block
  Vec3 moment(double t_local) const;                 // physical, since the block's start
  Vec3 gradient(double t_local) const;               // physical [Hz/m]
  bool on_during(double t0, double t1) const;
};

BlockGradients gradients_of(const PulseqFile& file, const Block& b, const Failure& fail);

// A block's duration given when its events end: stated (1.4+; lengthened by
// less than one raster cell to hold events that overrun it, *overran set),
// else the longest of its delay and events on the block raster.
double block_duration(const PulseqFile& file, const Block& b, double events_end,
                      const Failure& fail, bool* overran);

// Sample times (block-local, from the event's start) and quadrature weights of
// a shape on the default raster (cell centres) or on a time shape.
struct Sampling {
  std::vector<double> t, w;
  double duration = 0.0;
};
Sampling sampling_of(const PulseqFile& file, int samples, int time_shape, double raster, int block,
                     const Failure& fail, const char* what);
const Shape& shape_of(const PulseqFile& file, int id, int block, const Failure& fail,
                      const char* what);

// The voxel's edges [m] from [DEFINITIONS] (FOV / matrix, SliceThickness),
// else 1 mm each; `source` says which, `slice_given` whether the third edge
// came from the file.
Vec3 voxel_from_definitions(const PulseqFile& file, std::string& source, bool& slice_given,
                            std::vector<std::string>& warnings);

// Frequencies in ppm need the main field: the option, else [DEFINITIONS] B0.
double larmor_frequency_mhz(const PulseqFile& file, const TranslateOptions& options, int block,
                            const Failure& fail);

// One RF event as the translation sees it (pulseq_pulses.cpp): its samples,
// centre, frequency, the complex area of its envelope and its power.
struct PulseAnalysis {
  const RfEvent* rf = nullptr;
  const Shape* mag = nullptr;
  const Shape* phase = nullptr;  // null: none
  Sampling sampling;
  double centre = 0.0;                             // from the pulse's start (its delay excluded)
  double freq = 0.0;                               // Hz, ppm included
  double event_phase = 0.0;                        // rad, ppm included
  double ramp_origin = 0.0;                        // where the frequency ramp's phase is zero
  bool selective = false;                          // a gradient is on during it
  Vec3 gradient{0, 0, 0};                          // physical, at its centre [Hz/m]
  std::complex<double> area = 0.0;                 // rad
  double power = 0.0;                              // rad^2/s
  std::complex<double> sample_value(int n) const;  // rad/s
  // The small-tip profile at `offset` Hz from its own frequency, over its area.
  double profile_at(double offset) const;
  // Its profile's full width at half maximum [Hz]; 0 where none is found.
  double half_maximum_width() const;
};

PulseAnalysis analyse_pulse(const PulseqFile& file, const Block& b, const BlockGradients& g,
                            const TranslateOptions& options, const Failure& fail);

// The instants (pulses and kept samples) in time order, as the gap
// quantisation (pulseq_moments.cpp) sees them.
struct InstantTrack {
  std::vector<double> times;
  std::vector<double> lengths;  // how long each instant lasts (a waveform pulse's length)
  std::vector<int> block_ids;
  std::vector<sequence::Event> events;
  std::vector<Vec3> moments;       // moment vector since t = 0 at each [1/m]
  std::vector<Vec3> readout_axes;  // a sample: 1 on the axes its readout sweeps
  std::vector<char> excites;       // a pulse that does not refocus (starts a train)
  double end_time = 0.0;
  Vec3 end_moment{0, 0, 0};
  bool slice_profiles = false;  // pulses played across slice positions
};

// Chooses the moment of one order, quantises every gap and assembles the
// canonical description, its samples weighted over the voxel where they need
// it (sequence::VoxelIntegral).
sequence::Description quantise_gaps(const PulseqFile& file, const InstantTrack& instants,
                                    const TranslateOptions& options, TranslationReport& report);

}  // namespace larmor::io::pulseq::detail
