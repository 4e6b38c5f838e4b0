// Executor: the reference documentation's examples, grad_req semantics, binding errors,
// parameters, reshape, monitoring and allocation-free steps.
#include "executor/executor.h"

#include <gtest/gtest.h>

#include <random>

#include "alloc_counter.h"
#include "ndarray/device_api.h"
#include "symbol/models/models.h"
#include "symbol/ops.h"
#include "tests/test_util.h"

namespace cohort {
namespace {

using testing::ExpectNear;

NDArray V(const Shape& s, std::vector<float> v) { return NDArray::FromVector<float>(s, v); }

// MXNet's Executor documentation: FullyConnected(num_hidden=6) - relu - SoftmaxOutput.
TEST(Executor, ReferenceDocumentationSoftmaxExample) {
  Symbol net = sym::SoftmaxOutput(
      sym::Activation(sym::FullyConnected(sym::Variable("data"), {.num_hidden = 6}, "fc1"), "relu"),
      "softmax");
  auto exec = Executor::SimpleBind(net, Context::CPU(), {{"data", {1, 4}}});
  exec->arg_dict().at("data").Fill(1);
  exec->arg_dict().at("fc1_weight").Fill(1);
  V({6}, {1, 4, 4, 4, 5, 6}).CopyTo(exec->arg_dict().at("fc1_bias"));
  exec->arg_dict().at("softmax_label").Fill(1);
  exec->Forward(true);
  ExpectNear(exec->outputs()[0],
             {0.00378404f, 0.07600445f, 0.07600445f, 0.07600445f, 0.20660152f, 0.5616011f});
  exec->Backward();
  const std::vector<float> rows = {0.00378404f, -0.92399555f, 0.07600445f,
                                   0.07600445f, 0.20660152f,  0.5616011f};
  std::vector<float> want;
  for (float r : rows) want.insert(want.end(), 4, r);
  ExpectNear(exec->grad_dict().at("fc1_weight"), want);
}

// c = 2a + b: forward [4, 7]; backward with head gradient [4, 7].
TEST(Executor, ReferenceDocumentationArithmeticExample) {
  Symbol a = sym::Variable("a"), b = sym::Variable("b");
  Symbol c = 2 * a + b;
  NDArray ga = NDArray::Zeros({2}), gb = NDArray::Zeros({2});
  auto exec = Executor::Bind(c, Context::CPU(), {V({2}, {1, 2}), V({2}, {2, 3})}, {ga, gb},
                             {GradReq::kWrite, GradReq::kWrite}, {});
  exec->Forward(true);
  ExpectNear(exec->outputs()[0], {4, 7});
  exec->Backward({V({2}, {4, 7})});
  ExpectNear(ga, {8, 14});
  ExpectNear(gb, {4, 7});
}

TEST(Executor, GradReqAddAccumulatesAndNullLeavesBuffers) {
  Symbol a = sym::Variable("a"), b = sym::Variable("b");
  Symbol c = a * b + a;  // a feeds two ops: its gradient is summed inside one backward
  NDArray ga = NDArray::Full({2}, 10.0), gb = NDArray::Full({2}, 5.0);
  auto exec = Executor::Bind(c, Context::CPU(), {V({2}, {1, 2}), V({2}, {3, 4})}, {ga, gb},
                             {GradReq::kAdd, GradReq::kNull}, {});
  exec->Forward(true);
  exec->Backward({V({2}, {1, 1})});
  ExpectNear(ga, {10 + 3 + 1, 10 + 4 + 1});  // d/da (ab + a) = b + 1, added to 10
  exec->Backward({V({2}, {1, 1})});
  ExpectNear(ga, {18, 20});
  ExpectNear(gb, {5, 5});  // null: untouched
}

// Note [Zero gradients]: what only BlockGrad (or a function of zero derivative) would feed runs
// no backward and keeps no activation for one; its arguments' written gradients are zeros.
TEST(Executor, ZeroGradientsSkipTheBackwardBeforeThem) {
  Symbol x = sym::Variable("x");
  Symbol chain = x;
  for (int i = 0; i < 4; ++i) chain = chain * chain;
  auto planned = [&](const Symbol& s, GradReq req) {
    return Executor::SimpleBind(s, Context::CPU(), {{"x", {64, 64}}}, req)->planned_bytes();
  };
  const Symbol stopped = Symbol::Create("BlockGrad", std::vector<Symbol>{chain});
  EXPECT_EQ(planned(stopped, GradReq::kWrite), planned(stopped, GradReq::kNull));
  EXPECT_GT(planned(chain, GradReq::kWrite), planned(stopped, GradReq::kWrite));

  NDArray g = NDArray::Full({2}, 7.0);
  auto exec = Executor::Bind(stopped, Context::CPU(), {V({2}, {1, 2})}, {g}, {GradReq::kWrite}, {});
  exec->Forward(true);
  exec->Backward();  // no head gradient needed: nothing runs backward
  ExpectNear(g, {0, 0});
  // Beside a path that passes gradients: y = BlockGrad(x * x) + round(x) * 0 + 3x; dy/dx = 3.
  Symbol y = Symbol::Create("BlockGrad", std::vector<Symbol>{x * x}) +
             Symbol::Create("round", std::vector<Symbol>{x}) + x * 3.0;
  NDArray gy = NDArray::Full({2}, 7.0);
  auto both = Executor::Bind(y, Context::CPU(), {V({2}, {1.5f, -2})}, {gy}, {GradReq::kWrite}, {});
  both->Forward(true);
  ExpectNear(both->outputs()[0], {2.25f + 2 + 4.5f, 4 - 2 - 6});
  both->Backward({V({2}, {1, 1})});
  ExpectNear(gy, {3, 3});
}

TEST(Executor, NonLossOutputsNeedHeadGradients) {
  auto exec = Executor::SimpleBind(sym::Variable("x") * 3.0, Context::CPU(), {{"x", {2}}});
  exec->Forward(true);
  const std::string what = testing::ErrorOf([&] { exec->Backward(); });
  EXPECT_NE(what.find("is not a loss: pass its head gradient"), std::string::npos) << what;
}

// L = -Σ log p[label] of an MLP; every parameter's gradient against central differences.
TEST(Executor, WholeGraphGradientsMatchFiniteDifferences) {
  Symbol x = sym::Variable("data");
  x = sym::Activation(sym::FullyConnected(x, {.num_hidden = 4}, "fc1"), "tanh");
  x = sym::FullyConnected(x, {.num_hidden = 3}, "fc2");
  Symbol net = sym::SoftmaxOutput(x, "softmax");
  auto exec = Executor::SimpleBind(net, Context::CPU(), {{"data", {5, 6}}});
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  for (auto& [name, arr] : exec->arg_dict()) {
    float* p = static_cast<float*>(arr.raw_data());
    for (int64_t i = 0; i < arr.size(); ++i) p[i] = name == "softmax_label" ? rng() % 3 : u(rng);
  }
  auto loss = [&] {
    exec->Forward(true);
    std::vector<float> p = exec->outputs()[0].ToVector<float>();
    std::vector<float> l = exec->arg_dict().at("softmax_label").ToVector<float>();
    double sum = 0;
    for (int n = 0; n < 5; ++n) sum -= std::log(p[n * 3 + static_cast<int>(l[n])]);
    return sum;
  };
  loss();
  exec->Backward();
  for (const char* name : {"fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias", "data"}) {
    NDArray arr = exec->arg_dict().at(name);
    std::vector<float> analytic = exec->grad_dict().at(name).ToVector<float>();
    float* p = static_cast<float*>(arr.raw_data());
    for (int64_t i = 0; i < arr.size(); ++i) {
      const float saved = p[i];
      p[i] = saved + 1e-2f;
      const double up = loss();
      p[i] = saved - 1e-2f;
      const double down = loss();
      p[i] = saved;
      EXPECT_NEAR(analytic[i], (up - down) / 2e-2, 3e-3) << name << "[" << i << "]";
    }
  }
}

TEST(Executor, BindErrorsNameTheArgumentAndShape) {
  Symbol net = sym::FullyConnected(sym::Variable("data"), {.num_hidden = 3}, "fc");
  std::string what = testing::ErrorOf([&] {
    Executor::Bind(net, Context::CPU(),
                   {NDArray::Zeros({2, 4}), NDArray::Zeros({3, 5}), NDArray::Zeros({3})},
                   {NDArray(), NDArray(), NDArray()}, std::vector<GradReq>(3, GradReq::kNull), {});
  });
  EXPECT_NE(what.find("fc_weight"), std::string::npos) << what;
  EXPECT_NE(what.find("(3,4)"), std::string::npos) << what;
  what = testing::ErrorOf([&] {
    Executor::Bind(net, Context::CPU(), {NDArray::Zeros({2, 4})}, {NDArray()}, {GradReq::kNull},
                   {});
  });
  EXPECT_NE(what.find("(data, fc_weight, fc_bias)"), std::string::npos) << what;
  what = testing::ErrorOf([&] { Executor::SimpleBind(net, Context::CPU(), {}); });
  EXPECT_NE(what.find("cannot infer the shapes of: data fc_weight fc_bias"), std::string::npos)
      << what;
  // A batch of 0 is MXNet's unknown: said, rather than "cannot infer" a shape given.
  what = testing::ErrorOf(
      [&] { Executor::SimpleBind(net, Context::CPU(), {{"data", Shape({0, 4})}}); });
  EXPECT_NE(what.find("the shape given for 'data', (0,4), has an unknown (0)"), std::string::npos)
      << what;
}

// An argument too large to allocate is named with its shape: a huge num_hidden said only
// "out of host memory".
TEST(Executor, SimpleBindNamesAnArgumentItCannotAllocate) {
  for (const int64_t hidden : {int64_t{1} << 40, int64_t{1} << 62}) {
    Symbol net = sym::FullyConnected(sym::Variable("data"), {.num_hidden = hidden}, "fc");
    try {
      Executor::SimpleBind(net, Context::CPU(), {{"data", Shape({2, 4})}});
      FAIL() << hidden;
    } catch (const OutOfMemoryError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("argument 'fc_weight' of shape (" + std::to_string(hidden) + ",4)"),
                std::string::npos)
          << what;
    }
  }
}

// Backward needs a Forward's outputs: before any, the gradients were whatever memory held.
TEST(Executor, BackwardBeforeAnyForwardIsAnError) {
  Symbol fc = sym::FullyConnected(sym::Variable("data"), {.num_hidden = 3}, "fc");
  Symbol net = sym::SoftmaxOutput(fc, "softmax");
  auto exec = Executor::SimpleBind(net, Context::CPU(), {{"data", Shape({2, 4})}});
  const std::string what = testing::ErrorOf([&] { exec->Backward(); });
  EXPECT_NE(what.find("Backward before any Forward"), std::string::npos) << what;
  exec->Forward(false);  // a forward of either kind (MXNet allows backward after either)
  exec->Backward();
}

// Arrays must live on the executor's context: host arrays bound on gpu:0 name the argument.
TEST(Executor, BindRefusesArraysOnAnotherContext) {
  Symbol net = sym::FullyConnected(sym::Variable("data"), {.num_hidden = 3}, "fc");
  const std::string what = testing::ErrorOf([&] {
    Executor::Bind(net, Context::GPU(0),
                   {NDArray::Zeros({2, 4}), NDArray::Zeros({3, 4}), NDArray::Zeros({3})},
                   {NDArray(), NDArray(), NDArray()}, std::vector<GradReq>(3, GradReq::kNull), {});
  });
  EXPECT_NE(what.find("argument 'data'"), std::string::npos) << what;
  EXPECT_NE(what.find("gpu:0"), std::string::npos) << what;
}

// LeNet bound on gpu:0 computes what it computes on the CPU: outputs and every gradient.
TEST(ExecutorGpu, LeNetMatchesCpu) {
  if (device::Count() == 0) GTEST_SKIP() << "no GPU visible";
  const Symbol net = models::LeNet();
  auto cpu = Executor::SimpleBind(net, Context::CPU(), {{"data", {8, 1, 28, 28}}});
  auto gpu = Executor::SimpleBind(net, Context::GPU(0), {{"data", {8, 1, 28, 28}}});
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  for (const auto& [name, array] : cpu->arg_dict()) {
    std::vector<float> v(static_cast<size_t>(array.size()));
    for (float& x : v) x = name == "softmax_label" ? static_cast<float>(rng() % 10) : u(rng);
    NDArray::FromVector<float>(array.shape(), v).CopyTo(array);
    array.CopyTo(gpu->arg_dict().at(name));
  }
  for (int step = 0; step < 2; ++step) {  // the second step reuses the cached cuDNN plans
    cpu->Forward(true);
    cpu->Backward();
    gpu->Forward(true);
    gpu->Backward();
    gpu->WaitAll();
    ExpectNear(gpu->outputs()[0], cpu->outputs()[0].ToVector<float>(), 1e-4f);
    for (const auto& [name, grad] : cpu->grad_dict()) {
      const std::vector<float> want = grad.ToVector<float>(),
                               got = gpu->grad_dict().at(name).ToVector<float>();
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_NEAR(got[i], want[i], 1e-4 + 1e-3 * std::fabs(want[i])) << name << "[" << i << "]";
      }
    }
  }
}

