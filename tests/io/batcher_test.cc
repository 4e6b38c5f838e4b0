// Batcher: batch counts and contents for each last-batch policy, shuffling, sharding.
#include "io/batcher.h"

#include <gtest/gtest.h>

#include <numeric>
#include <set>

#include "tests/test_util.h"

namespace cohort {
namespace {

// A data set whose sample i holds the value i (so batches show which samples they hold).
Batcher Make(int64_t n, const BatchOptions& options) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.0f);
  NDArray samples = NDArray::FromVector<float>({n}, v);
  return Batcher({{"data", samples, DType::kFloat32, 1.0f}}, {}, options);
}

// Every batch of one epoch: the sample values, and the pads.
std::vector<std::vector<float>> Epoch(Batcher& b, std::vector<int64_t>* pads = nullptr) {
  std::vector<std::vector<float>> out;
  while (b.Next()) {
    out.push_back(b.batch().data[0].ToVector<float>());
    if (pads) pads->push_back(b.batch().pad);
  }
  return out;
}

using Batches = std::vector<std::vector<float>>;

TEST(Batcher, PadWrapsToTheStartAndReportsThePad) {
  Batcher b = Make(10, {.batch_size = 4, .last_batch = LastBatchHandle::kPad});
  EXPECT_EQ(b.BatchesThisEpoch(), 3);
  std::vector<int64_t> pads;
  EXPECT_EQ(Epoch(b, &pads), (Batches{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 0, 1}}));
  EXPECT_EQ(pads, (std::vector<int64_t>{0, 0, 2}));
  b.Reset();
  EXPECT_EQ(Epoch(b).size(), 3u);
}

