// TextIter: windows and next-token labels, the seed-only order, global batches that do not
// depend on the number of workers, the validation split, gzip input, and errors.
#include <gtest/gtest.h>

#include <set>

#include "io/text_iter.h"
#include "test_files.h"

namespace cohort {
namespace {

using testing::ScratchDir;

std::string Text(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s.push_back(static_cast<char>('a' + (i * 7 + i / 26) % 26));
  return s;
}

void Write(const std::string& path, const std::string& bytes) {
  testing::WriteFile(path, bytes, /*gzip=*/false);
}

// All batches of one epoch, as (data, label) rows.
std::vector<std::vector<float>> Epoch(TextIter& it, std::vector<std::vector<float>>* labels) {
  std::vector<std::vector<float>> rows;
  while (it.Next()) {
    const std::vector<float> d = it.Value().data[0].ToVector<float>();
    const std::vector<float> l = it.Value().label[0].ToVector<float>();
    const int64_t t = it.Value().data[0].shape()[1];
    for (size_t r = 0; r < d.size() / t; ++r) {
      rows.emplace_back(d.begin() + r * t, d.begin() + (r + 1) * t);
      if (labels) labels->emplace_back(l.begin() + r * t, l.begin() + (r + 1) * t);
    }
  }
  return rows;
}

TEST(TextIter, WindowsOfBytesWithTheNextByteAsLabel) {
  ScratchDir dir;
  const std::string text = Text(100);
  Write(dir.Path("a.txt"), text);
  TextIter it(
      {.files = {dir.Path("a.txt")}, .seq_len = 8, .stride = 8, .batch_size = 3, .shuffle = false});
  EXPECT_EQ(it.num_windows(), (100 - 8 - 1) / 8 + 1);
  EXPECT_EQ(it.batches_per_epoch(), it.num_windows() / 3);
  EXPECT_EQ(it.provide_data()[0].shape, Shape({3, 8}));
  std::vector<std::vector<float>> labels;
  const auto rows = Epoch(it, &labels);
  ASSERT_EQ(rows.size(), static_cast<size_t>(it.batches_per_epoch() * 3));
  for (size_t w = 0; w < rows.size(); ++w) {
    for (int k = 0; k < 8; ++k) {
      EXPECT_EQ(rows[w][k], static_cast<uint8_t>(text[w * 8 + k])) << w << "," << k;
      EXPECT_EQ(labels[w][k], static_cast<uint8_t>(text[w * 8 + k + 1])) << w << "," << k;
    }
  }
}

// One worker with batch 4 serves the same global batches as two workers with batch 2 each
// (worker 0 the first half of each), and the order depends on the seed alone.
TEST(TextIter, GlobalBatchesDoNotDependOnTheNumberOfWorkers) {
  ScratchDir dir;
  Write(dir.Path("a.txt"), Text(1000));
  const TextIterOptions base{
      .files = {dir.Path("a.txt")}, .seq_len = 10, .stride = 5, .batch_size = 4, .seed = 7};
  TextIter one(base);
  TextIterOptions half = base;
  half.batch_size = 2;
  half.num_parts = 2;
  TextIter w0(half);
  half.part_index = 1;
  TextIter w1(half);
  for (int epoch = 0; epoch < 2; ++epoch) {
    const auto all = Epoch(one, nullptr), a = Epoch(w0, nullptr), b = Epoch(w1, nullptr);
    ASSERT_EQ(all.size(), a.size() + b.size());
    for (size_t batch = 0; batch < a.size() / 2; ++batch) {
      for (int i = 0; i < 2; ++i) {
        EXPECT_EQ(all[batch * 4 + i], a[batch * 2 + i]);
        EXPECT_EQ(all[batch * 4 + 2 + i], b[batch * 2 + i]);
      }
    }
    one.Reset();
    w0.Reset();
    w1.Reset();
  }
  TextIterOptions other_seed = base;
  other_seed.seed = 8;
  TextIter first(base), second(base), other(other_seed);
  const auto order = Epoch(first, nullptr);
  EXPECT_EQ(order, Epoch(second, nullptr));
  EXPECT_NE(order, Epoch(other, nullptr));
}

TEST(TextIter, SplitsTrainAndValidationAndReadsGzip) {
  ScratchDir dir;
  const std::string text = Text(2000);
  testing::WriteFile(dir.Path("a.txt.gz"), text, /*gzip=*/true);
  TextIter train({.files = {dir.Path("a.txt.gz")},
                  .end_fraction = 0.9,
                  .seq_len = 10,
                  .batch_size = 2,
                  .shuffle = false});
  TextIter val({.files = {dir.Path("a.txt.gz")},
                .begin_fraction = 0.9,
                .seq_len = 10,
                .batch_size = 2,
                .shuffle = false,
                .max_batches = 3});
  EXPECT_EQ(train.num_tokens(), 1800);
  EXPECT_EQ(val.num_tokens(), 200);
  EXPECT_EQ(val.batches_per_epoch(), 3);
  const auto rows = Epoch(val, nullptr);
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[0][0], static_cast<uint8_t>(text[1800]));
}

TEST(TextIter, ErrorsNameTheProblem) {
  ScratchDir dir;
  Write(dir.Path("short.txt"), Text(20));
  try {
    TextIter it({.files = {dir.Path("short.txt")}, .seq_len = 10, .batch_size = 4});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("fewer than one global batch"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(TextIter({.files = {dir.Path("missing.txt")}}), Error);
  EXPECT_THROW(TextIter({.files = {}}), Error);
}

}  // namespace
}  // namespace cohort