TEST(Executor, CopyParamsFromChecksNamesAndShapes) {
  auto exec = Executor::SimpleBind(models::Mlp(), Context::CPU(), {{"data", {2, 1, 4, 4}}});
  exec->CopyParamsFrom({{"fc3_bias", NDArray::Full({10}, 0.5)}}, {});
  ExpectNear(exec->arg_dict().at("fc3_bias"), std::vector<float>(10, 0.5f));
  EXPECT_THROW(exec->CopyParamsFrom({{"fc9_bias", NDArray::Zeros({10})}}, {}), Error);
  EXPECT_NO_THROW(exec->CopyParamsFrom({{"fc9_bias", NDArray::Zeros({10})}}, {}, true));
  const std::string what =
      testing::ErrorOf([&] { exec->CopyParamsFrom({{"fc3_bias", NDArray::Zeros({11})}}, {}); });
  EXPECT_NE(what.find("'fc3_bias' has shape (10,) but the parameter given has shape (11,)"),
            std::string::npos)
      << what;
  // A refusal copies nothing: fc3_bias (first by name) keeps its value when fc3_weight is wrong.
  EXPECT_THROW(exec->CopyParamsFrom({{"fc3_bias", NDArray::Full({10}, 0.25)},
                                     {"fc3_weight", NDArray::Zeros({10, 3})}},
                                    {}),
               ConfigError);
  ExpectNear(exec->arg_dict().at("fc3_bias"), std::vector<float>(10, 0.5f));
}

