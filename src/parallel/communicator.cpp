#include "parallel/communicator.hpp"

#include <climits>
#include <limits>
#include <stdexcept>

namespace larmor::parallel {
namespace {

void check_mpi(int status, const char* operation) {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(status, text, &length);
  throw std::runtime_error(std::string("MPI ") + operation +
                           " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

template <typename T>
T all_reduce(MPI_Comm comm, T value, MPI_Datatype type, MPI_Op op, const char* what) {
  T result{};
  check_mpi(MPI_Allreduce(&value, &result, 1, type, op, comm), what);
  return result;
}

}  // namespace

MpiSession::MpiSession(int* argc, char*** argv) {
  int initialized = 0;
  check_mpi(MPI_Initialized(&initialized), "MPI_Initialized");
  if (initialized) {
    check_mpi(MPI_Query_thread(&thread_level_), "MPI_Query_thread");
    return;
  }
  int finalized = 0;
  check_mpi(MPI_Finalized(&finalized), "MPI_Finalized");
  if (finalized) throw std::runtime_error("MpiSession: MPI has already been finalised");
  check_mpi(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &thread_level_), "MPI_Init_thread");
  owns_mpi_ = true;
  // Only the main thread talks to MPI; anything weaker than FUNNELED is unusable.
  if (thread_level_ < MPI_THREAD_FUNNELED) {
    MPI_Finalize();
    owns_mpi_ = false;
    throw std::runtime_error("MpiSession: MPI does not provide MPI_THREAD_FUNNELED");
  }
}

MpiSession::~MpiSession() {
  if (!owns_mpi_) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

Communicator::Communicator() : Communicator(MPI_COMM_WORLD) {}

Communicator::Communicator(MPI_Comm comm) : comm_(comm) {
  if (comm == MPI_COMM_NULL) throw std::invalid_argument("Communicator: MPI_COMM_NULL");
  check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
}

void Communicator::barrier() const { check_mpi(MPI_Barrier(comm_), "MPI_Barrier"); }

std::int64_t Communicator::all_reduce_sum(std::int64_t value) const {
  return all_reduce(comm_, value, MPI_INT64_T, MPI_SUM, "MPI_Allreduce(sum)");
}
std::int64_t Communicator::all_reduce_max(std::int64_t value) const {
  return all_reduce(comm_, value, MPI_INT64_T, MPI_MAX, "MPI_Allreduce(max)");
}
std::int64_t Communicator::all_reduce_min(std::int64_t value) const {
  return all_reduce(comm_, value, MPI_INT64_T, MPI_MIN, "MPI_Allreduce(min)");
}
double Communicator::all_reduce_sum(double value) const {
  return all_reduce(comm_, value, MPI_DOUBLE, MPI_SUM, "MPI_Allreduce(sum)");
}
void Communicator::all_reduce_sum(std::vector<double>& values) const {
  if (values.empty()) return;
  if (values.size() > std::size_t(std::numeric_limits<int>::max())) {
    throw std::length_error("all_reduce_sum: more than 2^31 - 1 values in one call");
  }
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE,
                          MPI_SUM, comm_),
            "MPI_Allreduce(sum, vector)");
}
double Communicator::all_reduce_max(double value) const {
  return all_reduce(comm_, value, MPI_DOUBLE, MPI_MAX, "MPI_Allreduce(max)");
}
double Communicator::all_reduce_min(double value) const {
  return all_reduce(comm_, value, MPI_DOUBLE, MPI_MIN, "MPI_Allreduce(min)");
}

bool Communicator::all_equal(std::int64_t value) const {
  // Both reductions run on every rank (no short-circuit, or ranks would
  // disagree on the number of collectives). min == max identifies agreement.
  const std::int64_t smallest = all_reduce_min(value);
  const std::int64_t largest = all_reduce_max(value);
  return smallest == largest;
}

std::vector<std::int64_t> Communicator::all_gather(std::int64_t value) const {
  std::vector<std::int64_t> values(static_cast<std::size_t>(size_));
  check_mpi(MPI_Allgather(&value, 1, MPI_INT64_T, values.data(), 1, MPI_INT64_T, comm_),
            "MPI_Allgather");
  return values;
}

void Communicator::broadcast(std::string& value, int root) const {
  std::int64_t length = static_cast<std::int64_t>(value.size());
  check_mpi(MPI_Bcast(&length, 1, MPI_INT64_T, root, comm_), "MPI_Bcast(length)");
  if (length > INT_MAX) throw std::runtime_error("broadcast: string longer than 2 GiB");
  value.resize(static_cast<std::size_t>(length));
  if (length > 0) {
    check_mpi(MPI_Bcast(value.data(), static_cast<int>(length), MPI_CHAR, root, comm_),
              "MPI_Bcast(string)");
  }
}

Consensus Communicator::all_ok(bool local_ok, const std::string& local_error) const {
  // Healthy ranks vote `size`, failing ranks vote their rank: the minimum is
  // the first failing rank, or `size` when everyone succeeded.
  const std::int64_t vote = local_ok ? size_ : rank_;
  const std::int64_t first_failed = all_reduce_min(vote);
  Consensus consensus;
  if (first_failed == size_) return consensus;
  consensus.ok = false;
  consensus.first_failed_rank = static_cast<int>(first_failed);
  consensus.message = local_error;
  if (consensus.message.empty() && rank_ == first_failed) consensus.message = "unspecified error";
  broadcast(consensus.message, consensus.first_failed_rank);
  return consensus;
}

void Communicator::throw_if_any_failed(bool local_ok, const std::string& local_error) const {
  const Consensus consensus = all_ok(local_ok, local_error);
  if (!consensus.ok) {
    throw std::runtime_error("rank " + std::to_string(consensus.first_failed_rank) + ": " +
                             consensus.message);
  }
}

GatheredRows Communicator::gather_rows(const void* local_data, std::int64_t local_rows,
                                       std::size_t row_bytes, int root) const {
  return gather_rows_to(local_data, local_rows, row_bytes, root);
}

GatheredRows Communicator::all_gather_rows(const void* local_data, std::int64_t local_rows,
                                           std::size_t row_bytes) const {
  return gather_rows_to(local_data, local_rows, row_bytes, -1);
}

GatheredRows Communicator::gather_rows_to(const void* local_data, std::int64_t local_rows,
                                          std::size_t row_bytes, int root) const {
  if (local_rows < 0 || local_rows > INT_MAX) {
    throw std::invalid_argument("gather_rows: local row count " + std::to_string(local_rows) +
                                " outside [0, INT_MAX]");
  }
  if (row_bytes > static_cast<std::size_t>(INT_MAX)) {
    throw std::invalid_argument("gather_rows: a row is larger than 2 GiB");
  }
  const bool everywhere = root < 0;
  GatheredRows gathered;
  const int count = static_cast<int>(local_rows);
  std::vector<int> counts(everywhere || rank_ == root ? static_cast<std::size_t>(size_) : 0);
  check_mpi(everywhere ? MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm_)
                       : MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, root, comm_),
            "MPI_Gather(row counts)");

  std::vector<int> displacements(counts.size());
  std::int64_t total_rows = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    // Displacements are ints counted in rows: that bounds the total, not the bytes.
    if (total_rows > INT_MAX) throw std::runtime_error("gather_rows: more than INT_MAX rows");
    displacements[r] = static_cast<int>(total_rows);
    total_rows += counts[r];
    gathered.rows_per_rank.push_back(counts[r]);
  }
  if (row_bytes == 0) return gathered;  // nothing but counts to move
  gathered.bytes.resize(static_cast<std::size_t>(total_rows) * row_bytes);

  MPI_Datatype row_type;
  check_mpi(MPI_Type_contiguous(static_cast<int>(row_bytes), MPI_BYTE, &row_type),
            "MPI_Type_contiguous");
  MPI_Type_commit(&row_type);
  // A zero-row rank may pass nullptr; MPI wants a valid address regardless.
  static const unsigned char no_data = 0;
  const void* send = count > 0 ? local_data : &no_data;
  const int status = everywhere
                         ? MPI_Allgatherv(send, count, row_type, gathered.bytes.data(),
                                          counts.data(), displacements.data(), row_type, comm_)
                         : MPI_Gatherv(send, count, row_type, gathered.bytes.data(), counts.data(),
                                       displacements.data(), row_type, root, comm_);
  MPI_Type_free(&row_type);
  check_mpi(status, "MPI_Gatherv(rows)");
  return gathered;
}

}  // namespace larmor::parallel
