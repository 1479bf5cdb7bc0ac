// Collective HDF5 output and partitioning, run under mpirun with 1, 2 and 3
// ranks. Assertions that could make one rank leave a test early come after
// the collective calls, so a failure is reported instead of hanging.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "app/tissue_source.hpp"
#include "io/hdf5_file.hpp"
#include "parallel/communicator.hpp"
#include "parallel/partition.hpp"

namespace fs = std::filesystem;
using larmor::io::H5Reader;
using larmor::io::H5Writer;
using larmor::parallel::Communicator;
using larmor::parallel::masked_indices;
using larmor::parallel::partition_evenly;
using larmor::parallel::Range;

namespace {

// ---------------------------------------------------------------- partitioning

TEST(Partition, EvenlyTilesTheRangeForManyCounts) {
  const std::vector<std::int64_t> counts = {0, 1, 2, 3, 5, 7, 10, 31, 64, 100, 1001, 1000000007};
  for (std::int64_t count : counts) {
    for (int ranks : {1, 2, 3, 4, 5, 7, 8, 16, 17, 1000}) {
      std::int64_t expected_begin = 0;
      std::int64_t smallest = count, largest = 0;
      for (int rank = 0; rank < ranks; ++rank) {
        const Range range = partition_evenly(count, ranks, rank);
        ASSERT_EQ(range.begin, expected_begin) << count << " over " << ranks << ", rank " << rank;
        ASSERT_GE(range.size(), 0);
        // Earlier ranks never get fewer elements than later ones.
        if (rank > 0) {
          ASSERT_LE(range.size(), largest) << count << " over " << ranks;
        }
        smallest = std::min(smallest, range.size());
        largest = std::max(largest, range.size());
        expected_begin = range.end;
      }
      EXPECT_EQ(expected_begin, count) << count << " over " << ranks;
      EXPECT_LE(largest - smallest, 1) << count << " over " << ranks;
    }
  }
}

TEST(Partition, RejectsInvalidArguments) {
  EXPECT_THROW(partition_evenly(-1, 2, 0), std::invalid_argument);
  EXPECT_THROW(partition_evenly(10, 0, 0), std::invalid_argument);
  EXPECT_THROW(partition_evenly(10, 2, 2), std::invalid_argument);
  EXPECT_THROW(partition_evenly(10, 2, -1), std::invalid_argument);
}

TEST(Partition, MaskedIndicesAreNonZeroEntriesInOrder) {
  EXPECT_EQ(masked_indices({}), std::vector<std::int64_t>{});
  EXPECT_EQ(masked_indices({0, 0, 0}), std::vector<std::int64_t>{});
  EXPECT_EQ(masked_indices({1, 0, 7, 0, 0, 255}), (std::vector<std::int64_t>{0, 2, 5}));
  EXPECT_EQ(masked_indices({1, 1, 1}), (std::vector<std::int64_t>{0, 1, 2}));
}

// Rank r holds r rows (rank 0 none) of three floats, r * 100 + 10 i + c:
// every rank receives every row, in rank order, and the counts per rank.
TEST(Communicator, AllGatherRowsGivesEveryRankEveryRowInRankOrder) {
  const Communicator comm;
  std::vector<float> mine;
  for (int i = 0; i < comm.rank(); ++i) {
    for (int c = 0; c < 3; ++c) mine.push_back(float(comm.rank() * 100 + 10 * i + c));
  }
  const auto all = comm.all_gather_rows(mine.data(), comm.rank(), 3 * sizeof(float));
  ASSERT_EQ(all.rows_per_rank.size(), std::size_t(comm.size()));
  std::vector<float> expected;
  for (int r = 0; r < comm.size(); ++r) {
    EXPECT_EQ(all.rows_per_rank[std::size_t(r)], r);
    for (int i = 0; i < r; ++i) {
      for (int c = 0; c < 3; ++c) expected.push_back(float(r * 100 + 10 * i + c));
    }
  }
  ASSERT_EQ(all.bytes.size(), expected.size() * sizeof(float));
  std::vector<float> got(expected.size());
  std::copy_n(all.bytes.data(), all.bytes.size(), reinterpret_cast<unsigned char*>(got.data()));
  EXPECT_EQ(got, expected);
}

// ---------------------------------------------------------------- HDF5 helpers

// Value of element [row][col][component] of the test dataset; exact in float.
float expected_value(std::int64_t row, std::int64_t col, int component) {
  return static_cast<float>(row * 1000 + col * 10 + component) + 0.25f;
}

bool file_exists_on_every_rank(const Communicator& comm, const fs::path& path) {
  return comm.all_reduce_min(static_cast<std::int64_t>(fs::exists(path))) == 1;
}
bool file_absent_on_every_rank(const Communicator& comm, const fs::path& path) {
  return comm.all_reduce_max(static_cast<std::int64_t>(fs::exists(path))) == 0;
}

// Every test gets a fresh directory, created by rank 0 and shared by all ranks.
class Hdf5Mpi : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string dir;
    if (comm_.is_root()) {
      std::string pattern = (fs::temp_directory_path() / "larmor_h5test_XXXXXX").string();
      dir = mkdtemp(pattern.data()) ? pattern : "";
    }
    comm_.broadcast(dir);
    ASSERT_FALSE(dir.empty());
    dir_ = dir;
  }
  void TearDown() override {
    comm_.barrier();
    if (comm_.is_root()) fs::remove_all(dir_);
  }

  // Number of "*.tmp-*" files left in the directory, agreed over ranks.
  std::int64_t temp_files_left() const {
    comm_.barrier();  // rank 0 removes temporaries; let it finish first
    std::int64_t found = 0;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      found += entry.path().filename().string().find(".tmp-") != std::string::npos;
    }
    return comm_.all_reduce_max(found);
  }

  // Writes the [rows][cols][2] float dataset by rows from every rank.
  void write_test_rows(H5Writer& writer, const std::string& path, std::int64_t rows,
                       std::int64_t cols) const {
    const Range mine = partition_evenly(rows, comm_.size(), comm_.rank());
    std::vector<float> block;
    for (std::int64_t row = mine.begin; row < mine.end; ++row) {
      for (std::int64_t col = 0; col < cols; ++col) {
        for (int k = 0; k < 2; ++k) block.push_back(expected_value(row, col, k));
      }
    }
    writer.write_rows(path, {std::uint64_t(rows), std::uint64_t(cols), 2}, mine.begin, block.data(),
                      mine.size());
  }

  Communicator comm_;
  fs::path dir_;
};