TEST(Executor, ReshapeSharesParametersAndMemory) {
  auto exec = Executor::SimpleBind(models::Mlp(), Context::CPU(), {{"data", {8, 1, 4, 4}}});
  auto small = exec->Reshape({{"data", {4, 1, 4, 4}}, {"softmax_label", {4}}});
  EXPECT_TRUE(
      small->arg_dict().at("fc1_weight").SharesStorageWith(exec->arg_dict().at("fc1_weight")));
  EXPECT_TRUE(
      small->grad_dict().at("fc1_weight").SharesStorageWith(exec->grad_dict().at("fc1_weight")));
  EXPECT_TRUE(small->arg_dict().at("data").SharesStorageWith(exec->arg_dict().at("data")));
  EXPECT_EQ(small->outputs()[0].shape(), Shape({4, 10}));
  small->Forward(false);
  EXPECT_THROW(exec->Reshape({{"data", {16, 1, 4, 4}}}, true),
               Error);  // growing needs allow_up_sizing
  auto big = exec->Reshape({{"data", {16, 1, 4, 4}}}, true, true);
  EXPECT_EQ(big->outputs()[0].shape(), Shape({16, 10}));
  EXPECT_THROW(exec->Reshape({{"data", {8, 1, 4, 8}}}), Error);  // fc1_weight would change shape
  EXPECT_NO_THROW(exec->Reshape({{"data", {8, 1, 2, 8}}}));      // (flattens to the same width)
}

