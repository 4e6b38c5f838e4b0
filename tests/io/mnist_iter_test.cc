#include "io/mnist_iter.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "io/idx_reader.h"
#include "test_files.h"

namespace cohort {
namespace {

using testing::IdxBytes;
using testing::ScratchDir;
using testing::WriteFile;

// n images of 2x3 pixels, image i filled with the value 10*i + pixel; label i % 10.
void WriteMnist(const ScratchDir& dir, int n, bool gzip) {
  std::vector<uint8_t> pixels, labels;
  for (int i = 0; i < n; ++i) {
    for (int p = 0; p < 6; ++p) pixels.push_back(static_cast<uint8_t>(10 * i + p));
    labels.push_back(static_cast<uint8_t>(i % 10));
  }
  WriteFile(dir.Path("images"), IdxBytes({static_cast<uint32_t>(n), 2, 3}, pixels), gzip);
  WriteFile(dir.Path("labels"), IdxBytes({static_cast<uint32_t>(n)}, labels), gzip);
}

MNISTIterOptions Options(const ScratchDir& dir) {
  MNISTIterOptions o;
  o.image = dir.Path("images");
  o.label = dir.Path("labels");
  o.batch = {.batch_size = 2, .shuffle = false};
  return o;
}

class MNISTIterFormats : public ::testing::TestWithParam<bool> {};

TEST_P(MNISTIterFormats, ReadsPlainAndGzipFiles) {
  ScratchDir dir;
  WriteMnist(dir, 5, GetParam());
  MNISTIter it(Options(dir));
  EXPECT_EQ(it.provide_data()[0].shape, Shape({2, 1, 2, 3}));
  EXPECT_EQ(it.provide_label()[0].name, "softmax_label");
  ASSERT_TRUE(it.Next());
  ASSERT_TRUE(it.Next());  // images 2 and 3
  std::vector<float> pixels = it.Value().data[0].ToVector<float>();
  EXPECT_FLOAT_EQ(pixels[0], 20.0f / 256);  // MXNet's scale
  EXPECT_FLOAT_EQ(pixels[11], 35.0f / 256);
  EXPECT_EQ(it.Value().label[0].ToVector<float>(), (std::vector<float>{2, 3}));
  // Errors about a label name the item of the label file (Trainer's Note [Naming a bad label]).
  EXPECT_EQ(it.DescribeLabelOf(it.Value().index[1]), "item 3 of '" + Options(dir).label + "'");
  ASSERT_TRUE(it.Next());
  EXPECT_EQ(it.Value().pad, 1);
  EXPECT_FALSE(it.Next());
}
INSTANTIATE_TEST_SUITE_P(PlainAndGzip, MNISTIterFormats, ::testing::Bool());

TEST(MNISTIter, ScaleMultipliesEachPixel) {
  ScratchDir dir;
  WriteMnist(dir, 4, false);
  MNISTIterOptions o = Options(dir);
  o.scale = 1.0f / 255;
  MNISTIter it(o);
  ASSERT_TRUE(it.Next());
  ASSERT_TRUE(it.Next());
  EXPECT_FLOAT_EQ(it.Value().data[0].ToVector<float>()[0], 20.0f / 255);
}

TEST(MNISTIter, FlatImages) {
  ScratchDir dir;
  WriteMnist(dir, 4, true);
  MNISTIterOptions o = Options(dir);
  o.flat = true;
  MNISTIter it(o);
  EXPECT_EQ(it.provide_data()[0].shape, Shape({2, 6}));
}

TEST(MNISTIter, ShardsAreDisjoint) {
  ScratchDir dir;
  WriteMnist(dir, 8, false);
  std::set<float> labels;
  for (int r = 0; r < 2; ++r) {
    MNISTIterOptions o = Options(dir);
    o.batch.num_parts = 2;
    o.batch.part_index = r;
    MNISTIter it(o);
    int batches = 0;
    while (it.Next()) {
      ++batches;
      for (float l : it.Value().label[0].ToVector<float>()) EXPECT_TRUE(labels.insert(l).second);
    }
    EXPECT_EQ(batches, 2);
  }
  EXPECT_EQ(labels.size(), 8u);
}

std::string ErrorOf(const MNISTIterOptions& o) {
  try {
    MNISTIter it(o);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(MNISTIter, BadFilesAreNamed) {
  ScratchDir dir;
  WriteMnist(dir, 4, true);
  MNISTIterOptions o = Options(dir);
  o.image = dir.Path("missing");
  EXPECT_NE(ErrorOf(o).find("cannot open '" + dir.Path("missing") + "'"), std::string::npos);

  o = Options(dir);
  o.image = dir.Path("labels");  // a label file where images belong
  EXPECT_NE(ErrorOf(o).find("wrong IDX magic 0x00000801: expected 0x00000803"), std::string::npos)
      << ErrorOf(o);

  // Three whole images and part of the fourth.
  std::string bytes = IdxBytes({4, 2, 3}, std::vector<uint8_t>(20, 7));
  WriteFile(dir.Path("short"), bytes, false);
  o = Options(dir);
  o.image = dir.Path("short");
  EXPECT_NE(ErrorOf(o).find("'" + dir.Path("short") +
                            "': truncated: the header says 4 records but the file ends inside "
                            "record 3"),
            std::string::npos)
      << ErrorOf(o);

  // A gzip stream cut short.
  WriteFile(dir.Path("cut.gz"), IdxBytes({4, 2, 3}, std::vector<uint8_t>(24, 7)), true);
  std::filesystem::resize_file(dir.Path("cut.gz"),
                               std::filesystem::file_size(dir.Path("cut.gz")) - 12);
  o.image = dir.Path("cut.gz");
  EXPECT_NE(ErrorOf(o).find(dir.Path("cut.gz")), std::string::npos) << ErrorOf(o);

  // 3 labels for 4 images.
  WriteFile(dir.Path("three"), IdxBytes({3}, {1, 2, 3}), false);
  o = Options(dir);
  o.label = dir.Path("three");
  EXPECT_NE(ErrorOf(o).find("has 3 labels but '" + dir.Path("images") + "' has 4 images"),
            std::string::npos)
      << ErrorOf(o);

  // A header that claims four billion images fails on the data, not on a huge allocation.
  WriteFile(dir.Path("huge"), IdxBytes({0xFFFFFFFFu, 28, 28}, std::vector<uint8_t>(100)), false);
  o = Options(dir);
  o.image = dir.Path("huge");
  EXPECT_NE(ErrorOf(o).find("truncated: the header says 4294967295 records"), std::string::npos);

  // Data after what the header declares (zeros appended to a gzip file) is refused, read no
  // further than one byte past the records.
  WriteFile(dir.Path("long.gz"), IdxBytes({4, 2, 3}, std::vector<uint8_t>(24 + 1000000, 0)), true);
  o = Options(dir);
  o.image = dir.Path("long.gz");
  EXPECT_NE(ErrorOf(o).find("data after the 4 records its header declares"), std::string::npos)
      << ErrorOf(o);

  // An endless file of zeros fails on its header, at once.
  o = Options(dir);
  o.label = "/dev/zero";
  EXPECT_NE(ErrorOf(o).find("wrong IDX magic 0x00000000"), std::string::npos) << ErrorOf(o);
}

TEST(MNISTIter, FashionMnistFromTheDebianPackage) {
  const std::string root = "/usr/share/datasets/fashion-mnist/";
  if (!std::filesystem::exists(root + "t10k-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  }
  MNISTIterOptions o;
  o.image = root + "t10k-images-idx3-ubyte.gz";
  o.label = root + "t10k-labels-idx1-ubyte.gz";
  o.batch = {.batch_size = 1000, .shuffle = false};
  MNISTIter it(o);
  EXPECT_EQ(it.num_samples(), 10000);
  int batches = 0;
  std::vector<int> counts(10, 0);
  while (it.Next()) {
    ++batches;
    for (float l : it.Value().label[0].ToVector<float>()) counts[static_cast<int>(l)]++;
  }
  EXPECT_EQ(batches, 10);
  EXPECT_EQ(counts, std::vector<int>(10, 1000));  // the test set has 1000 images per class
}

}  // namespace
}  // namespace cohort
