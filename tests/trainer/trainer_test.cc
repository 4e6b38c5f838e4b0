// The fit loop: devices, update_on_kvstore, resume, checkpoints, Score and Predict.
#include "trainer/trainer.h"

#include <gtest/gtest.h>

#include <fmt/format.h>
#include <gmock/gmock.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <functional>
#include <limits>
#include <random>
#include <set>
#include <thread>

#include "base/logging.h"
#include "base/stop_signal.h"
#include "executor/executor.h"
#include "io/ndarray_iter.h"
#include "io/prefetching_iter.h"
#include "kvstore/host_kvstore.h"
#include "ndarray/params_io.h"
#include "symbol/ops.h"
#include "tests/executor/alloc_counter.h"
#include "tests/test_util.h"
#include "trainer/checkpoint.h"

namespace cohort {
namespace {

const bool kQuiet = (SetLogLevel("warn"), true);  // epoch logs would drown the test output

Symbol SmallMlp(double dropout = 0, int64_t classes = 4) {
  Symbol x = sym::Variable("data");
  x = sym::Activation(sym::FullyConnected(x, {.num_hidden = 16}, "fc1"), "relu", "relu1");
  if (dropout > 0) x = sym::Dropout(x, {.p = static_cast<float>(dropout)}, "drop1");
  x = sym::FullyConnected(x, {.num_hidden = classes}, "fc2");
  return sym::SoftmaxOutput(x, "softmax");
}

// 96 samples of 8 features in 4 classes that a small MLP can separate.
std::pair<NDArray, NDArray> Blobs(uint64_t seed = 3) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0, 0.3f);
  std::vector<float> x, y;
  for (int i = 0; i < 96; ++i) {
    const int c = i % 4;
    for (int f = 0; f < 8; ++f) x.push_back((f % 4 == c ? 1.5f : 0.0f) + noise(rng));
    y.push_back(static_cast<float>(c));
  }
  return {NDArray::FromVector<float>({96, 8}, x), NDArray::FromVector<float>({96}, y)};
}

std::unique_ptr<NDArrayIter> Iter(int64_t batch, bool shuffle = true,
                                  LastBatchHandle last_batch = LastBatchHandle::kPad) {
  auto [x, y] = Blobs();
  return std::make_unique<NDArrayIter>(
      NDArrayIter::NamedArrays{{"data", x}}, NDArrayIter::NamedArrays{{"softmax_label", y}},
      BatchOptions{.batch_size = batch, .shuffle = shuffle, .seed = 9, .last_batch = last_batch});
}

FitConfig Config(int epochs) {
  FitConfig c;
  c.epochs = epochs;
  c.optimizer = "sgd";
  c.optimizer_options = {.lr = 0.5, .wd = 1e-4, .momentum = 0.9};
  c.seed = 11;
  c.log_every = 0;
  c.metrics = {"acc", "ce"};
  return c;
}

std::map<std::string, NDArray> Params(Trainer& t) {
  std::map<std::string, NDArray> args, aux;
  t.GetParams(&args, &aux);
  return args;
}

// Trains SmallMlp with dropout 0.3 on Iter(16) over `devices`; the parameters after.
std::map<std::string, NDArray> FitDropoutMlp(const FitConfig& config,
                                             std::vector<Context> devices) {
  Trainer t(SmallMlp(0.3), std::move(devices));
  auto data = Iter(16);
  t.Fit(*data, nullptr, config);
  return Params(t);
}

// A local kvstore that records every key it is given.
class RecordingKVStore : public HostKVStore {
 public:
  RecordingKVStore() : HostKVStore("local", CreateSingleWorkerComm()) {}
  void Init(const std::vector<int>& keys, const std::vector<NDArray>& values) override {
    seen.insert(keys.begin(), keys.end());
    HostKVStore::Init(keys, values);
  }
  void PushPull(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& values,
                const std::vector<std::vector<NDArray>>& outs, int priority) override {
    seen.insert(keys.begin(), keys.end());
    ++pushpulls;
    HostKVStore::PushPull(keys, values, outs, priority);
  }
  std::set<int> seen;
  int pushpulls = 0;
};

// The blobs' classes folded into two (0 and 2 against 1 and 3).
std::unique_ptr<NDArrayIter> TwoClassIter() {
  auto [x, y] = Blobs();
  std::vector<float> labels = y.ToVector<float>();
  for (float& l : labels) l = static_cast<float>(static_cast<int>(l) % 2);
  return std::make_unique<NDArrayIter>(
      NDArrayIter::NamedArrays{{"data", x}},
      NDArrayIter::NamedArrays{{"softmax_label", NDArray::FromVector<float>({96}, labels)}},
      BatchOptions{.batch_size = 16, .shuffle = true, .seed = 9});
}

// Note [Labels checked up front]: a label outside the classes in validation data held in memory
// is refused before the first step, naming its sample, not after an epoch of training.
TEST(Trainer, LabelsInMemoryAreCheckedBeforeTheFirstStep) {
  auto [x, y] = Blobs();
  std::vector<float> labels = y.ToVector<float>();
  labels[50] = 4;  // SmallMlp has 4 classes
  NDArrayIter val(
      NDArrayIter::NamedArrays{{"data", x}},
      NDArrayIter::NamedArrays{{"softmax_label", NDArray::FromVector<float>({96}, labels)}},
      BatchOptions{.batch_size = 16});
  auto kvstore = std::make_shared<RecordingKVStore>();
  Trainer t(SmallMlp(), {Context::CPU(0), Context::CPU(1)}, {}, kvstore);
  auto train = Iter(16);
  const std::string error = testing::ErrorOf([&] { t.Fit(*train, &val, Config(1)); });
  EXPECT_EQ(error.rfind("metric 'accuracy': label 4 is outside the 4 classes of the "
                        "predictions: sample 50 [",
                        0),
            0)
      << error;
  EXPECT_EQ(kvstore->pushpulls, 0);  // no step ran
}

// MXNet's fine-tuning recipe: a network trained on four classes starts a two-class one; fc1
// comes from the trained parameters and stays frozen, fc2 (a new shape) is initialized afresh.
TEST(Trainer, FineTunesWithFrozenLayers) {
  Trainer source(SmallMlp(), {Context::CPU(0)});
  auto four = Iter(16);
  source.Fit(*four, nullptr, Config(3));
  const std::map<std::string, NDArray> trained = Params(source);

  auto kvstore = std::make_shared<RecordingKVStore>();
  Trainer tuned(SmallMlp(0, 2), {Context::CPU(0), Context::CPU(1)}, {}, kvstore);
  FitConfig c = Config(6);
  c.arg_params = trained;
  c.reinit = {"fc2"};
  c.fixed_params = {"fc1_.*"};
  auto two = TwoClassIter();
  const auto results = tuned.Fit(*two, nullptr, c);
  const std::map<std::string, NDArray> after = Params(tuned);
  for (const char* name : {"fc1_weight", "fc1_bias"}) {
    testing::ExpectClose(after.at(name), trained.at(name), 0, 0, name);  // bit-identical
  }
  EXPECT_EQ(after.at("fc2_weight").shape(), Shape({2, 16}));
  EXPECT_EQ(results.back().train[0].first, "accuracy");
  EXPECT_GT(results.back().train[0].second, 0.95);
  // Parameters in argument order: fc1_weight 0, fc1_bias 1, fc2_weight 2, fc2_bias 3.
  EXPECT_EQ(kvstore->seen, (std::set<int>{2, 3}));
  // No gradient memory for frozen parameters.
  EXPECT_TRUE(tuned.manager()->default_group().executor(0).grad_dict().count("fc1_weight") == 0);
}

