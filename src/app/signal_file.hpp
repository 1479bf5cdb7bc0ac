// The simulation result file (docs/output-format.md). Written collectively by
// every rank, atomically (temporary file, then rename).
//
//   /signals                  float32 [voxels][samples][2]  (re, im), M0 units
//   /mz                       float32 [voxels][samples]  mean longitudinal magnetisation,
//                             M0 units ([output] longitudinal)
//   /voxel_index              int64   [voxels]  volume index (maps) or grid position
//   /tissue/<property>        float32 [voxels]  in deck units (t1_ms, t2_ms, ...)
//   /sequence/sample_times_s  float64 [samples] time of each sample from the start
//   /sequence/echo_centre     uint8   [samples]
//   /volume_shape             int64   [ndims]   the volume (maps) or grid counts
//   attributes on /: larmor_version, builder, deck, orders, events, samples,
//   backend, and every sequence parameter (with a <name>_units string)
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "app/tissue_source.hpp"
#include "parallel/communicator.hpp"
#include "simulate/simulator.hpp"

namespace larmor::app {

struct RunInfo {
  std::string builder;
  std::string deck_path;
  std::string backend;
  // A steady-state run: each local voxel's settling count
  // (/steady_state/repetitions, -1: not settled) and the tolerance.
  const std::vector<std::int64_t>* steady_repetitions = nullptr;
  double steady_tolerance = 0.0;
  // Longitudinal samples (sequence/longitudinal_samples.hpp): which of the
  // simulator's samples the file's samples are (local_signals holds those
  // alone), and each voxel's mean Mz at them, [voxels][samples], for /mz.
  const std::vector<int>* samples = nullptr;
  const std::vector<float>* local_mz = nullptr;
};

// What the file says of its samples and its run besides the signals: each
// sample's time and echo-centre flag, attributes on / and the sequence's
// parameters (on /sequence, with their units).
struct SignalLayout {
  std::vector<double> sample_times_s;
  std::vector<std::uint8_t> echo_centre;
  std::map<std::string, std::int64_t> counts;
  std::map<std::string, std::string> texts;
  std::map<std::string, double> parameters;
};

void write_signal_file(const std::string& path, const parallel::Communicator& comm,
                       const SignalLayout& layout, const LocalVoxels& voxels,
                       const std::vector<float>& local_signals, const RunInfo& info);

// The EPG simulator's layout: its samples (those of info.samples where
// given), orders and events.
void write_signal_file(const std::string& path, const parallel::Communicator& comm,
                       const simulate::Simulator& simulator, const LocalVoxels& voxels,
                       const std::vector<float>& local_signals, const RunInfo& info);

}  // namespace larmor::app
