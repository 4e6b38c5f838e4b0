// _random_uniform and _random_normal: the moments of 200,000 draws, the same numbers for the same
// seed and others for another, and parameters refused by name.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/operator/op_harness.h"

namespace cohort {
namespace {

using testing::MakeOp;

std::vector<float> Draw(const std::string& op, const op::Attrs& attrs, uint64_t seed) {
  testing::OpInstance inst = MakeOp(op, attrs, {});
  inst.Forward(false, seed);
  return inst.out[0].ToVector<float>();
}

void ExpectMoments(const std::vector<float>& v, double mean, double var, double lo, double hi) {
  double sum = 0, sq = 0;
  for (float x : v) {
    ASSERT_GE(x, lo);
    ASSERT_LT(x, hi);
    sum += x;
  }
  const double m = sum / static_cast<double>(v.size());
  for (float x : v) sq += (x - m) * (x - m);
  // 200,000 draws: the standard error of the mean is sqrt(var / n), about 0.002 * sqrt(var).
  EXPECT_NEAR(m, mean, 0.01 * std::sqrt(var));
  EXPECT_NEAR(sq / static_cast<double>(v.size()), var, 0.02 * var);
}

TEST(Random, UniformHasTheMomentsOfItsRange) {
  const std::vector<float> v =
      Draw("_random_uniform", {{"low", "-1"}, {"high", "3"}, {"shape", "(400, 500)"}}, 11);
  ExpectMoments(v, 1.0, 16.0 / 12.0, -1.0, 3.0);
}

TEST(Random, NormalHasItsMeanAndVariance) {
  const std::vector<float> v =
      Draw("normal", {{"loc", "2"}, {"scale", "0.5"}, {"shape", "(200000,)"}}, 11);
  ExpectMoments(v, 2.0, 0.25, -1e9, 1e9);
  int beyond = 0;  // about 0.27% of a normal lies beyond 3 standard deviations
  for (float x : v) beyond += std::fabs(x - 2.0f) > 1.5f;
  EXPECT_NEAR(beyond / 200000.0, 0.0027, 0.0008);
}

TEST(Random, TheSeedDecides) {
  const op::Attrs attrs = {{"shape", "(64,)"}};
  EXPECT_EQ(Draw("_random_uniform", attrs, 5), Draw("_random_uniform", attrs, 5));
  EXPECT_NE(Draw("_random_uniform", attrs, 5), Draw("_random_uniform", attrs, 6));
  EXPECT_NE(Draw("_random_normal", attrs, 5), Draw("_random_normal", attrs, 6));
}

TEST(Random, BadParametersAreNamed) {
  EXPECT_THROW(op::OpRegistry::Get().Create("_random_uniform",
                                            {{"low", "2"}, {"high", "1"}, {"shape", "(2,)"}}),
               Error);
  EXPECT_THROW(op::OpRegistry::Get().Create("_random_normal", {{"scale", "-1"}, {"shape", "(2,)"}}),
               Error);
  EXPECT_THROW(op::OpRegistry::Get().Create("_random_normal", {}), Error);  // no shape
  EXPECT_THROW(op::OpRegistry::Get().Create("_random_uniform", {{"shape", "(2,)"}, {"bogus", "1"}}),
               Error);
}

}  // namespace
}  // namespace cohort
