// Thin C++ layer over MPI: session lifetime, a communicator wrapper with the
// few collectives larmor needs, and failure agreement so that an error on one
// rank stops every rank cleanly instead of leaving the others in a hang.
#pragma once

// Only MPI's C API is used; keep OpenMPI/MPICH from dragging in their C++
// bindings (which need an extra library at link time).
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace larmor::parallel {

// RAII for MPI_Init_thread(MPI_THREAD_FUNNELED) / MPI_Finalize. If MPI is
// already initialised (a host application, a test harness), the session
// neither initialises nor finalises it.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  // True when this object called MPI_Init_thread and will call MPI_Finalize.
  bool owns_mpi() const { return owns_mpi_; }
  // Thread support level granted by MPI (at least FUNNELED when we initialised).
  int thread_level() const { return thread_level_; }

 private:
  bool owns_mpi_ = false;
  int thread_level_ = MPI_THREAD_SINGLE;
};

// Outcome of Communicator::all_ok: identical on every rank.
struct Consensus {
  bool ok = true;
  int first_failed_rank = -1;  // lowest failing rank, -1 when ok
  std::string message;         // that rank's error text, empty when ok

  explicit operator bool() const { return ok; }
};

// Rows gathered on the root by Communicator::gather_rows (empty elsewhere), or
// on every rank by all_gather_rows.
struct GatheredRows {
  std::vector<unsigned char> bytes;         // rank 0's rows, then rank 1's, ...
  std::vector<std::int64_t> rows_per_rank;  // size() == communicator size
};

// Non-owning wrapper around an MPI_Comm (MPI_COMM_WORLD by default); cheap to
// copy. Every method except rank()/size()/is_root()/comm() is collective:
// all ranks must call it, in the same order. MPI errors (only visible when the
// communicator's error handler returns instead of aborting) throw
// std::runtime_error.
class Communicator {
  template <typename T>
  using IfOtherInteger =
      std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, std::int64_t>>;

 public:
  Communicator();
  explicit Communicator(MPI_Comm comm);

  MPI_Comm comm() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_root() const { return rank_ == 0; }

  void barrier() const;

  std::int64_t all_reduce_sum(std::int64_t value) const;
  std::int64_t all_reduce_max(std::int64_t value) const;
  std::int64_t all_reduce_min(std::int64_t value) const;
  double all_reduce_sum(double value) const;
  double all_reduce_max(double value) const;
  double all_reduce_min(double value) const;
  // Element-wise sum over the ranks, in place (every rank passes the same size).
  void all_reduce_sum(std::vector<double>& values) const;
  // Other integer types (int, std::size_t, ...) reduce as int64 instead of
  // being ambiguous between the int64 and double overloads.
  template <typename Integer, typename = IfOtherInteger<Integer>>
  std::int64_t all_reduce_sum(Integer value) const {
    return all_reduce_sum(static_cast<std::int64_t>(value));
  }
  template <typename Integer, typename = IfOtherInteger<Integer>>
  std::int64_t all_reduce_max(Integer value) const {
    return all_reduce_max(static_cast<std::int64_t>(value));
  }
  template <typename Integer, typename = IfOtherInteger<Integer>>
  std::int64_t all_reduce_min(Integer value) const {
    return all_reduce_min(static_cast<std::int64_t>(value));
  }

  // True on every rank iff every rank passed the same value.
  bool all_equal(std::int64_t value) const;
  // value of every rank, indexed by rank, available on every rank.
  std::vector<std::int64_t> all_gather(std::int64_t value) const;

  // Replaces `value` on every rank with the value held by `root`.
  void broadcast(std::string& value, int root = 0) const;

  // Agrees whether every rank succeeded. Each rank passes its own outcome; all
  // ranks get the same answer carrying the lowest failing rank and its message.
  // Costs one all-reduce, plus a broadcast only when something failed.
  Consensus all_ok(bool local_ok, const std::string& local_error = "") const;
  // all_ok, then throws std::runtime_error("rank R: message") on every rank
  // when any rank failed.
  void throw_if_any_failed(bool local_ok, const std::string& local_error = "") const;

  // Gathers `local_rows` rows of `row_bytes` bytes each onto `root`, in rank
  // order (MPI_Gatherv with a row-sized datatype, so counts are in rows and a
  // rank may hold more than 2 GiB). Ranks with zero rows still take part.
  GatheredRows gather_rows(const void* local_data, std::int64_t local_rows, std::size_t row_bytes,
                           int root = 0) const;
  // The same rows on every rank (MPI_Allgatherv).
  GatheredRows all_gather_rows(const void* local_data, std::int64_t local_rows,
                               std::size_t row_bytes) const;

 private:
  // gather_rows onto `root`, or onto every rank where root < 0.
  GatheredRows gather_rows_to(const void* local_data, std::int64_t local_rows,
                              std::size_t row_bytes, int root) const;

  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace larmor::parallel