TEST(Trainer, InitialParametersMustFitTheNetwork) {
  Trainer source(SmallMlp(), {Context::CPU(0)});
  auto four = Iter(16);
  source.Fit(*four, nullptr, Config(1));
  const std::map<std::string, NDArray> trained = Params(source);
  auto fit_error = [&](const std::function<void(FitConfig&)>& change) {
    Trainer t(SmallMlp(0, 2), {Context::CPU(0)});
    FitConfig c = Config(1);
    c.arg_params = trained;
    change(c);
    auto two = TwoClassIter();
    try {
      t.Fit(*two, nullptr, c);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(fit_error([](FitConfig&) {}),
              ::testing::HasSubstr("'fc2_bias' has shape (4,) but the network's is (2,)"));
  EXPECT_THAT(fit_error([](FitConfig& c) {
                c.reinit = {"fc2"};
                c.arg_params["fc9_weight"] = NDArray::Zeros({2});
              }),
              ::testing::HasSubstr("the network has no parameter 'fc9_weight'"));
  EXPECT_THAT(fit_error([](FitConfig& c) {
                c.reinit = {"fc2"};
                c.fixed_params = {"conv.*"};
              }),
              ::testing::HasSubstr("'conv.*' matches no parameter"));
  EXPECT_EQ(fit_error([](FitConfig& c) { c.reinit = {"fc2"}; }), "no error");
  // A layer of the file that the network lacks is left out when listed (MXNet's allow_extra).
  EXPECT_EQ(fit_error([](FitConfig& c) {
              c.reinit = {"fc2", "fc9"};
              c.arg_params["fc9_weight"] = NDArray::Zeros({2});
            }),
            "no error");
  EXPECT_THAT(
      fit_error([](FitConfig& c) {
        c.reinit = {"fc2", "fc8"};
      }),
      ::testing::HasSubstr("neither the network nor the initial parameters have a layer 'fc8' (no "
                           "parameter named fc8_...); layers with parameters: fc1, fc2"));
  // A parameter the file lacks is not made up silently (MXNet's allow_missing).
  auto without_fc1_bias = [](FitConfig& c) {
    c.reinit = {"fc2"};
    c.arg_params.erase("fc1_bias");
  };
  EXPECT_THAT(fit_error(without_fc1_bias),
              ::testing::HasSubstr("the network's fc1_bias are not in them (1 missing): list "
                                   "their layers under reinit, or set model.allow_missing"));
  EXPECT_EQ(fit_error([&](FitConfig& c) {
              without_fc1_bias(c);
              c.allow_missing = true;
            }),
            "no error");
  // Patterns match whole names.
  EXPECT_THAT(fit_error([](FitConfig& c) {
                c.reinit = {"fc2"};
                c.fixed_params = {"fc1"};
              }),
              ::testing::HasSubstr("'fc1' matches no parameter of the network: patterns match "
                                   "whole names: did you mean 'fc1_.*'?"));
}

TEST(Trainer, LearnsTheBlobs) {
  Trainer t(SmallMlp(), {Context::CPU(0)});
  auto train = Iter(16);
  auto results = t.Fit(*train, nullptr, Config(5));
  ASSERT_EQ(results.size(), 5u);
  EXPECT_EQ(results.back().train[0].first, "accuracy");
  EXPECT_GT(results.back().train[0].second, 0.95);
  EXPECT_LT(results.back().train[1].second, results.front().train[1].second);  // ce falls
  EXPECT_GT(results.back().samples_per_sec, 0);
}

// Steps allocate nothing once warm: an epoch of 8 steps makes exactly as many heap allocations
// as an epoch of 4 (binding, first-step state and per-epoch work are the same in both).
TEST(Trainer, TrainingStepsAllocateNothing) {
  for (const std::vector<Context>& devices :
       {std::vector<Context>{Context::CPU(0)},
        std::vector<Context>{Context::CPU(0), Context::CPU(1)}}) {
    for (bool update_on_kvstore : {true, false}) {
      auto allocations = [&](int64_t samples) {
        auto [x, y] = Blobs();
        NDArrayIter data({{"data", x.Slice(0, samples)}}, {{"softmax_label", y.Slice(0, samples)}},
                         BatchOptions{.batch_size = 8, .shuffle = true, .seed = 9});
        Trainer t(SmallMlp(0.3), devices);
        FitConfig c = Config(1);
        c.update_on_kvstore = update_on_kvstore;
        testing::AllocationCounter counter;
        t.Fit(data, nullptr, c);
        return counter.count();
      };
      allocations(16);  // first-use allocations of the process (TBB arenas, thread_locals)
      const int64_t four_steps = allocations(32);
      const int64_t eight_steps = allocations(64);
      EXPECT_EQ(four_steps, eight_steps)
          << devices.size() << " device(s), update_on_kvstore " << update_on_kvstore;
    }
  }
}

TEST(Trainer, TwoDevicesEqualOneDevice) {
  Trainer one(SmallMlp(), {Context::CPU(0)});
  Trainer two(SmallMlp(), {Context::CPU(0), Context::CPU(1)});
  auto a = Iter(16), b = Iter(16);
  one.Fit(*a, nullptr, Config(3));
  two.Fit(*b, nullptr, Config(3));
  testing::ExpectClose(Params(one), Params(two), 0, 1e-5, "parameters");
}

// Module.fit's path (Note [One engine]): a manager bound and initialised elsewhere, adopted,
// trains as the trainer's own binding does from the same parameters; the hooks see every step
// and the metric the steps update.
TEST(Trainer, AdoptedManagerTrainsAsItsOwnBinding) {
  const std::vector<Context> devices = {Context::CPU(0), Context::CPU(1)};
  std::map<std::string, NDArray> start;
  {
    Trainer init(SmallMlp(), devices);
    auto i = Iter(16);
    FitConfig one = Config(1);
    one.optimizer_options.lr = 0;  // an epoch that changes nothing: the initial parameters
    one.optimizer_options.wd = 0;
    init.Fit(*i, nullptr, one);
    start = Params(init);
  }
  Trainer own(SmallMlp(), devices);
  auto a = Iter(16);
  FitConfig config = Config(2);
  config.arg_params = start;
  own.Fit(*a, nullptr, config);

  auto b = Iter(16);
  const std::vector<std::string> params = {"fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"};
  auto manager = std::make_shared<DataParallelExecutorManager>(SmallMlp(), devices, *b, params);
  manager->SetParams(start, {});
  Trainer adopted(SmallMlp(), devices);
  adopted.Adopt(manager, b->provide_data(), params);
  FitConfig keep = Config(2);
  keep.keep_params = true;
  auto metric = std::shared_ptr<EvalMetric>(CreateMetric("acc"));
  std::vector<std::pair<int, int64_t>> steps;
  FitHooks hooks{.on_batch_end =
                     [&](int epoch, int64_t nbatch) {
                       steps.push_back({epoch, nbatch});
                       EXPECT_EQ(metric->State()[1], 16 * (nbatch + 1));  // this epoch's rows
                     },
                 .train_metric = metric,
                 .val_metric = nullptr};
  adopted.Fit(*b, nullptr, keep, nullptr, hooks);
  testing::ExpectClose(Params(own), Params(adopted), 0, 0, "parameters");
  ASSERT_EQ(steps.size(), 12u);  // 96 samples in batches of 16, two epochs
  EXPECT_EQ(steps[6], (std::pair<int, int64_t>{1, 0}));
  std::map<std::string, NDArray> trained, aux;
  manager->CopyTo(&trained, &aux);  // the adopted manager holds the trained parameters
  testing::ExpectClose(trained, Params(own), 0, 0, "the manager's parameters");
}

TEST(Trainer, UnevenWorkLoadEqualsOneDevice) {
  Trainer one(SmallMlp(), {Context::CPU(0)});
  Trainer three(SmallMlp(), {Context::CPU(0), Context::CPU(1), Context::CPU(2)}, {1, 2, 1});
  auto a = Iter(16), b = Iter(16);
  one.Fit(*a, nullptr, Config(2));
  three.Fit(*b, nullptr, Config(2));
  EXPECT_EQ(three.manager()->default_group().slices(),
            (std::vector<std::pair<int64_t, int64_t>>{{0, 4}, {4, 12}, {12, 16}}));
  testing::ExpectClose(Params(one), Params(three), 0, 1e-5, "parameters");
}

// rescale_grad given is used as given, as MXNet's Module does: 1/16 equals the default for a
// batch of 16; 2/16 with half the rate trains alike under plain SGD. (It used to be divided by
// the batch once more, so a value ported from MXNet trained 16 times too slowly.)
TEST(Trainer, RescaleGradGivenReplacesOneOverTheBatch) {
  auto fit = [](std::optional<double> rescale, double lr) {
    Trainer t(SmallMlp(), {Context::CPU(0)});
    FitConfig c = Config(2);
    c.optimizer_options = {.lr = lr};
    c.rescale_grad = rescale;
    auto data = Iter(16);
    t.Fit(*data, nullptr, c);
    return Params(t);
  };
  const auto by_default = fit(std::nullopt, 0.5);
  testing::ExpectClose(fit(1.0 / 16, 0.5), by_default, 0, 1e-6, "rescale 1/16");
  testing::ExpectClose(fit(2.0 / 16, 0.25), by_default, 0, 1e-6, "rescale 2/16, half the rate");
}

// SmallMlp whose fc1_weight carries `attrs` (MXNet's Variable(lr_mult=, wd_mult=, init=)).
Symbol MlpWithFc1WeightAttrs(const op::Attrs& attrs) {
  Symbol x = Symbol::Create("FullyConnected",
                            {{"data", sym::Variable("data")},
                             {"weight", Symbol::Variable("fc1_weight", attrs)}},
                            {{"num_hidden", "16"}}, "fc1");
  x = sym::FullyConnected(sym::Activation(x, "relu", "relu1"), {.num_hidden = 4}, "fc2");
  return sym::SoftmaxOutput(x, "softmax");
}

// A variable's __init__ and __lr_mult__ reach the initializer and the optimizer, as in MXNet's
// Module: with lr_mult 0 the constant 0.5 survives training (it was re-initialized by the global
// initializer and trained). Both kvstore update paths; a multiplier that is not a number is a
// ConfigError naming the variable.
// The initializer draws what mx.random.uniform/normal draw after the same mx.random.seed (a
// one-op executor seeded with the stream's next seed), so cohort-train's initial parameters
// equal Module.init_params' (tests/python/test_examples.py checks the whole run bit for bit).
TEST(Trainer, InitializerDrawsWhatTheRandomOperatorsDraw) {
  const Shape shape{20, 10, 3, 3};
  for (const std::string rnd_type : {"uniform", "gaussian"}) {
    SeedStream draws(42), imperative(42);
    Initializer({.kind = "normal", .sigma = 0.5})("skipped_weight", NDArray::Empty({2}), draws);
    imperative.Next();
    NDArray w = NDArray::Empty(shape);
    Initializer({.kind = "xavier", .rnd_type = rnd_type, .magnitude = 2})("w_weight", w, draws);

    const double scale = std::sqrt(2.0 / ((10 * 9 + 20 * 9) / 2.0));  // as initializer.py
    const bool uniform = rnd_type == "uniform";
    const op::Attrs attrs = {
        {uniform ? "low" : "loc", uniform ? fmt::format("{:.17g}", -scale) : "0"},
        {uniform ? "high" : "scale", fmt::format("{:.17g}", scale)},
        {"shape", "(20, 10, 3, 3)"}};
    const Symbol op = Symbol::Create(uniform ? "_random_uniform" : "_random_normal",
                                     std::vector<Symbol>{}, attrs, "draw");
    auto exe = Executor::Bind(op, Context::CPU(0), {}, {}, {}, {});
    exe->set_random_seed(imperative.Next());
    exe->Forward(false);
    EXPECT_EQ(w.ToVector<float>(), exe->outputs()[0].ToVector<float>()) << rnd_type;
  }
}

TEST(Trainer, VariableInitAndLrMultAttributes) {
  const op::Attrs frozen = {{"__init__", R"(["constant", {"value": 0.5}])"}, {"__lr_mult__", "0"}};
  for (const bool on_kvstore : {true, false}) {
    Trainer t(MlpWithFc1WeightAttrs(frozen), {Context::CPU(0), Context::CPU(1)});
    FitConfig c = Config(2);
    c.update_on_kvstore = on_kvstore;
    auto data = Iter(16);
    t.Fit(*data, nullptr, c);
    const auto params = Params(t);
    EXPECT_EQ(params.at("fc1_weight").ToVector<float>(), std::vector<float>(16 * 8, 0.5f));
    EXPECT_NE(params.at("fc2_bias").ToVector<float>(), std::vector<float>(4, 0.0f));
  }
  Trainer bad(MlpWithFc1WeightAttrs({{"__wd_mult__", "x"}}), {Context::CPU(0)});
  auto data = Iter(16);
  try {
    bad.Fit(*data, nullptr, Config(1));
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("variable 'fc1_weight': __wd_mult__ 'x'"),
              std::string::npos)
        << e.what();
  }
}

TEST(Trainer, UpdateOnKVStoreOrNotAgree) {
  for (const char* opt : {"sgd", "adam", "nag", "rmsprop", "adamw", "signum", "ftml", "ftrl",
                          "adagrad", "adadelta", "adamax", "lamb", "sgld"}) {
    SCOPED_TRACE(opt);
    Trainer on(SmallMlp(), {Context::CPU(0), Context::CPU(1)});
    Trainer off(SmallMlp(), {Context::CPU(0), Context::CPU(1)});
    FitConfig c = Config(2);
    c.optimizer = opt;
    c.optimizer_options = OptimizerOptions::DefaultsFor(opt);
    c.optimizer_options.lr = 0.05;
    c.optimizer_options.centered = true;  // (rmsprop's centered form; the others ignore it)
    auto a = Iter(16), b = Iter(16);
    on.Fit(*a, nullptr, c);
    c.update_on_kvstore = false;
    off.Fit(*b, nullptr, c);
    testing::ExpectClose(Params(on), Params(off), 0, 1e-6, "parameters");
  }
}

// Note [Global norm clipping]: one step of plain SGD over two devices moves the weights by
// -lr * clip * g / (|g| + 1e-6), g the gradient the optimizer sees (sums times rescale_grad) and
// |g| its norm over every parameter; a bound above the norm changes nothing.
TEST(Trainer, ClipGlobalNormScalesTheStepToTheBound) {
  FitConfig c = Config(1);
  c.optimizer_options = {.lr = 0.5};  // no momentum, no weight decay: the step is -lr * g
  auto fit = [&](double lr, double clip) {
    Trainer t(SmallMlp(), {Context::CPU(0), Context::CPU(1)});
    FitConfig config = c;
    config.optimizer_options.lr = lr;
    config.clip_global_norm = clip;
    auto data = Iter(96);  // one batch: one step
    t.Fit(*data, nullptr, config);
    return Params(t);
  };
  const auto start = fit(0.0, 0.0), plain = fit(0.5, 0.0), clipped = fit(0.5, 0.01);
  double squares = 0;
  for (const auto& [name, value] : plain) {
    const std::vector<float> a = value.ToVector<float>(), b = start.at(name).ToVector<float>();
    for (size_t i = 0; i < a.size(); ++i) squares += std::pow((a[i] - b[i]) / 0.5, 2);
  }
  const double norm = std::sqrt(squares);
  ASSERT_GT(norm, 0.1);  // well above the bound: the step is scaled
  const double factor = 0.01 / (norm + 1e-6);
  for (const auto& [name, value] : clipped) {
    const std::vector<float> got = value.ToVector<float>(), from = start.at(name).ToVector<float>(),
                             full = plain.at(name).ToVector<float>();
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i] - from[i], (full[i] - from[i]) * factor, 1e-7) << name << " " << i;
    }
  }
  testing::ExpectClose(fit(0.5, 1e6), plain, 0, 1e-6, "a bound above the norm");
}