TEST(Batcher, DiscardDropsTheRemainder) {
  Batcher b = Make(10, {.batch_size = 4, .last_batch = LastBatchHandle::kDiscard});
  EXPECT_EQ(b.BatchesThisEpoch(), 2);
  EXPECT_EQ(Epoch(b), (Batches{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  b.Reset();
  EXPECT_EQ(Epoch(b), (Batches{{0, 1, 2, 3}, {4, 5, 6, 7}}));
}

TEST(Batcher, RollOverCarriesTheRemainderIntoTheNextEpoch) {
  Batcher b = Make(10, {.batch_size = 4, .last_batch = LastBatchHandle::kRollOver});
  EXPECT_EQ(b.BatchesThisEpoch(), 2);
  EXPECT_EQ(Epoch(b), (Batches{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  b.Reset();  // 8, 9 carried over
  EXPECT_EQ(b.BatchesThisEpoch(), 3);  // known at the epoch's start, what rolled over included
  EXPECT_EQ(Epoch(b), (Batches{{8, 9, 0, 1}, {2, 3, 4, 5}, {6, 7, 8, 9}}));
  b.Reset();  // nothing left over
  EXPECT_EQ(Epoch(b), (Batches{{0, 1, 2, 3}, {4, 5, 6, 7}}));
}

// SkipEpoch (a resumed run's replay) leaves the batcher where reading the epoch and Reset do,
// from the start of an epoch or partway through it, shuffled or not, whatever rolls over.
TEST(Batcher, SkipEpochEqualsReadingTheEpochThenReset) {
  for (bool shuffle : {false, true}) {
    for (int read_first : {0, 1}) {
      const BatchOptions o{.batch_size = 4, .shuffle = shuffle, .seed = 5,
                           .last_batch = LastBatchHandle::kRollOver};
      Batcher read = Make(10, o), skipped = Make(10, o);
      for (int e = 0; e < 3; ++e) {
        Epoch(read);
        read.Reset();
        for (int i = 0; i < read_first; ++i) ASSERT_TRUE(skipped.Next());
        skipped.SkipEpoch();
      }
      EXPECT_EQ(Epoch(skipped), Epoch(read)) << "shuffle " << shuffle << ", read " << read_first;
    }
  }
}

TEST(Batcher, BatchLargerThanTheDataSetPadsCyclically) {
  Batcher b = Make(3, {.batch_size = 7});
  std::vector<int64_t> pads;
  EXPECT_EQ(Epoch(b, &pads), (Batches{{0, 1, 2, 0, 1, 2, 0}}));
  EXPECT_EQ(pads, std::vector<int64_t>{4});
}

TEST(Batcher, ShuffleIsReproducibleBySeedAndDiffersAcrossSeedsAndEpochs) {
  auto first_epoch = [](uint64_t seed) {
    Batcher b = Make(100, {.batch_size = 10, .shuffle = true, .seed = seed});
    return Epoch(b);
  };
  Batches a = first_epoch(7), again = first_epoch(7), other = first_epoch(8);
  EXPECT_EQ(a, again);
  EXPECT_NE(a, other);
  std::multiset<float> seen;
  for (auto& batch : a) seen.insert(batch.begin(), batch.end());
  EXPECT_EQ(seen.size(), 100u);
  EXPECT_EQ(std::set<float>(seen.begin(), seen.end()).size(), 100u);  // a permutation
  Batcher b = Make(100, {.batch_size = 10, .shuffle = true, .seed = 7});
  Batches e1 = Epoch(b);
  b.Reset();
  EXPECT_NE(Epoch(b), e1);  // reshuffled each epoch
}

TEST(Batcher, IndexNamesTheSamples) {
  Batcher b = Make(5, {.batch_size = 2, .shuffle = true, .seed = 3});
  while (b.Next()) {
    std::vector<float> values = b.batch().data[0].ToVector<float>();
    for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(values[i], b.batch().index[i]);
  }
}

TEST(Sharding, PartsAreDisjointCoveringAndEqual) {
  std::set<int64_t> all;
  for (int r = 0; r < 4; ++r) {
    std::vector<int64_t> part = ShardIndices(12, 4, r);
    EXPECT_EQ(part.size(), 3u);
    for (int64_t i : part) EXPECT_TRUE(all.insert(i).second) << "sample " << i << " twice";
  }
  EXPECT_EQ(all.size(), 12u);
}

TEST(Sharding, UnevenPartsWrapSoEveryPartHasTheSameSize) {
  std::multiset<int64_t> all;
  for (int r = 0; r < 4; ++r) {
    std::vector<int64_t> part = ShardIndices(10, 4, r);
    EXPECT_EQ(part.size(), 3u);
    all.insert(part.begin(), part.end());
  }
  for (int64_t i = 0; i < 10; ++i) EXPECT_GE(all.count(i), 1u) << i;
  EXPECT_EQ(all.count(0) + all.count(1), 4u);  // the two padding samples come from the start
  EXPECT_EQ(ShardIndices(10, 4, 3), (std::vector<int64_t>{9, 0, 1}));
}

TEST(Sharding, EveryPartYieldsTheSameNumberOfBatches) {
  for (int r = 0; r < 3; ++r) {
    for (auto sharding : {BatchOptions::Sharding::kGlobalBatch, BatchOptions::Sharding::kParts}) {
      Batcher b = Make(100, {.batch_size = 8, .shuffle = true, .num_parts = 3, .part_index = r,
                             .sharding = sharding});
      EXPECT_EQ(b.num_samples(), 34);
      EXPECT_EQ(b.BatchesThisEpoch(), 5);
      EXPECT_EQ(Epoch(b).size(), 5u);
    }
  }
  EXPECT_THROW(Make(10, {.batch_size = 2, .num_parts = 2, .part_index = 2}), Error);
}

// Note [Sharding]: with global-batch slicing, parts 0..n-1 of each step, side by side, are the
// one-part iterator's batch of n times the size (shuffled and padded alike), over two epochs and
// every last-batch policy; their pads add up to its pad.
TEST(Sharding, GlobalBatchSlicesEqualOneIteratorOfTheGlobalBatch) {
  for (LastBatchHandle last :
       {LastBatchHandle::kPad, LastBatchHandle::kDiscard, LastBatchHandle::kRollOver}) {
    for (int parts : {2, 3, 4}) {
      const BatchOptions whole_options{
          .batch_size = 3 * parts, .shuffle = true, .seed = 7, .last_batch = last};
      Batcher whole = Make(29, whole_options);
      std::vector<Batcher> sliced;
      for (int r = 0; r < parts; ++r) {
        BatchOptions o = whole_options;
        o.batch_size = 3;
        o.num_parts = parts;
        o.part_index = r;
        sliced.push_back(Make(29, o));
      }
      for (int epoch = 0; epoch < 2; ++epoch) {
        std::vector<int64_t> whole_pads;
        const Batches expected = Epoch(whole, &whole_pads);
        Batches joined(expected.size());
        std::vector<int64_t> pads(expected.size(), 0);
        for (Batcher& b : sliced) {
          std::vector<int64_t> part_pads;
          const Batches got = Epoch(b, &part_pads);
          ASSERT_EQ(got.size(), expected.size()) << parts << " parts";
          for (size_t i = 0; i < got.size(); ++i) {
            joined[i].insert(joined[i].end(), got[i].begin(), got[i].end());
            pads[i] += part_pads[i];
          }
        }
        EXPECT_EQ(joined, expected) << parts << " parts, epoch " << epoch;
        EXPECT_EQ(pads, whole_pads) << parts << " parts, epoch " << epoch;
        whole.Reset();
        for (Batcher& b : sliced) b.Reset();
      }
    }
  }
}

TEST(Batcher, ConvertsAndScales) {
  NDArray bytes = NDArray::FromVector<uint8_t>({2, 2}, std::vector<uint8_t>{0, 51, 255, 102});
  Batcher b({{"x", bytes, DType::kFloat32, 1.0f / 255}}, {}, {.batch_size = 2});
  ASSERT_TRUE(b.Next());
  std::vector<float> v = b.batch().data[0].ToVector<float>();
  EXPECT_FLOAT_EQ(v[1], 0.2f);
  EXPECT_FLOAT_EQ(v[2], 1.0f);
  EXPECT_EQ(b.provide_data()[0].shape, Shape({2, 2}));
  EXPECT_EQ(b.provide_data()[0].layout, "NC");
}

TEST(Batcher, MismatchedSampleCountsNameBothArrays) {
  NDArray a = NDArray::Zeros({4, 2}), l = NDArray::Zeros({3});
  const std::string what = testing::ErrorOf([&] {
    Batcher({{"data", a, DType::kFloat32, 1}}, {{"label", l, DType::kFloat32, 1}},
            {.batch_size = 2});
  });
  EXPECT_NE(what.find("'label' has shape (3,) but 'data' has 4 samples"), std::string::npos)
      << what;
}

TEST(LastBatchHandle, Parses) {
  EXPECT_EQ(ParseLastBatchHandle("roll_over"), LastBatchHandle::kRollOver);
  EXPECT_THROW(ParseLastBatchHandle("keep"), Error);
}

}  // namespace
}  // namespace cohort
