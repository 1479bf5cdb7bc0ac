// MRD input: the XML header's sequence parameters to a builder; acquisitions
// from an MRD v1 stream framed by hand (every truncation and bad message
// refused by byte offset) and from an ISMRMRD HDF5 file written here with
// libismrmrd.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include <ismrmrd/dataset.h>
#include <ismrmrd/ismrmrd.h>
#include <ismrmrd/xml.h>

#include "app/deck.hpp"
#include "io/mrd/mrd.hpp"
#include "io/pulseq/pulseq_file.hpp"
#include "io/pulseq/pulseq_steps.hpp"
#include "sequence/step_table.hpp"
#include "test_paths.hpp"

namespace larmor::io::mrd {
namespace {

std::string header_xml(bool with_tr) {
  ISMRMRD::IsmrmrdHeader h;
  ISMRMRD::Encoding e;
  e.trajectory = ISMRMRD::TrajectoryType::CARTESIAN;
  e.encodedSpace.matrixSize = {4, 1, 1};
  e.encodedSpace.fieldOfView_mm = {200.0f, 200.0f, 5.0f};
  e.reconSpace = e.encodedSpace;
  h.encoding.push_back(e);
  ISMRMRD::SequenceParameters s;
  if (with_tr) s.TR = std::vector<float>{8.0f};
  s.TE = std::vector<float>{2.5f};
  s.flipAngle_deg = std::vector<float>{15.0f};
  s.sequence_type = std::string("spgr");
  h.sequenceParameters = s;
  std::ostringstream out;
  ISMRMRD::serialize(h, out);
  return out.str();
}

template <class T>
void put(std::string& s, const T& v) {
  s.append(reinterpret_cast<const char*>(&v), sizeof v);
}

void put_text(std::string& s, std::uint16_t id, const std::string& text) {
  put(s, id);
  put(s, std::uint32_t(text.size()));
  s += text;
}

// An acquisition message: sample n of channel c is (n + 10 c, -n).
void put_acquisition(std::string& s, std::uint32_t scan, std::uint16_t samples,
                     std::uint16_t channels, std::uint16_t traj_dims) {
  ISMRMRD::ISMRMRD_AcquisitionHeader h;
  ISMRMRD::ismrmrd_init_acquisition_header(&h);
  h.scan_counter = scan;
  h.number_of_samples = samples;
  h.active_channels = channels;
  h.available_channels = channels;
  h.trajectory_dimensions = traj_dims;
  h.center_sample = samples / 2;
  put(s, message::acquisition);
  put(s, h);
  for (int i = 0; i < samples * traj_dims; ++i) put(s, float(i) * 0.5f);
  for (int c = 0; c < channels; ++c) {
    for (int n = 0; n < samples; ++n) {
      put(s, float(n + 10 * c));
      put(s, float(-n));
    }
  }
}

std::string good_stream() {
  std::string s;
  put_text(s, message::header, header_xml(true));
  put_text(s, message::text, "hello");
  put_acquisition(s, 0, 4, 2, 0);
  put_acquisition(s, 1, 4, 2, 2);
  put(s, message::close);
  return s;
}

TEST(Mrd, stream_is_read_to_its_values) {
  std::istringstream in(good_stream());
  const Measurement m = read_stream(in, "test-stream");
  EXPECT_TRUE(m.closed);
  ASSERT_EQ(m.acquisitions.size(), 2u);
  ASSERT_EQ(m.texts.size(), 1u);
  EXPECT_EQ(m.texts[0], "hello");
  const Acquisition& a = m.acquisitions[1];
  EXPECT_EQ(a.scan_counter, 1u);
  EXPECT_EQ(a.samples, 4);
  EXPECT_EQ(a.channels, 2);
  EXPECT_EQ(a.center_sample, 2);
  ASSERT_EQ(a.trajectory.size(), 8u);
  EXPECT_EQ(a.trajectory[7], 3.5f);
  EXPECT_EQ(a.data[1 * 4 + 3], std::complex<float>(13.0f, -3.0f));  // channel 1, sample 3
  int samples = 0;
  const auto signals = acquisition_signals(m, 1, &samples);
  ASSERT_EQ(samples, 4);
  ASSERT_EQ(signals.size(), 16u);
  EXPECT_EQ(signals[2 * 4 + 2 * 2], 12.0f);  // acquisition 1, sample 2, real part
  EXPECT_THROW(acquisition_signals(m, 2, &samples), MrdError);

  const SequenceParameters p = sequence_parameters(m.header_xml, "test-stream");
  ASSERT_EQ(p.tr_s.size(), 1u);
  EXPECT_NEAR(p.tr_s[0], 8e-3, 1e-9);
  EXPECT_NEAR(p.te_s[0], 2.5e-3, 1e-9);
  EXPECT_EQ(p.sequence_type, "spgr");
  const auto d = instantiate_builder(p, "spgr", "test-stream", 10);
  ASSERT_EQ(d.events.size(), 20u);
  EXPECT_NEAR(d.events[0].flip_rad, 15.0 * 3.14159265358979 / 180, 1e-12);
  EXPECT_NEAR(d.events[0].duration_s, 2.5e-3, 1e-9);
  EXPECT_NEAR(d.events[0].duration_s + d.events[1].duration_s, 8e-3, 1e-9);
}

// Every prefix of a good stream is read (when it ends between messages) or
// refused with the source name and a byte offset; never anything else.
TEST(Mrd, every_truncation_is_refused_or_read_cleanly) {
  const std::string s = good_stream();
  int refused = 0;
  for (std::size_t n = 0; n < s.size(); ++n) {
    std::istringstream in(s.substr(0, n));
    try {
      const Measurement m = read_stream(in, "cut");
      EXPECT_FALSE(m.closed);
    } catch (const MrdError& e) {
      ++refused;
      EXPECT_EQ(std::string(e.what()).rfind("cut: byte ", 0), 0u) << e.what();
    }
  }
  EXPECT_GT(refused, int(s.size()) - 10);
}

TEST(Mrd, bad_messages_are_refused_by_name) {
  const auto error_of = [](const std::string& bytes) {
    std::istringstream in(bytes);
    try {
      read_stream(in, "bad");
    } catch (const MrdError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  std::string s;
  put(s, std::uint16_t(77));
  EXPECT_NE(error_of(s).find("unknown message id 77 at byte 0"), std::string::npos) << error_of(s);
  s.clear();
  put(s, message::image);
  EXPECT_NE(error_of(s).find("IMAGE message"), std::string::npos);
  s.clear();
  put(s, message::text);
  put(s, std::uint32_t(0xFFFFFFFFu));
  EXPECT_NE(error_of(s).find("over 1 GiB"), std::string::npos);
  s.clear();
  put_text(s, message::header, "<a/>");
  put_text(s, message::header, "<b/>");
  EXPECT_NE(error_of(s).find("a second HEADER"), std::string::npos);
  EXPECT_THROW(sequence_parameters("<not xml", "x"), MrdError);
  // A header claiming 65535 samples on 65535 channels, refused before allocating.
  s.clear();
  put_acquisition(s, 0, 0, 0, 0);
  const std::uint16_t huge[3] = {65535, 65535, 65535};
  std::memcpy(&s[2 + 34], huge, sizeof huge);
  EXPECT_NE(error_of(s).find("over 1 GiB"), std::string::npos) << error_of(s);
}

// A message claiming nearly 1 GiB on a stream that holds a few bytes is
// refused as truncated, naming both counts, without allocating the claim:
// the reader grows its buffer as the data arrives (the peak resident memory
// rises by far less than the claim; the old reader's zero-filled buffer
// raised it by the whole gigabyte).
TEST(Mrd, truncated_claims_are_refused_without_allocating_them) {
  const auto peak_kib = [] {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return std::int64_t(u.ru_maxrss);
  };
  const std::uint32_t claim = (1u << 30) - 1;
  for (const bool acquisition : {false, true}) {
    std::string s;
    if (acquisition) {
      put_acquisition(s, 0, 0, 0, 0);
      // samples, available and active channels: 2^15 x 2^12 x 8 bytes = 1 GiB
      const std::uint16_t big[3] = {32768, 4096, 4096};
      std::memcpy(&s[2 + 34], big, sizeof big);
    } else {
      put(s, message::text);
      put(s, claim);
    }
    s += "12345";
    const std::int64_t before = peak_kib();
    std::istringstream in(s);
    try {
      read_stream(in, "short");
      ADD_FAILURE() << "accepted";
    } catch (const MrdError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("truncated"), std::string::npos) << what;
      EXPECT_NE(what.find(", 5 left"), std::string::npos) << what;
    }
    EXPECT_LT(peak_kib() - before, 64 * 1024) << (acquisition ? "acquisition" : "text");
  }
}

TEST(Mrd, builders_refuse_missing_parameters_by_element) {
  const SequenceParameters p = sequence_parameters(header_xml(false), "nohdr.h5");
  try {
    instantiate_builder(p, "spgr", "nohdr.h5", 0);
    FAIL() << "accepted";
  } catch (const MrdError& e) {
    EXPECT_NE(std::string(e.what()).find("sequenceParameters/TR"), std::string::npos) << e.what();
  }
  SequenceParameters multi;
  multi.te_s = {0.01, 0.02, 0.03, 0.04};
  multi.flip_deg = {90.0, 160.0};
  const auto d = instantiate_builder(multi, "mese", "multi", 0);
  EXPECT_EQ(d.sample_count(), 4);
  EXPECT_NEAR(d.events[1].flip_rad, 160.0 * 3.14159265358979 / 180, 1e-12);
  EXPECT_THROW(instantiate_builder(multi, "dess", "multi", 0), MrdError);
}

TEST(Mrd, hdf5_dataset_is_read_to_its_values) {
  const auto path = (std::filesystem::temp_directory_path() / "larmor-mrd-test.h5").string();
  std::filesystem::remove(path);
  {
    ISMRMRD::Dataset d(path.c_str(), "dataset", true);
    d.writeHeader(header_xml(true));
    for (std::uint32_t k = 0; k < 3; ++k) {
      ISMRMRD::Acquisition acq(5, 1, 0);
      acq.scan_counter() = k;
      for (int n = 0; n < 5; ++n) acq.data(n, 0) = std::complex<float>(float(k), float(n));
      d.appendAcquisition(acq);
    }
  }
  const Measurement m = read_dataset(path);
  ASSERT_EQ(m.acquisitions.size(), 3u);
  EXPECT_EQ(m.acquisitions[2].data[4], std::complex<float>(2.0f, 4.0f));
  EXPECT_NEAR(sequence_parameters(m.header_xml, path).tr_s.at(0), 8e-3, 1e-9);
  EXPECT_THROW(read_dataset(path + ".missing"), MrdError);
  std::filesystem::remove(path);
}

// larmor's raw data writer: what a reconstruction reads back through
// libismrmrd is what was written, the trajectory included; a trajectory of
// the wrong length is refused by acquisition.
TEST(Mrd, raw_dataset_keeps_data_and_trajectory) {
  const auto path = (std::filesystem::temp_directory_path() / "larmor-mrd-raw-test.h5").string();
  std::filesystem::remove(path);
  std::vector<Acquisition> written(2);
  for (std::uint32_t k = 0; k < 2; ++k) {
    Acquisition& a = written[k];
    a.scan_counter = k;
    a.encode_step_1 = std::uint16_t(k);
    a.samples = 3;
    a.channels = 1;
    a.trajectory_dimensions = 3;
    for (int n = 0; n < 3; ++n) {
      a.data.emplace_back(float(k), float(n));
      for (int axis = 0; axis < 3; ++axis)
        a.trajectory.push_back(0.1f * float(n) - float(axis + k));
    }
  }
  written[1].read_dir = {0.0f, 1.0f, 0.0f};
  written[1].phase_dir = {0.0f, 0.0f, 1.0f};
  written[1].slice_dir = {1.0f, 0.0f, 0.0f};
  written[1].reversed = true;
  write_raw_dataset(path, raw_header_xml(RawEncoding{}), written);
  {
    ISMRMRD::Dataset d(path.c_str(), "dataset", false);
    ASSERT_EQ(d.getNumberOfAcquisitions(), 2u);
    ISMRMRD::Acquisition acq;
    d.readAcquisition(1, acq);
    ASSERT_EQ(acq.trajectory_dimensions(), 3);
    EXPECT_FLOAT_EQ(acq.traj(1, 2), 0.2f - 2.0f);  // dimension 1 of sample 2
    EXPECT_EQ(acq.data(2, 0), std::complex<float>(1.0f, 2.0f));
    EXPECT_EQ(acq.idx().kspace_encode_step_1, 1);
    EXPECT_EQ(acq.read_dir()[1], 1.0f);
    EXPECT_EQ(acq.phase_dir()[2], 1.0f);
    EXPECT_EQ(acq.slice_dir()[0], 1.0f);
    EXPECT_TRUE(acq.isFlagSet(ISMRMRD::ISMRMRD_ACQ_IS_REVERSE));
    d.readAcquisition(0, acq);
    EXPECT_EQ(acq.read_dir()[0], 1.0f);
    EXPECT_FALSE(acq.isFlagSet(ISMRMRD::ISMRMRD_ACQ_IS_REVERSE));
  }
  const Measurement m = read_dataset(path);
  ASSERT_EQ(m.acquisitions.size(), 2u);
  EXPECT_EQ(m.acquisitions[0].trajectory, written[0].trajectory);
  written[1].trajectory.pop_back();
  EXPECT_THROW(write_raw_dataset(path, raw_header_xml(RawEncoding{}), written), MrdError);
  std::filesystem::remove(path);
}

// One acquisition per ADC of a Pulseq file, with each sample's k-space
// position in cycles per voxel (as larmor simulate writes raw k-space).
std::vector<Acquisition> readouts_with_trajectories(const std::string& name, double voxel_m) {
  const std::string path = LARMOR_SOURCE_DIR "/../shared/data/pulseq-corpus/" + name;
  const sequence::StepTable table =
      pulseq::to_step_table(pulseq::PulseqFile::read(path), pulseq::StepOptions{});
  const auto k = sequence::sample_kspace_per_m(table);
  std::vector<Acquisition> out;
  for (std::size_t i = 0; i < table.samples(); ++i) {
    if (out.empty() || table.sample_block[i] != table.sample_block[i - 1]) {
      out.emplace_back();
      out.back().trajectory_dimensions = 3;
    }
    out.back().samples += 1;
    for (int a = 0; a < 3; ++a)
      out.back().trajectory.push_back(float(k[i][std::size_t(a)] * voxel_m));
  }
  return out;
}

// pyp_write_gre.seq (64 x 64 over 256 mm: lines 1 / FOV apart from -32 to
// 31) is a Cartesian grid of 64 lines, its centre line 32; the radial file
// (spokes turning from readout to readout) is not, and stays unlabelled.
TEST(Mrd, cartesian_files_are_numbered_by_line_and_others_left_alone) {
  if (!std::filesystem::exists(LARMOR_SOURCE_DIR "/../shared/data/pulseq-corpus")) {
    GTEST_SKIP() << "no ../shared/data/pulseq-corpus";
  }
  std::vector<Acquisition> gre = readouts_with_trajectories("pyp_write_gre.seq", 0.256 / 64);
  RawEncoding encoding;
  ASSERT_TRUE(label_cartesian(gre, encoding));
  EXPECT_EQ(encoding.trajectory, "cartesian");
  EXPECT_EQ(encoding.matrix[1], 64);
  EXPECT_EQ(encoding.matrix[2], 1);
  EXPECT_EQ(encoding.centre_line, 32);
  std::set<int> lines;
  for (const Acquisition& a : gre) {
    lines.insert(a.encode_step_1);
    // The line's phase-encode position: (line - 32) / 64 cycles per voxel.
    EXPECT_NEAR(a.trajectory[1], (a.encode_step_1 - 32) / 64.0, 1e-5);
    EXPECT_EQ(a.read_dir[0], 1.0f);
    EXPECT_EQ(a.phase_dir[1], 1.0f);
  }
  EXPECT_EQ(lines.size(), 64u);
  std::vector<Acquisition> radial =
      readouts_with_trajectories("pyp_write_radial_gre.seq", 0.256 / 64);
  RawEncoding untouched;
  EXPECT_FALSE(label_cartesian(radial, untouched));
  EXPECT_EQ(untouched.trajectory, "cartesian");  // the default: nothing was changed
  EXPECT_EQ(untouched.matrix[1], 1);
  for (const Acquisition& a : radial) EXPECT_EQ(a.encode_step_1, 0);
}

// Synthetic lines: a 3D grid (steps 0.25 along y, 0.5 along z) is numbered
// along both; a line off the grid (1.5 steps) leaves everything unlabelled.
TEST(Mrd, cartesian_grids_take_partitions_and_off_grid_lines_are_refused) {
  const auto line = [](double y, double z) {
    Acquisition a;
    a.samples = 4;
    a.trajectory_dimensions = 3;
    for (int n = 0; n < 4; ++n) {
      a.trajectory.insert(a.trajectory.end(), {float(n - 2) * 0.25f, float(y), float(z)});
    }
    return a;
  };
  std::vector<Acquisition> grid;
  for (int z = -1; z <= 0; ++z) {
    for (int y = -2; y <= 1; ++y) grid.push_back(line(0.25 * y, 0.5 * z));
  }
  RawEncoding encoding;
  ASSERT_TRUE(label_cartesian(grid, encoding));
  EXPECT_EQ(encoding.matrix[1], 4);
  EXPECT_EQ(encoding.matrix[2], 2);
  EXPECT_EQ(encoding.centre_line, 2);
  EXPECT_EQ(encoding.centre_partition, 1);
  EXPECT_EQ(grid[5].encode_step_1, 1);  // y = -0.25
  EXPECT_EQ(grid[5].encode_step_2, 1);  // z = 0
  std::vector<Acquisition> off{line(0.0, 0.0), line(0.25, 0.0), line(0.625, 0.0)};
  RawEncoding unchanged;
  EXPECT_FALSE(label_cartesian(off, unchanged));
  EXPECT_EQ(unchanged.trajectory, "cartesian");
  EXPECT_EQ(off[2].encode_step_1, 0);
}

// A grid turned by 30 degrees about z, in a voxel twice as long along y
// (trajectories in cycles per voxel): readouts along (cos, sin, 0), lines
// 0.25 / mm apart along (-sin, cos, 0), partitions 0.5 apart along z, every
// other line read backwards (an EPI). It is labelled in its own frame: the
// lines and partitions numbered from the lowest, the frame's directions
// (physical), the backward lines marked, the field of view in that order.
TEST(Mrd, turned_grids_are_labelled_in_their_own_frame) {
  const double turn = M_PI / 6.0;
  const std::array<double, 3> edge{1.0, 2.0, 1.0};
  const std::array<double, 3> read{std::cos(turn), std::sin(turn), 0.0};
  const std::array<double, 3> phase{-std::sin(turn), std::cos(turn), 0.0};
  const auto line = [&](int j, int m) {
    Acquisition a;
    a.samples = 4;
    a.trajectory_dimensions = 3;
    const double sweep = (j % 2 == 0) ? 1.0 : -1.0;
    for (int n = 0; n < 4; ++n) {
      for (int d = 0; d < 3; ++d) {
        const double k = sweep * (n - 2) * 0.25 * read[std::size_t(d)] +
                         0.25 * j * phase[std::size_t(d)] + (d == 2 ? 0.5 * m : 0.0);
        a.trajectory.push_back(float(k * edge[std::size_t(d)]));  // cycles per voxel
      }
    }
    return a;
  };
  std::vector<Acquisition> grid;
  for (int m = -1; m <= 0; ++m) {
    for (int j = -2; j <= 1; ++j) grid.push_back(line(j, m));
  }
  RawEncoding encoding;
  encoding.fov_mm[0] = 100.0;
  encoding.fov_mm[1] = 200.0;
  encoding.fov_mm[2] = 300.0;
  ASSERT_TRUE(label_cartesian(grid, encoding, edge));
  EXPECT_EQ(encoding.matrix[1], 4);
  EXPECT_EQ(encoding.matrix[2], 2);
  EXPECT_EQ(encoding.centre_line, 2);
  EXPECT_EQ(encoding.centre_partition, 1);
  for (std::size_t i = 0; i < grid.size(); ++i) {
    const int j = int(i % 4) - 2, m = int(i / 4) - 1;
    EXPECT_EQ(grid[i].encode_step_1, j + 2);
    EXPECT_EQ(grid[i].encode_step_2, m + 1);
    EXPECT_EQ(grid[i].reversed, j % 2 != 0);
    for (std::size_t d = 0; d < 3; ++d) {
      EXPECT_NEAR(grid[i].read_dir[d], read[d], 1e-6);
      EXPECT_NEAR(grid[i].phase_dir[d], phase[d], 1e-6);
      EXPECT_NEAR(grid[i].slice_dir[d], d == 2 ? 1.0 : 0.0, 1e-6);
    }
  }
  EXPECT_EQ(encoding.fov_mm[0], 100.0);
  EXPECT_EQ(encoding.fov_mm[1], 200.0);
  EXPECT_EQ(encoding.fov_mm[2], 300.0);
  // Read along y, lines along x: the field of view follows the directions.
  std::vector<Acquisition> swapped;
  for (int j = -1; j <= 1; ++j) {
    Acquisition a;
    a.samples = 3;
    a.trajectory_dimensions = 3;
    for (int n = 0; n < 3; ++n) a.trajectory.insert(a.trajectory.end(), {0.3f * j, 0.3f * n, 0.0f});
    swapped.push_back(a);
  }
  RawEncoding axes;
  axes.fov_mm[0] = 100.0;
  axes.fov_mm[1] = 200.0;
  axes.fov_mm[2] = 300.0;
  ASSERT_TRUE(label_cartesian(swapped, axes));
  EXPECT_EQ(axes.fov_mm[0], 200.0);
  EXPECT_EQ(axes.fov_mm[1], 100.0);
  EXPECT_EQ(swapped[0].read_dir[1], 1.0f);
  EXPECT_EQ(swapped[0].phase_dir[0], 1.0f);
  EXPECT_EQ(swapped[2].encode_step_1, 2);
}

// A series of 3 complex 3 x 2 images becomes 6 voxel signals of 3 samples:
// voxel (x, y) of image n holds (x + 3 y, n). (libismrmrd itself refuses to
// store images of different sizes under one name, so the reader's own check
// of that cannot be exercised through a file it writes.)
TEST(Mrd, image_series_become_voxel_signals) {
  const auto path = (std::filesystem::temp_directory_path() / "larmor-mrd-images.h5").string();
  std::filesystem::remove(path);
  {
    ISMRMRD::Dataset d(path.c_str(), "dataset", true);
    for (int n = 0; n < 3; ++n) {
      ISMRMRD::Image<std::complex<float>> im(3, 2, 1, 1);
      for (int y = 0; y < 2; ++y) {
        for (int x = 0; x < 3; ++x) im(x, y) = std::complex<float>(float(x + 3 * y), float(n));
      }
      d.appendImage("contrasts", im);
    }
  }
  const ImageSeries s = read_image_series(path, "contrasts");
  EXPECT_EQ(s.nx, 3);
  EXPECT_EQ(s.ny, 2);
  EXPECT_EQ(s.images, 3);
  ASSERT_EQ(s.signals.size(), 6u * 3 * 2);
  const int voxel = 1 + 3 * 1;  // x = 1, y = 1
  EXPECT_EQ(s.signals[(voxel * 3 + 2) * 2], 4.0f);
  EXPECT_EQ(s.signals[(voxel * 3 + 2) * 2 + 1], 2.0f);
  EXPECT_THROW(read_image_series(path, "absent"), MrdError);
  std::filesystem::remove(path);
}

// A deck takes a builder's parameters from an MRD file's header.
TEST(Mrd, a_deck_instantiates_its_builder_from_an_mrd_header) {
  const auto dir = std::filesystem::temp_directory_path() / "larmor-mrd-deck";
  std::filesystem::create_directories(dir);
  const auto scan = (dir / "scan.h5").string();
  std::filesystem::remove(scan);
  {
    ISMRMRD::Dataset d(scan.c_str(), "dataset", true);
    d.writeHeader(header_xml(true));
  }
  const std::string tissue = "\n[tissue]\nt1_ms = 1000.0\nt2_ms = 100.0\n";
  std::ofstream(dir / "deck.toml")
      << "[sequence]\nbuilder = \"spgr\"\nmrd = \"scan.h5\"\ncount = 10\n"
      << tissue;
  const app::Deck deck = app::read_deck((dir / "deck.toml").string());
  ASSERT_EQ(deck.sequence.events.size(), 20u);
  EXPECT_NEAR(deck.sequence.events[0].flip_rad, 15.0 * 3.14159265358979 / 180, 1e-12);
  EXPECT_NEAR(deck.sequence.events[0].duration_s + deck.sequence.events[1].duration_s, 8e-3, 1e-9);
  std::ofstream(dir / "bad.toml") << "[sequence]\nbuilder = \"spgr\"\nmrd = \"absent.h5\"\n"
                                  << tissue;
  try {
    app::read_deck((dir / "bad.toml").string());
    FAIL() << "accepted";
  } catch (const app::DeckError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.toml:3: [sequence] mrd could not be used"),
              std::string::npos)
        << e.what();
  }
  std::filesystem::remove_all(dir);
}

// The fuzz target's seed (tests/data/mrd/seed-stream.mrd, written byte by
// byte by a script to the layout above) reads to its values, and every
// finding kept in fuzz-regressions/ is read or refused with an MrdError.
TEST(Mrd, seed_and_fuzz_findings_are_read_or_refused) {
  const std::string dir = LARMOR_SOURCE_DIR "/tests/data/mrd";
  const Measurement seed = read_stream_file(dir + "/seed-stream.mrd");
  ASSERT_EQ(seed.acquisitions.size(), 2u);
  EXPECT_EQ(seed.acquisitions[1].data[7], std::complex<float>(13.0f, -3.0f));
  EXPECT_TRUE(seed.closed);
  for (const auto& entry : std::filesystem::directory_iterator(dir + "/fuzz-regressions")) {
    if (entry.path().extension() == ".md") continue;
    try {
      read_stream_file(entry.path().string());
    } catch (const MrdError&) {
    }
  }
}

}  // namespace
}  // namespace larmor::io::mrd
