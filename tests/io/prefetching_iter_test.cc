#include "io/prefetching_iter.h"

#include <gtest/gtest.h>

#include <numeric>
#include <stdexcept>

#include "io/ndarray_iter.h"

namespace cohort {
namespace {

std::unique_ptr<NDArrayIter> Numbers(int64_t n, int64_t batch, bool shuffle) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.0f);
  return std::make_unique<NDArrayIter>(
      NDArrayIter::NamedArrays{{"x", NDArray::FromVector<float>({n}, v)}},
      NDArrayIter::NamedArrays{{"y", NDArray::FromVector<float>({n}, v)}},
      BatchOptions{.batch_size = batch, .shuffle = shuffle, .seed = 5});
}

std::vector<std::vector<float>> Epoch(DataIter& it) {
  std::vector<std::vector<float>> out;
  while (it.Next()) {
    out.push_back(it.Value().data[0].ToVector<float>());
    std::vector<float> labels = it.Value().label[0].ToVector<float>();
    out.back().insert(out.back().end(), labels.begin(), labels.end());
    out.back().push_back(static_cast<float>(it.Value().pad));
  }
  return out;
}

TEST(PrefetchingIter, EqualsTheIteratorItWraps) {
  for (int capacity : {1, 2, 4}) {
    auto plain = Numbers(103, 8, true);
    PrefetchingIter prefetched(Numbers(103, 8, true), capacity);
    for (int epoch = 0; epoch < 3; ++epoch) {
      EXPECT_EQ(prefetched.BatchesThisEpoch(), plain->BatchesThisEpoch());
      EXPECT_EQ(Epoch(prefetched), Epoch(*plain)) << "capacity " << capacity << " epoch " << epoch;
      plain->Reset();
      prefetched.Reset();
    }
  }
}

TEST(PrefetchingIter, ResetInTheMiddleOfAnEpochStartsOver) {
  PrefetchingIter it(Numbers(40, 4, false));
  ASSERT_TRUE(it.Next());
  ASSERT_TRUE(it.Next());
  it.Reset();
  auto epoch = Epoch(it);
  ASSERT_EQ(epoch.size(), 10u);
  EXPECT_EQ(epoch[0][0], 0.0f);
}

TEST(PrefetchingIter, DestroysCleanlyWhileFull) {
  auto it = std::make_unique<PrefetchingIter>(Numbers(1000, 2, false), 3);
  ASSERT_TRUE(it->Next());
  it.reset();  // the producer is blocked on a full queue and must still exit
}

// Yields `good` batches, then throws.
class FailingIter : public DataIter {
 public:
  explicit FailingIter(int good) : inner_(Numbers(100, 1, false)), good_(good) {}
  void Reset() override {
    inner_->Reset();
    served_ = 0;
  }
  bool Next() override {
    if (served_++ == good_) throw std::runtime_error("disk on fire");
    return inner_->Next();
  }
  const DataBatch& Value() const override { return inner_->Value(); }
  const std::vector<DataDesc>& provide_data() const override { return inner_->provide_data(); }
  const std::vector<DataDesc>& provide_label() const override { return inner_->provide_label(); }
  int64_t batch_size() const override { return 1; }

 private:
  std::unique_ptr<NDArrayIter> inner_;
  int good_;
  int served_ = 0;
};

TEST(PrefetchingIter, ProducerErrorReachesTheConsumerInOrder) {
  PrefetchingIter it(std::make_unique<FailingIter>(3));
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(it.Next());
    EXPECT_EQ(it.Value().data[0].ToVector<float>()[0], static_cast<float>(i));
  }
  EXPECT_THROW(
      {
        try {
          it.Next();
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "disk on fire");
          throw;
        }
      },
      std::runtime_error);
  EXPECT_FALSE(it.Next());  // the epoch is over
  it.Reset();               // and the next one starts afresh
  ASSERT_TRUE(it.Next());
  EXPECT_EQ(it.Value().data[0].ToVector<float>()[0], 0.0f);
}

}  // namespace
}  // namespace cohort