// ---------------------------------------------------------------- writing

TEST_F(Hdf5Mpi, CollectiveRowWriteReadsBackElementWise) {
  const fs::path file = dir_ / "signals.h5";
  const std::int64_t rows = 11, cols = 5;
  {
    H5Writer writer(file.string(), comm_);
    write_test_rows(writer, "/signals/deep/magnetisation", rows, cols);
    write_test_rows(writer, "/tiny", 1, 3);  // with 2+ ranks, some write zero rows
    const Range mine = partition_evenly(rows, comm_.size(), comm_.rank());
    std::vector<double> seconds;
    std::vector<std::int64_t> counts;
    std::vector<std::uint8_t> mask;
    for (std::int64_t row = mine.begin; row < mine.end; ++row) {
      seconds.push_back(row * 0.5);
      counts.push_back(row - 5);
      mask.push_back(row % 3 == 0);
    }
    writer.write_rows("/a/b/c/seconds", {std::uint64_t(rows)}, mine.begin, seconds.data(),
                      mine.size());
    writer.write_rows("/a/b/counts", {std::uint64_t(rows)}, mine.begin, counts.data(), mine.size());
    writer.write_rows("/mask", {std::uint64_t(rows)}, mine.begin, mask.data(), mine.size());
    writer.commit();
  }
  H5Reader reader(file.string(), comm_);
  ASSERT_EQ(reader.dims("/signals/deep/magnetisation"),
            (std::vector<std::uint64_t>{std::uint64_t(rows), std::uint64_t(cols), 2}));
  EXPECT_TRUE(reader.exists("/signals/deep"));
  EXPECT_TRUE(reader.exists("/"));
  EXPECT_FALSE(reader.exists("/signals/nothing/here"));
  const std::vector<float> all = reader.read_all_float("/signals/deep/magnetisation");
  ASSERT_EQ(all.size(), std::size_t(rows * cols * 2));
  for (std::int64_t row = 0; row < rows; ++row) {
    for (std::int64_t col = 0; col < cols; ++col) {
      for (int k = 0; k < 2; ++k) {
        EXPECT_EQ(all[(row * cols + col) * 2 + k], expected_value(row, col, k))
            << "row " << row << " col " << col << " k " << k;
      }
    }
  }
  // A different split than the writer's: ranks in reverse order.
  const Range theirs = partition_evenly(rows, comm_.size(), comm_.size() - 1 - comm_.rank());
  const std::vector<float> part =
      reader.read_rows_float("/signals/deep/magnetisation", theirs.begin, theirs.size());
  ASSERT_EQ(part.size(), std::size_t(theirs.size() * cols * 2));
  for (std::int64_t i = 0; i < theirs.size() * cols * 2; ++i) {
    const std::int64_t row = theirs.begin + i / (cols * 2);
    EXPECT_EQ(part[i], expected_value(row, (i / 2) % cols, int(i % 2)));
  }
  // The same rows read three at a time into one caller buffer (a matcher's
  // staging), only the rows asked for written.
  ASSERT_EQ(reader.row_elements("/signals/deep/magnetisation"), cols * 2);
  std::vector<float> chunk(std::size_t(3 * cols * 2) + 1, -1.0f);
  for (std::int64_t r0 = 0; r0 < theirs.size(); r0 += 3) {
    const std::int64_t n = std::min<std::int64_t>(3, theirs.size() - r0);
    reader.read_rows_float("/signals/deep/magnetisation", theirs.begin + r0, n, chunk.data());
    for (std::int64_t i = 0; i < n * cols * 2; ++i) EXPECT_EQ(chunk[i], part[r0 * cols * 2 + i]);
    EXPECT_EQ(chunk.back(), -1.0f);
  }
  EXPECT_EQ(reader.read_all_float("/tiny"),
            (std::vector<float>{expected_value(0, 0, 0), expected_value(0, 0, 1),
                                expected_value(0, 1, 0), expected_value(0, 1, 1),
                                expected_value(0, 2, 0), expected_value(0, 2, 1)}));
  const std::vector<float> seconds = reader.read_all_float("/a/b/c/seconds");
  const std::vector<float> counts = reader.read_all_float("/a/b/counts");
  const std::vector<std::uint8_t> mask = reader.read_all_u8("/mask");
  ASSERT_EQ(seconds.size(), std::size_t(rows));
  ASSERT_EQ(counts.size(), std::size_t(rows));
  ASSERT_EQ(mask.size(), std::size_t(rows));
  for (std::int64_t row = 0; row < rows; ++row) {
    EXPECT_EQ(seconds[row], row * 0.5f);
    EXPECT_EQ(counts[row], float(row - 5));
    EXPECT_EQ(mask[row], row % 3 == 0 ? 1 : 0);
  }
}

