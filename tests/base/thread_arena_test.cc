#include "base/thread_arena.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <numeric>
#include <set>
#include <thread>

#include "base/error.h"

namespace cohort {
namespace {

TEST(ThreadArena, ParallelForCoversTheRangeOnce) {
  ThreadArena arena(2);
  std::vector<std::atomic<int>> hits(10000);
  arena.ParallelFor(0, 10000, 64, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hits[i]++;
  });
  for (auto& h : hits) ASSERT_EQ(h.load(), 1);
}

TEST(ThreadArena, UsesAtMostItsThreads) {
  ThreadArena arena(2);
  std::atomic<int> running{0}, peak{0};
  arena.ParallelFor(0, 64, 1, [&](int64_t, int64_t) {
    int now = ++running;
    int seen = peak.load();
    while (now > seen && !peak.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    --running;
  });
  EXPECT_LE(peak.load(), 2);
  EXPECT_GE(peak.load(), 1);
}

// A count above the machine's cores (COHORT_NUM_THREADS=8 on 2 cores) is honoured: oneTBB would
// cap it at the cores, with a warning on stderr. Four items that each wait (up to 5 s) until all
// four run at once need four threads.
TEST(ThreadArena, MoreThreadsThanCoresWhenAskedFor) {
  const int threads = static_cast<int>(std::thread::hardware_concurrency()) + 2;
  ThreadArena arena(threads);
  std::atomic<int> running{0};
  std::atomic<bool> all_at_once{true};
  arena.ParallelFor(0, threads, 1, [&](int64_t, int64_t) {
    ++running;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (running.load() < threads) {
      if (std::chrono::steady_clock::now() > deadline) {
        all_at_once = false;
        break;
      }
      std::this_thread::yield();
    }
  });
  EXPECT_TRUE(all_at_once) << threads << " threads did not run at once";
}

TEST(ThreadArena, ExecuteReturnsTheValue) {
  ThreadArena arena(1);
  EXPECT_EQ(arena.num_threads(), 1);
  EXPECT_EQ(arena.Execute([] { return 42; }), 42);
}

TEST(SplitThreads, SharesCoresAmongDevices) {
  EXPECT_EQ(SplitThreads(8, 3), (std::vector<int>{3, 3, 2}));
  EXPECT_EQ(SplitThreads(2, 4), (std::vector<int>{1, 1, 1, 1}));
  EXPECT_EQ(SplitThreads(4, 2), (std::vector<int>{2, 2}));
  EXPECT_THROW(SplitThreads(4, 0), Error);
}

}  // namespace
}  // namespace cohort
