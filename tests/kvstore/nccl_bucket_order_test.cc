// The nccl kvstore's bucket order (kvstore/nccl_bucket_order.h) under CUDA's ordering rules, on
// CPU (Note [Stream ordering]): backward on each GPU's executor stream, the bucket, then the
// optimizer on the same stream must be free of races and see the sums.
#include "kvstore/nccl_bucket_order.h"

#include <gtest/gtest.h>

#include "tests/ndarray/stream_recorder.h"

namespace cohort {
namespace {

using testing::StreamRecorder;

class RecordedNccl final : public GroupedAllReduce {
 public:
  explicit RecordedNccl(StreamRecorder& r) : r_(r) {}
  void GroupStart() override { r_.GroupStart(); }
  void AllReduce(const NDArray& in, const NDArray& out, size_t, StreamOps::Stream s) override {
    r_.AllReduce(in, out, s);
  }
  void GroupEnd() override { r_.GroupEnd(); }

 private:
  StreamRecorder& r_;
};

// Two GPUs, two keys; backward writes each gradient on the executor's stream. With `wait` the
// caller waits for the bucket as the kvstore does before enqueueing the optimizer.
void RunStep(bool wait, StreamRecorder& r, std::vector<std::vector<NDArray>>& grads) {
  RecordedNccl nccl(r);
  const std::vector<int> devices = {0, 1};
  const BucketFences fences = BucketFences::Create(r, devices);
  std::vector<StreamOps::Stream> executor = {r.NewBlockingStream(0), r.NewBlockingStream(1)};
  grads = {{NDArray::Full({3}, 1.0), NDArray::Full({3}, 2.0)},
           {NDArray::Full({5}, 10.0), NDArray::Full({5}, 20.0)}};
  for (size_t k = 0; k < grads.size(); ++k) {
    for (size_t d = 0; d < devices.size(); ++d) {
      r.Kernel(executor[d], "backward", {}, {grads[k][d]});
    }
  }
  EnqueueBucket(r, nccl, fences, grads, {{}, {}});
  if (wait) WaitForBucket(r, fences);
  for (size_t k = 0; k < grads.size(); ++k) {
    for (size_t d = 0; d < devices.size(); ++d) {
      r.Kernel(executor[d], "optimizer", {grads[k][d]}, {});
    }
  }
}

TEST(NcclBucketOrder, BackwardBucketOptimizerHaveNoRace) {
  StreamRecorder r;
  std::vector<std::vector<NDArray>> grads;
  RunStep(true, r, grads);
  EXPECT_TRUE(r.Hazards().empty()) << r.Hazards().front();
  for (size_t d = 0; d < 2; ++d) {
    EXPECT_EQ(grads[0][d].ToVector<float>(), std::vector<float>(3, 3.0f));
    EXPECT_EQ(grads[1][d].ToVector<float>(), std::vector<float>(5, 30.0f));
  }
}

// The same step without the host's wait: the optimizer reads the sums while NCCL writes them.
// (The checker sees the race the wait prevents.)
TEST(NcclBucketOrder, OptimizerWithoutTheWaitRaces) {
  StreamRecorder r;
  std::vector<std::vector<NDArray>> grads;
  RunStep(false, r, grads);
  EXPECT_EQ(r.Hazards().size(), 4u);  // each key on each GPU
}

// One group per bucket, the keys in the same order on every GPU (NCCL matches the n-th call of
// each communicator; the recorder throws where their shapes differ, and the keys here have 3
// and 5 elements).
TEST(NcclBucketOrder, OneGroupSameKeyOrderOnEveryGpu) {
  StreamRecorder r;
  std::vector<std::vector<NDArray>> grads;
  RunStep(true, r, grads);
  std::vector<std::string> bucket;
  for (const std::string& name : r.Names()) {
    if (name.find("backward") == std::string::npos && name.find("optimizer") == std::string::npos)
      bucket.push_back(name.substr(0, name.find(" on ")));
  }
  const std::vector<std::string> expected = {
      "record",      "wait",        "record", "wait",   "allreduce 0", "allreduce 0",
      "allreduce 1", "allreduce 1", "record", "record", "host wait",   "host wait"};
  EXPECT_EQ(bucket, expected);
}

// Note [Gradient compression]: the values cast into each GPU's wire buffer before the group,
// summed there in bfloat16, cast back after it; all on the communication streams, so the
// optimizer after the wait sees the rounded sums and nothing races.
TEST(NcclBucketOrder, CompressedBucketCastsAroundTheGroup) {
  StreamRecorder r;
  RecordedNccl nccl(r);
  const std::vector<int> devices = {0, 1};
  const BucketFences fences = BucketFences::Create(r, devices);
  std::vector<StreamOps::Stream> executor = {r.NewBlockingStream(0), r.NewBlockingStream(1)};
  // 1 + 2^-10 is not a bfloat16 (8 bits): each GPU's value rounds to 1, the sum is 2.
  std::vector<std::vector<NDArray>> grads = {
      {NDArray::Full({3}, 1.0 + 1.0 / 1024), NDArray::Full({3}, 1.0 + 1.0 / 1024)},
      {NDArray::Full({5}, 10.0), NDArray::Full({5}, 20.0)}};
  for (size_t k = 0; k < grads.size(); ++k) {
    for (size_t d = 0; d < devices.size(); ++d)
      r.Kernel(executor[d], "backward", {}, {grads[k][d]});
  }
  const std::vector<NDArray> wire = {NDArray::Zeros({10}, DType::kBFloat16),
                                     NDArray::Zeros({10}, DType::kBFloat16)};
  EnqueueBucket(r, nccl, fences, grads, {{}, {}}, wire);
  WaitForBucket(r, fences);
  for (size_t k = 0; k < grads.size(); ++k) {
    for (size_t d = 0; d < devices.size(); ++d)
      r.Kernel(executor[d], "optimizer", {grads[k][d]}, {});
  }
  EXPECT_TRUE(r.Hazards().empty()) << r.Hazards().front();
  for (size_t d = 0; d < 2; ++d) {
    EXPECT_EQ(grads[0][d].ToVector<float>(), std::vector<float>(3, 2.0f));
    EXPECT_EQ(grads[1][d].ToVector<float>(), std::vector<float>(5, 30.0f));
  }
  std::vector<std::string> bucket;
  for (const std::string& name : r.Names()) {
    if (name.find("backward") == std::string::npos && name.find("optimizer") == std::string::npos)
      bucket.push_back(name.substr(0, name.find(" on ")));
  }
  const std::vector<std::string> expected = {
      "record", "wait",        "record",      "wait",        "cast",        "cast",     "cast",
      "cast",   "allreduce 0", "allreduce 0", "allreduce 1", "allreduce 1", "cast",     "cast",
      "cast",   "cast",        "record",      "record",      "host wait",   "host wait"};
  EXPECT_EQ(bucket, expected);
  // A wire buffer smaller than the bucket is refused before anything is enqueued for NCCL.
  const std::vector<NDArray> small = {NDArray::Zeros({4}, DType::kBFloat16),
                                      NDArray::Zeros({4}, DType::kBFloat16)};
  EXPECT_THROW(EnqueueBucket(r, nccl, fences, grads, {{}, {}}, small), Error);
}

// An all-reduce that fails inside the group still ends it, and the error reaches the caller.
TEST(NcclBucketOrder, AFailedCallEndsTheGroup) {
  class Failing final : public GroupedAllReduce {
   public:
    void GroupStart() override { open = true; }
    void AllReduce(const NDArray&, const NDArray&, size_t, StreamOps::Stream) override {
      throw Error("ncclAllReduce failed", __FILE__, __LINE__);
    }
    void GroupEnd() override { open = false; }
    bool open = false;
  } nccl;
  StreamRecorder r;
  const BucketFences fences = BucketFences::Create(r, {0});
  const std::vector<std::vector<NDArray>> values = {{NDArray::Full({3}, 1.0)}};
  EXPECT_THROW(EnqueueBucket(r, nccl, fences, values, values), Error);
  EXPECT_FALSE(nccl.open);
}

}  // namespace
}  // namespace cohort
