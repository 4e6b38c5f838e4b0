// Note [Text generation]: the sampling rules draw as their definitions say, and the same seed
// draws the same bytes.
#include "apps/text_generator.h"

#include <gtest/gtest.h>

#include <vector>

#include "base/error.h"

namespace cohort {
namespace {

// Frequencies of 200,000 draws.
std::vector<double> Frequencies(const std::vector<float>& p, const SamplingOptions& o) {
  std::mt19937_64 rng(5);
  std::vector<double> seen(p.size(), 0);
  constexpr int kDraws = 200000;
  for (int i = 0; i < kDraws; ++i) seen[SampleIndex(p, o, rng)] += 1.0 / kDraws;
  return seen;
}

TEST(TextSampling, DrawsAsTheRulesSay) {
  const std::vector<float> p = {0.2f, 0.5f, 0.3f};
  auto near = [](const std::vector<double>& got, const std::vector<double>& want) {
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 0.005) << i;
  };
  near(Frequencies(p, {}), {0.2, 0.5, 0.3});
  // Temperature 0.5 squares the probabilities: 0.04, 0.25, 0.09 over 0.38.
  near(Frequencies(p, {.temperature = 0.5}), {0.04 / 0.38, 0.25 / 0.38, 0.09 / 0.38});
  near(Frequencies(p, {.top_k = 2}), {0, 0.5 / 0.8, 0.3 / 0.8});
  // 0.5 alone is below 0.6; with 0.3 it reaches it: the two most likely.
  near(Frequencies(p, {.top_p = 0.6}), {0, 0.5 / 0.8, 0.3 / 0.8});
  near(Frequencies(p, {.top_p = 0.45}), {0, 1, 0});
  near(Frequencies(p, {.temperature = 0}), {0, 1, 0});
  near(Frequencies(p, {.top_k = 1}), {0, 1, 0});
  // Ties go to the lower index.
  std::mt19937_64 rng(1);
  EXPECT_EQ(SampleIndex(std::vector<float>{0.4f, 0.2f, 0.4f}, {.temperature = 0}, rng), 0);
}

TEST(TextSampling, TheSameSeedDrawsTheSameBytes) {
  const std::vector<float> p = {0.1f, 0.2f, 0.3f, 0.4f};
  std::mt19937_64 a(42), b(42), c(43);
  std::vector<int64_t> x, y, z;
  for (int i = 0; i < 100; ++i) {
    x.push_back(SampleIndex(p, {}, a));
    y.push_back(SampleIndex(p, {}, b));
    z.push_back(SampleIndex(p, {}, c));
  }
  EXPECT_EQ(x, y);
  EXPECT_NE(x, z);
}

TEST(TextSampling, BadOptionsAreNamed) {
  EXPECT_THROW(CheckSamplingOptions({.temperature = -1}), ConfigError);
  EXPECT_THROW(CheckSamplingOptions({.top_k = -2}), ConfigError);
  EXPECT_THROW(CheckSamplingOptions({.top_p = 0}), ConfigError);
  EXPECT_THROW(CheckSamplingOptions({.top_p = 1.5}), ConfigError);
  EXPECT_NO_THROW(CheckSamplingOptions({.temperature = 0, .top_k = 5, .top_p = 0.9}));
}

}  // namespace
}  // namespace cohort
