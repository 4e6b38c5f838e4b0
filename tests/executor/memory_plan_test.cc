#include "executor/memory_plan.h"

#include <gtest/gtest.h>

namespace cohort {
namespace {

TEST(PlanMemory, DeadArraysFreeTheirBlocks) {
  // a: steps 0-1, b: 1-2, c: 2-3 (a is dead when c starts), d: 3-3.
  MemoryPlan p = PlanMemory({{100, 0, 1}, {100, 1, 2}, {100, 2, 3}, {50, 3, 3}});
  EXPECT_EQ(p.block_of[2], p.block_of[0]);  // c reuses a's block
  EXPECT_NE(p.block_of[1], p.block_of[0]);
  EXPECT_EQ(p.block_of[3], p.block_of[1]);  // d fits b's block once b is dead
  EXPECT_EQ(p.total(), 200);
}

TEST(PlanMemory, OverlappingLifetimesNeverShare) {
  MemoryPlan p = PlanMemory({{10, 0, 5}, {10, 1, 4}, {10, 2, 3}});
  EXPECT_EQ(p.block_size.size(), 3u);
}

TEST(PlanMemory, InPlaceTakesTheInputsBlockOnlyWhenItDies) {
  // b is written in place of a at step 1, where a is read for the last time.
  MemoryPlan p = PlanMemory({{10, 0, 1}, {10, 1, 2, /*inplace_of=*/0}});
  EXPECT_EQ(p.block_of[1], p.block_of[0]);
  // a is still read at step 3: no in-place.
  MemoryPlan q = PlanMemory({{10, 0, 3}, {10, 1, 2, 0}});
  EXPECT_NE(q.block_of[1], q.block_of[0]);
}

TEST(PlanMemory, SpacesNeverShareBlocks) {
  // a (space 0) dies before b and c start; b in space 1 cannot take its block, c in space 0 can,
  // and in-place across spaces is not taken.
  PlannedArray a{100, 0, 1}, b{100, 2, 3}, c{50, 2, 3}, d{100, 1, 2, /*inplace_of=*/0};
  b.space = 1;
  d.space = 1;
  MemoryPlan p = PlanMemory({a, b, c});
  EXPECT_NE(p.block_of[1], p.block_of[0]);
  EXPECT_EQ(p.block_of[2], p.block_of[0]);
  EXPECT_EQ(p.block_space, (std::vector<int>{0, 1}));
  // A dead block of the other space is not grown either.
  PlannedArray big{500, 2, 3};
  big.space = 1;
  EXPECT_EQ(PlanMemory({a, big}).block_size.size(), 2u);
  MemoryPlan q = PlanMemory({a, d});
  EXPECT_NE(q.block_of[1], q.block_of[0]);
}

TEST(PlanMemory, PersistentArraysKeepTheirBlocks) {
  PlannedArray out{10, 0, 0};
  out.persistent = true;
  MemoryPlan p = PlanMemory({out, {10, 1, 1}, {10, 2, 2}});
  EXPECT_NE(p.block_of[1], p.block_of[0]);
  EXPECT_EQ(p.block_of[2], p.block_of[1]);
}

TEST(PlanMemory, SmallestFittingBlockIsChosen) {
  MemoryPlan p = PlanMemory({{100, 0, 0}, {10, 0, 0}, {10, 1, 1}});
  EXPECT_EQ(p.block_of[2], p.block_of[1]);
}

}  // namespace
}  // namespace cohort
