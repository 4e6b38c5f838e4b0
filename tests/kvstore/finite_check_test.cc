// AllFinite and FindNonFinite (Note [Non-finite gradients]): NaN and both infinities are found
// wherever they sit in an array, and nothing else is (the largest float, denormals, -0). On a
// GPU the same arrays give the same answer as on the host, across the 128-array launches and
// the grid-stride blocks of Note [Non-finite flags on the GPU] (skipped where no GPU is visible).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kvstore/kvstore.h"
#include "ndarray/device_api.h"
#include "tests/test_util.h"

namespace cohort {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Arrays of the given sizes filled with finite values of every kind, with `bad[i]` (if not 0)
// put at a position that moves with i, so bad values sit at starts, ends and between lanes.
std::vector<NDArray> Arrays(const std::vector<int64_t>& sizes, const std::vector<float>& bad,
                            Context ctx) {
  const float finite[] = {std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),
                          std::numeric_limits<float>::denorm_min(), -0.0f, 1.5f};
  std::vector<NDArray> arrays;
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::vector<float> values(sizes[i]);
    for (int64_t j = 0; j < sizes[i]; ++j) values[j] = finite[j % 5];
    if (bad[i] != 0) values[(i * 7919) % sizes[i]] = bad[i];
    arrays.push_back(NDArray::FromVector<float>({sizes[i]}, values, ctx));
  }
  return arrays;
}

TEST(FiniteCheck, FindsNaNAndBothInfinitiesOnly) {
  const std::vector<int64_t> sizes = {1, 17, 16, 100000, 3, 65536 + 5};
  const std::vector<float> bad = {0, kNaN, -kInf, kInf, 0, -kNaN};
  std::vector<NDArray> arrays = Arrays(sizes, bad, Context::CPU());
  std::vector<int> nonfinite;
  NonFiniteScratch scratch;
  FindNonFinite(arrays, &nonfinite, &scratch);
  EXPECT_EQ(nonfinite, (std::vector<int>{1, 2, 3, 5}));
  for (size_t i = 0; i < arrays.size(); ++i) EXPECT_EQ(AllFinite(arrays[i]), bad[i] == 0) << i;
  // Every value at every position of a 40-element array (the vector lanes and the tail).
  for (int position = 0; position < 40; ++position) {
    std::vector<float> values(40, 2.0f);
    values[position] = kNaN;
    EXPECT_FALSE(AllFinite(NDArray::FromVector<float>({40}, values))) << position;
  }
  EXPECT_TRUE(AllFinite(NDArray::Zeros({0})));
}

TEST(FiniteCheck, RefusesOtherDtypes) {
  std::vector<int> nonfinite;
  NonFiniteScratch scratch;
  const std::string error = testing::ErrorOf([&] {
    FindNonFinite({NDArray::Zeros({2}), NDArray::Zeros({2}, DType::kInt32)}, &nonfinite,
                  &scratch);
  });
  EXPECT_NE(error.find("array 1 is not float32"), std::string::npos) << error;
}

TEST(FiniteCheckGpu, AgreesWithTheHostAcrossLaunchesAndBlocks) {
  if (device::Count() == 0) GTEST_SKIP() << "no GPU visible";
  // 300 arrays (three launches of 128), one of 5 M values (many blocks per array).
  std::vector<int64_t> sizes;
  std::vector<float> bad;
  for (int i = 0; i < 300; ++i) {
    sizes.push_back(i == 150 ? 5 << 20 : 1 + (i * 37) % 5000);
    bad.push_back(i % 7 == 3 ? kNaN : i % 11 == 5 ? -kInf : i == 150 ? kInf : 0.0f);
  }
  const std::vector<NDArray> on_host = Arrays(sizes, bad, Context::CPU());
  std::vector<NDArray> mixed;  // GPU arrays among host ones, on every visible GPU in turn
  for (size_t i = 0; i < on_host.size(); ++i) {
    mixed.push_back(i % 5 == 0 ? on_host[i]
                               : on_host[i].CopyTo(Context::GPU(static_cast<int>(i) %
                                                                device::Count())));
  }
  std::vector<int> expected, found;
  NonFiniteScratch scratch;
  FindNonFinite(on_host, &expected, &scratch);
  FindNonFinite(mixed, &found, &scratch);
  EXPECT_EQ(found, expected);
  EXPECT_EQ(expected.size(), 66u);
  // Again with the same scratch (the flags are cleared between calls), then all finite.
  FindNonFinite(mixed, &found, &scratch);
  EXPECT_EQ(found, expected);
  const std::vector<NDArray> clean = {NDArray::Full({1000}, 3.0, DType::kFloat32,
                                                    Context::GPU(0))};
  FindNonFinite(clean, &found, &scratch);
  EXPECT_TRUE(found.empty());
  EXPECT_TRUE(AllFinite(clean[0]));
  EXPECT_FALSE(AllFinite(mixed[3]));
}

}  // namespace
}  // namespace cohort
