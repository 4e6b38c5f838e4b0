#include "base/atomic_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "tests/test_util.h"

namespace cohort {
namespace {

namespace fs = std::filesystem;

TEST(AtomicFileWriter, CommitReplacesTheFile) {
  const testing::ScratchDir scratch;
  const fs::path dir = scratch.dir(), target = dir / "ckpt.params";
  std::ofstream(target) << "old";
  AtomicFileWriter w(target.string());
  w.Write("new ", 4);
  EXPECT_EQ(testing::ReadFile(target), "old");  // untouched until Commit
  w.Write("data", 4);
  w.Commit();
  EXPECT_EQ(testing::ReadFile(target), "new data");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

TEST(AtomicFileWriter, AbandonedWriteLeavesTheOldFile) {
  const testing::ScratchDir scratch;
  const fs::path dir = scratch.dir(), target = dir / "ckpt.params";
  std::ofstream(target) << "old";
  {
    AtomicFileWriter w(target.string());
    w.Write("partial", 7);
  }  // e.g. an exception while serialising
  EXPECT_EQ(testing::ReadFile(target), "old");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

TEST(AtomicFileWriter, UnwritableDirectoryNamesThePath) {
  try {
    AtomicFileWriter w("/nonexistent-dir/x.params");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x.params"), std::string::npos);
  }
}

}  // namespace
}  // namespace cohort