// Note [One device updates itself]: with one device in one worker the kvstore gets no optimizer
// and no step traffic, update_on_kvstore notwithstanding, and the weights are those of the
// device updating itself by request (as MXNet's Module, which makes no kvstore then).
TEST(Trainer, OneDeviceUpdatesItselfWithoutTheKVStore) {
  for (const char* opt : {"sgd", "adam"}) {
    auto kv = std::shared_ptr<KVStore>(KVStore::Create("local"));
    Trainer on(SmallMlp(), {Context::CPU(0)}, {}, kv);
    Trainer off(SmallMlp(), {Context::CPU(0)});
    FitConfig c = Config(2);
    c.optimizer = opt;
    auto a = Iter(16), b = Iter(16);
    on.Fit(*a, nullptr, c);
    EXPECT_EQ(kv->optimizer(), nullptr) << opt;
    c.update_on_kvstore = false;
    off.Fit(*b, nullptr, c);
    testing::ExpectClose(Params(on), Params(off), 0, 0, opt);
  }
}

class TrainerFiles : public ::testing::Test {
 protected:
  std::string Prefix() const { return scratch_.Path("mlp"); }
  testing::ScratchDir scratch_;
  const std::filesystem::path& dir_ = scratch_.dir();
};

TEST_F(TrainerFiles, ResumeEqualsUninterrupted) {
  for (bool on_kvstore : {true, false}) {
    FitConfig c = Config(4);
    c.optimizer = "adam";
    c.optimizer_options.lr = 0.01;
    c.update_on_kvstore = on_kvstore;
    c.lr_schedule = "factor";
    c.schedule = {.step = 5, .factor = 0.5};
    Trainer whole(SmallMlp(), {Context::CPU(0), Context::CPU(1)});
    auto a = Iter(16);
    whole.Fit(*a, nullptr, c);

    FitConfig first = c;
    first.epochs = 2;
    first.checkpoint_prefix = Prefix();
    Trainer part1(SmallMlp(), {Context::CPU(0), Context::CPU(1)});
    auto b = Iter(16);
    part1.Fit(*b, nullptr, first);
    ASSERT_TRUE(std::filesystem::exists(Prefix() + "-0002.params"));
    ASSERT_TRUE(std::filesystem::exists(Prefix() + "-0002.states"));
    ASSERT_TRUE(std::filesystem::exists(Prefix() + "-symbol.json"));

    FitConfig rest = c;
    rest.begin_epoch = 2;
    rest.checkpoint_prefix = Prefix();
    Trainer part2(SmallMlp(), {Context::CPU(0), Context::CPU(1)});
    auto d = Iter(16);
    part2.Fit(*d, nullptr, rest);
    testing::ExpectClose(Params(whole), Params(part2), 0, 1e-6, "parameters");
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
}

// Frozen parameters have no key, so the trained ones' keys skip them (fc2's are 2 and 3): a
// fine-tuning run resumes from its states (their keys were once checked as if numbered from 0,
// which refused the file).
TEST_F(TrainerFiles, FineTuningWithFrozenLayersResumesExactly) {
  FitConfig c = Config(4);
  c.fixed_params = {"fc1_.*"};
  c.optimizer_options.momentum = 0.9;
  Trainer whole(SmallMlp(), {Context::CPU(0)});
  whole.Fit(*Iter(16), nullptr, c);
  FitConfig first = c;
  first.epochs = 2;
  first.checkpoint_prefix = Prefix();
  Trainer part1(SmallMlp(), {Context::CPU(0)});
  part1.Fit(*Iter(16), nullptr, first);
  FitConfig rest = c;
  rest.begin_epoch = 2;
  rest.checkpoint_prefix = Prefix();
  Trainer part2(SmallMlp(), {Context::CPU(0)});
  part2.Fit(*Iter(16), nullptr, rest);
  testing::ExpectClose(Params(whole), Params(part2), 0, 0, "resumed parameters");
}

// SmallMlp computing in float16 from float32 data: its weights infer float16.
Symbol Float16Mlp() {
  auto cast = [](const Symbol& x, const char* dtype) {
    return Symbol::Create("Cast", {x}, {{"dtype", dtype}});
  };
  Symbol x = cast(sym::Variable("data"), "float16");
  x = sym::Activation(sym::FullyConnected(x, {.num_hidden = 16}, "fc1"), "relu", "relu1");
  x = sym::FullyConnected(x, {.num_hidden = 4}, "fc2");
  return sym::SoftmaxOutput(cast(x, "float32"), "softmax");
}

// Note [Multi-precision weights]: float16 weights train with float32 master copies, which the
// states file keeps, so a resumed run equals the uninterrupted one bit for bit (rounding the
// master copies to float16 at the checkpoint would lose their low bits); two devices train as
// one within float16's rounding; without multi_precision the optimizer refuses to start.
TEST_F(TrainerFiles, Float16WeightsTrainOnMasterCopiesAndResumeExactly) {
  const std::vector<Context> two = {Context::CPU(0), Context::CPU(1)};
  FitConfig c = Config(4);
  c.optimizer = "adam";
  c.optimizer_options.lr = 0.01;
  c.optimizer_options.multi_precision = true;
  Trainer whole(Float16Mlp(), two);
  auto a = Iter(16);
  whole.Fit(*a, nullptr, c);
  const std::map<std::string, NDArray> want = Params(whole);
  EXPECT_EQ(want.at("fc1_weight").dtype(), DType::kFloat16);
  auto acc = CreateMetric("acc");
  whole.Score(*Iter(16, false), *acc);
  EXPECT_GT(acc->Get().at(0).second, 0.9);

  FitConfig first = c;
  first.epochs = 2;
  first.checkpoint_prefix = Prefix();
  Trainer part1(Float16Mlp(), two);
  part1.Fit(*Iter(16), nullptr, first);
  FitConfig rest = c;
  rest.begin_epoch = 2;
  rest.checkpoint_prefix = Prefix();
  Trainer part2(Float16Mlp(), two);
  part2.Fit(*Iter(16), nullptr, rest);
  testing::ExpectClose(want, Params(part2), 0, 0, "resumed parameters");

  Trainer one(Float16Mlp(), {Context::CPU(0)});
  one.Fit(*Iter(16), nullptr, c);
  testing::ExpectClose(want, Params(one), 0, 4e-3, "one device's parameters");

  c.optimizer_options.multi_precision = false;
  Trainer plain(Float16Mlp(), two);
  EXPECT_THROW(plain.Fit(*Iter(16), nullptr, c), ConfigError);
}

// roll_over carries an epoch's last samples into the next: a resumed run replays the epochs
// before it with what they rolled over (they used to be replayed by Reset alone, which
// forgot it), directly and through a prefetching thread.
TEST_F(TrainerFiles, ResumeWithRollOverEqualsUninterrupted) {
  for (bool prefetch : {false, true}) {
    auto iter = [&] {  // 96 samples in batches of 20: 16 roll over each epoch
      std::unique_ptr<DataIter> it = Iter(20, /*shuffle=*/true, LastBatchHandle::kRollOver);
      return prefetch ? std::make_unique<PrefetchingIter>(std::move(it)) : std::move(it);
    };
    const FitConfig c = Config(3);
    Trainer whole(SmallMlp(), {Context::CPU(0), Context::CPU(1)});
    whole.Fit(*iter(), nullptr, c);
    FitConfig first = c;
    first.epochs = 2;
    first.checkpoint_prefix = Prefix();
    Trainer part1(SmallMlp(), {Context::CPU(0), Context::CPU(1)});
    part1.Fit(*iter(), nullptr, first);
    FitConfig rest = c;
    rest.resume_latest = true;
    rest.checkpoint_prefix = Prefix();
    Trainer part2(SmallMlp(), {Context::CPU(0), Context::CPU(1)});
    part2.Fit(*iter(), nullptr, rest);
    testing::ExpectClose(Params(whole), Params(part2), 0, 0, prefetch ? "prefetched" : "direct");
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
}

// BatchNorm's moving statistics differ by device until a checkpoint averages them; the devices
// then go on from the average, as a resumed run does, so resuming is bit for bit for them too
// (they were 5e-7 apart).
TEST_F(TrainerFiles, ResumeWithBatchNormOnTwoDevicesIsBitForBit) {
  auto net = [] {
    Symbol x = sym::FullyConnected(sym::Variable("data"), {.num_hidden = 16}, "fc1");
    x = sym::Activation(sym::BatchNorm(x, {.fix_gamma = false}, "bn1"), "relu", "relu1");
    return sym::SoftmaxOutput(sym::FullyConnected(x, {.num_hidden = 4}, "fc2"), "softmax");
  };
  auto fit = [&](const FitConfig& config) {
    Trainer t(net(), {Context::CPU(0), Context::CPU(1)});
    t.Fit(*Iter(16), nullptr, config);
    std::map<std::string, NDArray> args, aux;
    t.GetParams(&args, &aux);
    args.insert(aux.begin(), aux.end());
    return args;
  };
  FitConfig c = Config(3);
  c.checkpoint_prefix = Prefix();
  const auto whole = fit(c);
  std::filesystem::remove_all(dir_);
  std::filesystem::create_directories(dir_);
  FitConfig first = c;
  first.epochs = 1;
  fit(first);
  FitConfig rest = c;
  rest.resume_latest = true;
  testing::ExpectClose(whole, fit(rest), 0, 0, "parameters and moving statistics");
}

// Dropout masks depend on (seed, epoch, batch, global batch position) alone (Note [Random
// streams]), so the resumed run draws the masks the uninterrupted one drew.
TEST_F(TrainerFiles, ResumeReplaysDropoutMasks) {
  FitConfig c = Config(3);
  auto fit = [](const FitConfig& config) {
    return FitDropoutMlp(config, {Context::CPU(0), Context::CPU(1)});
  };
  const auto whole = fit(c);
  FitConfig first = c;
  first.epochs = 1;
  first.checkpoint_prefix = Prefix();
  fit(first);
  FitConfig rest = c;
  rest.begin_epoch = 1;
  rest.checkpoint_prefix = Prefix();
  testing::ExpectClose(whole, fit(rest), 0, 1e-6, "parameters");
}

TEST_F(TrainerFiles, CheckpointHoldsMXNetNamesAndLoads) {
  FitConfig c = Config(1);
  c.checkpoint_prefix = Prefix();
  Trainer t(SmallMlp(), {Context::CPU(0)});
  auto train = Iter(16);
  t.Fit(*train, nullptr, c);
  auto file = LoadParams(Prefix() + "-0001.params");
  EXPECT_TRUE(file.count("arg:fc1_weight"));
  EXPECT_TRUE(file.count("arg:fc2_bias"));
  EXPECT_FALSE(file.count("arg:data"));
  Symbol loaded = Symbol::Load(Prefix() + "-symbol.json");
  EXPECT_EQ(loaded.ListArguments(), SmallMlp().ListArguments());
  std::map<std::string, NDArray> args, aux;
  LoadCheckpointParams(Prefix(), {1}, &args, &aux);
  testing::ExpectClose(args, Params(t), 0, 0, "parameters");
  EXPECT_THROW(LoadCheckpointParams(Prefix(), {7}, &args, &aux), Error);
}

// Wraps an iterator and raises `signo` in this process during its n-th Next (1-based).
class SignalDuringNext : public DataIter {
 public:
  SignalDuringNext(DataIter& inner, int n, int signo) : inner_(inner), n_(n), signo_(signo) {}
  void Reset() override { inner_.Reset(); }
  bool Next() override {
    // To the process, as a scheduler sends it: the signal thread takes it (Note [Signals on a
    // thread of their own]); the step goes on once it is recorded.
    if (++calls_ == n_) {
      kill(getpid(), signo_);
      for (int i = 0; i < 5000 && StopSignal() == 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    return inner_.Next();
  }
  const DataBatch& Value() const override { return inner_.Value(); }
  const std::vector<DataDesc>& provide_data() const override { return inner_.provide_data(); }
  const std::vector<DataDesc>& provide_label() const override { return inner_.provide_label(); }
  int64_t batch_size() const override { return inner_.batch_size(); }

 private:
  DataIter& inner_;
  int n_, signo_, calls_ = 0;
};

// Fails as a torn data file would at the n-th call of Next.
class ThrowDuringNext : public SignalDuringNext {
 public:
  ThrowDuringNext(DataIter& inner, int n) : SignalDuringNext(inner, 0, 0), n_(n) {}
  bool Next() override {
    if (++calls_ == n_) throw DataError("ThrowDuringNext: batch " + std::to_string(n_), __FILE__, __LINE__);
    return SignalDuringNext::Next();
  }

 private:
  int n_, calls_ = 0;
};

// The last epoch is checkpointed whatever the period, so a run whose period does not divide its
// epochs keeps its result, and resume_epoch: auto finds the run complete.
TEST_F(TrainerFiles, TheLastEpochIsCheckpointedOffThePeriod) {
  FitConfig c = Config(3);
  c.checkpoint_prefix = Prefix();
  c.checkpoint_period = 2;
  Trainer t(SmallMlp(), {Context::CPU(0)});
  t.Fit(*Iter(16), nullptr, c);
  EXPECT_TRUE(std::filesystem::exists(Prefix() + "-0002.params"));
  ASSERT_TRUE(std::filesystem::exists(Prefix() + "-0003.params"));
  c.resume_latest = true;
  Trainer again(SmallMlp(), {Context::CPU(0)});
  EXPECT_TRUE(again.Fit(*Iter(16), nullptr, c).empty());  // nothing left to train
}

// Note [Stop on a signal] and Note [Checkpoint positions]: a SIGTERM mid-epoch stops after the
// step, writes a mid-epoch checkpoint, and a run resumed from the latest checkpoint ends with
// the parameters of an uninterrupted run, dropout masks and momentum included.
TEST_F(TrainerFiles, StopOnSignalThenResumeLatestEqualsUninterrupted) {
  InstallStopSignalHandlers();
  for (bool on_kvstore : {true, false}) {
    FitConfig c = Config(3);
    c.update_on_kvstore = on_kvstore;
    c.checkpoint_prefix = Prefix();
    auto fit = [&](const FitConfig& config, int signal_at, int* stopped) {
      Trainer t(SmallMlp(0.3), {Context::CPU(0), Context::CPU(1)});
      auto data = Iter(16);
      SignalDuringNext wrapped(*data, signal_at, SIGTERM);
      t.Fit(wrapped, nullptr, config);
      *stopped = t.stopped_by_signal();
      ClearStopSignal();
      return Params(t);
    };
    int stopped = 0;
    FitConfig plain = c;
    plain.checkpoint_prefix.clear();
    const auto whole = fit(plain, -1, &stopped);
    EXPECT_EQ(stopped, 0);
    // 6 batches an epoch (7 Nexts): the 11th Next fetches epoch 1's 4th batch, during its 3rd
    // step (the loop fetches one batch ahead, Note [Input staging]).
    fit(c, 11, &stopped);
    EXPECT_EQ(stopped, SIGTERM);
    ASSERT_TRUE(std::filesystem::exists(Prefix() + "-0001-00000003.params"));
    EXPECT_TRUE(std::filesystem::exists(Prefix() + "-0001.params"));
    EXPECT_FALSE(std::filesystem::exists(Prefix() + "-0002.params"));
    FitConfig rest = c;
    rest.resume_latest = true;
    testing::ExpectClose(whole, fit(rest, -1, &stopped), 0, 0, "parameters");
    EXPECT_EQ(*LatestCheckpoint(Prefix()), (CheckpointPosition{3, 0}));
    EXPECT_FALSE(std::filesystem::exists(Prefix() + "-0001-00000003.params"));  // superseded
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
}

// A signal during validation stops it at its next batch: the epoch's checkpoint is written
// (here off the checkpoint period), and no step of the next epoch runs. Before, validation ran
// to its end, one more step trained and a signal in the last epoch's validation exited 0.
TEST_F(TrainerFiles, SignalDuringValidationStopsAtTheEpochsEnd) {
  InstallStopSignalHandlers();
  for (int epochs : {3, 1}) {
    FitConfig c = Config(epochs);
    c.checkpoint_prefix = Prefix();
    c.checkpoint_period = 2;
    Trainer t(SmallMlp(), {Context::CPU(0), Context::CPU(1)});
    auto train = Iter(16);
    auto val = Iter(16, /*shuffle=*/false);
    SignalDuringNext signalling(*val, 2, SIGTERM);
    const std::vector<EpochResult> results = t.Fit(*train, &signalling, c);
    ClearStopSignal();
    EXPECT_EQ(t.stopped_by_signal(), SIGTERM) << epochs << " epoch(s)";
    ASSERT_EQ(results.size(), 1u);
    EXPECT_TRUE(results[0].val.empty());  // not a partial figure
    ASSERT_TRUE(std::filesystem::exists(Prefix() + "-0001.params"));
    EXPECT_FALSE(std::filesystem::exists(Prefix() + "-0001-00000001.params"));
    FitConfig one = Config(1);
    Trainer once(SmallMlp(), {Context::CPU(0), Context::CPU(1)});
    once.Fit(*Iter(16), nullptr, one);
    testing::ExpectClose(Params(once), Params(t), 0, 0, "parameters after one epoch");
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
}

// A stop after an epoch's last step leaves a checkpoint at its last batch: the resumed run
// trains none of that epoch and reports no training figure for it (it reported NaN).
TEST_F(TrainerFiles, ResumeAtAnEpochsLastBatchReportsNoTrainingFigure) {
  InstallStopSignalHandlers();
  FitConfig c = Config(2);
  c.checkpoint_prefix = Prefix();
  {
    Trainer t(SmallMlp(), {Context::CPU(0), Context::CPU(1)});
    auto data = Iter(16);
    SignalDuringNext last(*data, 7, SIGTERM);  // 6 batches: the 7th Next ends the epoch
    t.Fit(last, nullptr, c);
    ClearStopSignal();
    ASSERT_EQ(t.stopped_by_signal(), SIGTERM);
  }
  ASSERT_TRUE(std::filesystem::exists(Prefix() + "-0000-00000006.params"));
  c.resume_latest = true;
  Trainer t(SmallMlp(), {Context::CPU(0), Context::CPU(1)});
  const std::vector<EpochResult> results = t.Fit(*Iter(16), nullptr, c);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0].train.empty());
  EXPECT_FALSE(results[1].train.empty());
}

// checkpoint.every_steps: a mid-epoch checkpoint every N batches, resumable exactly; none left
// once the epoch's own checkpoint is written.
TEST_F(TrainerFiles, EveryStepsCheckpointsResumeExactly) {
  FitConfig c = Config(2);
  c.optimizer = "adam";
  c.optimizer_options.lr = 0.01;
  const auto fit = [](const FitConfig& config) { return FitDropoutMlp(config, {Context::CPU(0)}); };
  const auto whole = fit(c);
  FitConfig first = c;
  first.epochs = 1;
  first.checkpoint_prefix = Prefix();
  first.checkpoint_every_steps = 4;
  fit(first);
  EXPECT_TRUE(std::filesystem::exists(Prefix() + "-0001.params"));
  EXPECT_FALSE(std::filesystem::exists(Prefix() + "-0000-00000004.params"));
  // Resume from a mid-epoch checkpoint written by a run that went on past it and then failed
  // (its 6th batch does not load) before the epoch's checkpoint.
  {
    Trainer t(SmallMlp(0.3), {Context::CPU(0)});
    auto data = Iter(16);
    ThrowDuringNext failing(*data, 6);
    EXPECT_THROW(t.Fit(failing, nullptr, first), DataError);
  }
  ASSERT_TRUE(std::filesystem::exists(Prefix() + "-0000-00000004.params"));
  std::filesystem::remove(Prefix() + "-0001.params");
  FitConfig rest = c;
  rest.checkpoint_prefix = Prefix();
  rest.resume_latest = true;
  testing::ExpectClose(whole, fit(rest), 0, 0, "parameters");
}

// Note [Checkpoint positions]: a mid-epoch position counts batches of one size. Resuming it
// with another batch size, or with an epoch that has fewer batches, is refused with the file;
// an epoch checkpoint goes on with any batch size.
TEST_F(TrainerFiles, MidEpochResumeRefusesOtherBatching) {
  FitConfig c = Config(2);
  c.checkpoint_prefix = Prefix();
  c.checkpoint_every_steps = 4;
  {
    Trainer t(SmallMlp(), {Context::CPU(0)});
    auto data = Iter(16);
    ThrowDuringNext failing(*data, 6);  // after the checkpoint at batch 4, before the epoch's
    EXPECT_THROW(t.Fit(failing, nullptr, c), DataError);
  }
  ASSERT_TRUE(std::filesystem::exists(Prefix() + "-0000-00000004.params"));
  c.resume_latest = true;
  c.checkpoint_every_steps = 0;
  const std::string states = Prefix() + "-0000-00000004.states";
  const auto config_error = [](const std::function<void()>& fn) -> std::string {
    try {
      fn();
    } catch (const ConfigError& e) {  // bad input: exit 2
      return e.what();
    }
    return "no ConfigError";
  };
  {
    Trainer t(SmallMlp(), {Context::CPU(0)});
    EXPECT_THAT(config_error([&] { t.Fit(*Iter(8), nullptr, c); }),
                ::testing::HasSubstr("'" + states +
                                     "' is a mid-epoch checkpoint after 4 batches "
                                     "of 16 samples (over every worker); this run's batches hold "
                                     "8 (batch_size 8 x 1 worker(s)): set them back, or start "
                                     "afresh (no epoch checkpoint precedes it)"));
  }
  {
    auto [x, y] = Blobs();  // 48 samples: 3 batches of 16
    NDArrayIter fewer(NDArrayIter::NamedArrays{{"data", x.Slice(0, 48)}},
                      NDArrayIter::NamedArrays{{"softmax_label", y.Slice(0, 48)}},
                      BatchOptions{.batch_size = 16, .shuffle = true, .seed = 9});
    Trainer t(SmallMlp(), {Context::CPU(0)});
    EXPECT_THAT(config_error([&] { t.Fit(fewer, nullptr, c); }),
                ::testing::HasSubstr("is a checkpoint after 4 batches of epoch 0, which now has "
                                     "only 3: the data or its batching changed since"));
  }
  Trainer same(SmallMlp(), {Context::CPU(0)});  // the same batching resumes
  EXPECT_EQ(same.Fit(*Iter(16), nullptr, c).size(), 2u);
  c.resume_latest = false;  // an epoch checkpoint goes on with another batch size
  c.begin_epoch = 1;
  Trainer other(SmallMlp(), {Context::CPU(0)});
  EXPECT_EQ(other.Fit(*Iter(8), nullptr, c).size(), 1u);
}

// A states file that does not fit the network (a state smaller than its weight crashed
// Optimizer::Update; a global batch of 0 was taken) is refused before the first step, naming the
// file and the entry, whether the kvstore or the devices update.
TEST_F(TrainerFiles, CorruptStatesAreRefusedBeforeTraining) {
  FitConfig first = Config(1);
  first.checkpoint_prefix = Prefix();
  Trainer t(SmallMlp(), {Context::CPU(0), Context::CPU(1)});
  t.Fit(*Iter(16), nullptr, first);
  const std::string states = Prefix() + "-0001.states";
  const ParamsFile saved = LoadParamsFile(states);
  auto resume_error = [&](const ParamsFile& file, bool on_kvstore) -> std::string {
    SaveParamsFile(states, file);
    FitConfig c = Config(2);
    c.checkpoint_prefix = Prefix();
    c.begin_epoch = 1;
    c.update_on_kvstore = on_kvstore;
    Trainer resumed(SmallMlp(), {Context::CPU(0), Context::CPU(1)});
    try {
      resumed.Fit(*Iter(16), nullptr, c);
    } catch (const DataError& e) {
      EXPECT_FALSE(resumed.training_started());
      return e.message();
    }
    return "accepted";
  };
  for (bool on_kvstore : {true, false}) {
    ParamsFile smaller = saved;
    for (size_t i = 0; i < smaller.names.size(); ++i) {  // fc1_weight's momentum, cut to (1, 8)
      if (smaller.names[i] == "state:0:0") smaller.arrays[i] = smaller.arrays[i].Slice(0, 1);
    }
    EXPECT_THAT(resume_error(smaller, on_kvstore),
                ::testing::HasSubstr("optimizer states '" + states +
                                     "': 'state:0:0', a state of key 0 (fc1_weight), must be "
                                     "float32 of shape (16,8), not float32 of shape (1,8)"));
  }
  ParamsFile zero_batch = saved;
  for (size_t i = 0; i < zero_batch.names.size(); ++i) {
    if (zero_batch.names[i] == "checkpoint:global_batch") {
      zero_batch.arrays[i] = NDArray::FromVector<int64_t>({1}, {0});
    }
  }
  EXPECT_THAT(resume_error(zero_batch, true),
              ::testing::HasSubstr("'" + states +
                                   "': checkpoint:global_batch is not one int64 of at least 1"));
  EXPECT_EQ(resume_error(saved, true), "accepted");
}

TEST_F(TrainerFiles, ResumeLatestWithoutCheckpointStartsFresh) {
  FitConfig c = Config(1);
  Trainer a(SmallMlp(), {Context::CPU(0)}), b(SmallMlp(), {Context::CPU(0)});
  auto d1 = Iter(16), d2 = Iter(16);
  a.Fit(*d1, nullptr, c);
  c.checkpoint_prefix = Prefix();
  c.resume_latest = true;
  b.Fit(*d2, nullptr, c);
  testing::ExpectClose(Params(a), Params(b), 0, 0, "parameters");
}

// Note [Non-finite gradients]: a NaN in sample 90 makes the 6th batch's summed gradients NaN
// (no shuffle, batches of 16; named batch 6, as the progress lines count). Stopping names the step and the first parameter; skipping leaves the
// weights as training on the first 80 samples alone leaves them.
TEST(Trainer, NonFiniteGradientStopsOrSkipsTheStep) {
  auto [x, y] = Blobs();
  auto iter = [&](const NDArray& data, const NDArray& label) {
    return std::make_unique<NDArrayIter>(NDArrayIter::NamedArrays{{"data", data}},
                                         NDArrayIter::NamedArrays{{"softmax_label", label}},
                                         BatchOptions{.batch_size = 16, .shuffle = false});
  };
  NDArray poisoned = x.CopyTo(Context::CPU());
  poisoned.data<float>()[90 * 8 + 3] = std::numeric_limits<float>::quiet_NaN();
  const NDArray first80 = x.Slice(0, 80).CopyTo(Context::CPU()),
                labels80 = y.Slice(0, 80).CopyTo(Context::CPU());
  for (bool on_kvstore : {true, false}) {
    SCOPED_TRACE(on_kvstore ? "update on kvstore" : "update on devices");
    FitConfig c = Config(1);
    c.update_on_kvstore = on_kvstore;
    Trainer stops(SmallMlp(), {Context::CPU(0), Context::CPU(1)});
    auto bad = iter(poisoned, y);
    try {
      stops.Fit(*bad, nullptr, c);
      ADD_FAILURE() << "a NaN gradient did not stop training";
    } catch (const AgreedError& e) {
      // relu keeps NaN (as MXNet's own kernels do; its oneDNN one maps it to 0), so the NaN
      // reaches the other three parameters too; the first is named.
      EXPECT_THAT(e.message(), ::testing::HasSubstr("epoch 0, batch 6: the summed gradient of "
                                                    "'fc1_weight' holds NaN or infinity (and of 3 "
                                                    "other parameter(s)); training stopped"));
    }
    c.on_nonfinite = OnNonFinite::kSkipStep;
    Trainer skips(SmallMlp(), {Context::CPU(0), Context::CPU(1)});
    Trainer clean(SmallMlp(), {Context::CPU(0), Context::CPU(1)});
    auto bad2 = iter(poisoned, y), good = iter(first80, labels80);
    skips.Fit(*bad2, nullptr, c);
    clean.Fit(*good, nullptr, c);
    EXPECT_EQ(skips.skipped_steps(), 1);
    testing::ExpectClose(Params(clean), Params(skips), 0, 0, "parameters");
  }
}

TEST(Trainer, ScoreAndPredictWithAnotherBatchSize) {
  Trainer t(SmallMlp(), {Context::CPU(0), Context::CPU(1)});
  auto train = Iter(16);
  auto val = Iter(10, false);  // 96 = 9 full batches + 6 with 4 padded samples
  auto results = t.Fit(*train, val.get(), Config(5));
  EXPECT_GT(results.back().val[0].second, 0.95);
  auto acc = CreateMetric("acc");
  auto score = t.Score(*val, *acc);
  EXPECT_EQ(acc->num_inst(), 96);  // padding left out
  NDArray pred = t.Predict(*val);
  EXPECT_EQ(pred.shape(), Shape({96, 4}));
  // Predictions agree with the score.
  std::vector<float> p = pred.ToVector<float>();
  int correct = 0;
  for (int i = 0; i < 96; ++i) {
    const int best = static_cast<int>(std::max_element(p.begin() + 4 * i, p.begin() + 4 * i + 4) -
                                      (p.begin() + 4 * i));
    correct += best == i % 4;
  }
  EXPECT_DOUBLE_EQ(correct / 96.0, score[0].second);
}

TEST(Trainer, PredictWithGivenParamsOnly) {
  Trainer trained(SmallMlp(), {Context::CPU(0)});
  auto train = Iter(16);
  trained.Fit(*train, nullptr, Config(3));
  Trainer fresh(SmallMlp(), {Context::CPU(0)});
  fresh.SetParams(Params(trained), {});
  auto val = Iter(16, false);
  auto val2 = Iter(16, false);
  EXPECT_EQ(fresh.Predict(*val).ToVector<float>(), trained.Predict(*val2).ToVector<float>());
}

// Two epochs of SGD (momentum 0.9, wd 0.01) from the same start as MXNet 1.9.1's Module
// (scripts/make_mxnet_training_fixture.py) end at MXNet's parameters.
TEST(Trainer, MatchesMXNetModuleFit) {
  auto fixture = LoadParams(std::string(COHORT_TEST_DATA_DIR) + "/mxnet_train/mlp_sgd.params");
  NDArrayIter data({{"data", fixture.at("data")}}, {{"softmax_label", fixture.at("label")}},
                   {.batch_size = 8, .shuffle = false});
  FitConfig c;
  c.epochs = 2;
  c.optimizer_options = {.lr = 0.1, .wd = 0.01, .momentum = 0.9};
  c.log_every = 0;
  std::map<std::string, NDArray> want;
  for (const auto& [name, array] : fixture) {
    if (name.rfind("init:", 0) == 0) c.arg_params[name.substr(5)] = array;
    if (name.rfind("final:", 0) == 0) want[name.substr(6)] = array;
  }
  for (auto devices : {std::vector<Context>{Context::CPU(0)},
                       std::vector<Context>{Context::CPU(0), Context::CPU(1)}}) {
    Trainer t(SmallMlp(), devices);
    t.Fit(data, nullptr, c);
    data.Reset();
    testing::ExpectClose(Params(t), want, 0, 1e-5, "parameters");
  }
}

TEST(SplitBatch, ProportionalAndComplete) {
  EXPECT_EQ(SplitBatch(10, {1, 1, 1}),
            (std::vector<std::pair<int64_t, int64_t>>{{0, 3}, {3, 6}, {6, 10}}));
  EXPECT_EQ(SplitBatch(8, {3, 1}), (std::vector<std::pair<int64_t, int64_t>>{{0, 6}, {6, 8}}));
  EXPECT_THROW(SplitBatch(2, {1, 1, 1}), Error);
  // Halves round to even, as MXNet's _split_input_slice under Python 3 (2.5 -> 2).
  EXPECT_EQ(SplitBatch(5, {1, 1}), (std::vector<std::pair<int64_t, int64_t>>{{0, 2}, {2, 5}}));
  EXPECT_EQ(SplitBatch(10, {1, 1, 1, 1}),
            (std::vector<std::pair<int64_t, int64_t>>{{0, 2}, {2, 4}, {4, 6}, {6, 10}}));
  EXPECT_EQ(SplitBatch(7, {1, 1}), (std::vector<std::pair<int64_t, int64_t>>{{0, 4}, {4, 7}}));
}

}  // namespace
}  // namespace cohort