TEST_F(Hdf5Mpi, WholeArraysAndAttributesWithUnits) {
  const fs::path file = dir_ / "attributes.h5";
  {
    H5Writer writer(file.string(), comm_);
    writer.write_whole("/grid/axis", {2, 3}, std::vector<double>{0, 1, 2, 3, 4, 5});
    writer.set_attribute("/", "field_strength", 3.0, "T");
    writer.set_attribute("/", "repetitions", 7);  // int goes to the int64 overload
    writer.set_attribute("/", "description", std::string("unit test"));
    writer.set_attribute("/grid/axis", "spacing", 0.001, "m");
    writer.set_attribute("/grid/axis", "spacing", 0.002, "m");     // replaces
    writer.set_attribute("/meta/run", "seed", std::int64_t{-42});  // creates the group
    writer.commit();
  }
  H5Reader reader(file.string(), comm_);
  EXPECT_EQ(reader.read_all_float("/grid/axis"), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_DOUBLE_EQ(reader.attribute_double("/", "field_strength"), 3.0);
  EXPECT_EQ(reader.attribute_string("/", "field_strength_units"), "T");
  EXPECT_EQ(reader.attribute_int64("/", "repetitions"), 7);
  EXPECT_DOUBLE_EQ(reader.attribute_double("/", "repetitions"), 7.0);
  EXPECT_FALSE(reader.has_attribute("/", "repetitions_units"));
  EXPECT_EQ(reader.attribute_string("/", "description"), "unit test");
  EXPECT_DOUBLE_EQ(reader.attribute_double("/grid/axis", "spacing"), 0.002);
  EXPECT_EQ(reader.attribute_string("/grid/axis", "spacing_units"), "m");
  EXPECT_EQ(reader.attribute_int64("/meta/run", "seed"), -42);
}

TEST_F(Hdf5Mpi, CommitIsAtomic) {
  const fs::path file = dir_ / "atomic.h5";
  H5Writer writer(file.string(), comm_);
  write_test_rows(writer, "/data", 6, 2);
  comm_.barrier();
  EXPECT_TRUE(file_absent_on_every_rank(comm_, file));
  EXPECT_TRUE(file_exists_on_every_rank(comm_, writer.temp_path()));
  writer.commit();
  EXPECT_TRUE(writer.committed());
  EXPECT_TRUE(file_exists_on_every_rank(comm_, file));  // no barrier needed after commit
  EXPECT_EQ(temp_files_left(), 0);
  EXPECT_THROW(writer.commit(), std::logic_error);
}

TEST_F(Hdf5Mpi, DestroyedWithoutCommitLeavesNoFile) {
  const fs::path file = dir_ / "abandoned.h5";
  {
    H5Writer writer(file.string(), comm_);
    write_test_rows(writer, "/data", 5, 3);
    writer.set_attribute("/", "note", std::string("never committed"));
  }
  EXPECT_EQ(temp_files_left(), 0);
  EXPECT_TRUE(file_absent_on_every_rank(comm_, file));
}

TEST_F(Hdf5Mpi, FailureOnOneRankThrowsOnEveryRank) {
  const fs::path file = dir_ / "failing.h5";
  const int last = comm_.size() - 1;
  {
    H5Writer writer(file.string(), comm_);
    const Range mine = partition_evenly(4, comm_.size(), comm_.rank());
    std::vector<float> rows(std::size_t(mine.size()), 1.0f);
    // Only the last rank passes a bad row offset; every rank must throw.
    const std::int64_t offset = comm_.rank() == last ? 100 : mine.begin;
    try {
      writer.write_rows("/bad", {4}, offset, rows.data(), mine.size());
      ADD_FAILURE() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("rank " + std::to_string(last)), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("'/bad'"), std::string::npos) << e.what();
    }
    // Shape disagreement between ranks.
    const std::uint64_t cols = comm_.rank() == last && comm_.size() > 1 ? 3 : 2;
    if (comm_.size() > 1) {
      std::vector<float> wide(std::size_t(mine.size() * 3), 0.0f);
      EXPECT_THROW(writer.write_rows("/shape", {4, cols}, mine.begin, wide.data(), mine.size()),
                   std::runtime_error);
    }
    // Rows that do not tile the dataset (one row short).
    EXPECT_THROW(writer.write_rows("/gap", {5}, mine.begin, rows.data(), mine.size()),
                 std::runtime_error);
    // Overlapping rows: every rank claims the whole dataset.
    if (comm_.size() > 1) {
      const std::vector<float> full(4, 2.0f);
      EXPECT_THROW(writer.write_rows("/overlap", {4}, 0, full.data(), 4), std::runtime_error);
    }
    // Argument errors do not poison the writer; it still works afterwards.
    write_test_rows(writer, "/good", 4, 1);
  }  // destroyed without commit after the failures
  EXPECT_EQ(temp_files_left(), 0);
  EXPECT_TRUE(file_absent_on_every_rank(comm_, file));
}

