// A whole network against MXNet 1.9.1: one training step of a ResNet block (convolutions,
// BatchNorm, relu, a shortcut whose gradient is summed, global pooling, FullyConnected,
// SoftmaxOutput) gives MXNet's outputs, gradients and moving statistics
// (scripts/make_mxnet_symbol_fixtures.py).
#include <gtest/gtest.h>

#include <cmath>

#include "executor/executor.h"
#include "ndarray/params_io.h"

namespace cohort {
namespace {

TEST(Graph, ResNetBlockTrainingStepMatchesMXNet) {
  const std::string dir = std::string(COHORT_TEST_DATA_DIR) + "/symbols/";
  Symbol net = Symbol::Load(dir + "resblock-symbol.json");
  auto fixture = LoadParams(dir + "resblock-check.params");
  auto exec = Executor::SimpleBind(net, Context::CPU(), {{"data", {4, 3, 8, 8}}});
  std::map<std::string, NDArray> args, aux;
  for (const auto& [key, array] : fixture) {
    if (key.rfind("arg:", 0) == 0) args[key.substr(4)] = array;
    if (key.rfind("aux:", 0) == 0) aux[key.substr(4)] = array;
  }
  exec->CopyParamsFrom(args, aux);
  // The inputs of the BatchNorms, to check their moving statistics (below).
  std::map<std::string, NDArray> bn_inputs;
  exec->SetMonitorCallback([&](const std::string& name, const NDArray& array) {
    for (const char* conv : {"conv0_output", "stage1_conv1_output", "stage1_conv2_output"}) {
      if (name == conv) bn_inputs[name] = array.CopyTo(Context::CPU());
    }
  });
  exec->Forward(true);
  exec->Backward();
  auto expect_close = [](const NDArray& got, const NDArray& want, const std::string& what) {
    std::vector<float> g = got.ToVector<float>(), w = want.ToVector<float>();
    ASSERT_EQ(g.size(), w.size()) << what;
    for (size_t i = 0; i < g.size(); ++i) {
      ASSERT_NEAR(g[i], w[i], 1e-4 + 1e-3 * std::fabs(w[i])) << what << "[" << i << "]";
    }
  };
  expect_close(exec->outputs()[0], fixture.at("out:0"), "output");
  int grads = 0;
  for (const auto& [name, grad] : exec->grad_dict()) {
    if (name == "softmax_label") continue;
    expect_close(grad, fixture.at("grad:" + name), "gradient of " + name);
    ++grads;
  }
  EXPECT_EQ(grads, 12);  // data and 11 parameters
  // MXNet 1.9.1 on this machine left the moving statistics of the graph unchanged (while its
  // single-op runs in tests/operator update them as Cohort does), so they are checked against
  // the definition: moving = 0.9 * moving + 0.1 * batch statistic of the BatchNorm's input.
  for (auto [bn, conv] : {std::pair{"bn0", "conv0_output"},
                          {"stage1_bn1", "stage1_conv1_output"},
                          {"stage1_bn2", "stage1_conv2_output"}}) {
    const NDArray& x = bn_inputs.at(conv);
    const int64_t n = x.shape()[0], c = x.shape()[1], hw = x.shape()[2] * x.shape()[3];
    std::vector<float> v = x.ToVector<float>();
    std::vector<float> mean0 =
        fixture.at(std::string("aux:") + bn + "_moving_mean").ToVector<float>();
    std::vector<float> var0 =
        fixture.at(std::string("aux:") + bn + "_moving_var").ToVector<float>();
    std::vector<float> mean1 =
        exec->aux_dict().at(std::string(bn) + "_moving_mean").ToVector<float>();
    std::vector<float> var1 =
        exec->aux_dict().at(std::string(bn) + "_moving_var").ToVector<float>();
    for (int64_t ch = 0; ch < c; ++ch) {
      double sum = 0, sq = 0;
      for (int64_t s = 0; s < n; ++s) {
        for (int64_t i = 0; i < hw; ++i) sum += v[(s * c + ch) * hw + i];
      }
      const double mu = sum / (n * hw);
      for (int64_t s = 0; s < n; ++s) {
        for (int64_t i = 0; i < hw; ++i) sq += std::pow(v[(s * c + ch) * hw + i] - mu, 2);
      }
      EXPECT_NEAR(mean1[ch], 0.9 * mean0[ch] + 0.1 * mu, 1e-5) << bn << " channel " << ch;
      EXPECT_NEAR(var1[ch], 0.9 * var0[ch] + 0.1 * sq / (n * hw), 1e-5) << bn << " channel " << ch;
    }
  }
}

}  // namespace
}  // namespace cohort
