// Checkpoint files: the params file is written last (it marks a complete pair), and temporary
// files a killed writer left are removed while a live writer's are kept.
#include "trainer/checkpoint.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "ndarray/params_io.h"
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
  SaveCheckpoint(prefix, {3}, sym::Variable("x"), {{"w", w}}, {}, optimizer.get());
  const auto params = std::filesystem::last_write_time(CheckpointParamsPath(prefix, 3));
  const auto states = std::filesystem::last_write_time(CheckpointStatesPath(prefix, 3));
  EXPECT_LE(states, params);
}

// checkpoint:global_batch is a batch of at least one sample; any other checkpoint: entry is no
// entry of Cohort's (both were taken silently).
TEST(Checkpoint, GlobalBatchIsCheckedWhenRead) {
  testing::ScratchDir dir;
  const std::string prefix = dir.Path("m");
  const std::string path = CheckpointStatesPath(prefix, {1});
  EXPECT_EQ(CheckpointGlobalBatch(prefix, {1}), std::nullopt);  // no file
  auto write = [&](const std::string& name, NDArray value) {
    SaveParamsFile(path,
                   {{"optimizer:sgd", name}, {NDArray::FromVector<int64_t>({1}, {0}), value}, {}});
  };
  write("checkpoint:global_batch", NDArray::FromVector<int64_t>({1}, {64}));
  EXPECT_EQ(CheckpointGlobalBatch(prefix, {1}), 64);
  for (const NDArray& bad :
       {NDArray::FromVector<int64_t>({1}, {0}), NDArray::FromVector<int64_t>({1}, {-5}),
        NDArray::FromVector<int64_t>({2}, {8, 8}), NDArray::Zeros({0}, DType::kInt64),
        NDArray::Full({1}, 64.0)}) {
    write("checkpoint:global_batch", bad);
    EXPECT_THROW(CheckpointGlobalBatch(prefix, {1}), DataError) << bad.shape();
  }
  write("checkpoint:step", NDArray::FromVector<int64_t>({1}, {1}));
  try {
    CheckpointGlobalBatch(prefix, {1});
    FAIL() << "checkpoint:step was taken";
  } catch (const DataError& e) {
    EXPECT_NE(e.message().find("'checkpoint:step' is no entry of a checkpoint"), std::string::npos);
  }
  write("checkpoint:loss_scale_log2", NDArray::Full({1}, 16.0));  // float32: refused
  EXPECT_THROW(CheckpointGlobalBatch(prefix, {1}), DataError);
  write("checkpoint:loss_scale_log2", NDArray::FromVector<int64_t>({1}, {16}));
  EXPECT_EQ(CheckpointEntries(prefix, {1}).at("checkpoint:loss_scale_log2"), 16);
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

// Note [Checkpoint positions]: the latest complete checkpoint is the largest (epoch, batch) whose
// params file exists; a newer checkpoint removes the older mid-epoch ones.
TEST(Checkpoint, LatestPositionAndOlderStepCheckpoints) {
  testing::ScratchDir dir;
  const std::string prefix = dir.Path("m");
  EXPECT_FALSE(LatestCheckpoint(prefix).has_value());
  EXPECT_EQ(CheckpointParamsPath(prefix, {2, 0}), prefix + "-0002.params");
  EXPECT_EQ(CheckpointParamsPath(prefix, {2, 150}), prefix + "-0002-00000150.params");
  EXPECT_EQ(CheckpointStatesPath(prefix, {0, 7}), prefix + "-0000-00000007.states");
  for (const char* name :
       {"m-0001.params", "m-0001-00000040.params", "m-0001-00000040.states",
        "m-0001-00000020.params", "m-0002-00000003.states",  // states alone: incomplete
        "m-0002.params.tmp.1", "m-symbol.json", "mm-0009.params", "m-12.params"}) {
    std::ofstream(dir.Path(name)) << "x";
  }
  ASSERT_TRUE(LatestCheckpoint(prefix).has_value());
  EXPECT_EQ(*LatestCheckpoint(prefix), (CheckpointPosition{1, 40}));
  EXPECT_EQ(RemoveOlderStepCheckpoints(prefix, {1, 40}), 1);  // 1-20 goes, 1-40 stays
  EXPECT_FALSE(std::filesystem::exists(dir.Path("m-0001-00000020.params")));
  EXPECT_TRUE(std::filesystem::exists(dir.Path("m-0001-00000040.params")));

  auto optimizer = Optimizer::Create("sgd", {});
  SaveCheckpoint(prefix, {2, 0}, sym::Variable("x"), {{"w", NDArray::Full({2}, 1.0)}}, {},
                 optimizer.get());
  EXPECT_EQ(*LatestCheckpoint(prefix), (CheckpointPosition{2, 0}));
  EXPECT_FALSE(std::filesystem::exists(dir.Path("m-0001-00000040.params")));
  EXPECT_FALSE(std::filesystem::exists(dir.Path("m-0001-00000040.states")));
  EXPECT_TRUE(std::filesystem::exists(dir.Path("m-0001.params")));  // epoch checkpoints stay
}

}  // namespace
}  // namespace cohort