TEST(Executor, ForwardWithNamedInputs) {
  auto exec = Executor::SimpleBind(sym::Variable("x") + 1.0, Context::CPU(), {{"x", {2}}});
  exec->Forward(false, {{"x", V({2}, {3, 4})}});
  ExpectNear(exec->outputs()[0], {4, 5});
  EXPECT_THROW(exec->Forward(false, {{"y", V({2}, {3, 4})}}), Error);
  EXPECT_THROW(exec->Forward(false, {{"x", V({3}, {3, 4, 5})}}), Error);
}

TEST(Executor, MonitorSeesEveryOutput) {
  Symbol net = models::LeNet();
  auto exec = Executor::SimpleBind(net, Context::CPU(), {{"data", {2, 1, 28, 28}}});
  std::vector<std::string> seen;
  exec->SetMonitorCallback([&](const std::string& name, const NDArray&) { seen.push_back(name); });
  exec->Forward(false);
  const std::vector<std::string> want = {"conv1_output",   "tanh1_output",  "pool1_output",
                                         "conv2_output",   "tanh2_output",  "pool2_output",
                                         "flatten_output", "fc1_output",    "tanh3_output",
                                         "fc2_output",     "softmax_output"};
  EXPECT_EQ(seen, want);
  seen.clear();
  exec->SetMonitorCallback([&](const std::string& name, const NDArray&) { seen.push_back(name); },
                           true);
  exec->Forward(false);
  EXPECT_EQ(seen[0], "data");
  EXPECT_EQ(seen[1], "conv1_weight");
  // An op's output has one name, as its producer's output and as its consumer's input.
  const auto tanh1 = std::find(seen.begin(), seen.end(), "tanh1_output");
  ASSERT_NE(tanh1, seen.end());
  EXPECT_EQ(*(tanh1 + 1), "tanh1_output");  // pool1's input
}