TEST_F(Hdf5Mpi, Hdf5FailureThrowsOnEveryRankAndPoisonsTheWriter) {
  const fs::path file = dir_ / "poisoned.h5";
  {
    H5Writer writer(file.string(), comm_);
    write_test_rows(writer, "/data", 3, 1);
    try {
      write_test_rows(writer, "/data", 3, 1);  // exists already: HDF5 refuses
      ADD_FAILURE() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(file.string() + ": creating dataset '/data' failed"),
                std::string::npos)
          << e.what();
    }
    EXPECT_THROW(writer.set_attribute("/", "late", 1.0), std::logic_error);
    EXPECT_THROW(writer.commit(), std::logic_error);
  }
  EXPECT_EQ(temp_files_left(), 0);
  EXPECT_TRUE(file_absent_on_every_rank(comm_, file));
  // A writer whose folder cannot be made (a regular file stands in the way)
  // fails on every rank, naming the folder.
  const fs::path blocker = dir_ / "a_file_not_a_folder";
  if (comm_.is_root()) std::ofstream(blocker) << "x";
  comm_.barrier();
  const fs::path nowhere = blocker / "out.h5";
  try {
    H5Writer writer(nowhere.string(), comm_);
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot create the folder '" + blocker.string() + "'"),
              std::string::npos)
        << e.what();
  }
  // A missing folder is made.
  const fs::path made = dir_ / "missing_directory" / "out.h5";
  {
    H5Writer writer(made.string(), comm_);
    writer.write_whole("/mask", {3}, std::vector<std::uint8_t>{1, 0, 1});
    writer.commit();
  }
  EXPECT_TRUE(fs::is_regular_file(made));
}

