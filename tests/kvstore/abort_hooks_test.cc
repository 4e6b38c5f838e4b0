// Abort hooks (kvstore/collective_watchdog.h): what runs before a process ends a job it cannot
// finish, such as aborting NCCL communicators.
#include <gtest/gtest.h>

#include "kvstore/collective_watchdog.h"

namespace cohort {
namespace {

TEST(AbortHooks, RunOnceAndNotAfterRemoval) {
  int first = 0, second = 0;
  const int a = AddAbortHook([&] { ++first; });
  const int b = AddAbortHook([&] { ++second; });
  EXPECT_NE(a, b);
  RemoveAbortHook(b);
  RunAbortHooks();
  RunAbortHooks();  // the hooks ran already: an abort path reached twice does nothing more
  EXPECT_EQ(first, 1);
  EXPECT_EQ(second, 0);
}

}  // namespace
}  // namespace cohort