TEST(Executor, DebugStrListsOpsAndMemory) {
  auto exec = Executor::SimpleBind(models::Mlp(), Context::CPU(), {{"data", {2, 1, 4, 4}}});
  const std::string s = exec->DebugStr();
  EXPECT_NE(s.find("Op:FullyConnected, Name=fc1"), std::string::npos) << s;
  EXPECT_NE(s.find("num_hidden=128"), std::string::npos) << s;
  EXPECT_NE(s.find("Total "), std::string::npos) << s;
  EXPECT_NE(s.find(" MB allocated"), std::string::npos) << s;
}

TEST(Executor, ForwardAndBackwardAllocateNothing) {
  auto exec = Executor::SimpleBind(models::LeNet(), Context::CPU(), {{"data", {4, 1, 28, 28}}});
  exec->Forward(true);  // warm-up: per-thread scratch buffers grow once
  exec->Backward();
  testing::AllocationCounter counter;
  for (int i = 0; i < 3; ++i) {
    exec->Forward(true);
    exec->Backward();
  }
  EXPECT_EQ(counter.count(), 0);
}

TEST(Executor, InferenceBindReusesMemory) {
  // Without gradients, activations die early and blocks are reused: far less than one block each.
  Symbol net = models::Mlp();
  auto infer =
      Executor::SimpleBind(net, Context::CPU(), {{"data", {64, 1, 28, 28}}}, GradReq::kNull);
  auto train = Executor::SimpleBind(net, Context::CPU(), {{"data", {64, 1, 28, 28}}});
  // Activations: flatten 64x784 (in place or reused), fc1/relu1 64x128, fc2/relu2 64x64, ...
  const size_t every_output = (64 * 784 + 2 * 64 * 128 + 2 * 64 * 64 + 2 * 64 * 10) * sizeof(float);
  EXPECT_LT(infer->planned_bytes(), every_output);
  EXPECT_LT(infer->planned_bytes(), train->planned_bytes());
}

