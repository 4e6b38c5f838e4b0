// Note [Gradient accumulation]: K batches' summed gradients make one update, as one batch K times
// larger does (within the summation order's rounding), and an epoch's short last window updates
// with the batches it has.
#include <gtest/gtest.h>

#include <random>

#include "base/error.h"
#include "base/logging.h"
#include "io/ndarray_iter.h"
#include "symbol/ops.h"
#include "tests/test_util.h"
#include "trainer/trainer.h"

namespace cohort {
namespace {

const bool kQuiet = (SetLogLevel("warn"), true);

Symbol Mlp() {
  Symbol x = sym::Variable("data");
  x = sym::Activation(sym::FullyConnected(x, {.num_hidden = 16}, "fc1"), "relu", "relu1");
  return sym::SoftmaxOutput(sym::FullyConnected(x, {.num_hidden = 4}, "fc2"), "softmax");
}

NDArrayIter Data(int64_t batch) {
  std::mt19937 rng(3);
  std::normal_distribution<float> noise(0, 0.3f);
  std::vector<float> x, y;
  for (int i = 0; i < 96; ++i) {
    for (int f = 0; f < 8; ++f) x.push_back((f % 4 == i % 4 ? 1.5f : 0.0f) + noise(rng));
    y.push_back(static_cast<float>(i % 4));
  }
  // The order of the samples depends on the seed alone, not on the batch size.
  return NDArrayIter({{"data", NDArray::FromVector<float>({96, 8}, x)}},
                     {{"softmax_label", NDArray::FromVector<float>({96}, y)}},
                     {.batch_size = batch, .shuffle = true, .seed = 9});
}

std::map<std::string, NDArray> Train(int64_t batch, int64_t accumulate, int epochs = 2) {
  FitConfig c;
  c.epochs = epochs;
  c.optimizer_options = {.lr = 0.5, .wd = 1e-4, .momentum = 0.9};
  c.seed = 11;
  c.log_every = 0;
  c.update_on_kvstore = false;
  c.accumulate = accumulate;
  Trainer t(Mlp(), {Context::CPU(0), Context::CPU(1)});
  NDArrayIter data = Data(batch);
  t.Fit(data, nullptr, c);
  std::map<std::string, NDArray> args, aux;
  t.GetParams(&args, &aux);
  return args;
}

TEST(GradientAccumulation, TwoBatchesOfSixteenUpdateAsOneOfThirtyTwo) {
  testing::ExpectClose(Train(32, 1), Train(16, 2), 1e-5, 1e-5, "parameters");
  // And differ from updating after every batch of 16.
  const auto every = Train(16, 1), accumulated = Train(16, 2);
  EXPECT_GT(std::abs(every.at("fc1_weight").ToVector<float>()[0] -
                     accumulated.at("fc1_weight").ToVector<float>()[0]),
            1e-4);
}

// 96 samples in batches of 16 with accumulate 4: windows of 64 and 32 samples, as batches of 32
// with accumulate 2 (64, then one batch of 32).
TEST(GradientAccumulation, AnEpochsShortLastWindowUpdatesWithWhatItHas) {
  testing::ExpectClose(Train(32, 2), Train(16, 4), 1e-5, 1e-5, "parameters");
}

TEST(GradientAccumulation, ASecondFitMustKeepTheBindingsAccumulate) {
  FitConfig c;
  c.epochs = 1;
  c.log_every = 0;
  Trainer t(Mlp(), {Context::CPU(0)});
  NDArrayIter data = Data(16);
  t.Fit(data, nullptr, c);
  c.accumulate = 2;
  EXPECT_THROW(t.Fit(data, nullptr, c), ConfigError);
}

}  // namespace
}  // namespace cohort
