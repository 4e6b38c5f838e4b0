// TextIter: windows and next-token labels, the seed-only order, global batches that do not
// depend on the number of workers, the validation split, gzip input, and errors.
#include <gtest/gtest.h>

#include <set>

#include "io/text_iter.h"
#include "test_files.h"
#include "tests/test_util.h"

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

namespace cohort {
namespace {

// Lines of lengths 1..12 (and two empty lines, one line of 20): buckets 4, 8, 12.
std::string Lines() {
  std::string s;
  for (int rep = 0; rep < 4; ++rep) {
    for (int n = 1; n <= 12; ++n) s += std::string(n, static_cast<char>('a' + (n + rep) % 26)) + "\n";
    s += "\n";
  }
  return s + std::string(20, 'z') + "\n";
}

TEST(TextIter, BucketsPadEachLineToTheSmallestBucketThatHoldsIt) {
  ScratchDir dir;
  Write(dir.Path("lines.txt"), Lines());
  TextIterOptions o{.files = {dir.Path("lines.txt")}, .batch_size = 2, .shuffle = false};
  o.buckets = {4, 8, 12};
  TextIter it(o);
  EXPECT_EQ(it.num_lines(), 48);
  EXPECT_EQ(it.long_lines(), 1);
  EXPECT_EQ(it.provide_data()[0].shape, Shape({2, 12}));  // the default (largest) bucket
  EXPECT_EQ(it.batches_per_epoch(), 24);                    // 16 lines per bucket, 8 batches each
  std::multiset<int64_t> keys;
  int64_t samples = 0;
  while (it.Next()) {
    const DataBatch& b = it.Value();
    ASSERT_TRUE(b.bucket_key.has_value());
    const int64_t len = *b.bucket_key;
    keys.insert(len);
    EXPECT_EQ(b.data[0].shape(), Shape({2, len}));
    EXPECT_EQ(b.provide_data[0].shape, Shape({2, len}));
    const std::vector<float> d = b.data[0].ToVector<float>();
    const std::vector<float> l = b.label[0].ToVector<float>();
    for (int r = 0; r < 2; ++r, ++samples) {
      // Row r: the line's letters, then pad 0; labels: the next letters, the newline, then -1.
      int64_t n = 0;
      while (n < len && d[r * len + n] != 0) ++n;
      ASSERT_GT(n, len - 4) << "a line of " << n << " belongs in a smaller bucket than " << len;
      for (int64_t k = 0; k < len; ++k) {
        if (k < n) {
          EXPECT_EQ(d[r * len + k], d[r * len]);
          EXPECT_EQ(l[r * len + k], k + 1 < n ? d[r * len] : static_cast<float>('\n'));
        } else {
          EXPECT_EQ(d[r * len + k], 0.0f);
          EXPECT_EQ(l[r * len + k], -1.0f);
        }
      }
    }
  }
  EXPECT_EQ(samples, 48);
  EXPECT_EQ(keys.count(4), 8u);
  EXPECT_EQ(keys.count(8), 8u);
  EXPECT_EQ(keys.count(12), 8u);
}

TEST(TextIter, BucketedGlobalBatchesDoNotDependOnTheNumberOfWorkers) {
  ScratchDir dir;
  Write(dir.Path("lines.txt"), Lines());
  TextIterOptions o{.files = {dir.Path("lines.txt")}, .batch_size = 4, .seed = 3};
  o.buckets = {4, 8, 12};
  auto global = [&](int workers) {
    std::vector<std::unique_ptr<TextIter>> parts;
    for (int r = 0; r < workers; ++r) {
      TextIterOptions p = o;
      p.batch_size = o.batch_size / workers;
      p.num_parts = workers;
      p.part_index = r;
      parts.push_back(std::make_unique<TextIter>(p));
      parts.back()->Reset();  // the second epoch: shuffled again
    }
    std::vector<std::pair<int64_t, std::vector<int64_t>>> batches;
    while (true) {
      std::pair<int64_t, std::vector<int64_t>> batch;
      for (auto& it : parts) {
        if (!it->Next()) return batches;
        batch.first = *it->Value().bucket_key;
        batch.second.insert(batch.second.end(), it->Value().index.begin(), it->Value().index.end());
      }
      batches.push_back(batch);
    }
  };
  const auto one = global(1);
  EXPECT_EQ(one.size(), 12u);
  EXPECT_EQ(global(2), one);
  EXPECT_EQ(global(4), one);
  TextIterOptions bad = o;
  bad.buckets = {8, 4};
  EXPECT_THROW(TextIter{bad}, Error);
}

// Too few lines for a batch: the message names the part of the text read (the validation tail
// here), the lines too long, and that a line counts with its newline (a last line without one,
// as "hello world", is not a sample).
TEST(TextIter, TooFewBucketedLinesNameThePartAndTheLongLines) {
  ScratchDir dir;
  Write(dir.Path("lines.txt"),
        std::string(30, 'y') + "\n" + std::string(20, 'x') + "\nhello world");
  TextIterOptions o{.files = {dir.Path("lines.txt")}, .batch_size = 8, .shuffle = false};
  o.buckets = {4, 8, 12};
  o.begin_fraction = 1e-9;  // from byte 0, but read as the validation part
  const std::string m = testing::ErrorOf([&] { TextIter it(o); });
  EXPECT_NE(m.find("lines.txt (the validation part)"), std::string::npos) << m;
  EXPECT_NE(m.find("0 line(s) of "), std::string::npos) << m;
  EXPECT_NE(m.find("fit buckets up to 12 (2 longer; a line counts with its newline)"),
            std::string::npos)
      << m;
}

}  // namespace
}  // namespace cohort