// Reshape ops are free in both passes: the output shares the input's buffer, and the input's
// gradient the output's, so a chain of them plans no more memory than none, and gradients
// still flow through it unchanged. (Here fc1's output dies after the row sums' forward; in
// backward the row sums' gradient takes its block, and without sharing, the gradient behind
// each reshape would need another block of that size.)
TEST(Executor, ReshapeOpsShareBuffersForwardAndBackward) {
  auto build = [](bool reshapes) {
    Symbol x = sym::FullyConnected(sym::Variable("data"), {.num_hidden = 256}, "fc1");
    if (reshapes) {
      x = Symbol::Create("Reshape", std::vector<Symbol>{x}, {{"shape", "(0, 16, 16)"}}, "r1");
      x = Symbol::Create("Reshape", std::vector<Symbol>{x}, {{"shape", "(0, -1)"}}, "r2");
    }
    x = Symbol::Create("sum", std::vector<Symbol>{x}, {{"axis", "1"}}, "row_sums");
    x = Symbol::Create("square", std::vector<Symbol>{x}, {}, "square");
    x = Symbol::Create("sum", std::vector<Symbol>{x}, {}, "total");
    return Symbol::Create("MakeLoss", std::vector<Symbol>{x}, {}, "loss");
  };
  auto plain = Executor::SimpleBind(build(false), Context::CPU(), {{"data", {32, 4}}});
  auto chain = Executor::SimpleBind(build(true), Context::CPU(), {{"data", {32, 4}}});
  EXPECT_EQ(chain->planned_bytes(), plain->planned_bytes());
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  for (const auto& [name, a] : plain->arg_dict()) {
    std::vector<float> v(a.size());
    for (float& f : v) f = u(rng);
    NDArray::FromVector<float>(a.shape(), v).CopyTo(a);
    NDArray::FromVector<float>(a.shape(), v).CopyTo(chain->arg_dict().at(name));
  }
  for (auto* e : {plain.get(), chain.get()}) {
    e->Forward(true);
    e->Backward();
  }
  for (const char* name : {"data", "fc1_weight", "fc1_bias"}) {
    ExpectNear(chain->grad_dict().at(name), plain->grad_dict().at(name).ToVector<float>(), 0);
  }
}

TEST(Executor, SharedExecutorSharesParametersAndPool) {
  Symbol net = models::Mlp();
  auto big = Executor::SimpleBind(net, Context::CPU(), {{"data", {32, 1, 8, 8}}});
  auto small = Executor::SimpleBind(net, Context::CPU(), {{"data", {16, 1, 8, 8}}}, GradReq::kWrite,
                                    {}, big.get());
  EXPECT_TRUE(
      small->arg_dict().at("fc2_weight").SharesStorageWith(big->arg_dict().at("fc2_weight")));
  EXPECT_FALSE(small->arg_dict().at("data").SharesStorageWith(big->arg_dict().at("data")));
  small->Forward(true);
  small->Backward();
}

}  // namespace
}  // namespace cohort

