#include "operator/common/fast_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace cohort::op {
namespace {

TEST(FastMath, ExpIsAccurateAcrossTheRange) {
  double worst = 0;
  for (float x = -87.0f; x < 88.0f; x += 0.0137f) {
    const double want = std::exp(static_cast<double>(x));
    worst = std::max(worst, std::fabs(FastExp(x) - want) / want);
  }
  EXPECT_LT(worst, 3e-7);
  EXPECT_EQ(FastExp(0.0f), 1.0f);
  EXPECT_TRUE(std::isnan(FastExp(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_GT(FastExp(1000.0f), 1e38f);  // saturates, finite
  EXPECT_TRUE(std::isfinite(FastExp(1000.0f)));
  // Below e^-87.3 (about 1.2e-38, float's smallest normal) exactly 0: never denormal, so that a
  // softmax's masked entries scaled by 1/Σ stay 0 instead of becoming denormal.
  EXPECT_GT(FastExp(-87.29f), 1.17549435e-38f);
  EXPECT_EQ(FastExp(-87.31f), 0.0f);
  EXPECT_EQ(FastExp(-1000.0f), 0.0f);
  EXPECT_EQ(FastExp(-std::numeric_limits<float>::infinity()), 0.0f);
}

TEST(FastMath, TanhAndSigmoidAreAccurate) {
  double worst_tanh = 0, worst_sigmoid = 0;
  for (float x = -20.0f; x < 20.0f; x += 0.00173f) {
    worst_tanh = std::max(worst_tanh, std::fabs(FastTanh(x) - std::tanh(static_cast<double>(x))));
    worst_sigmoid = std::max(
        worst_sigmoid, std::fabs(FastSigmoid(x) - 1 / (1 + std::exp(-static_cast<double>(x)))));
  }
  EXPECT_LT(worst_tanh, 3e-7);
  EXPECT_LT(worst_sigmoid, 3e-7);
  EXPECT_EQ(FastTanh(0.0f), 0.0f);
  EXPECT_EQ(FastTanh(1e-30f), 1e-30f);
  EXPECT_TRUE(std::isnan(FastTanh(std::numeric_limits<float>::quiet_NaN())));
}

}  // namespace
}  // namespace cohort::op
