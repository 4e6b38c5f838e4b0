// NDArray on GPUs: allocation through the caching pool, copies in every direction, fills and
// casts. Skipped where no GPU is visible (CI); run by scripts/gpu-check.sh on a GPU machine.
#include <gtest/gtest.h>

#include <numeric>

#include "ndarray/device_api.h"
#include "ndarray/ndarray.h"

namespace cohort {
namespace {

class NDArrayGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (device::Count() == 0) GTEST_SKIP() << "no GPU visible";
  }
};

std::vector<float> Iota(int n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

TEST_F(NDArrayGpu, RoundTripHostDeviceHost) {
  NDArray host = NDArray::FromVector<float>({1000, 3}, Iota(3000));
  NDArray gpu = host.CopyTo(Context::GPU(0));
  EXPECT_EQ(gpu.ctx(), Context::GPU(0));
  EXPECT_EQ(gpu.ToVector<float>(), Iota(3000));
  NDArray gpu2 = NDArray::Empty({1000, 3}, DType::kFloat32, Context::GPU(0));
  gpu.CopyTo(gpu2);  // device to device
  EXPECT_EQ(gpu2.ToVector<float>(), Iota(3000));
}

TEST_F(NDArrayGpu, OnHostReusesItsStaging) {
  NDArray gpu = NDArray::FromVector<float>({4}, Iota(4), Context::GPU(0));
  NDArray staging;
  const NDArray& first = gpu.OnHost(&staging, Context::CPUPinned());
  EXPECT_EQ(&first, &staging);
  EXPECT_EQ(staging.ctx(), Context::CPUPinned());
  EXPECT_EQ(staging.ToVector<float>(), Iota(4));
  const void* block = staging.raw_data();
  gpu.Fill(5);
  EXPECT_EQ(gpu.OnHost(&staging).raw_data(), block);  // same shape: the same host array
  EXPECT_EQ(staging.ToVector<float>(), std::vector<float>(4, 5));
  NDArray::Zeros({6}, DType::kFloat32, Context::GPU(0)).OnHost(&staging);
  EXPECT_EQ(staging.shape(), Shape({6}));  // another shape: made anew
}

TEST_F(NDArrayGpu, SlicesOfDeviceArrays) {
  NDArray gpu = NDArray::FromVector<float>({4, 2}, Iota(8), Context::GPU(0));
  EXPECT_EQ(gpu.Slice(1, 3).ToVector<float>(), (std::vector<float>{2, 3, 4, 5}));
  NDArray::FromVector<float>({1, 2}, std::vector<float>{-1, -2}).CopyTo(gpu.Slice(3, 4));
  EXPECT_EQ(gpu.ToVector<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5, -1, -2}));
}

TEST_F(NDArrayGpu, FillEveryElementSize) {
  for (DType d : {DType::kUint8, DType::kFloat16, DType::kFloat32, DType::kFloat64}) {
    NDArray a = NDArray::Full({100003}, 3.0, d, Context::GPU(0));
    std::vector<double> v = a.ToVector<double>();
    EXPECT_EQ(v, std::vector<double>(100003, 3.0)) << d;
  }
}

TEST_F(NDArrayGpu, CastAcrossContexts) {
  NDArray gpu = NDArray::FromVector<float>({3}, std::vector<float>{1.5f, -2, 7}, Context::GPU(0));
  NDArray halves = gpu.AsType(DType::kFloat16);
  EXPECT_EQ(halves.ctx(), Context::GPU(0));
  EXPECT_EQ(halves.ToVector<float>(), (std::vector<float>{1.5f, -2, 7}));
  NDArray ints = NDArray::Zeros({3}, DType::kInt32);
  gpu.CopyTo(ints);
  EXPECT_EQ(ints.ToVector<int32_t>(), (std::vector<int32_t>{1, -2, 7}));
}

TEST_F(NDArrayGpu, PinnedHostMemory) {
  NDArray pinned = NDArray::FromVector<float>({4}, Iota(4)).CopyTo(Context::CPUPinned());
  EXPECT_EQ(pinned.data<float>()[3], 3.0f);
  EXPECT_EQ(pinned.CopyTo(Context::GPU(0)).ToVector<float>(), Iota(4));
}

TEST_F(NDArrayGpu, FreedMemoryIsReusedByTheNextStep) {
  void* first = nullptr;
  for (int step = 0; step < 3; ++step) {
    NDArray a = NDArray::Empty({256, 1024}, DType::kFloat32, Context::GPU(0));
    if (step == 0) first = a.raw_data();
    EXPECT_EQ(a.raw_data(), first) << "step " << step;
  }
}

TEST_F(NDArrayGpu, PeerCopyBetweenGpus) {
  if (device::Count() < 2) GTEST_SKIP() << "needs two GPUs";
  NDArray a = NDArray::FromVector<float>({5}, Iota(5), Context::GPU(0));
  EXPECT_EQ(a.CopyTo(Context::GPU(1)).ToVector<float>(), Iota(5));
}

TEST_F(NDArrayGpu, MissingDeviceIsAClearError) {
  try {
    NDArray::Empty({1}, DType::kFloat32, Context::GPU(device::Count()));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cohort
