// The main of every MPI test (run by CTest through mpirun): initialises MPI, prints results on
// rank 0 only, and fails on every rank when a test failed on any.
#include <gtest/gtest.h>
#include <mpi.h>

#include "base/logging.h"

int main(int argc, char** argv) {
  int provided = 0;  // as the mpi kvstore asks: a communication thread may reduce
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  cohort::SetLogLevel("warn");
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int failed = RUN_ALL_TESTS();
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any_failed;
}
