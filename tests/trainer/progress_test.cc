// The terminal progress line: its text, and that it stays off where output is not a terminal.
#include "trainer/progress.h"

#include <gtest/gtest.h>

#include <cstdio>

namespace cohort {
namespace {

TEST(ProgressLine, FormatsValidation) {
  EXPECT_EQ(ProgressLine::FormatValidation(3, 12, 79), "Epoch 3 validation [12/79]");
  EXPECT_EQ(ProgressLine::FormatValidation(0, 5, 0), "Epoch 0 validation [5]");
}

TEST(ProgressLine, FormatsEpochBatchSpeedAndMetrics) {
  EXPECT_EQ(ProgressLine::Format(3, 120, 469, 6012.4, {{"accuracy", 0.91234}, {"ce", 0.25}}),
            "Epoch 3 [120/469] 6012 samples/s accuracy=0.9123 ce=0.2500");
  EXPECT_EQ(ProgressLine::Format(0, 7, 0, 100, {}), "Epoch 0 [7] 100 samples/s");
  // Text data: tokens/s beside samples/s.
  EXPECT_EQ(ProgressLine::Format(1, 7, 10, 100, {{"perplexity", 9.5}}, 3200),
            "Epoch 1 [7/10] 100 samples/s 3200 tokens/s perplexity=9.5000");
  EXPECT_EQ(ProgressLine::Format(0, 120, 469, 6000, {}, -1, 65.4),
            "Epoch 0 [120/469] 6000 samples/s ETA 1:05");
  EXPECT_EQ(ProgressLine::Format(0, 1, 9, 6000, {}, -1, 7385),
            "Epoch 0 [1/9] 6000 samples/s ETA 2:03:05");
}

TEST(ProgressLine, StaysOffWhenTheOutputIsNotATerminal) {
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  {
    ProgressLine progress(file);
    EXPECT_FALSE(progress.enabled());
    EXPECT_FALSE(progress.Due());
    progress.Update(0, 1, 10, 5, {{"accuracy", 0.5}});
  }
  EXPECT_EQ(std::ftell(file), 0) << "nothing may reach a log file or a pipe";
  std::fclose(file);
}

}  // namespace
}  // namespace cohort