TEST_F(Hdf5Mpi, SameDataGivesByteIdenticalFiles) {
  auto write = [&](const fs::path& file) {
    H5Writer writer(file.string(), comm_);
    write_test_rows(writer, "/group/data", 9, 4);
    writer.write_whole("/mask", {3}, std::vector<std::uint8_t>{1, 0, 1});
    writer.set_attribute("/group/data", "echo_time", 0.01, "s");
    writer.commit();
  };
  write(dir_ / "first.h5");
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // timestamps have 1 s steps
  write(dir_ / "second.h5");
  if (comm_.is_root()) {
    auto bytes = [](const fs::path& file) {
      std::ifstream in(file, std::ios::binary);
      return std::string(std::istreambuf_iterator<char>(in), {});
    };
    const std::string first = bytes(dir_ / "first.h5");
    EXPECT_FALSE(first.empty());
    EXPECT_TRUE(first == bytes(dir_ / "second.h5"));
  }
}

// ---------------------------------------------------------------- reading

TEST_F(Hdf5Mpi, ReaderErrorsNameFileAndObject) {
  const fs::path file = dir_ / "tissue.h5";
  {
    H5Writer writer(file.string(), comm_);
    write_test_rows(writer, "/t2", 3, 1);
    writer.commit();
  }
  H5Reader reader(file.string(), comm_);
  auto message_of = [](auto&& call) {
    try {
      call();
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  const std::string missing = message_of([&] { reader.read_all_float("/t1"); });
  EXPECT_EQ(missing, file.string() + ": dataset '/t1' not found");
  EXPECT_NE(message_of([&] { reader.read_rows_float("/t2", 2, 5); }).find("'/t2'"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              reader.attribute_double("/t2", "t1_ms");
            }).find(file.string() + ": attribute 't1_ms' on '/t2' not found"),
            std::string::npos);
  // Opening a file that does not exist fails on every rank, naming the file.
  const std::string absent = (dir_ / "absent.h5").string();
  EXPECT_NE(message_of([&] { H5Reader(absent, comm_); }).find(absent), std::string::npos);
}

TEST_F(Hdf5Mpi, ReaderConvertsStoredTypes) {
  const fs::path file = dir_ / "foreign.h5";
  if (comm_.is_root()) {  // a file from another tool: int32, int16 and h5py-style bool
    const hid_t out = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const hsize_t count = 4;
    const hid_t space = H5Screate_simple(1, &count, nullptr);
    const int ints[4] = {-2, 0, 3, 70000};
    hid_t set =
        H5Dcreate2(out, "ints", H5T_STD_I32BE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(set, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, ints);
    H5Dclose(set);
    const short labels[4] = {1, 255, -3, 300};
    set = H5Dcreate2(out, "labels", H5T_STD_I16LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(set, H5T_NATIVE_SHORT, H5S_ALL, H5S_ALL, H5P_DEFAULT, labels);
    H5Dclose(set);
    const hid_t boolean = H5Tenum_create(H5T_NATIVE_INT8);
    const signed char no = 0, yes = 1;
    H5Tenum_insert(boolean, "FALSE", &no);
    H5Tenum_insert(boolean, "TRUE", &yes);
    const signed char flags[4] = {1, 0, 0, 1};
    set = H5Dcreate2(out, "flags", boolean, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(set, boolean, H5S_ALL, H5S_ALL, H5P_DEFAULT, flags);
    H5Dclose(set);
    H5Tclose(boolean);
    H5Sclose(space);
    H5Fclose(out);
  }
  comm_.barrier();
  H5Reader reader(file.string(), comm_);
  EXPECT_EQ(reader.read_all_float("ints"), (std::vector<float>{-2, 0, 3, 70000}));
  EXPECT_EQ(reader.read_rows_float("/ints", 1, 2), (std::vector<float>{0, 3}));
  EXPECT_EQ(reader.read_all_u8("/labels"), (std::vector<std::uint8_t>{1, 255, 0, 255}));
  EXPECT_EQ(reader.read_all_u8("/flags"), (std::vector<std::uint8_t>{1, 0, 0, 1}));
  EXPECT_EQ(reader.read_all_float("/flags"), (std::vector<float>{1, 0, 0, 1}));
}

}  // namespace

// ---------------------------------------------------------------- maps

namespace {

class MapsFromFile : public Hdf5Mpi {
 protected:
  // A 2 x 2 volume: masks of 0.5 and of 0 (float), and a T2 map with NaN
  // at linear index 3.
  std::string write_maps() const {
    const std::string path = (dir_ / "maps.h5").string();
    H5Writer w(path, comm_);
    w.write_whole("/mask_half", {2, 2}, std::vector<float>(4, 0.5f));
    w.write_whole("/mask_zero", {2, 2}, std::vector<float>(4, 0.0f));
    w.write_whole("/t2_ms", {2, 2}, std::vector<float>{50.0f, 60.0f, 70.0f, NAN});
    w.commit();
    return path;
  }
  static larmor::app::TissueSpec spec(const std::string& path, const std::string& mask) {
    larmor::app::TissueSpec s;
    s.mode = larmor::app::TissueSpec::Mode::maps;
    s.maps_path = path;
    s.mask_dataset = mask;
    s.values[larmor::tissue::Property::t1] = {1000.0};
    return s;
  }
  std::string error_of(const larmor::app::TissueSpec& s) const {
    try {
      larmor::app::load_local_tissue(s, comm_, "deck.toml");
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(MapsFromFile, FloatMaskOfAHalfSelectsEveryVoxel) {
  const auto s = spec(write_maps(), "/mask_half");
  EXPECT_EQ(larmor::app::load_local_tissue(s, comm_, "deck.toml").total, 4);
}

TEST_F(MapsFromFile, EmptyMaskIsRefusedByName) {
  const std::string error = error_of(spec(write_maps(), "/mask_zero"));
  EXPECT_NE(error.find("mask '/mask_zero' selects no voxel"), std::string::npos) << error;
}

TEST_F(MapsFromFile, BadValueNamesTheVolumesIndex) {
  // Masked to voxels 1-3 (the zero at 0 leaves them), the NaN is the third
  // selected voxel but the volume's voxel 3.
  const std::string path = write_maps();
  {
    H5Writer w((dir_ / "mask.h5").string(), comm_);
    w.write_whole("/mask", {2, 2}, std::vector<float>{0.0f, 1.0f, 1.0f, 1.0f});
    w.write_whole("/t2_ms", {2, 2}, std::vector<float>{50.0f, 60.0f, 70.0f, NAN});
    w.commit();
  }
  auto s = spec((dir_ / "mask.h5").string(), "/mask");
  s.map_datasets[larmor::tissue::Property::t2] = "/t2_ms";
  const std::string error = error_of(s);
  EXPECT_NE(error.find("t2_ms at voxel 3 of the volume"), std::string::npos) << error;
  (void)path;
}

}  // namespace
