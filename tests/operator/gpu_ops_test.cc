// Every operator with GPU kernels run on gpu:0 and on the CPU from the same inputs: forward
// outputs (hidden ones too), auxiliary states, and the gradients of every input under each
// grad_req (write, add onto a random buffer, null leaving it untouched) must agree. Skipped
// where no GPU is visible (CI); scripts/gpu-check.sh runs it on a GPU machine.
#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <set>

#include "ndarray/device_api.h"
#include "operator/common/gpu_resources.h"
#include "tests/operator/op_harness.h"

namespace cohort::testing {
namespace {

struct GpuCase {
  std::string name;  // test label
  std::string op;
  op::Attrs attrs;
  std::vector<Shape> shapes;
  // Fills input `i` (default: uniform in [-1, 1]); labels and indices need integers.
  std::function<void(int i, const NDArray& a, std::mt19937& rng)> init = nullptr;
  double rtol = 1e-4, atol = 1e-5;
};

std::ostream& operator<<(std::ostream& os, const GpuCase& c) { return os << c.name; }

// Integers in [0, n) for input `which`, uniform floats elsewhere.
auto IntegersAt(int which, int n) {
  return [which, n](int i, const NDArray& a, std::mt19937& rng) {
    if (i != which) return FillUniform(a, rng);
    std::uniform_int_distribution<int> u(0, n - 1);
    float* p = static_cast<float*>(a.raw_data());
    for (int64_t j = 0; j < a.size(); ++j) p[j] = static_cast<float>(u(rng));
  };
}

// Uniform in [0.5, 2] everywhere: away from sqrt's, log's and division's poles.
auto Positive() {
  return [](int, const NDArray& a, std::mt19937& rng) { FillUniform(a, rng, 0.5f, 2.0f); };
}

// Uniform in [lo, hi] everywhere: inside a function's domain (arcsin's (-1, 1), arccosh's
// (1, inf)).
auto Between(float lo, float hi) {
  return [lo, hi](int, const NDArray& a, std::mt19937& rng) { FillUniform(a, rng, lo, hi); };
}

std::vector<NDArray> ToGpu(const std::vector<NDArray>& host) {
  std::vector<NDArray> out;
  for (const NDArray& a : host) out.push_back(a.is_none() ? a : a.CopyTo(Context::GPU(0)));
  return out;
}

void ExpectAllClose(const std::vector<NDArray>& gpu, const std::vector<NDArray>& cpu,
                    const GpuCase& c, const std::string& what) {
  for (size_t i = 0; i < cpu.size(); ++i) {
    if (cpu[i].is_none()) continue;
    ExpectClose(gpu[i].CopyTo(Context::CPU()), cpu[i], c.rtol, c.atol,
                c.name + " " + what + " " + std::to_string(i));
  }
}

class GpuOps : public ::testing::TestWithParam<GpuCase> {
 protected:
  void SetUp() override {
    if (device::Count() == 0) GTEST_SKIP() << "no GPU visible";
    gpu_ = op::GpuResources::Create(0);
  }
  std::unique_ptr<op::GpuResources> gpu_;
};

TEST_P(GpuOps, MatchCpu) {
  const GpuCase& c = GetParam();
  std::mt19937 rng(2024);
  OpInstance cpu = MakeOp(c.op, c.attrs, c.shapes);
  ASSERT_TRUE(cpu.op->HasGpuKernel()) << c.op;
  for (size_t i = 0; i < cpu.in.size(); ++i) {
    if (c.init) {
      c.init(static_cast<int>(i), cpu.in[i], rng);
    } else {
      FillUniform(cpu.in[i], rng);
    }
  }
  for (auto& a : cpu.aux) FillUniform(a, rng, 0.5f, 1.5f);
  const std::vector<NDArray> in = ToGpu(cpu.in);
  std::vector<NDArray> aux = ToGpu(cpu.aux), out;
  for (const NDArray& o : cpu.out)
    out.push_back(NDArray::Zeros(o.shape(), o.dtype(), Context::GPU(0)));

  for (bool is_train : {false, true}) {  // training last: backward uses its saved outputs
    const op::OpContext cpu_ctx{.is_train = is_train, .seed = 7};
    const op::OpContext gpu_ctx{
        .is_train = is_train, .ctx = Context::GPU(0), .seed = 7, .gpu = gpu_.get()};
    const std::vector<GradReq> out_req(cpu.out.size(), GradReq::kWrite);
    cpu.op->Forward(cpu_ctx, cpu.in, out_req, cpu.out, cpu.aux);
    cpu.op->Forward(gpu_ctx, in, out_req, out, aux);
    const std::string mode = is_train ? "train" : "predict";
    ExpectAllClose(out, cpu.out, c, mode + " output");
    ExpectAllClose(aux, cpu.aux, c, mode + " aux");
  }

  if (!cpu.op->HasGradient()) return;  // update ops: training steps with no gradient
  std::vector<NDArray> heads;
  for (int k = 0; k < cpu.visible(); ++k) {
    heads.push_back(NDArray::Zeros(cpu.out[k].shape()));
    FillUniform(heads.back(), rng);
  }
  const std::vector<NDArray> gpu_heads = ToGpu(heads);
  for (GradReq req : {GradReq::kWrite, GradReq::kAdd, GradReq::kNull}) {
    std::vector<NDArray> grads;
    for (const NDArray& a : cpu.in) {
      grads.push_back(NDArray::Zeros(a.shape()));
      FillUniform(grads.back(), rng);
    }
    const std::vector<NDArray> gpu_grads = ToGpu(grads);
    // Null for every input but the first, so that "null leaves it alone" is checked too.
    std::vector<GradReq> reqs(cpu.in.size(), req);
    if (req == GradReq::kNull && !reqs.empty()) reqs[0] = GradReq::kWrite;  // _arange has none
    const op::OpContext cpu_ctx{.is_train = true, .seed = 7};
    const op::OpContext gpu_ctx{
        .is_train = true, .ctx = Context::GPU(0), .seed = 7, .gpu = gpu_.get()};
    cpu.op->Backward(cpu_ctx, heads, cpu.in, cpu.out, reqs, grads, cpu.aux);
    cpu.op->Backward(gpu_ctx, gpu_heads, in, out, reqs, gpu_grads, aux);
    ExpectAllClose(gpu_grads, grads, c, std::string("gradient (") + GradReqName(req) + ")");
  }
}

Shape S(std::initializer_list<int64_t> d) { return Shape(d); }

const GpuCase kCases[] = {
    {"FullyConnected", "FullyConnected", {{"num_hidden", "7"}}, {S({4, 5})}},
    {"FullyConnectedNoBias4d",
     "FullyConnected",
     {{"num_hidden", "3"}, {"no_bias", "True"}},
     {S({4, 3, 2, 2})}},
    {"Relu", "Activation", {{"act_type", "relu"}}, {S({3, 4, 5})}},
    {"Sigmoid", "Activation", {{"act_type", "sigmoid"}}, {S({3, 4, 5})}},
    {"Tanh", "Activation", {{"act_type", "tanh"}}, {S({3, 4, 5})}},
    {"Softrelu", "Activation", {{"act_type", "softrelu"}}, {S({3, 4, 5})}},
    {"Softsign", "Activation", {{"act_type", "softsign"}}, {S({3, 4, 5})}},
    {"Leaky", "LeakyReLU", {{"act_type", "leaky"}, {"slope", "0.1"}}, {S({3, 7})}},
    {"Elu", "LeakyReLU", {{"act_type", "elu"}, {"slope", "0.3"}}, {S({3, 7})}},
    {"Selu", "LeakyReLU", {{"act_type", "selu"}}, {S({3, 7})}},
    {"Add", "elemwise_add", {}, {S({4, 6}), S({4, 6})}},
    {"Sub", "elemwise_sub", {}, {S({4, 6}), S({4, 6})}},
    {"Mul", "elemwise_mul", {}, {S({4, 6}), S({4, 6})}},
    {"Div",
     "elemwise_div",
     {},
     {S({4, 6}), S({4, 6})},
     [](int, const NDArray& a, std::mt19937& rng) { FillUniform(a, rng, 0.5f, 2.0f); }},
    {"PlusScalar", "_plus_scalar", {{"scalar", "1.5"}}, {S({10})}},
    {"MinusScalar", "_minus_scalar", {{"scalar", "1.5"}}, {S({10})}},
    {"RMinusScalar", "_rminus_scalar", {{"scalar", "1.5"}}, {S({10})}},
    {"MulScalar", "_mul_scalar", {{"scalar", "-2"}}, {S({10})}},
    {"DivScalar", "_div_scalar", {{"scalar", "4"}}, {S({10})}},
    {"MaximumScalar", "_maximum_scalar", {{"scalar", "0.1"}}, {S({10})}},
    {"MinimumScalar", "_minimum_scalar", {{"scalar", "0.1"}}, {S({10})}},
    {"EqualScalar", "_equal_scalar", {{"scalar", "0.1"}}, {S({10})}},
    {"NotEqualScalar", "_not_equal_scalar", {{"scalar", "0.1"}}, {S({10})}},
    {"GreaterScalar", "_greater_scalar", {{"scalar", "0.1"}}, {S({10})}},
    {"GreaterEqualScalar", "_greater_equal_scalar", {{"scalar", "0.1"}}, {S({10})}},
    {"LesserScalar", "_lesser_scalar", {{"scalar", "0.1"}}, {S({10})}},
    {"LesserEqualScalar", "_lesser_equal_scalar", {{"scalar", "0.1"}}, {S({10})}},
    {"Copy", "_copy", {}, {S({10})}},
    {"ReluFunction", "relu", {}, {S({10})}},
    {"SigmoidFunction", "sigmoid", {}, {S({10})}},
    {"TanhFunction", "tanh", {}, {S({10})}},
    {"SoftsignFunction", "softsign", {}, {S({10})}},
    {"RDivScalar",
     "_rdiv_scalar",
     {{"scalar", "3"}},
     {S({10})},
     [](int, const NDArray& a, std::mt19937& rng) { FillUniform(a, rng, 0.5f, 2.0f); }},
    {"SoftmaxOutput", "SoftmaxOutput", {}, {S({8, 10})}, IntegersAt(1, 10)},
    {"SoftmaxOutputIgnoreValid",
     "SoftmaxOutput",
     {{"use_ignore", "True"}, {"ignore_label", "2"}, {"normalization", "valid"}},
     {S({16, 5})},
     IntegersAt(1, 5)},
    {"SoftmaxOutputMulti",
     "SoftmaxOutput",
     {{"multi_output", "True"}},
     {S({2, 4, 3, 3})},
     IntegersAt(1, 4)},
    {"SoftmaxOutputWide",
     "SoftmaxOutput",
     {{"grad_scale", "0.5"}},
     {S({3, 1000})},
     IntegersAt(1, 1000)},
    {"LinearRegression", "LinearRegressionOutput", {}, {S({6, 3})}},
    {"LogisticRegression", "LogisticRegressionOutput", {}, {S({6, 3})}},
    {"MAERegression", "MAERegressionOutput", {}, {S({6, 3})}},
    {"MakeLoss", "MakeLoss", {}, {S({5, 2})}},
    {"BlockGrad", "BlockGrad", {}, {S({5, 2})}},
    {"Softmax", "softmax", {}, {S({4, 9})}},
    {"SoftmaxAxis0", "softmax", {{"axis", "0"}}, {S({4, 9})}},
    {"LogSoftmax", "log_softmax", {}, {S({4, 9})}},
    {"Flatten", "Flatten", {}, {S({2, 3, 4})}},
    {"CrossDeviceCopy", "_CrossDeviceCopy", {}, {S({2, 3, 4})}},
    {"Reshape", "Reshape", {{"shape", "(4, -1)"}}, {S({2, 3, 4})}},
    {"Concat", "Concat", {{"num_args", "2"}, {"dim", "1"}}, {S({2, 3, 4}), S({2, 5, 4})}},
    {"AddN", "add_n", {{"num_args", "3"}}, {S({2, 3}), S({2, 3}), S({2, 3})}},
    {"SliceAssign",
     "_slice_assign",
     {{"begin", "(0, 1)"}, {"end", "(2, None)"}, {"step", "(1, 2)"}},
     {S({3, 5}), S({2, 2})}},
    // Update ops (states are aux, filled in [0.5, 1.5]): both sides update them twice.
    {"SgdUpdate",
     "sgd_update",
     {{"lr", "0.1"}, {"wd", "0.01"}, {"clip_gradient", "0.3"}},
     {S({3, 4}), S({3, 4})}},
    {"SgdMomUpdate",
     "sgd_mom_update",
     {{"lr", "0.1"}, {"momentum", "0.9"}, {"wd", "0.01"}},
     {S({3, 4}), S({3, 4})}},
    {"NagMomUpdate",
     "nag_mom_update",
     {{"lr", "0.1"}, {"momentum", "0.9"}, {"wd", "0.01"}},
     {S({3, 4}), S({3, 4})}},
    {"SignumUpdate",
     "signum_update",
     {{"lr", "0.1"}, {"momentum", "0.9"}, {"wd_lh", "0.01"}},
     {S({3, 4}), S({3, 4})}},
    {"AdamUpdate", "adam_update", {{"lr", "0.1"}, {"wd", "0.01"}}, {S({3, 4}), S({3, 4})}},
    {"RmspropUpdate",
     "rmsprop_update",
     {{"lr", "0.1"}, {"clip_weights", "0.8"}},
     {S({3, 4}), S({3, 4})}},
    {"FtrlUpdate", "ftrl_update", {{"lr", "0.1"}, {"wd", "0.01"}}, {S({3, 4}), S({3, 4})}},
    {"FtmlUpdate", "ftml_update", {{"lr", "0.1"}, {"t", "2"}}, {S({3, 4}), S({3, 4})}},
    {"LambPhase1", "lamb_update_phase1", {{"wd", "0.01"}, {"t", "3"}}, {S({3, 4}), S({3, 4})}},
    {"LambPhase2",
     "lamb_update_phase2",
     {{"lr", "0.1"}, {"lower_bound", "0.2"}},
     {S({3, 4}), S({3, 4}), S({1}), S({1})}},
    {"SignsgdUpdate", "signsgd_update", {{"lr", "0.1"}, {"wd", "0.01"}}, {S({3, 4}), S({3, 4})}},
    // n - g^2 of states in [0.5, 1.5] may be below -2: epsilon 3 keeps the root real.
    {"RmspropalexUpdate",
     "rmspropalex_update",
     {{"lr", "0.1"}, {"epsilon", "3"}},
     {S({3, 4}), S({3, 4})}},
    {"Pick", "pick", {{"axis", "1"}, {"mode", "wrap"}}, {S({3, 4}), S({3})}, IntegersAt(1, 9)},
    {"FillElement", "fill_element_0index", {}, {S({3, 4}), S({3}), S({3})}, IntegersAt(2, 4)},
    {"SliceAssignScalar",
     "_slice_assign_scalar",
     {{"begin", "(1, None)"}, {"end", "(3, None)"}, {"step", "(1, -1)"}, {"scalar", "2.5"}},
     {S({4, 3})}},
    {"Embedding",
     "Embedding",
     {{"input_dim", "10"}, {"output_dim", "4"}},
     {S({3, 5})},
     IntegersAt(0, 10)},
    {"Convolution",
     "Convolution",
     {{"kernel", "(3,3)"}, {"num_filter", "4"}},
     {S({2, 3, 7, 7})},
     nullptr,
     1e-3,
     1e-4},
    {"ConvolutionStridePad",
     "Convolution",
     {{"kernel", "(3,3)"}, {"num_filter", "4"}, {"stride", "(2,2)"}, {"pad", "(1,1)"}},
     {S({2, 3, 8, 8})},
     nullptr,
     1e-3,
     1e-4},
    {"ConvolutionGroupsDilate",
     "Convolution",
     {{"kernel", "(3,3)"},
      {"num_filter", "4"},
      {"num_group", "2"},
      {"dilate", "(2,2)"},
      {"no_bias", "True"}},
     {S({2, 4, 9, 9})},
     nullptr,
     1e-3,
     1e-4},
    {"Convolution16Channels",
     "Convolution",
     {{"kernel", "(3,3)"}, {"num_filter", "16"}, {"pad", "(1,1)"}},
     {S({2, 16, 6, 6})},
     nullptr,
     1e-3,
     1e-4},
    {"MaxPool",
     "Pooling",
     {{"kernel", "(2,2)"}, {"stride", "(2,2)"}, {"pool_type", "max"}},
     {S({2, 3, 6, 6})}},
    {"MaxPoolFull",
     "Pooling",
     {{"kernel", "(3,3)"},
      {"stride", "(2,2)"},
      {"pool_type", "max"},
      {"pooling_convention", "full"}},
     {S({2, 3, 8, 8})}},
    {"AvgPoolPad",
     "Pooling",
     {{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"pad", "(1,1)"}, {"pool_type", "avg"}},
     {S({2, 3, 7, 7})}},
    {"AvgPoolExcludePad",
     "Pooling",
     {{"kernel", "(3,3)"},
      {"stride", "(1,1)"},
      {"pad", "(1,1)"},
      {"pool_type", "avg"},
      {"count_include_pad", "False"}},
     {S({2, 3, 5, 5})}},
    {"GlobalAvgPool",
     "Pooling",
     {{"kernel", "(1,1)"}, {"global_pool", "True"}, {"pool_type", "avg"}},
     {S({2, 3, 5, 5})}},
    {"BatchNorm", "BatchNorm", {{"fix_gamma", "False"}}, {S({4, 3, 5, 5})}, nullptr, 1e-3, 1e-4},
    {"BatchNormFixGamma", "BatchNorm", {}, {S({4, 3, 5, 5})}, nullptr, 1e-3, 1e-4},
    {"BatchNorm2d", "BatchNorm", {{"fix_gamma", "False"}}, {S({6, 5})}, nullptr, 1e-3, 1e-4},
    {"Gelu", "LeakyReLU", {{"act_type", "gelu"}}, {S({3, 7})}},
    {"ConvolutionDepthwise",
     "Convolution",
     {{"kernel", "(3,3)"},
      {"num_filter", "8"},
      {"num_group", "8"},
      {"pad", "(1,1)"},
      {"stride", "(2,2)"}},
     {S({2, 8, 9, 10})}},
    {"Prelu", "LeakyReLU", {{"act_type", "prelu"}}, {S({2, 3, 5})}},
    {"Sqrt", "sqrt", {}, {S({4, 6})}, Positive()},
    {"Exp", "exp", {}, {S({4, 6})}},
    {"Log", "log", {}, {S({4, 6})}, Positive()},
    {"Square", "square", {}, {S({4, 6})}},
    {"Clip", "clip", {{"a_min", "-0.3"}, {"a_max", "0.4"}}, {S({4, 6})}},
    {"Abs", "abs", {}, {S({4, 6})}},
    {"Sign", "sign", {}, {S({4, 6})}},
    {"Reciprocal", "reciprocal", {}, {S({4, 6})}, Positive()},
    {"Rsqrt", "rsqrt", {}, {S({4, 6})}, Positive()},
    {"Cbrt", "cbrt", {}, {S({4, 6})}, Positive()},
    {"Rcbrt", "rcbrt", {}, {S({4, 6})}, Positive()},
    {"Sin", "sin", {}, {S({4, 6})}},
    {"Cos", "cos", {}, {S({4, 6})}},
    {"Tan", "tan", {}, {S({4, 6})}},
    {"Arcsin", "arcsin", {}, {S({4, 6})}, Between(-0.8f, 0.8f)},
    {"Arccos", "arccos", {}, {S({4, 6})}, Between(-0.8f, 0.8f)},
    {"Arctan", "arctan", {}, {S({4, 6})}},
    {"Sinh", "sinh", {}, {S({4, 6})}},
    {"Cosh", "cosh", {}, {S({4, 6})}},
    {"Arcsinh", "arcsinh", {}, {S({4, 6})}},
    {"Arccosh", "arccosh", {}, {S({4, 6})}, Between(1.2f, 3.0f)},
    {"Arctanh", "arctanh", {}, {S({4, 6})}, Between(-0.8f, 0.8f)},
    {"Degrees", "degrees", {}, {S({4, 6})}},
    {"Radians", "radians", {}, {S({4, 6})}},
    {"Floor", "floor", {}, {S({4, 6})}, Between(-3.0f, 3.0f)},
    {"Ceil", "ceil", {}, {S({4, 6})}, Between(-3.0f, 3.0f)},
    {"Round", "round", {}, {S({4, 6})}, Between(-3.0f, 3.0f)},
    {"Rint", "rint", {}, {S({4, 6})}, Between(-3.0f, 3.0f)},
    {"Fix", "fix", {}, {S({4, 6})}, Between(-3.0f, 3.0f)},
    {"Trunc", "trunc", {}, {S({4, 6})}, Between(-3.0f, 3.0f)},
    {"Log10", "log10", {}, {S({4, 6})}, Positive()},
    {"Log2", "log2", {}, {S({4, 6})}, Positive()},
    {"Log1p", "log1p", {}, {S({4, 6})}, Positive()},
    {"Expm1", "expm1", {}, {S({4, 6})}},
    {"Argmax", "argmax", {{"axis", "1"}}, {S({4, 6, 3})}},
    {"ArgminAll", "argmin", {}, {S({4, 6})}},
    {"ArgmaxChannel", "argmax_channel", {}, {S({5, 7})}},
    {"ZerosLike", "zeros_like", {}, {S({4, 6})}},
    {"OnesLike", "ones_like", {}, {S({4, 6})}},
    {"ExpandDims", "expand_dims", {{"axis", "-1"}}, {S({4, 6})}},
    {"Squeeze", "squeeze", {{"axis", "(1,)"}}, {S({4, 1, 6})}},
    {"BroadcastAdd", "broadcast_add", {}, {S({2, 3, 4}), S({1, 3, 1})}},
    {"BroadcastSub", "broadcast_sub", {}, {S({2, 3, 4}), S({4})}},
    {"BroadcastMul", "broadcast_mul", {}, {S({2, 1, 4}), S({1, 3, 1})}},
    {"BroadcastDiv", "broadcast_div", {}, {S({2, 3}), S({1, 3})}, Positive()},
    {"BroadcastMaximum", "broadcast_maximum", {}, {S({2, 3, 4}), S({2, 1, 4})}},
    {"BroadcastMinimum", "broadcast_minimum", {}, {S({3, 4}), S({3, 1})}},
    {"BroadcastPower", "broadcast_power", {}, {S({2, 3}), S({2, 1})}, Positive()},
    {"BroadcastEqual", "broadcast_equal", {}, {S({3, 4}), S({1, 4})}, IntegersAt(0, 3)},
    {"BroadcastNotEqual", "broadcast_not_equal", {}, {S({3, 4}), S({1, 4})}, IntegersAt(0, 3)},
    {"BroadcastGreater", "broadcast_greater", {}, {S({3, 4}), S({1, 4})}},
    {"BroadcastGreaterEqual", "broadcast_greater_equal", {}, {S({3, 4}), S({1, 4})}},
    {"BroadcastLesser", "broadcast_lesser", {}, {S({3, 4}), S({1, 4})}},
    {"BroadcastLesserEqual", "broadcast_lesser_equal", {}, {S({3, 4}), S({1, 4})}},
    {"Where", "where", {}, {S({3, 4}), S({3, 4}), S({3, 4})}, IntegersAt(0, 2)},
    {"WhereVector", "where", {}, {S({3}), S({3, 4}), S({3, 4})}, IntegersAt(0, 2)},
    {"LayerNorm", "LayerNorm", {}, {S({4, 3, 33})}, nullptr, 1e-3, 1e-4},
    // The attention's fused softmax (Note [Masked softmax fusion]); the mask's gradient too.
    {"MaskedSoftmax", "_masked_softmax", {{"scale", "0.5"}}, {S({2, 3, 40}), S({3, 40})}},
    {"MaskedSoftmaxRowMask", "_masked_softmax", {}, {S({4, 5}), S({1, 5})}},
    {"LayerNormAxis1", "LayerNorm", {{"axis", "1"}}, {S({2, 40, 3})}, nullptr, 1e-3, 1e-4},
    // Note [LayerNorm cast fusion]'s op; its low-precision outputs in LayerNormCastFusion.
    {"LayerNormFused",
     "_layer_norm",
     {{"out_dtype", "float32"}},
     {S({4, 3, 33})},
     nullptr,
     1e-3,
     1e-4},
    // Note [Widening add fusion]'s op; its low-precision inputs in WideningAddFusion.
    {"WideningAdd", "_widening_add", {}, {S({4, 6}), S({4, 6})}},
    {"Dot", "dot", {}, {S({3, 4}), S({4, 5})}, nullptr, 1e-4, 1e-5},
    {"DotTransposed",
     "dot",
     {{"transpose_a", "True"}, {"transpose_b", "True"}},
     {S({4, 2, 3}), S({5, 4})}},
    {"BatchDot", "batch_dot", {}, {S({2, 3, 4}), S({2, 4, 5})}},
    {"BatchDotTransposeB", "batch_dot", {{"transpose_b", "True"}}, {S({2, 3, 4}), S({2, 5, 4})}},
    {"SumAxis", "sum", {{"axis", "1"}}, {S({2, 3, 4})}},
    {"MeanKeepdims", "mean", {{"axis", "(0, 2)"}, {"keepdims", "True"}}, {S({2, 3, 4})}},
    {"MaxAxis", "max", {{"axis", "-1"}}, {S({3, 5})}},
    // Through the layout (Note [Reduce as rows] covers sum, mean and max only).
    {"MinAxis", "min", {{"axis", "1"}}, {S({2, 3, 4})}},
    {"ProdAxes", "prod", {{"axis", "(0, 2)"}}, {S({2, 3, 2})}, Positive()},
    {"NanSumAxis", "nansum", {{"axis", "0"}}, {S({3, 4})}},
    {"NanProdAxis", "nanprod", {{"axis", "-1"}}, {S({3, 4})}, Positive()},
    {"Norm2", "norm", {}, {S({3, 4})}},
    {"Norm1Axis", "norm", {{"axis", "1"}, {"ord", "1"}}, {S({2, 3, 4})}},
    // Note [Reduce as rows]: one long row over a block; rows apart, a thread each.
    {"SumEverything", "sum", {}, {S({300, 257})}, nullptr, 1e-4, 1e-4},
    {"MeanAxis0ManyRows", "mean", {{"axis", "0"}}, {S({70, 2048})}, nullptr, 1e-4, 1e-5},
    {"MaxAxis0ManyRows", "max", {{"axis", "0"}}, {S({70, 2048})}},
    {"MeanPerChannel", "mean", {{"axis", "(0, 2, 3)"}}, {S({4, 3, 5, 6})}},
    {"SumLeadBlocksApart", "sum", {{"axis", "(0, 2)"}}, {S({3, 4, 5, 6})}},
    {"Transpose", "transpose", {{"axes", "(0, 2, 1, 3)"}}, {S({2, 3, 4, 2})}},
    {"SliceAxis", "slice_axis", {{"axis", "1"}, {"begin", "1"}, {"end", "3"}}, {S({2, 4, 3})}},
    {"SliceChannel", "SliceChannel", {{"num_outputs", "3"}, {"axis", "2"}}, {S({2, 2, 6})}},
    {"Take", "take", {}, {S({5, 3}), S({2, 4})}, IntegersAt(1, 5)},
    {"Arange", "_arange", {{"start", "2"}, {"stop", "11"}, {"step", "3"}, {"repeat", "2"}}, {}},
    {"ArangeLike", "_contrib_arange_like", {{"axis", "1"}, {"start", "1"}}, {S({2, 5})}},
    {"Zeros", "_zeros", {{"shape", "(2, 3)"}}, {}},
    {"Ones", "_ones", {{"shape", "(4,)"}, {"dtype", "float32"}}, {}},
    {"Full", "_full", {{"shape", "(3, 2)"}, {"value", "2.5"}}, {}},
    // random.h's value of (seed, position) on both: the same numbers.
    {"RandomUniform", "_random_uniform", {{"shape", "(20, 30)"}, {"low", "-1"}, {"high", "2"}}, {}},
    {"RandomNormal", "_random_normal", {{"shape", "(20, 30)"}, {"loc", "1"}, {"scale", "2"}}, {}},
    // The mask is dropout.h's hash of the seed and the element on both: equal in training too.
    {"Dropout", "Dropout", {{"p", "0.3"}}, {S({20, 30})}},
    {"Softmin", "softmin", {{"axis", "0"}, {"temperature", "2"}}, {S({3, 4})}},
    {"BroadcastTo", "broadcast_to", {{"shape", "(2, 0, 4)"}}, {S({1, 3, 1})}},
    {"BroadcastAxis", "broadcast_axis", {{"axis", "0"}, {"size", "3"}}, {S({1, 4})}},
    {"BroadcastLike", "broadcast_like", {}, {S({1, 3}), S({4, 3})}},
    {"Tile", "tile", {{"reps", "(2, 1, 3)"}}, {S({2, 3})}},
    {"Repeat", "repeat", {{"repeats", "3"}, {"axis", "1"}}, {S({2, 2, 3})}},
    {"Sort", "sort", {{"axis", "0"}}, {S({5, 3})}},
    {"Argsort", "argsort", {{"is_ascend", "False"}}, {S({3, 6})}},
    {"TopkBoth", "topk", {{"k", "2"}, {"ret_typ", "both"}, {"axis", "1"}}, {S({2, 5, 3})}},
    {"TopkMask", "topk", {{"k", "3"}, {"ret_typ", "mask"}}, {S({4, 6})}},
    {"Slice",
     "slice",
     {{"begin", "(None, 1, 3)"}, {"end", "(None, 3, 0)"}, {"step", "(1, 1, -2)"}},
     {S({2, 4, 5})}},
    {"SliceLike", "slice_like", {{"axes", "(1,)"}}, {S({2, 5}), S({1, 3})}},
    {"Flip", "flip", {{"axis", "1"}}, {S({2, 3, 4})}},
    {"OneHot", "one_hot", {{"depth", "5"}, {"on_value", "3"}}, {S({2, 4})}, IntegersAt(0, 7)},
    {"ShapeArray", "shape_array", {}, {S({2, 3, 4})}},
    {"SizeArray", "size_array", {}, {S({2, 3, 4})}},
    {"ReshapeLike", "reshape_like", {{"lhs_begin", "1"}}, {S({2, 6}), S({3, 2})}},
    {"PadConstant",
     "Pad",
     {{"mode", "constant"}, {"pad_width", "(0, 0, 1, 2, 2, 1)"}},
     {S({2, 3, 4})}},
    {"PadEdge",
     "Pad",
     {{"mode", "edge"}, {"pad_width", "(0, 0, 0, 0, 2, 1, 1, 3)"}},
     {S({1, 2, 3, 4})}},
    {"PadReflect",
     "Pad",
     {{"mode", "reflect"}, {"pad_width", "(0, 0, 0, 0, 2, 1, 1, 3)"}},
     {S({1, 2, 3, 4})}},
    // The harness's arrays are float32; other dtypes: tests/executor/dtype_test.cc's GPU case.
    {"Cast", "Cast", {{"dtype", "float32"}}, {S({4, 5})}},
    {"AmpCast", "amp_cast", {{"dtype", "float32"}}, {S({4, 5})}},
    {"AmpMultiCast", "amp_multicast", {{"num_outputs", "2"}}, {S({4, 5}), S({3})}},
};

INSTANTIATE_TEST_SUITE_P(AllOps, GpuOps, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return info.param.name; });

// Runs on the CPU too: every registered op has a case above, and every case's op says it has
// GPU kernels in a CUDA build.
TEST(GpuOpsCoverage, EveryOpHasACase) {
  std::set<std::string> covered;
  for (const GpuCase& c : kCases) {
    covered.insert(op::OpRegistry::Get().Canonical(c.op));
    OpInstance inst = MakeOp(c.op, c.attrs, c.shapes);
    EXPECT_EQ(inst.op->HasGpuKernel(), op::BuiltWithGpuKernels()) << c.name;
  }
  // Ops whose inputs are not all float32, which this harness makes: dtype_test.cc's GPU case.
  covered.insert("batch_take");
  for (const std::string& name : op::OpRegistry::Get().Names()) {
    EXPECT_TRUE(covered.count(op::OpRegistry::Get().Canonical(name)))
        << name << " has no case in gpu_ops_test.cc";
  }
}

// What a GPU mask means (GpuOps.MatchCpu/Dropout checks it equals the CPU's): each output is 0
// or x / (1 - p), about p of them are dropped, and backward applies the same mask to the head
// gradient.
TEST(GpuDropout, MaskSemantics) {
  if (device::Count() == 0) GTEST_SKIP() << "no GPU visible";
  auto gpu = op::GpuResources::Create(0);
  const float p = 0.3f;
  OpInstance inst = MakeOp("Dropout", {{"p", "0.3"}}, {S({100, 100})});
  std::mt19937 rng(5);
  FillUniform(inst.in[0], rng, 0.5f, 1.5f);
  const std::vector<NDArray> in = ToGpu(inst.in);
  std::vector<NDArray> out;
  for (const NDArray& o : inst.out)
    out.push_back(NDArray::Zeros(o.shape(), o.dtype(), Context::GPU(0)));
  const op::OpContext ctx{.is_train = true, .ctx = Context::GPU(0), .seed = 11, .gpu = gpu.get()};
  inst.op->Forward(ctx, in, std::vector<GradReq>(out.size(), GradReq::kWrite), out, {});
  const std::vector<float> x = inst.in[0].ToVector<float>(), y = out[0].ToVector<float>();
  int dropped = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (y[i] == 0) {
      ++dropped;
    } else {
      ASSERT_NEAR(y[i], x[i] / (1 - p), 1e-5) << i;
    }
  }
  EXPECT_NEAR(dropped / 10000.0, p, 0.03);
  const NDArray head = NDArray::Full({100, 100}, 2.0, DType::kFloat32, Context::GPU(0));
  const NDArray grad = NDArray::Zeros({100, 100}, DType::kFloat32, Context::GPU(0));
  inst.op->Backward(ctx, {head}, in, out, {GradReq::kWrite}, {grad}, {});
  const std::vector<float> g = grad.ToVector<float>();
  for (size_t i = 0; i < g.size(); ++i) {
    ASSERT_FLOAT_EQ(g[i], y[i] == 0 ? 0.0f : 2 / (1 - p)) << i;
  }
  // Another seed draws another mask; the same seed the same one.
  const op::OpContext other{.is_train = true, .ctx = Context::GPU(0), .seed = 12, .gpu = gpu.get()};
  inst.op->Forward(other, in, std::vector<GradReq>(out.size(), GradReq::kWrite), out, {});
  EXPECT_NE(out[0].ToVector<float>(), y);
  inst.op->Forward(ctx, in, std::vector<GradReq>(out.size(), GradReq::kWrite), out, {});
  EXPECT_EQ(out[0].ToVector<float>(), y);
}

}  // namespace
}  // namespace cohort::testing
