#include "ndarray/ndarray.h"
#include "ndarray/device_api.h"

#include <gtest/gtest.h>

#include <numeric>

namespace cohort {
namespace {

NDArray Iota(const Shape& shape, DType dtype = DType::kFloat32) {
  std::vector<double> v(static_cast<size_t>(shape.Size()));
  std::iota(v.begin(), v.end(), 0.0);
  return NDArray::FromVector<double>(shape, v).AsType(dtype);
}

TEST(NDArray, DefaultIsNone) {
  NDArray a;
  EXPECT_TRUE(a.is_none());
  EXPECT_THROW(a.raw_data(), Error);
  EXPECT_THROW(a.Slice(0, 1), Error);
}

TEST(NDArray, OnHostIsTheArrayItselfForHostMemory) {
  const NDArray a = NDArray::Full({3}, 2.0);
  NDArray staging;
  EXPECT_EQ(&a.OnHost(&staging), &a);
  EXPECT_TRUE(staging.is_none());
}

TEST(NDArray, HostMemoryIs64ByteAligned) {
  for (int64_t n : {1, 3, 17, 1000}) {
    NDArray a = NDArray::Empty({n}, DType::kInt8);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a.raw_data()) % 64, 0u);
  }
}

TEST(NDArray, ShapeWhoseBytesExceed64BitsIsRefusedNotWrapped) {
  // 2^62 floats are 2^64 bytes, which wrapped to an allocation of 0 bytes that was then overrun.
  try {
    NDArray::Empty(Shape({int64_t{1} << 31, int64_t{1} << 31}));
    FAIL() << "2^62 floats were allocated";
  } catch (const OutOfMemoryError& e) {
    EXPECT_NE(std::string(e.what()).find("(2147483648,2147483648)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(NDArray::Empty(Shape({int64_t{1} << 31, int64_t{1} << 30})), OutOfMemoryError);
}

TEST(NDArray, SliceIsAViewOnAxisZero) {
  NDArray a = Iota({4, 3});
  NDArray rows = a.Slice(1, 3);
  EXPECT_EQ(rows.shape(), Shape({2, 3}));
  EXPECT_TRUE(rows.SharesStorageWith(a));
  EXPECT_EQ(rows.ToVector<float>(), (std::vector<float>{3, 4, 5, 6, 7, 8}));
  rows.Fill(-1);  // writes through to the parent
  EXPECT_EQ(a.ToVector<float>(), (std::vector<float>{0, 1, 2, -1, -1, -1, -1, -1, -1, 9, 10, 11}));
  EXPECT_EQ(a.Slice(4, 4).size(), 0);
  EXPECT_THROW(a.Slice(2, 5), Error);
  EXPECT_THROW(a.Slice(3, 2), Error);
}

TEST(NDArray, NestedSlicesAndAtKeepOffsets) {
  NDArray a = Iota({5, 2, 2}, DType::kFloat64);
  NDArray inner = a.Slice(1, 5).Slice(2, 4);  // rows 3 and 4
  EXPECT_EQ(inner.ToVector<double>(), (std::vector<double>{12, 13, 14, 15, 16, 17, 18, 19}));
  NDArray row = a.At(2);
  EXPECT_EQ(row.shape(), Shape({2, 2}));
  EXPECT_EQ(row.ToVector<int>(), (std::vector<int>{8, 9, 10, 11}));
  EXPECT_EQ(row.byte_offset(), 8 * sizeof(double));
}

TEST(NDArray, ReshapeIsAViewOfAtMostTheSameSize) {
  NDArray a = Iota({2, 6});
  NDArray b = a.Reshape({3, 4});
  EXPECT_TRUE(b.SharesStorageWith(a));
  EXPECT_EQ(b.ToVector<float>(), a.ToVector<float>());
  NDArray smaller = a.Reshape({5});  // reuse a larger buffer for a smaller batch
  EXPECT_EQ(smaller.ToVector<float>(), (std::vector<float>{0, 1, 2, 3, 4}));
  EXPECT_THROW(a.Reshape({13}), Error);
}

TEST(NDArray, CopyToRequiresTheSameShape) {
  NDArray a = Iota({2, 3});
  NDArray b = NDArray::Zeros({2, 3});
  a.CopyTo(b);
  EXPECT_EQ(b.ToVector<float>(), a.ToVector<float>());
  EXPECT_FALSE(b.SharesStorageWith(a));
  try {
    a.CopyTo(NDArray::Zeros({3, 2}));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(2,3)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(3,2)"), std::string::npos) << e.what();
  }
}

TEST(NDArray, CopyIntoASliceOfABiggerBuffer) {
  NDArray batch = NDArray::Zeros({4, 2});
  Iota({2, 2}).CopyTo(batch.Slice(2, 4));
  EXPECT_EQ(batch.ToVector<float>(), (std::vector<float>{0, 0, 0, 0, 0, 1, 2, 3}));
  batch.Slice(2, 4).CopyTo(batch.Slice(1, 3));  // overlapping views of one storage
  EXPECT_EQ(batch.ToVector<float>(), (std::vector<float>{0, 0, 0, 1, 2, 3, 2, 3}));
}

TEST(NDArray, CopyArraysIntoReusesArraysThatFit) {
  std::vector<NDArray> kept;
  CopyArraysInto({Iota({2, 2})}, &kept);
  const void* first = kept[0].raw_data();
  CopyArraysInto({Iota({2, 2}).AsType(DType::kFloat32)}, &kept);
  EXPECT_EQ(kept[0].raw_data(), first);  // same shape and dtype: no new array
  EXPECT_EQ(kept[0].ToVector<float>(), (std::vector<float>{0, 1, 2, 3}));
  CopyArraysInto({Iota({3}), Iota({1})}, &kept);  // another shape, one more array
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0].shape(), Shape({3}));
  EXPECT_EQ(kept[1].ToVector<float>(), (std::vector<float>{0}));
}

TEST(NDArray, CastsBetweenEveryPairOfDTypes) {
  const std::vector<double> values = {0, 1, 2, 3, 100, 0};
  for (int from : {0, 1, 2, 3, 4, 5, 6, 7, 12}) {
    for (int to : {0, 1, 2, 3, 4, 5, 6, 7, 12}) {
      DType src_dtype = *DTypeFromFlag(from), dst_dtype = *DTypeFromFlag(to);
      NDArray src = NDArray::FromVector<double>({6}, values).AsType(src_dtype);
      NDArray dst = src.AsType(dst_dtype);
      EXPECT_EQ(dst.dtype(), dst_dtype);
      std::vector<double> expected = values;
      if (src_dtype == DType::kBool || dst_dtype == DType::kBool) {
        for (double& v : expected) v = v != 0;
      }
      EXPECT_EQ(dst.ToVector<double>(), expected) << src_dtype << " -> " << dst_dtype;
    }
  }
}

TEST(NDArray, FillConvertsToTheDType) {
  NDArray h = NDArray::Full({3}, 0.1, DType::kFloat16);
  EXPECT_EQ(h.data<float16>()[2].bits, float16(0.1f).bits);
  NDArray i = NDArray::Full({2}, -7.9, DType::kInt32);
  EXPECT_EQ(i.ToVector<int32_t>(), (std::vector<int32_t>{-7, -7}));
  NDArray b = NDArray::Full({2}, 0.5, DType::kBool);
  EXPECT_EQ(b.ToVector<bool>(), (std::vector<bool>{true, true}));
}

TEST(NDArray, TypedAccessChecksTheDType) {
  NDArray a = NDArray::Zeros({2}, DType::kInt64);
  EXPECT_NO_THROW(a.data<int64_t>());
  EXPECT_THROW(a.data<float>(), Error);
}

TEST(NDArray, FromVectorChecksTheCount) {
  EXPECT_THROW(NDArray::FromVector<float>({2, 2}, std::vector<float>{1, 2, 3}), Error);
}

TEST(NDArray, ScalarsAndEmptyArrays) {
  NDArray s = NDArray::Full(Shape(), 4.5);
  EXPECT_EQ(s.size(), 1);
  EXPECT_EQ(s.ToVector<float>(), (std::vector<float>{4.5f}));
  NDArray e = NDArray::Zeros({0, 5});
  EXPECT_EQ(e.size(), 0);
  EXPECT_TRUE(e.ToVector<float>().empty());
  e.CopyTo(NDArray::Zeros({0, 5}));
}

TEST(NDArray, GpuContextWithoutAGpuIsAClearError) {
  if (device::Count() > 0) GTEST_SKIP() << "this machine has a GPU";
  try {
    NDArray::Empty({2}, DType::kFloat32, Context::GPU(0));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gpu"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cohort
