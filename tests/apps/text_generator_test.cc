// Note [Text generation]: the sampling rules draw as their definitions say, and the same seed
// draws the same bytes.
#include "apps/text_generator.h"

#include <gtest/gtest.h>

#include <vector>

#include "base/error.h"
#include "symbol/models/models.h"

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

// A causal model needs no padding: the distribution after a 3-byte prompt from the executor
// reshaped to 3 positions is the window's at position 3 with anything after it; past the
// window the last `context` bytes alone count.
TEST(TextGenerator, ShortPromptsAndTheSlidingWindowSeeWhatTheWindowSees) {
  const Symbol gpt = models::Gpt({.n_layer = 1, .n_head = 2, .d_model = 16, .seq_len = 8});
  auto bound = Executor::SimpleBind(gpt, Context::CPU(), {{"data", {1, 8}}}, GradReq::kNull);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  std::map<std::string, NDArray> args;
  for (const auto& [name, array] : bound->arg_dict()) {
    if (name == "data" || name == "softmax_label") continue;
    std::vector<float> v(static_cast<size_t>(array.size()));
    for (float& x : v) x = u(rng);
    args[name] = NDArray::FromVector<float>(array.shape(), v);
  }
  TextGenerator generator(gpt, args, {}, Context::CPU(), 0);
  EXPECT_EQ(generator.context(), 8);
  EXPECT_EQ(generator.vocab(), 256);
  bound->CopyParamsFrom(args, {});
  const auto window_at = [&](const std::vector<float>& ids, int64_t position) {
    bound->Forward(false, {{"data", NDArray::FromVector<float>({1, 8}, ids)}});
    const std::vector<float> all = bound->outputs()[0].ToVector<float>();
    return std::vector<float>(all.begin() + position * 256, all.begin() + (position + 1) * 256);
  };
  const std::vector<float> short_prompt = generator.NextProbabilities({72, 101, 108});
  const std::vector<float> padded = window_at({72, 101, 108, 200, 7, 0, 0, 33}, 2);
  for (size_t i = 0; i < padded.size(); ++i) EXPECT_NEAR(short_prompt[i], padded[i], 1e-6f) << i;
  const std::vector<int64_t> long_text = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  const std::vector<float> slid = generator.NextProbabilities(long_text);
  const std::vector<float> last8 = window_at({5, 6, 7, 8, 9, 10, 11, 12}, 7);
  for (size_t i = 0; i < last8.size(); ++i) EXPECT_NEAR(slid[i], last8[i], 1e-6f) << i;
}

}  // namespace
}  // namespace cohort
