// The bucket plan and the communication thread of Note [Overlapped push].
#include "kvstore/overlapped_push_pull.h"

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <thread>

namespace cohort {
namespace {

using Ranges = std::vector<std::pair<size_t, size_t>>;

TEST(PlanBuckets, ContiguousRangesUnderTheCapAndBigKeysAlone) {
  EXPECT_EQ(PlanBuckets({4, 4, 4, 4}, 8), (Ranges{{0, 2}, {2, 4}}));
  EXPECT_EQ(PlanBuckets({1, 20, 1, 1}, 8), (Ranges{{0, 1}, {1, 2}, {2, 4}}));
  EXPECT_EQ(PlanBuckets({3, 3, 3}, 100), (Ranges{{0, 3}}));
  EXPECT_EQ(PlanBuckets({}, 8), Ranges{});
}

// Each bucket runs once all its keys are ready, buckets in order, on another thread.
TEST(OverlappedPushPull, RunsEachBucketWhenItsLastKeyIsReady) {
  std::vector<size_t> ran;
  std::thread::id caller = std::this_thread::get_id(), runner;
  OverlappedPushPull overlap([&](size_t bucket) {
    ran.push_back(bucket);
    runner = std::this_thread::get_id();
  });
  const Ranges buckets = {{0, 2}, {2, 3}, {3, 5}};
  for (int step = 0; step < 3; ++step) {
    ran.clear();
    overlap.Start(buckets);
    overlap.Ready(2);  // bucket 1 is complete, but bucket 0 goes first
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_TRUE(ran.empty()) << "a bucket ran before its keys were ready";
    overlap.Ready(1);
    overlap.Ready(0);
    overlap.Ready(4);
    overlap.Ready(3);
    overlap.Finish();
    EXPECT_EQ(ran, (std::vector<size_t>{0, 1, 2}));
    EXPECT_NE(runner, caller);
  }
}

TEST(OverlappedPushPull, FinishRethrowsAnErrorAndTheNextStepRuns) {
  bool fail = true;
  std::vector<size_t> ran;
  OverlappedPushPull overlap([&](size_t bucket) {
    if (fail && bucket == 0) throw std::runtime_error("allreduce failed");
    ran.push_back(bucket);
  });
  const Ranges buckets = {{0, 1}, {1, 2}};
  overlap.Start(buckets);
  overlap.Ready(0);
  overlap.Ready(1);
  EXPECT_THROW(overlap.Finish(), std::runtime_error);
  EXPECT_TRUE(ran.empty()) << "the buckets after a failed one are skipped";
  fail = false;
  overlap.Start(buckets);
  overlap.Ready(1);
  overlap.Ready(0);
  overlap.Finish();
  EXPECT_EQ(ran, (std::vector<size_t>{0, 1}));
}

}  // namespace
}  // namespace cohort
