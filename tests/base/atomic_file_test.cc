#include "base/atomic_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"

namespace cohort {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path TempDir() {
  fs::path dir =
      fs::temp_directory_path() /
      ("cohort_atomic_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
       ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(AtomicFileWriter, CommitReplacesTheFile) {
  fs::path dir = TempDir(), target = dir / "ckpt.params";
  std::ofstream(target) << "old";
  AtomicFileWriter w(target.string());
  w.Write("new ", 4);
  EXPECT_EQ(Slurp(target), "old");  // untouched until Commit
  w.Write("data", 4);
  w.Commit();
  EXPECT_EQ(Slurp(target), "new data");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  fs::remove_all(dir);
}

TEST(AtomicFileWriter, AbandonedWriteLeavesTheOldFile) {
  fs::path dir = TempDir(), target = dir / "ckpt.params";
  std::ofstream(target) << "old";
  {
    AtomicFileWriter w(target.string());
    w.Write("partial", 7);
  }  // e.g. an exception while serialising
  EXPECT_EQ(Slurp(target), "old");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  fs::remove_all(dir);
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
