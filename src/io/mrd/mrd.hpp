// ISMRMRD / MRD input: the XML header's sequence parameters (to instantiate a
// builder), and measured acquisitions from an MRD HDF5 file (through Debian's
// libismrmrd) or an MRD v1 stream (a file or standard input), framed here by
// hand on top of libismrmrd's header struct. Every refusal is an MrdError that
// names the source and, for streams, the byte offset and message.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <istream>
#include <stdexcept>
#include <string>
#include <vector>

#include "sequence/description.hpp"

namespace larmor::io::mrd {

struct MrdError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The parts of an acquisition a fit uses; data is [channel][sample].
struct Acquisition {
  std::uint32_t scan_counter = 0;
  int samples = 0, channels = 0, trajectory_dimensions = 0;
  int center_sample = 0;
  float sample_time_us = 0.0f;
  std::uint16_t encode_step_1 = 0;  // the readout's line (written, not read)
  std::uint16_t encode_step_2 = 0;  // its partition (written, not read)
  // The readout's, the lines' and the partitions' directions (physical
  // frame, unit), and whether the samples run against the read direction
  // (an EPI's every other line); written, not read.
  std::array<float, 3> read_dir{1.0f, 0.0f, 0.0f};
  std::array<float, 3> phase_dir{0.0f, 1.0f, 0.0f};
  std::array<float, 3> slice_dir{0.0f, 0.0f, 1.0f};
  bool reversed = false;
  std::vector<float> trajectory;  // [sample][dimension]
  std::vector<std::complex<float>> data;
};

struct Measurement {
  std::string header_xml;
  std::vector<Acquisition> acquisitions;
  std::vector<std::string> texts;  // TEXT messages of a stream
  bool closed = false;             // a stream ended with CLOSE
};

// Message ids of the MRD v1 stream.
namespace message {
inline constexpr std::uint16_t config_file = 1, config_text = 2, header = 3, close = 4, text = 5,
                               acquisition = 1008, image = 1022, waveform = 1026;
}

// Reads header, config and text messages and acquisitions up to CLOSE (or
// the end of the input, which must then fall on a message boundary). Images
// and waveforms are refused by name; so are unknown ids, lengths past the
// input or beyond 1 GiB, and sizes that do not add up.
Measurement read_stream(std::istream& in, const std::string& name);
Measurement read_stream_file(const std::string& path);  // "-": standard input

// The XML header and every acquisition of an MRD (ISMRMRD) HDF5 file.
Measurement read_dataset(const std::string& path, const std::string& group = "dataset");

// sequenceParameters of the XML header, in SI units (the file's are ms).
struct SequenceParameters {
  std::vector<double> tr_s, te_s, ti_s, flip_deg, echo_spacing_s;
  std::string sequence_type;
};
SequenceParameters sequence_parameters(const std::string& xml, const std::string& source);

// A shipped builder instantiated from the header: mese (echo spacing or the
// TE list; one echo per TE value, else `echoes`), spgr (TR, TE, flip),
// mprage (TI, TR, TE, flip), bssfp (TR, flip, TE if given). A parameter the
// builder needs and the header lacks is refused by its XML element name.
sequence::Description instantiate_builder(const SequenceParameters& p, const std::string& builder,
                                          const std::string& source, int echoes_or_repetitions);

// A series of complex images (one per contrast or time point) stored under
// `variable` of an ISMRMRD HDF5 file, as one signal per voxel:
// signals[voxel][image][re, im] with voxels in x-fastest order of the first
// channel. Every image must have the first one's matrix size.
struct ImageSeries {
  int nx = 0, ny = 0, nz = 0, images = 0;
  std::vector<float> signals;
};
ImageSeries read_image_series(const std::string& path, const std::string& variable,
                              const std::string& group = "dataset");

// One signal per acquisition: its samples on `channel`, as [acquisition]
// [sample][re, im] floats; every acquisition must have the same sample count.
std::vector<float> acquisition_signals(const Measurement& m, int channel, int* samples);

// What a reconstruction needs to place raw data: the encoded matrix
// (readout samples, lines, partitions), the field of view (mm) and the
// trajectory's ISMRMRD name ("cartesian", "radial", "spiral", "other").
struct RawEncoding {
  int matrix[3] = {1, 1, 1};
  // The line and partition of k-space's centre; -1: the matrix's middle.
  int centre_line = -1, centre_partition = -1;
  double fov_mm[3] = {1.0, 1.0, 1.0};
  std::string trajectory = "cartesian";
  double field_t = 3.0;
  std::string system_vendor = "larmor (simulated)";
};
std::string raw_header_xml(const RawEncoding& encoding);

// Where the acquisitions' trajectories (three dimensions each, in cycles per
// voxel of edges `voxel_m`) are the lines of a Cartesian grid, turned or not:
// the readouts share one direction, the other coordinates are constant along
// each readout and lie on a rectangular lattice across it (whole multiples of
// one step along each lattice axis). Then numbers the lines from the grid's
// lowest (encode_step_1 along the lattice axis nearer to x, then y, then z;
// encode_step_2 along the other), sets each acquisition's read, phase and
// slice directions (physical, the lattice axes; the read direction's largest
// component positive, a line running against it `reversed`), the matrix's
// lines and partitions, the centre, the field of view in that order (the
// physical axes nearest each direction), the trajectory "cartesian", and
// returns true; otherwise changes nothing.
bool label_cartesian(std::vector<Acquisition>& acquisitions, RawEncoding& encoding,
                     const std::array<double, 3>& voxel_m = {1.0, 1.0, 1.0});

// Writes an ISMRMRD HDF5 file (group "dataset") holding the header and the
// acquisitions (one channel each), through "<path>.tmp-<pid>" renamed into
// place once complete; an interrupted write leaves nothing.
void write_raw_dataset(const std::string& path, const std::string& header_xml,
                       const std::vector<Acquisition>& acquisitions);

}  // namespace larmor::io::mrd
