#include "io/ndarray_iter.h"

#include <gtest/gtest.h>

#include "io/resize_iter.h"

namespace cohort {
namespace {

TEST(NDArrayIter, BatchesDataAndLabelsTogether) {
  NDArray x = NDArray::FromVector<float>({5, 2}, std::vector<float>{0, 0, 1, 1, 2, 2, 3, 3, 4, 4});
  NDArray y = NDArray::FromVector<int32_t>({5}, std::vector<int32_t>{0, 10, 20, 30, 40});
  NDArrayIter it({{"x", x}}, {{"y", y}}, {.batch_size = 2, .shuffle = true, .seed = 1});
  EXPECT_EQ(it.provide_data()[0].shape, Shape({2, 2}));
  EXPECT_EQ(it.provide_label()[0].name, "y");
  EXPECT_EQ(it.provide_label()[0].dtype, DType::kInt32);
  int batches = 0;
  while (it.Next()) {
    ++batches;
    const DataBatch& b = it.Value();
    std::vector<float> xs = b.data[0].ToVector<float>();
    std::vector<int32_t> ys = b.label[0].ToVector<int32_t>();
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(xs[2 * i], xs[2 * i + 1]);
      EXPECT_EQ(ys[i], 10 * static_cast<int32_t>(xs[2 * i])) << "label travels with its sample";
    }
  }
  EXPECT_EQ(batches, 3);
}

TEST(NDArrayIter, BatchArraysAreReused) {
  NDArray x = NDArray::Zeros({8, 3});
  NDArrayIter it({{"x", x}}, {}, {.batch_size = 4});
  ASSERT_TRUE(it.Next());
  const void* first = it.Value().data[0].raw_data();
  ASSERT_TRUE(it.Next());
  EXPECT_EQ(it.Value().data[0].raw_data(), first);
}

TEST(ResizeIter, FixedBatchesPerEpoch) {
  NDArray x = NDArray::FromVector<float>({3}, std::vector<float>{0, 1, 2});
  auto inner =
      std::make_unique<NDArrayIter>(NDArrayIter::NamedArrays{{"x", x}}, NDArrayIter::NamedArrays{},
                                    BatchOptions{.batch_size = 1});
  ResizeIter it(std::move(inner), 5);
  EXPECT_EQ(it.BatchesThisEpoch(), 5);
  std::vector<float> seen;
  while (it.Next()) seen.push_back(it.Value().data[0].ToVector<float>()[0]);
  EXPECT_EQ(seen, (std::vector<float>{0, 1, 2, 0, 1}));  // wraps around the inner iterator
  it.Reset();
  int n = 0;
  while (it.Next()) ++n;
  EXPECT_EQ(n, 5);
}

// Without reset_internal the next epoch continues the inner iterator: SkipEpoch reads on.
TEST(ResizeIter, SkipEpochContinuesTheInnerIterator) {
  NDArray x = NDArray::FromVector<float>({3}, std::vector<float>{0, 1, 2});
  auto inner =
      std::make_unique<NDArrayIter>(NDArrayIter::NamedArrays{{"x", x}}, NDArrayIter::NamedArrays{},
                                    BatchOptions{.batch_size = 1});
  ResizeIter it(std::move(inner), 2, /*reset_internal=*/false);
  it.SkipEpoch();  // serves 0 and 1
  ASSERT_TRUE(it.Next());
  EXPECT_EQ(it.Value().data[0].ToVector<float>()[0], 2.0f);
}

}  // namespace
}  // namespace cohort
