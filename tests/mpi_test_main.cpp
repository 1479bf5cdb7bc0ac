// GoogleTest main for every larmor test (with Kokkos when built with
// LARMOR_TEST_KOKKOS) and for the MPI tests: every rank runs every test, only rank 0
// prints the usual report, other ranks print just their own failures, and the
// exit code is agreed so mpirun sees the same verdict from every rank.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>

#include "parallel/communicator.hpp"

#if LARMOR_TEST_KOKKOS
#include <Kokkos_Core.hpp>
#endif

namespace {

// Failure lines from non-root ranks, which would otherwise be invisible.
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_,
                 result.file_name() ? result.file_name() : "?", result.line_number(),
                 result.message());
  }

 private:
  int rank_;
};

// CTest runs these executables' tests in parallel, each a process started
// without mpirun, and concurrent Open MPI singletons would share (and remove
// under each other) one folder of run-time files (cmake/LarmorTestMpiTmpdir.cmake).
// Such a process gets a directory of its own, removed once MPI has finished.
// Processes mpirun started, or given a directory, keep theirs.
class OwnMpiTmpdir {
 public:
  OwnMpiTmpdir() {
    if (std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("OMPI_MCA_orte_tmpdir_base")) return;
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/larmor-test-mpi-XXXXXX";
    if (!mkdtemp(pattern.data())) return;  // Open MPI's default then
    path_ = pattern;
    setenv("OMPI_MCA_orte_tmpdir_base", path_.c_str(), 1);
  }
  ~OwnMpiTmpdir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  OwnMpiTmpdir(const OwnMpiTmpdir&) = delete;
  OwnMpiTmpdir& operator=(const OwnMpiTmpdir&) = delete;

 private:
  std::string path_;
};

}  // namespace

int main(int argc, char** argv) {
  const OwnMpiTmpdir mpi_tmpdir;
  larmor::parallel::MpiSession session(&argc, &argv);
#if LARMOR_TEST_KOKKOS
  // Every test binary may launch kernels; Kokkos lives between MPI's bounds.
  // Listing the tests (CTest's discovery) starts none: Kokkos' start-up
  // warnings on stdout would be read as test names.
  bool listing = false;
  for (int i = 1; i < argc; ++i)
    listing = listing || std::strcmp(argv[i], "--gtest_list_tests") == 0;
  std::optional<Kokkos::ScopeGuard> kokkos;
  if (!listing) kokkos.emplace(argc, argv);
#endif
  ::testing::InitGoogleTest(&argc, argv);
  const larmor::parallel::Communicator world;
  if (!world.is_root()) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(world.rank()));
  }
  const int local_failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  const std::int64_t any_failed = world.all_reduce_max(local_failed);
  if (world.is_root() && any_failed && !local_failed) {
    std::fprintf(stderr, "FAILED on another rank (see [rank N] lines above)\n");
  }
  return any_failed ? 1 : 0;
}
