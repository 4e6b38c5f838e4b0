// GradientBucketer over a host kvstore (Note [Overlapped push]): buckets by falling priority,
// each reduced once its keys are ready, and one PushPull of every key when the kind does not
// overlap.
#include "kvstore/gradient_bucketer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>

#include "base/env.h"
#include "kvstore/host_kvstore.h"

namespace cohort {
namespace {

// One worker's kvstore that says it may overlap (or not), recording the keys of every PushPull.
class RecordingStore : public HostKVStore {
 public:
  explicit RecordingStore(bool overlaps)
      : HostKVStore("recording", CreateSingleWorkerComm()), overlaps_(overlaps) {}
  bool CanOverlap() const override { return overlaps_; }
  bool OverlapsByDefault() const override { return overlaps_; }
  void PushPull(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& values,
                const std::vector<std::vector<NDArray>>& outs, int priority) override {
    {
      std::lock_guard<std::mutex> lock(mutex);
      calls.push_back(keys);
    }
    HostKVStore::PushPull(keys, values, outs, priority);
  }
  std::mutex mutex;
  std::vector<std::vector<int>> calls;

 private:
  bool overlaps_;
};

// Keys 0..3 of 1, 600K, 1 and 600K floats (2.4 MB each for the big ones), on two devices whose
// values are d + 1.
struct Step {
  std::vector<int> keys = {0, 1, 2, 3}, priorities = {0, 1, 2, 3};
  std::vector<std::vector<NDArray>> values;
  Step() {
    for (int64_t n : {int64_t{1}, int64_t{600000}, int64_t{1}, int64_t{600000}}) {
      values.push_back({});
      for (int d = 0; d < 2; ++d) {
        values.back().push_back(NDArray::Empty({n}));
        values.back().back().Fill(d + 1);
      }
    }
  }
  // The store's keys, with zeros of each key's size.
  void InitKeys(KVStore& kv) const {
    std::vector<NDArray> zeros;
    for (const auto& on_devices : values) zeros.push_back(NDArray::Zeros(on_devices[0].shape()));
    kv.Init(keys, zeros);
  }
};

TEST(GradientBucketer, BucketsByFallingPriorityEachOnceItsKeysAreReady) {
  if (Env().kvstore_overlap == 0) GTEST_SKIP() << "COHORT_KVSTORE_OVERLAP=0";
  RecordingStore kv(true);
  Step step;
  step.InitKeys(kv);
  GradientBucketer bucketer(kv);
  ASSERT_TRUE(bucketer.overlaps());
  // 4 MB buckets over keys 3, 2, 1, 0 (falling priority): {3, 2} and {1, 0}.
  bucketer.Start(step.keys, step.values, step.values, step.priorities);
  bucketer.KeyReady(3);
  bucketer.KeyReady(2);
  for (int i = 0; i < 2000; ++i) {  // the first bucket runs before the rest is ready
    {
      std::lock_guard<std::mutex> lock(kv.mutex);
      if (!kv.calls.empty()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  {
    std::lock_guard<std::mutex> lock(kv.mutex);
    EXPECT_EQ(kv.calls, (std::vector<std::vector<int>>{{3, 2}}));
  }
  bucketer.KeyReady(1);
  bucketer.KeyReady(0);
  bucketer.Finish();
  EXPECT_EQ(kv.calls, (std::vector<std::vector<int>>{{3, 2}, {1, 0}}));
  for (const auto& on_devices : step.values) {
    for (const NDArray& v : on_devices) EXPECT_EQ(v.ToVector<float>()[0], 3.0f);  // 1 + 2
  }
  EXPECT_THROW(bucketer.KeyReady(7), Error);
}

TEST(GradientBucketer, AKindThatDoesNotOverlapReducesEveryKeyAfterBackward) {
  RecordingStore kv(false);
  Step step;
  step.InitKeys(kv);
  GradientBucketer bucketer(kv);
  ASSERT_FALSE(bucketer.overlaps());
  bucketer.Start(step.keys, step.values, step.values, step.priorities);
  for (int key : {3, 2, 1, 0}) bucketer.KeyReady(key);  // ignored
  EXPECT_TRUE(kv.calls.empty());
  bucketer.Finish();
  EXPECT_EQ(kv.calls, (std::vector<std::vector<int>>{{0, 1, 2, 3}}));
  EXPECT_EQ(step.values[3][1].ToVector<float>()[599999], 3.0f);
}

}  // namespace
}  // namespace cohort
