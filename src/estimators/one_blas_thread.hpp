// One OpenBLAS thread for a scope. Blocked LAPACK factorisations sum in an
// order that depends on OpenBLAS's thread count, which follows each MPI rank's
// core binding; one thread makes their results (a PERK model, a dictionary's
// basis) the same whatever mpirun does, and so the maps the same for any rank
// count. A no-op when the LAPACK in use is not OpenBLAS.
#pragma once

extern "C" {
void openblas_set_num_threads(int) __attribute__((weak));
int openblas_get_num_threads(void) __attribute__((weak));
}

namespace larmor::estimators {

class OneBlasThread {
 public:
  OneBlasThread() {
    if (openblas_get_num_threads != nullptr && openblas_set_num_threads != nullptr) {
      saved_ = openblas_get_num_threads();
      openblas_set_num_threads(1);
    }
  }
  ~OneBlasThread() {
    if (saved_ > 0) openblas_set_num_threads(saved_);
  }
  OneBlasThread(const OneBlasThread&) = delete;
  OneBlasThread& operator=(const OneBlasThread&) = delete;

 private:
  int saved_ = -1;
};

}  // namespace larmor::estimators
