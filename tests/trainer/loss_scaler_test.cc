// Note [Loss scaling]: the scaler's rule, the loss layers' factor, and training with it: a
// power-of-two scale changes no float32 bit, an overflowing step is skipped and halves the scale,
// and a checkpoint carries the scale to the resumed run.
#include "trainer/loss_scaler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "base/logging.h"
#include "executor/executor.h"
#include "io/ndarray_iter.h"
#include "ndarray/device_api.h"
#include "symbol/ops.h"
#include "tests/test_util.h"
#include "trainer/checkpoint.h"
#include "trainer/trainer.h"

namespace cohort {
namespace {

const bool kQuiet = (SetLogLevel("warn"), true);

TEST(LossScaler, HalvesOnOverflowDoublesAfterCleanStepsAndStopsAtOne) {
  LossScaler s({.enabled = true, .init_log2 = 2, .growth_interval = 3});
  EXPECT_EQ(s.scale(), 4.0f);
  EXPECT_EQ(s.AfterStep(true), LossScaler::Verdict::kUpdate);
  EXPECT_EQ(s.AfterStep(true), LossScaler::Verdict::kUpdate);
  EXPECT_EQ(s.scale(), 4.0f);
  EXPECT_EQ(s.AfterStep(true), LossScaler::Verdict::kUpdate);  // the third clean step in a row
  EXPECT_EQ(s.scale(), 8.0f);
  EXPECT_EQ(s.AfterStep(true), LossScaler::Verdict::kUpdate);
  EXPECT_EQ(s.AfterStep(false), LossScaler::Verdict::kSkip);  // and the clean count restarts
  EXPECT_EQ(s.scale(), 4.0f);
  EXPECT_EQ(s.AfterStep(true), LossScaler::Verdict::kUpdate);
  EXPECT_EQ(s.AfterStep(true), LossScaler::Verdict::kUpdate);
  EXPECT_EQ(s.scale(), 4.0f);
  EXPECT_EQ(s.AfterStep(false), LossScaler::Verdict::kSkip);
  EXPECT_EQ(s.AfterStep(false), LossScaler::Verdict::kSkip);
  EXPECT_EQ(s.scale(), 1.0f);
  EXPECT_EQ(s.skipped_steps(), 3);
  // At 1 the gradient is not finite unscaled: on_nonfinite's to handle, not a skip of the scaler.
  EXPECT_EQ(s.AfterStep(false), LossScaler::Verdict::kNotFiniteUnscaled);
  EXPECT_EQ(s.scale(), 1.0f);
  EXPECT_EQ(s.skipped_steps(), 3);

  LossScaler top({.enabled = true, .init_log2 = LossScaler::kMaxLog2, .growth_interval = 1});
  top.AfterStep(true);
  EXPECT_EQ(top.scale(), 16777216.0f);  // 2^24 at most

  LossScaler off;
  EXPECT_EQ(off.scale(), 1.0f);
  EXPECT_EQ(off.AfterStep(false), LossScaler::Verdict::kNotFiniteUnscaled);
  EXPECT_TRUE(off.CheckpointEntries().empty());
}

TEST(LossScaler, CheckpointEntriesRoundTripAndBadOnesAreNamed) {
  LossScaler s({.enabled = true, .init_log2 = 16, .growth_interval = 10});
  s.AfterStep(false);
  s.AfterStep(true);
  const auto entries = s.CheckpointEntries();
  EXPECT_EQ(entries.at("checkpoint:loss_scale_log2"), 15);
  EXPECT_EQ(entries.at("checkpoint:loss_scale_clean"), 1);
  LossScaler resumed({.enabled = true, .init_log2 = 16, .growth_interval = 10});
  resumed.Restore(entries, "m-0001.states");
  EXPECT_EQ(resumed.scale(), 32768.0f);
  for (int i = 0; i < 9; ++i) resumed.AfterStep(true);  // 1 + 9 clean steps: grows
  EXPECT_EQ(resumed.scale(), 65536.0f);
  const auto error = [](std::map<std::string, int64_t> bad) {
    LossScaler t({.enabled = true});
    try {
      t.Restore(bad, "m-0001.states");
    } catch (const DataError& e) {
      return e.message();
    }
    return std::string("accepted");
  };
  EXPECT_THAT(error({{"checkpoint:loss_scale_log2", 25}, {"checkpoint:loss_scale_clean", 0}}),
              ::testing::HasSubstr("'m-0001.states': checkpoint:loss_scale_log2 25 is outside"));
  EXPECT_THAT(error({{"checkpoint:loss_scale_log2", 3}}),
              ::testing::HasSubstr("come together; one is missing"));
  EXPECT_THAT(error({{"checkpoint:loss_scale_log2", 3}, {"checkpoint:loss_scale_clean", -1}}),
              ::testing::HasSubstr("checkpoint:loss_scale_clean -1 is negative"));
  EXPECT_EQ(error({}), "accepted");  // a checkpoint of a run without scaling
}

// Every loss layer multiplies the gradient it starts backward with by the executor's loss scale.
TEST(LossScaler, LossLayersMultiplyTheirGradientByTheScale) {
  const Symbol data = sym::Variable("data");
  const Symbol square = Symbol::Create("square", {data}, {}, "sq");
  const std::vector<Symbol> losses = {
      sym::SoftmaxOutput(data, "softmax"),
      Symbol::Create("LinearRegressionOutput", std::vector<Symbol>{data, sym::Variable("label")},
                     op::Attrs{}, "linear"),
      Symbol::Create("MakeLoss", {square}, {{"grad_scale", "0.5"}}, "make")};
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  for (const Symbol& loss : losses) {
    SCOPED_TRACE(loss.ListOutputs()[0]);
    std::vector<NDArray> args;
    for (const std::string& name : loss.ListArguments()) {
      const Shape shape = name == "softmax_label" ? Shape{4} : Shape{4, 3};
      std::vector<float> v(shape.Size());
      for (size_t i = 0; i < v.size(); ++i) {
        v[i] = name == "softmax_label" ? static_cast<float>(i % 3) : u(rng);
      }
      args.push_back(NDArray::FromVector<float>(shape, v));
    }
    const auto gradient = [&](float scale, Context ctx) {
      std::vector<NDArray> on_ctx, grads(args.size());
      for (const NDArray& a : args) on_ctx.push_back(a.CopyTo(ctx));
      grads[0] = NDArray::Zeros({4, 3}, DType::kFloat32, ctx);
      std::vector<GradReq> reqs(args.size(), GradReq::kNull);
      reqs[0] = GradReq::kWrite;
      auto exec = Executor::Bind(loss, ctx, on_ctx, grads, reqs, {});
      exec->Forward(true);
      exec->set_loss_scale(scale);
      exec->Backward();
      return grads[0].CopyTo(Context::CPU()).ToVector<float>();
    };
    std::vector<Context> contexts = {Context::CPU()};
    if (device::Count() > 0) contexts.push_back(Context::GPU(0));
    for (const Context ctx : contexts) {
      const std::vector<float> one = gradient(1, ctx), scaled = gradient(1024, ctx);
      for (size_t i = 0; i < one.size(); ++i) {
        EXPECT_NE(one[i], 0.0f) << i;
        EXPECT_EQ(scaled[i], one[i] * 1024) << ctx.ToString() << " " << i;  // exact: 2^10
      }
    }
  }
}

Symbol Mlp() {
  Symbol x = sym::Variable("data");
  x = sym::Activation(sym::FullyConnected(x, {.num_hidden = 16}, "fc1"), "relu", "relu1");
  return sym::SoftmaxOutput(sym::FullyConnected(x, {.num_hidden = 4}, "fc2"), "softmax");
}

// 96 samples of 8 features in 4 classes; with `poison`, sample 90 (in the 6th and last batch of
// 16) has a feature of 1e37: its gradients stay finite unscaled but overflow times 2^16.
NDArrayIter Data(int64_t samples, bool poison) {
  std::mt19937 rng(3);
  std::normal_distribution<float> noise(0, 0.3f);
  std::vector<float> x, y;
  for (int i = 0; i < samples; ++i) {
    for (int f = 0; f < 8; ++f) x.push_back((f % 4 == i % 4 ? 1.5f : 0.0f) + noise(rng));
    y.push_back(static_cast<float>(i % 4));
  }
  if (poison) x[90 * 8 + 3] = 1e37f;
  return NDArrayIter({{"data", NDArray::FromVector<float>({samples, 8}, x)}},
                     {{"softmax_label", NDArray::FromVector<float>({samples}, y)}},
                     {.batch_size = 16, .shuffle = false});
}

FitConfig Config(int epochs, const std::string& loss_scaling) {
  FitConfig c;
  c.epochs = epochs;
  c.optimizer_options = {.lr = 0.5, .wd = 1e-4, .momentum = 0.9};
  c.seed = 11;
  c.log_every = 0;
  c.update_on_kvstore = false;  // as loss scaling updates, so that only the scale differs
  c.loss_scaling = loss_scaling;
  c.loss_scale_growth_interval = 2;
  return c;
}

std::map<std::string, NDArray> Params(Trainer& t) {
  std::map<std::string, NDArray> args, aux;
  t.GetParams(&args, &aux);
  return args;
}

// Scaling by a power of two is exact, so a scaled run equals an unscaled one bit for bit except
// where the scaled gradient overflows: that step is skipped (the unscaled run has no such
// batch), the scale halves, and the clean steps between double it.
TEST(LossScaler, TrainsAsUnscaledAndSkipsTheOverflowingStep) {
  Trainer scaled(Mlp(), {Context::CPU(0), Context::CPU(1)});
  Trainer clean(Mlp(), {Context::CPU(0), Context::CPU(1)});
  NDArrayIter poisoned = Data(96, true), first80 = Data(80, false);
  const auto results = scaled.Fit(poisoned, nullptr, Config(2, "dynamic"));
  clean.Fit(first80, nullptr, Config(2, "off"));
  // Each epoch: five clean steps (two doublings), then the overflow (a halving).
  EXPECT_EQ(results[0].overflow_skips, 1);
  EXPECT_EQ(results[0].loss_scale, 65536.0 * 4 / 2);
  EXPECT_EQ(results[1].loss_scale, 65536.0 * 2 * 4 / 2);
  EXPECT_EQ(scaled.loss_scaler().skipped_steps(), 2);
  EXPECT_EQ(scaled.skipped_steps(), 0);  // not on_nonfinite's
  testing::ExpectClose(Params(clean), Params(scaled), 0, 0, "parameters");
}

// The scale and its clean steps are in the checkpoint: a resumed run scales (and so skips) as
// the uninterrupted one.
TEST(LossScaler, CheckpointCarriesTheScaleToTheResumedRun) {
  testing::ScratchDir dir;
  Trainer whole(Mlp(), {Context::CPU(0), Context::CPU(1)});
  NDArrayIter a = Data(96, true);
  const auto expected = whole.Fit(a, nullptr, Config(3, "dynamic"));

  FitConfig first = Config(1, "dynamic");
  first.checkpoint_prefix = dir.Path("m");
  Trainer one(Mlp(), {Context::CPU(0), Context::CPU(1)});
  NDArrayIter b = Data(96, true);
  one.Fit(b, nullptr, first);
  EXPECT_EQ(CheckpointEntries(first.checkpoint_prefix, {1}).at("checkpoint:loss_scale_log2"), 17);
  FitConfig rest = Config(3, "dynamic");
  rest.checkpoint_prefix = first.checkpoint_prefix;
  rest.begin_epoch = 1;
  Trainer resumed(Mlp(), {Context::CPU(0), Context::CPU(1)});
  NDArrayIter c = Data(96, true);
  const auto got = resumed.Fit(c, nullptr, rest);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got.back().loss_scale, expected.back().loss_scale);
  EXPECT_EQ(got.back().loss_scale, 65536.0 * 8);  // 2^16 · 2 a epoch
  testing::ExpectClose(Params(whole), Params(resumed), 0, 0, "parameters");
}

}  // namespace
}  // namespace cohort
