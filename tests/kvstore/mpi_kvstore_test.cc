// Runs under mpirun -np 2 with COHORT_RING_MIN_KB=64 and COHORT_KVSTORE_BUCKET_MB=1: the mpi
// kvstore's PushPull, in place and through the store, sums every device of every worker for
// keys fused into one bucket, a key reduced alone by MPI_Allreduce and a key large enough for the
// pipelined ring (Note [Ring all-reduce]), and every worker ends with the same values.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include "kvstore/kvstore.h"

namespace cohort {
namespace {

// Key k has sizes[k] floats; device d of worker r holds (r * 2 + d + 1) * (i % 7 + 1) at i.
// With 1 MB buckets: the first three share a bucket summed by MPI_Allreduce, the 1.2 MB key is
// alone and summed by the ring, and the last is alone and summed by MPI_Allreduce in place.
const std::vector<int64_t> kSizes = {3, 5, 100, 300000, 2000};

float Value(int rank, int device, int64_t i) {
  return static_cast<float>((rank * 2 + device + 1) * (i % 7 + 1));
}

// The values each device of this worker pushes.
std::vector<std::vector<NDArray>> Values(int rank) {
  std::vector<std::vector<NDArray>> values(kSizes.size());
  for (size_t k = 0; k < kSizes.size(); ++k) {
    for (int d = 0; d < 2; ++d) {
      std::vector<float> v(static_cast<size_t>(kSizes[k]));
      for (int64_t i = 0; i < kSizes[k]; ++i) v[i] = Value(rank, d, i);
      values[k].push_back(NDArray::FromVector<float>({kSizes[k]}, v));
    }
  }
  return values;
}

// Counts the elements of `arrays` (per key, per device) that differ from the sum over the two
// workers of two devices each: (1 + 2 + 3 + 4) * (i % 7 + 1).
int64_t Wrong(const std::vector<std::vector<NDArray>>& arrays) {
  int64_t wrong = 0;
  for (size_t k = 0; k < kSizes.size(); ++k) {
    for (const NDArray& a : arrays[k]) {
      const std::vector<float> got = a.ToVector<float>();
      for (int64_t i = 0; i < kSizes[k]; ++i) wrong += got[i] != 10.0f * (i % 7 + 1);
    }
  }
  return wrong;
}

TEST(MpiKVStore, PushPullSumsEveryDeviceOfEveryWorker) {
  auto kv = KVStore::Create("mpi");
  ASSERT_EQ(kv->num_workers(), 2);
  std::vector<int> keys;
  std::vector<NDArray> initial;
  for (size_t k = 0; k < kSizes.size(); ++k) {
    keys.push_back(static_cast<int>(k));
    initial.push_back(NDArray::Zeros({kSizes[k]}));
  }
  kv->Init(keys, initial);
  // In place, twice (the second reuses the planned buckets).
  for (int step = 0; step < 2; ++step) {
    const auto values = Values(kv->rank());
    kv->PushPull(keys, values, values);
    EXPECT_EQ(Wrong(values), 0) << "in place, step " << step;
  }
  // Through the store, into separate outputs.
  const auto values = Values(kv->rank());
  std::vector<std::vector<NDArray>> outs(kSizes.size());
  for (size_t k = 0; k < kSizes.size(); ++k) {
    for (int d = 0; d < 2; ++d) outs[k].push_back(NDArray::Zeros({kSizes[k]}));
  }
  kv->PushPull(keys, values, outs);
  EXPECT_EQ(Wrong(outs), 0) << "into outputs";
}

// A COHORT_KVSTORE_BUCKET_MB far above the gradients' size allocates what they need, not the
// cap (CTest also runs this binary with 4096 MB buckets: 4 GiB a rank before).
TEST(MpiKVStore, BucketsHoldWhatTheGradientsNeed) {
  auto kv = KVStore::Create("mpi");
  std::vector<int> keys;
  std::vector<NDArray> initial;
  for (size_t k = 0; k < kSizes.size(); ++k) {
    keys.push_back(static_cast<int>(k));
    initial.push_back(NDArray::Zeros({kSizes[k]}));
  }
  kv->Init(keys, initial);
  const auto values = Values(kv->rank());
  kv->PushPull(keys, values, values);
  EXPECT_EQ(Wrong(values), 0);
  rusage usage{};
  ASSERT_EQ(getrusage(RUSAGE_SELF, &usage), 0);
  EXPECT_LT(usage.ru_maxrss, 512 * 1024) << "KB resident at most";
}

}  // namespace
}  // namespace cohort
