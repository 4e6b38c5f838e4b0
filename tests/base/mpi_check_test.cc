// Runs under mpirun -np 2: MPI_CHECK passes successful calls through and turns a failing call into
// a cohort::Error carrying MPI's own error text.
#include <gtest/gtest.h>

#include "base/error_mpi.h"

namespace cohort {
namespace {

TEST(MpiCheck, AllreduceAcrossRanks) {
  int rank = 0, size = 0;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  ASSERT_EQ(size, 2);
  int value = rank + 1, sum = 0;
  MPI_CHECK(MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  EXPECT_EQ(sum, 3);
}

TEST(MpiCheck, FailingCallThrowsWithMpiText) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int value = 0;
  try {
    MPI_CHECK(MPI_Bcast(&value, 1, MPI_INT, /*root=*/99, MPI_COMM_WORLD));
    FAIL() << "a broadcast from rank 99 of 2 succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("MPI_Bcast"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("MPI_ERR_ROOT"), std::string::npos) << e.what();
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

}  // namespace
}  // namespace cohort
