// The default thread count: a process's share of the cores.
#include "base/env.h"

#include <gtest/gtest.h>

namespace cohort {
namespace {

TEST(ShareOfCores, OneProcessTakesEveryCore) {
  EXPECT_EQ(ShareOfCores(16, 16, 0), 16);
  EXPECT_EQ(ShareOfCores(16, 16, 1), 16);
}

TEST(ShareOfCores, UnboundMpiRanksSplitTheHost) {
  EXPECT_EQ(ShareOfCores(2, 2, 2), 1);
  EXPECT_EQ(ShareOfCores(16, 16, 4), 4);
  EXPECT_EQ(ShareOfCores(2, 2, 8), 1);  // more ranks than cores: still one thread each
}

TEST(ShareOfCores, AnAffinityMaskWins) {
  EXPECT_EQ(ShareOfCores(16, 4, 2), 4);  // mpirun --bind-to socket: the socket's cores
  EXPECT_EQ(ShareOfCores(16, 1, 0), 1);  // taskset -c 3
}

TEST(ShareOfCores, UnknownHardwareCountsAsOneCore) { EXPECT_EQ(ShareOfCores(0, 0, 0), 1); }

}  // namespace
}  // namespace cohort
