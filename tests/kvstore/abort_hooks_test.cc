// Abort hooks (kvstore/collective_watchdog.h): what runs before a process ends a job it cannot
// finish, such as aborting NCCL communicators; and the collective deadline's messages.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "kvstore/collective_watchdog.h"

namespace cohort {
namespace {

TEST(AbortHooks, RunOnceAndNotAfterRemoval) {
  int first = 0, second = 0;
  const int a = AddAbortHook([&] { ++first; });
  const int b = AddAbortHook([&] { ++second; });
  EXPECT_NE(a, b);
  RemoveAbortHook(b);
  EXPECT_EQ(RunAbortHooks(), 1);
  // The hooks ran already: an abort path reached twice does nothing more.
  EXPECT_EQ(RunAbortHooks(), 0);
  EXPECT_EQ(first, 1);
  EXPECT_EQ(second, 0);
}

// Past the deadline the process exits 124 naming the collective and, when the transport noted
// it, the rank it waits on.
TEST(CollectiveWatchdogDeathTest, NamesTheRankItWaitsOn) {
  EXPECT_EXIT(
      {
        CollectiveWatchdog dog(0, 0.3);
        CollectiveWatchdog::Scope scope(dog, "test allreduce", 64);
        NoteWaitingOn(7);
        std::this_thread::sleep_for(std::chrono::seconds(5));
      },
      ::testing::ExitedWithCode(CollectiveWatchdog::kExitCode),
      "rank 0: test allreduce #1 \\(64 bytes\\) waited .* it waits on rank 7");
}

// A process that was itself stopped (SIGSTOP, then SIGCONT) says so instead of blaming the
// other workers for the wait.
TEST(CollectiveWatchdogDeathTest, AStoppedProcessBlamesItself) {
  EXPECT_EXIT(
      {
        CollectiveWatchdog dog(0, 0.8);
        CollectiveWatchdog::Scope scope(dog, "test allreduce", 64);
        const pid_t self = getpid();
        if (fork() == 0) {  // wakes the stopped process after a second and a half
          std::this_thread::sleep_for(std::chrono::milliseconds(1500));
          kill(self, SIGCONT);
          _exit(0);
        }
        // The watchdog's thread ticks by now (its first tick is its reference: had it started
        // after the stop, nothing would show that the process had been stopped).
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        raise(SIGSTOP);
        std::this_thread::sleep_for(std::chrono::seconds(5));
      },
      ::testing::ExitedWithCode(CollectiveWatchdog::kExitCode), "this process was suspended");
}

}  // namespace
}  // namespace cohort
