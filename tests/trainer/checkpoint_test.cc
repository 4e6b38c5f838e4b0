// Checkpoint files: the params file is written last (it marks a complete pair), and temporary
// files a killed writer left are removed while a live writer's are kept.
#include "trainer/checkpoint.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "symbol/ops.h"
#include "tests/test_util.h"

namespace cohort {
namespace {

TEST(Checkpoint, ParamsAreWrittenAfterStates) {
  testing::ScratchDir dir;
  const std::string prefix = dir.Path("m");
  auto optimizer = Optimizer::Create("sgd", {.momentum = 0.9});
  const NDArray w = NDArray::Full({2}, 1.0), g = NDArray::Full({2}, 0.5);
  optimizer->Update(0, w, g);
  SaveCheckpoint(prefix, 3, sym::Variable("x"), {{"w", w}}, {}, optimizer.get());
  const auto params = std::filesystem::last_write_time(CheckpointParamsPath(prefix, 3));
  const auto states = std::filesystem::last_write_time(CheckpointStatesPath(prefix, 3));
  EXPECT_LE(states, params);
}

TEST(Checkpoint, StaleTemporariesOfKilledWritersAreRemoved) {
  testing::ScratchDir dir;
  const std::string prefix = dir.Path("m");
  const pid_t child = fork();  // a process that has ended: its pid names a killed writer
  if (child == 0) _exit(0);
  ASSERT_GT(child, 0);
  waitpid(child, nullptr, 0);
  const std::string dead = std::to_string(child), alive = std::to_string(getpid());
  for (const std::string& name : {"m-0002.params.tmp." + dead, "m-0002.states.tmp." + dead,
                                  "m-0003.params.tmp." + alive, "other-0001.params.tmp." + dead,
                                  std::string("m-0001.params")}) {
    std::ofstream(dir.Path(name)) << "x";
  }
  EXPECT_EQ(RemoveStaleCheckpointTemporaries(prefix), 2);
  EXPECT_FALSE(std::filesystem::exists(dir.Path("m-0002.params.tmp." + dead)));
  EXPECT_FALSE(std::filesystem::exists(dir.Path("m-0002.states.tmp." + dead)));
  EXPECT_TRUE(std::filesystem::exists(dir.Path("m-0003.params.tmp." + alive)));  // a live writer
  EXPECT_TRUE(std::filesystem::exists(dir.Path("other-0001.params.tmp." + dead)));  // not ours
  EXPECT_TRUE(std::filesystem::exists(dir.Path("m-0001.params")));
}

}  // namespace
}  // namespace cohort
