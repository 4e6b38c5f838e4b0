// Runs under mpirun with 2 and with 3 ranks: the pipelined ring (Note [Ring all-reduce]) sums like
// MPI_Allreduce for counts that do not divide into segments or chunks, and every rank ends with
// the same bits.
#include "kvstore/ring_allreduce.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace cohort {
namespace {

TEST(RingAllreduce, SumsLikeMpiOnEveryRankAlike) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  RingAllreduce ring(MPI_COMM_WORLD, /*chunk_bytes=*/64);  // 16 floats a message: many chunks
  for (int64_t count : {0, 1, 2, 5, 16, 17, 33, 1000, 100003}) {
    std::mt19937 rng(static_cast<unsigned>(count * 31 + rank));
    std::uniform_real_distribution<float> value(-1, 1);
    std::vector<float> data(static_cast<size_t>(count)), want;
    for (float& v : data) v = value(rng);
    want = data;
    MPI_Allreduce(MPI_IN_PLACE, want.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM,
                  MPI_COMM_WORLD);
    ring.Sum(data.data(), count);
    // Two ranks add one pair: exact. Three add in ring order, which MPI may not. (No ASSERT:
    // a rank that returned early would leave the others in the next collective.)
    int64_t off = 0;
    for (int64_t i = 0; i < count; ++i) off += std::fabs(data[i] - want[i]) > (size == 2 ? 0 : 1e-6f);
    EXPECT_EQ(off, 0) << "count " << count;
    std::vector<float> lowest = data, highest = data;
    MPI_Allreduce(MPI_IN_PLACE, lowest.data(), static_cast<int>(count), MPI_FLOAT, MPI_MIN,
                  MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, highest.data(), static_cast<int>(count), MPI_FLOAT, MPI_MAX,
                  MPI_COMM_WORLD);
    EXPECT_EQ(lowest, highest) << "count " << count << ": ranks hold different sums";
  }
}

}  // namespace
}  // namespace cohort