namespace cohort {
namespace {

// Note [Gradient ready]: every gradient is reported once per Backward, already final, last
// layer first.
TEST(Executor, GradientReadyReportsEachFinalGradientOnceLastLayerFirst) {
  auto exec = Executor::SimpleBind(models::LeNet(), Context::CPU(), {{"data", {3, 1, 28, 28}}},
                                   GradReq::kWrite, {{"data", GradReq::kNull}});
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  for (auto& [name, array] : exec->arg_dict()) {
    float* p = static_cast<float*>(array.raw_data());
    for (int64_t i = 0; i < array.size(); ++i) {
      p[i] = name == "softmax_label" ? static_cast<float>(rng() % 10) : u(rng);
    }
  }
  const std::vector<std::string> names = exec->symbol().ListArguments();
  for (int round = 0; round < 2; ++round) {
    std::vector<int> order;
    std::vector<NDArray> snapshots;
    exec->SetGradientReadyCallback([&](int arg) {
      order.push_back(arg);
      snapshots.push_back(exec->grad_arrays()[arg].CopyTo(Context::CPU()));
    });
    exec->Forward(true);
    exec->Backward();
    std::vector<std::string> reported;
    for (size_t k = 0; k < order.size(); ++k) {
      reported.push_back(names[order[k]]);
      EXPECT_EQ(snapshots[k].ToVector<float>(), exec->grad_arrays()[order[k]].ToVector<float>())
          << names[order[k]] << " changed after it was reported";
    }
    // From the last layer back, each weight with its bias; SoftmaxOutput, run first, writes its
    // label's gradient (zeros).
    EXPECT_EQ(reported, (std::vector<std::string>{"softmax_label", "fc2_weight", "fc2_bias",
                                                  "fc1_weight", "fc1_bias", "conv2_weight",
                                                  "conv2_bias", "conv1_weight", "conv1_bias"}));
  }
}

// An op standing for a GPU kernel whose library call fails: in forward, or in backward.
class FailingDeviceCall : public op::Operator {
 public:
  explicit FailingDeviceCall(bool in_backward) : in_backward_(in_backward) {}
  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    return op::InferSameShape(in, out, type());
  }
  void Forward(const op::OpContext&, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    if (!in_backward_) COHORT_THROW_DEVICE() << "CUDA call cudaLaunchKernel failed";
    in[0].CopyTo(out[0]);
  }
  void Backward(const op::OpContext&, const std::vector<NDArray>&, const std::vector<NDArray>&,
                const std::vector<NDArray>&, const std::vector<GradReq>&,
                const std::vector<NDArray>&, const std::vector<NDArray>&) const override {
    COHORT_THROW_DEVICE() << "cuBLAS call cublasSgemm failed";
  }
  bool IsLoss() const override { return true; }

 private:
  bool in_backward_;
};

// A GPU library's error names no op: the executor says which node made the call, in which
// pass, and keeps the error's type and source location.
TEST(Executor, DeviceErrorsNameTheNodeThatMadeTheCall) {
  op::OpRegistry::Get().Register("_test_failing_forward", [](const op::Attrs&) {
    return std::make_unique<FailingDeviceCall>(false);
  });
  op::OpRegistry::Get().Register("_test_failing_backward", [](const op::Attrs&) {
    return std::make_unique<FailingDeviceCall>(true);
  });
  const Symbol data = sym::Variable("data");
  auto forward = Executor::SimpleBind(
      Symbol::Create("_test_failing_forward", {sym::FullyConnected(data, {.num_hidden = 2}, "fc")},
                     {}, "kernel"),
      Context::CPU(), {{"data", {1, 3}}});
  try {
    forward->Forward(true);
    FAIL() << "Forward did not throw";
  } catch (const DeviceError& e) {
    EXPECT_EQ(e.message(),
              "node 'kernel' (_test_failing_forward), forward on cpu:0: CUDA call "
              "cudaLaunchKernel failed");
    EXPECT_STREQ(e.file(), "tests/executor/executor_test.cc");
  }
  auto backward = Executor::SimpleBind(
      Symbol::Create("_test_failing_backward", {sym::FullyConnected(data, {.num_hidden = 2}, "fc")},
                     {}, "kernel"),
      Context::CPU(), {{"data", {1, 3}}});
  backward->Forward(true);
  try {
    backward->Backward();
    FAIL() << "Backward did not throw";
  } catch (const DeviceError& e) {
    EXPECT_EQ(e.message(),
              "node 'kernel' (_test_failing_backward), backward on cpu:0: cuBLAS call "
              "cublasSgemm failed");
  }
}

}  // namespace
}  // namespace cohort
