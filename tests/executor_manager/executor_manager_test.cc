// DataParallelExecutorManager driven directly, MXNet's way (bind, load a batch, forward,
// backward, update through a kvstore, metric), against one executor on the whole batch; and its
// buckets, which share the default bucket's parameters.
#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "executor_manager/executor_group.h"
#include "io/ndarray_iter.h"
#include "kvstore/kvstore.h"
#include "metric/eval_metric.h"
#include "optimizer/optimizer.h"
#include "symbol/ops.h"
#include "tests/test_util.h"

namespace cohort {
namespace {

using testing::ErrorOf;
using testing::ExpectClose;

NDArray Random(const Shape& shape, std::mt19937& rng, float lo = -1, float hi = 1) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(shape.Size());
  for (float& x : v) x = u(rng);
  return NDArray::FromVector<float>(shape, v);
}

// data (batch, 4) -> fc1 (8) -> relu -> fc2 (3) -> SoftmaxOutput.
Symbol Mlp() {
  Symbol x = sym::FullyConnected(sym::Variable("data"), {.num_hidden = 8}, "fc1");
  x = sym::Activation(x, "relu", "relu1");
  x = sym::FullyConnected(x, {.num_hidden = 3}, "fc2");
  return sym::SoftmaxOutput(x, "softmax");
}

const std::vector<std::string> kParams = {"fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"};

std::map<std::string, NDArray> InitialParams(std::mt19937& rng) {
  return {{"fc1_weight", Random({8, 4}, rng)},
          {"fc1_bias", Random({8}, rng)},
          {"fc2_weight", Random({3, 8}, rng)},
          {"fc2_bias", Random({3}, rng)}};
}

TEST(DataParallelExecutorManager, EqualsOneExecutorOnTheWholeBatch) {
  std::mt19937 rng(5);
  const int64_t batch = 7;
  const NDArray data = Random({batch, 4}, rng);
  const NDArray label = NDArray::FromVector<float>({batch}, std::vector<float>{0, 1, 2, 0, 1, 2, 1});
  NDArrayIter iter({{"data", data}}, {{"softmax_label", label}}, {.batch_size = batch});
  const std::map<std::string, NDArray> init = InitialParams(rng);

  // Three devices with work loads 1 : 2 : 1 (rows 0-1, 2-5, 6 of 7).
  DataParallelExecutorManager manager(Mlp(), {Context::CPU(0), Context::CPU(1), Context::CPU(2)},
                                      iter, kParams, {1, 2, 1});
  manager.SetParams(init, {});
  ASSERT_TRUE(iter.Next());
  manager.LoadDataBatch(iter.Value());
  manager.Forward(true);
  manager.Backward();

  auto single = Executor::SimpleBind(Mlp(), Context::CPU(0),
                                     {{"data", {batch, 4}}, {"softmax_label", {batch}}});
  for (const auto& [name, value] : init) value.CopyTo(single->arg_dict().at(name));
  data.CopyTo(single->arg_dict().at("data"));
  label.CopyTo(single->arg_dict().at("softmax_label"));
  single->Forward(true);
  single->Backward();

  // The kvstore sums the devices' gradients: that sum is the one executor's gradient.
  auto kv = KVStore::Create("local");
  std::vector<int> keys;
  std::vector<NDArray> values;
  for (size_t i = 0; i < kParams.size(); ++i) {
    keys.push_back(static_cast<int>(i));
    values.push_back(init.at(kParams[i]).CopyTo(Context::CPU()));
  }
  kv->Init(keys, values);
  kv->SetOptimizer(Optimizer::Create("sgd", {.lr = 0.1}));
  kv->Push(keys, manager.grad_arrays());
  kv->Pull(keys, manager.param_arrays());
  for (size_t i = 0; i < kParams.size(); ++i) {
    ASSERT_EQ(manager.param_arrays()[i].size(), 3u);
    const std::vector<float> w = init.at(kParams[i]).ToVector<float>();
    const std::vector<float> g = single->grad_dict().at(kParams[i]).ToVector<float>();
    std::vector<double> want(w.size());
    for (size_t j = 0; j < w.size(); ++j) want[j] = w[j] - 0.1 * g[j];
    for (int d = 0; d < 3; ++d) {
      ExpectClose(manager.param_arrays()[i][d].ToVector<float>(), want, 1e-5, 1e-6,
                  kParams[i] + " on device " + std::to_string(d));
    }
  }
  // The metric over the devices' slices is the metric of the whole batch.
  auto acc = CreateMetric("acc");
  manager.UpdateMetric(*acc, iter.Value().label);
  auto whole = CreateMetric("acc");
  whole->Update({label}, single->outputs());
  EXPECT_EQ(acc->Get()[0].second, whole->Get()[0].second);

  // CopyTo gives the updated parameters back.
  std::map<std::string, NDArray> args, aux;
  manager.CopyTo(&args, &aux);
  ASSERT_EQ(args.size(), kParams.size());
  ExpectClose(args.at("fc2_bias"), manager.param_arrays()[3][0], 0, 0, "CopyTo");
}

// Bucket key T: data (batch, T, 4) -> fc (5 units on the last axis) -> mean over T -> fc2 (3).
// The parameters' shapes do not depend on T, so every bucket shares the default bucket's.
Symbol Bucketed(int64_t) {
  Symbol x = sym::FullyConnected(sym::Variable("data"), {.num_hidden = 5, .flatten = false}, "fc1");
  x = Symbol::Create("mean", {x}, {{"axis", "1"}}, "pool");
  x = sym::FullyConnected(x, {.num_hidden = 3}, "fc2");
  return sym::SoftmaxOutput(x, "softmax");
}

// Note [Batch axes]: a "TNC" input is split along N; the output, whose node says "TNC" too,
// is joined along it; each device sees its samples of every time step.
TEST(DataParallelExecutorGroup, SplitsAndJoinsAlongTheLayoutsBatchAxis) {
  Symbol net = Symbol::Create("Activation", std::vector<Symbol>{sym::Variable("data")},
                              {{"act_type", "tanh"}, {"__layout__", "TNC"}}, "act");
  const std::vector<DataDesc> data = {{"data", {3, 5, 2}, DType::kFloat32, "TNC"}};
  DataParallelExecutorGroup group(net, {Context::CPU(0), Context::CPU(1)}, {}, data, {}, {}, true);
  EXPECT_EQ(group.batch_size(), 5);
  EXPECT_EQ(group.executor(0).outputs()[0].shape(), Shape({3, 2, 2}));
  EXPECT_EQ(group.executor(1).outputs()[0].shape(), Shape({3, 3, 2}));
  std::vector<float> x(30);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.1f * static_cast<float>(i) - 1.5f;
  DataBatch batch;
  batch.data = {NDArray::FromVector<float>({3, 5, 2}, std::span<const float>(x))};
  group.LoadDataBatch(batch);
  group.Forward(false);
  // Device 1's sample 0 is sample 2 of the batch: at time step 1, elements 14 and 15.
  EXPECT_FLOAT_EQ(group.executor(1).outputs()[0].ToVector<float>()[6], std::tanh(x[14]));
  NDArray joined = NDArray::Empty({3, 5, 2});
  group.CopyOutput(0, joined);
  const std::vector<float> y = joined.ToVector<float>();
  for (size_t i = 0; i < x.size(); ++i) EXPECT_FLOAT_EQ(y[i], std::tanh(x[i])) << i;
}

TEST(DataParallelExecutorManager, BucketsShareTheDefaultBucketsParameters) {
  std::mt19937 rng(9);
  const int64_t batch = 4;
  const NDArray label = NDArray::FromVector<float>({batch}, std::vector<float>{2, 0, 1, 1});
  NDArrayIter iter({{"data", Random({batch, 6, 4}, rng)}}, {{"softmax_label", label}},
                   {.batch_size = batch});
  const std::map<std::string, NDArray> init = {{"fc1_weight", Random({5, 4}, rng)},
                                               {"fc1_bias", Random({5}, rng)},
                                               {"fc2_weight", Random({3, 5}, rng)},
                                               {"fc2_bias", Random({3}, rng)}};
  const std::vector<std::string> params = {"fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"};
  DataParallelExecutorManager manager(Bucketed(6), {Context::CPU(0), Context::CPU(1)}, iter,
                                      params, {}, Bucketed, 6);
  manager.SetParams(init, {});

  // A batch of the shorter bucket 3.
  const NDArray short_data = Random({batch, 3, 4}, rng);
  DataBatch b;
  b.data = {short_data};
  b.label = {label};
  b.bucket_key = 3;
  b.provide_data = {{"data", {batch, 3, 4}, DType::kFloat32, "NTC"}};
  b.provide_label = {{"softmax_label", {batch}, DType::kFloat32, ""}};
  manager.LoadDataBatch(b);
  EXPECT_EQ(manager.current().executor(0).arg_dict().at("data").shape(), Shape({2, 3, 4}));
  // The bucket's parameter and gradient arrays are the default bucket's (same memory), so an
  // update through param_arrays() reaches every bucket and the kvstore's arrays stay valid.
  for (size_t i = 0; i < params.size(); ++i) {
    for (int d = 0; d < 2; ++d) {
      EXPECT_EQ(manager.current().param_arrays()[i][d].raw_data(),
                manager.param_arrays()[i][d].raw_data())
          << params[i] << " device " << d;
      EXPECT_EQ(manager.current().grad_arrays()[i][d].raw_data(),
                manager.default_group().grad_arrays()[i][d].raw_data())
          << params[i] << "'s gradient on device " << d;
    }
  }
  manager.Forward(true);
  manager.Backward();

  auto single = Executor::SimpleBind(Bucketed(3), Context::CPU(0),
                                     {{"data", {batch, 3, 4}}, {"softmax_label", {batch}}});
  for (const auto& [name, value] : init) value.CopyTo(single->arg_dict().at(name));
  short_data.CopyTo(single->arg_dict().at("data"));
  label.CopyTo(single->arg_dict().at("softmax_label"));
  single->Forward(true);
  single->Backward();
  for (size_t i = 0; i < params.size(); ++i) {
    const std::vector<float> g0 = manager.grad_arrays()[i][0].ToVector<float>();
    const std::vector<float> g1 = manager.grad_arrays()[i][1].ToVector<float>();
    const std::vector<float> want = single->grad_dict().at(params[i]).ToVector<float>();
    std::vector<float> sum(g0.size());
    for (size_t j = 0; j < g0.size(); ++j) sum[j] = g0[j] + g1[j];
    ExpectClose(sum, std::vector<double>(want.begin(), want.end()), 1e-5, 1e-6, params[i]);
  }

  // Back to the default bucket: a batch without a key runs the default group.
  ASSERT_TRUE(iter.Next());
  manager.LoadDataBatch(iter.Value());
  EXPECT_EQ(manager.current().executor(0).arg_dict().at("data").shape(), Shape({2, 6, 4}));
}

// Misuse that used to pass silently is an error naming what is wrong: a batch of more rows than
// bound (its extra rows were dropped), a bucket whose parameter shapes differ from the default
// bucket's (it trained zeros of its own), and SetParams with a name the network lacks (a typo
// was a no-op).

TEST(DataParallelExecutorManager, MisuseIsAnErrorNamingTheInputOrParameter) {
  std::mt19937 rng(4);
  NDArrayIter iter({{"data", Random({8, 4}, rng)}},
                   {{"softmax_label", NDArray::Zeros({8})}}, {.batch_size = 4});
  DataParallelExecutorManager manager(Mlp(), {Context::CPU(0), Context::CPU(1)}, iter, kParams);
  DataBatch big;
  big.data = {Random({6, 4}, rng)};
  big.label = {NDArray::Zeros({6})};
  EXPECT_NE(ErrorOf([&] { manager.LoadDataBatch(big); })
                .find("LoadDataBatch: input 'data' has shape (6,4), the executors are bound for "
                      "(4,4)"),
            std::string::npos);
  big.data = {Random({4, 4}, rng)};
  EXPECT_NE(ErrorOf([&] { manager.LoadDataBatch(big); })
                .find("input 'softmax_label' has shape (6,), the executors are bound for (4,)"),
            std::string::npos);

  auto metric = CreateMetric(std::string("acc"));
  EXPECT_NE(ErrorOf([&] { manager.UpdateMetric(*metric, {NDArray::Zeros({2})}); })
                .find("UpdateMetric: labels of shape (2,) for a batch of 4 rows"),
            std::string::npos);
  std::map<std::string, NDArray> params = InitialParams(rng);
  params["fc1_wieght"] = params.at("fc1_weight");
  EXPECT_NE(ErrorOf([&] { manager.SetParams(params, {}); }).find("'fc1_wieght' is not an argument"),
            std::string::npos);
  EXPECT_EQ(ErrorOf([&] { manager.SetParams(params, {}, /*allow_extra=*/true); }), "no error");

  auto by_key = [](int64_t key) {  // fc1's width depends on the key
    Symbol x = sym::FullyConnected(sym::Variable("data"), {.num_hidden = key}, "fc1");
    x = sym::FullyConnected(x, {.num_hidden = 3}, "fc2");
    return sym::SoftmaxOutput(x, "softmax");
  };
  DataParallelExecutorManager bucketing(by_key(5), {Context::CPU(0)}, iter, kParams, {}, by_key,
                                        5);
  DataBatch other;
  other.data = {Random({4, 4}, rng)};
  other.label = {NDArray::Zeros({4})};
  other.bucket_key = 7;
  other.provide_data = {{"data", {4, 4}, DType::kFloat32, ""}};
  other.provide_label = {{"softmax_label", {4}, DType::kFloat32, ""}};
  // Same data shapes as the default bucket: served by it. Another shape binds bucket 7.
  other.provide_data[0].shape = {4, 2};
  other.data = {Random({4, 2}, rng)};
  EXPECT_NE(ErrorOf([&] { bucketing.LoadDataBatch(other); })
                .find("parameter 'fc1_weight' has shape (7,2) here but (5,4) in the group it "
                      "shares parameters with"),
            std::string::npos);
}

}  // namespace
}  // namespace cohort
