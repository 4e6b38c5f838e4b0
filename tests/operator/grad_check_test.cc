// Finite-difference gradient checks for every operator and attribute family, and grad_req
// add / null for each.
#include <gtest/gtest.h>

#include <limits>
#include <numeric>

#include "op_harness.h"

namespace cohort {
namespace {

using testing::CheckGradient;
using testing::CheckGradReqs;
using testing::OpInstance;

// Distinct values spaced 0.1 apart and away from 0, so that max pooling and relu have no ties or
// kinks within the finite-difference step; input k is shifted by 0.03·k, so that the values of
// two inputs never tie either (broadcast_maximum, comparisons).
void Spaced(OpInstance& inst, std::mt19937& rng) {
  for (size_t k = 0; k < inst.in.size(); ++k) {
    const NDArray& a = inst.in[k];
    std::vector<int> order(a.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    float* p = static_cast<float*>(a.raw_data());
    for (int64_t i = 0; i < a.size(); ++i) {
      p[i] = (order[i] - a.size() / 2.0f + 0.5f) * 0.1f + 0.03f * static_cast<float>(k);
    }
  }
}

struct GradCase {
  std::string name, op;
  op::Attrs attrs;
  std::vector<Shape> shapes;
  std::vector<int> check;
  bool spaced = false;
};

void PrintTo(const GradCase& c, std::ostream* os) { *os << c.name; }

class GradCheck : public ::testing::TestWithParam<GradCase> {};

TEST_P(GradCheck, AnalyticEqualsFiniteDifferences) {
  const GradCase& c = GetParam();
  CheckGradient(c.op, c.attrs, c.shapes, c.check, c.spaced ? Spaced : nullptr);
}

TEST_P(GradCheck, AddAccumulatesAndNullLeavesBuffers) {
  const GradCase& c = GetParam();
  for (int i : c.check) CheckGradReqs(c.op, c.attrs, c.shapes, i, c.spaced ? Spaced : nullptr);
}

const GradCase kCases[] = {
    {"fc", "FullyConnected", {{"num_hidden", "4"}}, {{3, 5}}, {0, 1, 2}},
    {"fc_no_flatten",
     "FullyConnected",
     {{"num_hidden", "2"}, {"flatten", "False"}, {"no_bias", "True"}},
     {{2, 3, 4}},
     {0, 1}},
    {"conv", "Convolution", {{"kernel", "(3,3)"}, {"num_filter", "3"}}, {{2, 2, 5, 5}}, {0, 1, 2}},
    {"conv_stride_pad_dilate",
     "Convolution",
     {{"kernel", "(3,3)"},
      {"num_filter", "2"},
      {"stride", "(2,2)"},
      {"pad", "(1,1)"},
      {"dilate", "(2,1)"}},
     {{1, 2, 7, 6}},
     {0, 1, 2}},
    {"conv_groups",
     "Convolution",
     {{"kernel", "(2,2)"}, {"num_filter", "4"}, {"num_group", "2"}},
     {{2, 4, 4, 4}},
     {0, 1, 2}},
    {"conv_1x1",
     "Convolution",
     {{"kernel", "(1,1)"}, {"num_filter", "3"}},
     {{2, 4, 3, 3}},
     {0, 1, 2}},
    {"pool_max", "Pooling", {{"kernel", "(2,2)"}, {"stride", "(2,2)"}}, {{2, 2, 4, 4}}, {0}, true},
    {"pool_max_full_pad",
     "Pooling",
     {{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"pad", "(1,1)"}, {"pooling_convention", "full"}},
     {{1, 2, 6, 6}},
     {0},
     true},
    {"pool_avg",
     "Pooling",
     {{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"pad", "(1,1)"}, {"pool_type", "avg"}},
     {{1, 2, 5, 5}},
     {0}},
    {"pool_avg_exclude_pad",
     "Pooling",
     {{"kernel", "(3,3)"}, {"pad", "(1,1)"}, {"pool_type", "avg"}, {"count_include_pad", "False"}},
     {{1, 1, 4, 4}},
     {0}},
    {"pool_sum", "Pooling", {{"kernel", "(2,2)"}, {"pool_type", "sum"}}, {{1, 2, 3, 3}}, {0}},
    {"pool_global",
     "Pooling",
     {{"global_pool", "True"}, {"pool_type", "avg"}},
     {{2, 3, 3, 2}},
     {0}},
    {"relu", "Activation", {{"act_type", "relu"}}, {{4, 5}}, {0}, true},
    {"sigmoid", "Activation", {{"act_type", "sigmoid"}}, {{4, 5}}, {0}},
    {"tanh", "Activation", {{"act_type", "tanh"}}, {{4, 5}}, {0}},
    {"softrelu", "Activation", {{"act_type", "softrelu"}}, {{4, 5}}, {0}},
    {"softsign", "Activation", {{"act_type", "softsign"}}, {{4, 5}}, {0}, true},
    {"leaky", "LeakyReLU", {{"act_type", "leaky"}, {"slope", "0.2"}}, {{4, 5}}, {0}, true},
    {"elu", "LeakyReLU", {{"act_type", "elu"}}, {{4, 5}}, {0}, true},
    {"selu", "LeakyReLU", {{"act_type", "selu"}}, {{4, 5}}, {0}, true},
    {"bn", "BatchNorm", {{"fix_gamma", "False"}}, {{4, 3, 2, 2}}, {0, 1, 2}},
    {"bn_fix_gamma", "BatchNorm", {}, {{3, 2, 2}}, {0, 2}},
    {"bn_global_stats",
     "BatchNorm",
     {{"use_global_stats", "True"}, {"fix_gamma", "False"}},
     {{3, 2, 2}},
     {0, 1, 2}},
    {"dropout", "Dropout", {{"p", "0.3"}}, {{6, 7}}, {0}},
    {"softmax", "softmax", {}, {{3, 4}}, {0}},
    {"softmax_axis0_temperature", "softmax", {{"axis", "0"}, {"temperature", "2"}}, {{3, 4}}, {0}},
    {"log_softmax", "log_softmax", {{"axis", "1"}}, {{2, 3, 2}}, {0}},
    {"add", "elemwise_add", {}, {{2, 3}, {2, 3}}, {0, 1}},
    {"sub", "elemwise_sub", {}, {{2, 3}, {2, 3}}, {0, 1}},
    {"mul", "elemwise_mul", {}, {{2, 3}, {2, 3}}, {0, 1}},
    {"div", "elemwise_div", {}, {{2, 3}, {2, 3}}, {0}},
    {"plus_scalar", "_plus_scalar", {{"scalar", "2"}}, {{2, 3}}, {0}},
    {"rminus_scalar", "_rminus_scalar", {{"scalar", "2"}}, {{2, 3}}, {0}},
    {"mul_scalar", "_mul_scalar", {{"scalar", "-3"}}, {{2, 3}}, {0}},
    {"div_scalar", "_div_scalar", {{"scalar", "4"}}, {{2, 3}}, {0}},
    {"maximum_scalar", "_maximum_scalar", {{"scalar", "0.01"}}, {{2, 3}}, {0}, true},
    {"minimum_scalar", "_minimum_scalar", {{"scalar", "0.01"}}, {{2, 3}}, {0}, true},
    {"copy", "_copy", {}, {{2, 3}}, {0}},
    {"relu_function", "relu", {}, {{2, 3}}, {0}, true},
    {"sigmoid_function", "sigmoid", {}, {{2, 3}}, {0}},
    {"flatten", "Flatten", {}, {{2, 3, 2}}, {0}},
    {"cross_device_copy", "_CrossDeviceCopy", {}, {{2, 3}}, {0}},
    {"expand_dims", "expand_dims", {{"axis", "1"}}, {{2, 3}}, {0}},
    {"squeeze", "squeeze", {}, {{2, 1, 3, 1}}, {0}},
    {"reshape", "Reshape", {{"shape", "(-1, 3)"}}, {{2, 3, 2}}, {0}},
    {"concat", "Concat", {{"num_args", "2"}, {"dim", "1"}}, {{2, 1, 2}, {2, 3, 2}}, {0, 1}},
    {"add_n", "add_n", {{"num_args", "3"}}, {{2, 3}, {2, 3}, {2, 3}}, {0, 1, 2}},
    {"slice_assign",
     "_slice_assign",
     {{"begin", "(0, 1)"}, {"end", "(2, None)"}, {"step", "(1, 2)"}},
     {{3, 5}, {2, 2}},
     {0, 1}},
    {"pick", "pick", {{"axis", "1"}}, {{3, 4}, {3}}, {0}},
    {"slice_assign_scalar",
     "_slice_assign_scalar",
     {{"begin", "(1, None)"}, {"end", "(3, None)"}, {"step", "(1, -1)"}, {"scalar", "2.5"}},
     {{4, 3}},
     {0}},
    {"block_grad", "BlockGrad", {}, {{2, 3}}, {}},
    {"gelu", "LeakyReLU", {{"act_type", "gelu"}}, {{4, 5}}, {0}},
    {"conv_depthwise",
     "Convolution",
     {{"kernel", "(3,3)"},
      {"num_filter", "3"},
      {"num_group", "3"},
      {"pad", "(1,1)"},
      {"stride", "(2,2)"}},
     {{2, 3, 5, 6}},
     {0, 1, 2}},
    {"prelu", "LeakyReLU", {{"act_type", "prelu"}}, {{2, 3, 4}}, {0, 1}, true},
    {"prelu_one_slope", "LeakyReLU", {{"act_type", "prelu"}}, {{3, 4}, {1}}, {0, 1}, true},
    {"exp", "exp", {}, {{3, 4}}, {0}},
    {"square", "square", {}, {{3, 4}}, {0}},
    {"clip", "clip", {{"a_min", "-0.5"}, {"a_max", "0.5"}}, {{4, 5}}, {0}, true},
    {"broadcast_add", "broadcast_add", {}, {{2, 3, 4}, {1, 3, 1}}, {0, 1}},
    {"broadcast_sub_left_pad", "broadcast_sub", {}, {{2, 3, 4}, {4}}, {0, 1}},
    {"broadcast_mul_both", "broadcast_mul", {}, {{2, 1, 4}, {1, 3, 1}}, {0, 1}},
    {"broadcast_maximum", "broadcast_maximum", {}, {{2, 3, 4}, {2, 1, 4}}, {0, 1}, true},
    {"broadcast_minimum", "broadcast_minimum", {}, {{3, 4}, {3, 1}}, {0, 1}, true},
    {"broadcast_lesser", "broadcast_lesser", {}, {{3, 4}, {1, 4}}, {0, 1}, true},
    {"where", "where", {}, {{3, 4}, {3, 4}, {3, 4}}, {1, 2}},
    {"where_vector", "where", {}, {{3}, {3, 4}, {3, 4}}, {1, 2}},
    {"layer_norm", "LayerNorm", {}, {{3, 2, 5}}, {0, 1, 2}},
    {"layer_norm_axis1", "LayerNorm", {{"axis", "1"}, {"eps", "0.01"}}, {{2, 4, 3}}, {0, 1, 2}},
    {"dot", "dot", {}, {{3, 4}, {4, 5}}, {0, 1}},
    {"dot_3d_transposed",
     "dot",
     {{"transpose_a", "True"}, {"transpose_b", "True"}},
     {{4, 2, 3}, {5, 4}},
     {0, 1}},
    {"batch_dot", "batch_dot", {}, {{2, 3, 4}, {2, 4, 5}}, {0, 1}},
    {"batch_dot_transpose_b",
     "batch_dot",
     {{"transpose_b", "True"}},
     {{2, 3, 4}, {2, 5, 4}},
     {0, 1}},
    {"batch_dot_transpose_a",
     "batch_dot",
     {{"transpose_a", "True"}},
     {{2, 4, 3}, {2, 4, 5}},
     {0, 1}},
    {"sum_axis", "sum", {{"axis", "1"}}, {{2, 3, 4}}, {0}},
    {"sum_all", "sum", {}, {{2, 3}}, {0}},
    {"sum_empty_axis", "sum", {{"axis", "()"}, {"keepdims", "True"}}, {{2, 3}}, {0}},
    {"mean_keepdims", "mean", {{"axis", "(0, 2)"}, {"keepdims", "True"}}, {{2, 3, 4}}, {0}},
    {"mean_exclude", "mean", {{"axis", "1"}, {"exclude", "True"}}, {{2, 3, 4}}, {0}},
    {"max_axis", "max", {{"axis", "-1"}}, {{3, 5}}, {0}, true},
    {"min_axis", "min", {{"axis", "1"}}, {{2, 3, 4}}, {0}, true},
    {"prod_axes", "prod", {{"axis", "(0, 2)"}}, {{2, 3, 2}}, {0}, true},
    {"nansum_axis", "nansum", {{"axis", "0"}}, {{3, 4}}, {0}},
    {"nanprod_all", "nanprod", {}, {{2, 3}}, {0}, true},
    {"norm2_all", "norm", {}, {{3, 4}}, {0}, true},
    {"norm1_axis", "norm", {{"axis", "1"}, {"ord", "1"}}, {{2, 3, 4}}, {0}, true},
    {"softmin_axis0_temperature", "softmin", {{"axis", "0"}, {"temperature", "2"}}, {{3, 4}}, {0}},
    {"broadcast_to", "broadcast_to", {{"shape", "(2, 0, 4)"}}, {{1, 3, 1}}, {0}},
    {"broadcast_like_axes",
     "broadcast_like",
     {{"lhs_axes", "(0,)"}, {"rhs_axes", "(1,)"}},
     {{1, 3}, {2, 4}},
     {0}},
    {"tile", "tile", {{"reps", "(2, 1, 3)"}}, {{2, 3}}, {0}},
    {"repeat_flat", "repeat", {{"repeats", "2"}}, {{2, 3}}, {0}},
    {"sort", "sort", {}, {{3, 5}}, {0}, true},
    {"sort_flat_descending",
     "sort",
     {{"axis", "None"}, {"is_ascend", "False"}},
     {{2, 3}},
     {0},
     true},
    {"topk_value", "topk", {{"k", "2"}, {"ret_typ", "value"}, {"axis", "0"}}, {{4, 3}}, {0}, true},
    {"slice_steps",
     "slice",
     {{"begin", "(None, 2)"}, {"end", "(None, None)"}, {"step", "(2, -1)"}},
     {{3, 4}},
     {0}},
    {"slice_like", "slice_like", {}, {{3, 4}, {2, 3}}, {0}},
    {"flip", "flip", {{"axis", "(0, 2)"}}, {{2, 3, 2}}, {0}},
    {"reshape_like", "reshape_like", {}, {{2, 6}, {3, 4}}, {0}},
    {"pad_edge", "Pad", {{"mode", "edge"}, {"pad_width", "(0, 0, 2, 1, 1, 3)"}}, {{2, 3, 4}}, {0}},
    {"pad_reflect",
     "Pad",
     {{"mode", "reflect"}, {"pad_width", "(0, 0, 2, 1, 1, 3)"}},
     {{2, 3, 4}},
     {0}},
    {"transpose", "transpose", {{"axes", "(0, 2, 1, 3)"}}, {{2, 3, 4, 2}}, {0}},
    {"transpose_reverse", "transpose", {}, {{2, 3, 4}}, {0}},
    {"slice_axis", "slice_axis", {{"axis", "1"}, {"begin", "1"}, {"end", "3"}}, {{2, 4, 3}}, {0}},
    {"slice_axis_negative",
     "slice_axis",
     {{"axis", "-1"}, {"begin", "-2"}, {"end", "None"}},
     {{2, 4, 3}},
     {0}},
    {"split", "SliceChannel", {{"num_outputs", "3"}, {"axis", "2"}}, {{2, 2, 6}}, {0}},
    {"split_squeeze",
     "split",
     {{"num_outputs", "2"}, {"axis", "0"}, {"squeeze_axis", "True"}},
     {{2, 3}},
     {0}},
    {"reshape_reverse", "Reshape", {{"shape", "(0, -1)"}, {"reverse", "True"}}, {{2, 3, 4}}, {0}},
};

INSTANTIATE_TEST_SUITE_P(Ops, GradCheck, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<GradCase>& info) {
                           return info.param.name;
                         });

// elemwise_div's divisor and _rdiv_scalar's input must stay away from zero.
TEST(GradCheckSpecial, DivisionAwayFromZero) {
  auto positive = [](OpInstance& inst, std::mt19937& rng) {
    for (auto& a : inst.in) testing::FillUniform(a, rng, 0.5f, 2.0f);
  };
  CheckGradient("elemwise_div", {}, {{2, 3}, {2, 3}}, {0, 1}, positive);
  CheckGradient("_rdiv_scalar", {{"scalar", "3"}}, {{2, 3}}, {0}, positive);
  CheckGradient("sqrt", {}, {{3, 4}}, {0}, positive);
  CheckGradient("log", {}, {{3, 4}}, {0}, positive);
  CheckGradient("broadcast_div", {}, {{2, 3}, {1, 3}}, {0, 1}, positive);
  CheckGradient("broadcast_power", {}, {{2, 3}, {2, 1}}, {0, 1}, positive);
  for (const char* op : {"sqrt", "log"}) CheckGradReqs(op, {}, {{3, 4}}, 0, positive);
}

// unary_math.h's functions: values against the C library's in double, gradients against finite
// differences, each on inputs inside its domain; sign and the rounding functions pass no gradient.
TEST(GradCheckSpecial, UnaryMathFunctions) {
  struct Case {
    const char* op;
    double (*reference)(double);
    float lo, hi;
    bool differentiable;
  };
  static const double degrees_per_radian = 180.0 / 3.141592653589793;
  const Case cases[] = {
      {"abs", [](double x) { return std::fabs(x); }, 0.1f, 1.0f, true},
      {"sign", [](double x) { return x > 0   ? 1.0
                                     : x < 0 ? -1.0
                                             : 0.0; }, -1, 1, false},
      {"reciprocal", [](double x) { return 1 / x; }, 0.5f, 2, true},
      {"rsqrt", [](double x) { return 1 / std::sqrt(x); }, 0.5f, 2, true},
      {"cbrt", [](double x) { return std::cbrt(x); }, 0.5f, 2, true},
      {"rcbrt", [](double x) { return 1 / std::cbrt(x); }, 0.5f, 2, true},
      {"sin", [](double x) { return std::sin(x); }, -2, 2, true},
      {"cos", [](double x) { return std::cos(x); }, -2, 2, true},
      {"tan", [](double x) { return std::tan(x); }, -1, 1, true},
      {"arcsin", [](double x) { return std::asin(x); }, -0.8f, 0.8f, true},
      {"arccos", [](double x) { return std::acos(x); }, -0.8f, 0.8f, true},
      {"arctan", [](double x) { return std::atan(x); }, -2, 2, true},
      {"sinh", [](double x) { return std::sinh(x); }, -2, 2, true},
      {"cosh", [](double x) { return std::cosh(x); }, -2, 2, true},
      {"arcsinh", [](double x) { return std::asinh(x); }, -2, 2, true},
      {"arccosh", [](double x) { return std::acosh(x); }, 1.2f, 3, true},
      {"arctanh", [](double x) { return std::atanh(x); }, -0.8f, 0.8f, true},
      {"degrees", [](double x) { return x * degrees_per_radian; }, -2, 2, true},
      {"radians", [](double x) { return x / degrees_per_radian; }, -2, 2, true},
      {"floor", [](double x) { return std::floor(x); }, -3, 3, false},
      {"ceil", [](double x) { return std::ceil(x); }, -3, 3, false},
      {"round", [](double x) { return std::round(x); }, -3, 3, false},
      {"rint", [](double x) { return std::nearbyint(x); }, -3, 3, false},
      {"fix", [](double x) { return std::trunc(x); }, -3, 3, false},
      {"trunc", [](double x) { return std::trunc(x); }, -3, 3, false},
      {"log10", [](double x) { return std::log10(x); }, 0.5f, 2, true},
      {"log2", [](double x) { return std::log2(x); }, 0.5f, 2, true},
      {"log1p", [](double x) { return std::log1p(x); }, 0.5f, 2, true},
      {"expm1", [](double x) { return std::expm1(x); }, -1, 1, true},
      {"zeros_like", [](double) { return 0.0; }, -1, 1, false},
      {"ones_like", [](double) { return 1.0; }, -1, 1, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    auto domain = [&c](OpInstance& inst, std::mt19937& rng) {
      for (auto& a : inst.in) testing::FillUniform(a, rng, c.lo, c.hi);
    };
    std::mt19937 rng(9);
    OpInstance inst = testing::MakeOp(c.op, {}, {{3, 5}});
    domain(inst, rng);
    inst.Forward(false);
    const std::vector<float> x = inst.in[0].ToVector<float>(), y = inst.out[0].ToVector<float>();
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = c.reference(x[i]);
      EXPECT_NEAR(y[i], want, 1e-5 * std::max(1.0, std::fabs(want))) << "x = " << x[i];
    }
    if (c.differentiable) {
      CheckGradient(c.op, {}, {{3, 5}}, {0}, domain);
      CheckGradReqs(c.op, {}, {{3, 5}}, 0, domain);
    } else {
      OpInstance g = testing::MakeOp(c.op, {}, {{3, 5}});
      domain(g, rng);
      const NDArray grad = NDArray::Full({3, 5}, 7.0);
      g.Backward(true, {NDArray::Full({3, 5}, 1.0)}, {GradReq::kWrite}, {grad});
      EXPECT_EQ(grad.ToVector<float>(), std::vector<float>(15, 0.0f));
    }
  }
}

// where: x's gradient where the condition holds, y's elsewhere (a condition of zeros and ones).
TEST(GradCheckSpecial, WhereRoutesByCondition) {
  auto condition = [](OpInstance& inst, std::mt19937& rng) {
    float* c = static_cast<float*>(inst.in[0].raw_data());
    for (int64_t i = 0; i < inst.in[0].size(); ++i) c[i] = static_cast<float>(rng() % 2);
    testing::FillUniform(inst.in[1], rng);
    testing::FillUniform(inst.in[2], rng);
  };
  for (const Shape& c : {Shape{3, 4}, Shape{3}}) {
    CheckGradient("where", {}, {c, {3, 4}, {3, 4}}, {1, 2}, condition);
    CheckGradReqs("where", {}, {c, {3, 4}, {3, 4}}, 2, condition);
  }
}

// take: the table's gradient sums the head gradient rows of each index (clip and wrap modes).
TEST(GradCheckSpecial, TakeTable) {
  auto indices = [](OpInstance& inst, std::mt19937& rng) {
    testing::FillUniform(inst.in[0], rng);
    float* idx = static_cast<float*>(inst.in[1].raw_data());
    for (int64_t i = 0; i < inst.in[1].size(); ++i) idx[i] = static_cast<float>(rng() % 7) - 1;
  };
  for (const char* mode : {"clip", "wrap"}) {
    CheckGradient("take", {{"mode", mode}}, {{5, 2, 3}, {2, 4}}, {0}, indices);
    CheckGradReqs("take", {{"mode", mode}}, {{5, 2, 3}, {2, 4}}, 0, indices);
  }
}

// Embedding: the weight gradient sums the head gradient rows of each index.
TEST(GradCheckSpecial, EmbeddingWeight) {
  auto indices = [](OpInstance& inst, std::mt19937& rng) {
    float* idx = static_cast<float*>(inst.in[0].raw_data());
    for (int64_t i = 0; i < inst.in[0].size(); ++i) idx[i] = static_cast<float>(rng() % 4);
    testing::FillUniform(inst.in[1], rng);
  };
  CheckGradient("Embedding", {{"input_dim", "4"}, {"output_dim", "3"}}, {{2, 5}}, {1}, indices);
  CheckGradReqs("Embedding", {{"input_dim", "4"}, {"output_dim", "3"}}, {{2, 5}}, 1, indices);
}

// Loss layers: their gradient is that of the loss they stand for, not of their output.
double SoftmaxCrossEntropy(OpInstance& inst) {
  inst.Forward(true);
  std::vector<float> y = inst.out[0].ToVector<float>(), label = inst.in[1].ToVector<float>();
  const int64_t classes = inst.out[0].shape()[1];
  double loss = 0;
  for (size_t n = 0; n < label.size(); ++n)
    loss -= std::log(y[n * classes + static_cast<int>(label[n])]);
  return loss;
}

TEST(GradCheckSpecial, SoftmaxOutputIsTheCrossEntropyGradient) {
  std::mt19937 rng(5);
  OpInstance inst = testing::MakeOp("SoftmaxOutput", {}, {{4, 3}});
  testing::FillUniform(inst.in[0], rng);
  inst.in[1].CopyFrom(NDArray::FromVector<float>({4}, std::vector<float>{0, 2, 1, 2}));
  NDArray grad = NDArray::Zeros({4, 3}), label_grad = NDArray::Full({4}, 7.0);
  inst.Forward(true);
  inst.Backward(true, {}, {GradReq::kWrite, GradReq::kWrite}, {grad, label_grad});
  EXPECT_EQ(label_grad.ToVector<float>(), std::vector<float>(4, 0.0f));
  float* x = static_cast<float*>(inst.in[0].raw_data());
  std::vector<float> analytic = grad.ToVector<float>();
  for (int j = 0; j < 12; ++j) {
    const float saved = x[j];
    x[j] = saved + 1e-2f;
    const double up = SoftmaxCrossEntropy(inst);
    x[j] = saved - 1e-2f;
    const double down = SoftmaxCrossEntropy(inst);
    x[j] = saved;
    EXPECT_NEAR(analytic[j], (up - down) / 2e-2, 2e-3) << j;
  }
}

TEST(GradCheckSpecial, RegressionOutputsAreSquaredAndLogisticLossGradients) {
  std::mt19937 rng(6);
  for (const char* name : {"LinearRegressionOutput", "LogisticRegressionOutput"}) {
    OpInstance inst = testing::MakeOp(name, {}, {{3, 2}});
    testing::FillUniform(inst.in[0], rng);
    testing::FillUniform(inst.in[1], rng, 0, 1);
    inst.Forward(true);
    NDArray grad = NDArray::Zeros({3, 2}), label_grad = NDArray::Zeros({3, 2});
    inst.Backward(true, {}, {GradReq::kWrite, GradReq::kNull}, {grad, label_grad});
    // d/dx of ½(y-l)² (linear) and of the logistic log-loss, both (y - l), over 2 outputs each.
    std::vector<float> y = inst.out[0].ToVector<float>(), l = inst.in[1].ToVector<float>();
    std::vector<float> g = grad.ToVector<float>();
    for (int i = 0; i < 6; ++i) EXPECT_NEAR(g[i], (y[i] - l[i]) / 2, 1e-6) << name << " " << i;
  }
}

TEST(GradCheckSpecial, MakeLossSendsTheScaleAndBlockGradSendsNothing) {
  OpInstance loss =
      testing::MakeOp("MakeLoss", {{"grad_scale", "0.5"}, {"normalization", "batch"}}, {{4, 2}});
  loss.Forward(true);
  NDArray g = NDArray::Zeros({4, 2});
  loss.Backward(true, {}, {GradReq::kWrite}, {g});
  EXPECT_EQ(g.ToVector<float>(), std::vector<float>(8, 0.125f));
  OpInstance block = testing::MakeOp("BlockGrad", {}, {{2}});
  NDArray b = NDArray::Full({2}, 3.0);
  block.Backward(true, {NDArray::Full({2}, 1.0)}, {GradReq::kWrite}, {b});
  EXPECT_EQ(b.ToVector<float>(), std::vector<float>(2, 0.0f));
}

// A NaN does not vanish in max and in broadcast maximum/minimum, on either side (it did where
// it was the left operand or a later element); values from MXNet 1.9.1.
TEST(NaNPropagation, MaxAndBroadcastMaximumMinimumKeepNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  OpInstance max = testing::MakeOp("max", {{"axis", "1"}}, {{4, 3}});
  const std::vector<float> x = {nan, 1, 3, 1, 3, nan, 1, nan, 3, 2, 2, 2};
  std::copy(x.begin(), x.end(), max.in[0].data<float>());
  max.Forward(false);
  const std::vector<float> rows = max.out[0].ToVector<float>();
  for (int r = 0; r < 3; ++r) EXPECT_TRUE(std::isnan(rows[r])) << "row " << r << ": " << rows[r];
  EXPECT_EQ(rows[3], 2.0f);
  for (const char* op : {"broadcast_maximum", "broadcast_minimum"}) {
    for (int nan_side : {0, 1}) {
      OpInstance inst = testing::MakeOp(op, {}, {{1}, {1}});
      inst.in[nan_side].data<float>()[0] = nan;
      inst.in[1 - nan_side].data<float>()[0] = 1;
      inst.Forward(false);
      EXPECT_TRUE(std::isnan(inst.out[0].data<float>()[0])) << op << ", NaN on side " << nan_side;
    }
  }
}

TEST(Dropout, DropsAboutPAndScalesTheRestInTrainingOnly) {
  OpInstance inst = testing::MakeOp("Dropout", {{"p", "0.25"}}, {{100, 100}});
  inst.in[0].Fill(1.0);
  inst.Forward(true, 11);
  std::vector<float> y = inst.out[0].ToVector<float>();
  const auto zeros = std::count(y.begin(), y.end(), 0.0f);
  EXPECT_NEAR(zeros / 10000.0, 0.25, 0.02);
  for (float v : y) ASSERT_TRUE(v == 0.0f || std::fabs(v - 1 / 0.75f) < 1e-6);
  inst.Forward(true, 11);
  EXPECT_EQ(inst.out[0].ToVector<float>(), y);  // the same seed, the same mask
  inst.Forward(false, 11);
  EXPECT_EQ(inst.out[0].ToVector<float>(), std::vector<float>(10000, 1.0f));
}

}  // namespace
}  // namespace cohort
