#include "symbol/symbol.h"

#include <gtest/gtest.h>

#include "symbol/models/models.h"
#include "symbol/ops.h"

namespace cohort {
namespace {

using Names = std::vector<std::string>;

TEST(Symbol, AutomaticArgumentNamesAndOrder) {
  Symbol data = Symbol::Variable("data");
  Symbol fc = sym::FullyConnected(data, {.num_hidden = 6}, "fc1");
  Symbol out = sym::SoftmaxOutput(sym::Activation(fc, "relu", "relu1"), "softmax");
  EXPECT_EQ(out.ListArguments(), (Names{"data", "fc1_weight", "fc1_bias", "softmax_label"}));
  EXPECT_EQ(out.ListOutputs(), Names{"softmax_output"});
  EXPECT_TRUE(out.ListAuxiliaryStates().empty());
}

TEST(Symbol, GeneratedNodeNamesFollowMXNet) {
  Symbol x = Symbol::Variable("x");
  Symbol a = Symbol::Create("FullyConnected", std::vector<Symbol>{x}, {{"num_hidden", "2"}});
  Symbol b = Symbol::Create("FullyConnected", std::vector<Symbol>{a}, {{"num_hidden", "2"}});
  const std::string na = a.name(), nb = b.name();
  ASSERT_EQ(na.rfind("fullyconnected", 0), 0u) << na;
  EXPECT_NE(na, nb);
  EXPECT_EQ(b.ListArguments()[1], na + "_weight");
}

TEST(Symbol, AuxiliaryStatesAndHiddenOutputs) {
  Symbol bn = sym::BatchNorm(Symbol::Variable("data"), {}, "bn");
  EXPECT_EQ(bn.ListArguments(), (Names{"data", "bn_gamma", "bn_beta"}));
  EXPECT_EQ(bn.ListAuxiliaryStates(), (Names{"bn_moving_mean", "bn_moving_var"}));
  EXPECT_EQ(bn.ListInputs(),
            (Names{"data", "bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var"}));
  EXPECT_EQ(bn.ListOutputs(), Names{"bn_output"});  // mean and var stay hidden
  // The statistics it makes start at 0 and 1 whatever initializer fills the rest, as MXNet's
  // BatchNorm marks them; PReLU's slopes start at 0.25.
  auto attrs = bn.VariableAttrs();
  EXPECT_EQ(attrs["bn_moving_mean"]["__init__"], R"(["zero", {}])");
  EXPECT_EQ(attrs["bn_moving_var"]["__init__"], R"(["one", {}])");
  EXPECT_EQ(attrs["bn_gamma"].count("__init__"), 0u);
  Symbol prelu =
      Symbol::Create("LeakyReLU", {{"data", Symbol::Variable("x")}}, {{"act_type", "prelu"}}, "pr");
  EXPECT_EQ(prelu.VariableAttrs()["pr_gamma"]["__init__"], R"(["Constant", {"value": 0.25}])");
}

// The builders write every field of the op's params struct, and the op parses them back.
TEST(Symbol, BuildersWriteWhatTheirOpParses) {
  auto attrs = [](const Symbol& s) { return s.outputs()[0].node->impl->attrs(); };
  const Symbol x = Symbol::Variable("x");

  const auto fc = op::FullyConnectedParam::Parse(
      attrs(sym::FullyConnected(x, {.num_hidden = 7, .no_bias = true, .flatten = false})));
  EXPECT_EQ(fc.num_hidden, 7);
  EXPECT_TRUE(fc.no_bias);
  EXPECT_FALSE(fc.flatten);

  const auto conv = op::ConvolutionParam::Parse(attrs(sym::Convolution(x, {.kernel = {3, 5},
                                                                           .num_filter = 8,
                                                                           .stride = {2, 1},
                                                                           .dilate = {1, 2},
                                                                           .pad = {1, 0},
                                                                           .num_group = 4,
                                                                           .no_bias = true})));
  EXPECT_EQ(conv.kernel, Shape({3, 5}));
  EXPECT_EQ(conv.num_filter, 8);
  EXPECT_EQ(conv.stride, Shape({2, 1}));
  EXPECT_EQ(conv.dilate, Shape({1, 2}));
  EXPECT_EQ(conv.pad, Shape({1, 0}));
  EXPECT_EQ(conv.num_group, 4);
  EXPECT_TRUE(conv.no_bias);

  const auto pool = op::PoolingParam::Parse(
      attrs(sym::Pooling(x, {.kernel = {3, 3},
                             .pool_type = op::PoolType::kSum,
                             .global_pool = true,
                             .pooling_convention = op::PoolingConvention::kFull,
                             .stride = {2, 2},
                             .pad = {1, 1},
                             .count_include_pad = false})));
  EXPECT_EQ(pool.kernel, Shape({3, 3}));
  EXPECT_EQ(pool.pool_type, op::PoolType::kSum);
  EXPECT_TRUE(pool.global_pool);
  EXPECT_EQ(pool.pooling_convention, op::PoolingConvention::kFull);
  EXPECT_EQ(pool.stride, Shape({2, 2}));
  EXPECT_EQ(pool.pad, Shape({1, 1}));
  EXPECT_FALSE(pool.count_include_pad);
  // Global pooling without a kernel writes none (MXNet's "()" would not parse as 2-D).
  EXPECT_EQ(attrs(sym::Pooling(x, {.global_pool = true})).count("kernel"), 0u);

  const auto bn = op::BatchNormParam::Parse(attrs(sym::BatchNorm(x, {.eps = 2e-5f,
                                                                     .momentum = 0.8f,
                                                                     .fix_gamma = false,
                                                                     .use_global_stats = true,
                                                                     .output_mean_var = true})));
  EXPECT_FLOAT_EQ(bn.eps, 2e-5f);
  EXPECT_FLOAT_EQ(bn.momentum, 0.8f);
  EXPECT_FALSE(bn.fix_gamma);
  EXPECT_TRUE(bn.use_global_stats);
  EXPECT_TRUE(bn.output_mean_var);

  const auto drop = op::DropoutParam::Parse(
      attrs(sym::Dropout(x, {.p = 0.25f, .mode = op::DropoutMode::kAlways})));
  EXPECT_FLOAT_EQ(drop.p, 0.25f);
  EXPECT_EQ(drop.mode, op::DropoutMode::kAlways);
}

// MXNet's composition: net(data=other) replaces the variable; the rest of the graph is shared.
TEST(Symbol, ComposeReplacesVariablesByName) {
  Symbol head = sym::FullyConnected(Symbol::Variable("data"), {.num_hidden = 3}, "head");
  Symbol body = sym::Activation(
      sym::FullyConnected(Symbol::Variable("x"), {.num_hidden = 5}, "body"), "relu", "act");
  Symbol net = head.Compose({{"data", body}});
  EXPECT_EQ(net.ListArguments(),
            (Names{"x", "body_weight", "body_bias", "head_weight", "head_bias"}));
  const Symbol::Shapes shapes = net.InferShape({{"x", {4, 7}}});
  ASSERT_TRUE(shapes.complete);
  EXPECT_EQ(shapes.arguments[3], (Shape{3, 5}));
  EXPECT_EQ(shapes.outputs[0], (Shape{4, 3}));
  EXPECT_EQ(head.ListArguments(), (Names{"data", "head_weight", "head_bias"}));  // unchanged
  EXPECT_THROW(head.Compose({{"nothing", body}}), Error);
  EXPECT_THROW(head.Compose({{"data", Symbol::Group({body, body})}}), Error);
}

TEST(Symbol, GroupAndIndexing) {
  Symbol a = Symbol::Variable("a"), b = Symbol::Variable("b");
  Symbol g = Symbol::Group({a * 2.0, a + b});
  EXPECT_EQ(g.num_outputs(), 2u);
  EXPECT_EQ(g.ListArguments(), (Names{"a", "b"}));
  EXPECT_EQ(g[1].ListArguments(), (Names{"a", "b"}));
  EXPECT_THROW(g[2], Error);
}

TEST(Symbol, ArithmeticUsesMXNetsOps) {
  Symbol a = Symbol::Variable("a"), b = Symbol::Variable("b");
  Symbol c = 2 * a + b;
  EXPECT_EQ(c.outputs()[0].node->op, "elemwise_add");
  EXPECT_EQ(c.outputs()[0].node->inputs[0].node->op, "_mul_scalar");
  EXPECT_EQ(c.outputs()[0].node->inputs[0].node->attrs.at("scalar"), "2");
  EXPECT_EQ((1.0 - a).outputs()[0].node->op, "_rminus_scalar");
  EXPECT_EQ((a / b).outputs()[0].node->op, "elemwise_div");
}

TEST(Symbol, InferShapeFromAnySubset) {
  Symbol net = models::LeNet();
  Symbol::Shapes s = net.InferShape({{"data", {8, 1, 28, 28}}});
  ASSERT_TRUE(s.complete);
  const Names args = net.ListArguments();
  auto shape_of = [&](const std::string& n) {
    return s.arguments[std::find(args.begin(), args.end(), n) - args.begin()];
  };
  EXPECT_EQ(shape_of("conv1_weight"), Shape({20, 1, 5, 5}));
  EXPECT_EQ(shape_of("conv2_weight"), Shape({50, 20, 5, 5}));
  EXPECT_EQ(shape_of("fc1_weight"), Shape({500, 800}));
  EXPECT_EQ(shape_of("softmax_label"), Shape({8}));
  EXPECT_EQ(s.outputs[0], Shape({8, 10}));
  // Nothing known: nothing inferred, no error.
  Symbol::Shapes none = net.InferShape({});
  EXPECT_FALSE(none.complete);
}

TEST(Symbol, InferShapeConflictNamesTheNode) {
  Symbol a = Symbol::Variable("a"), b = Symbol::Variable("b");
  try {
    (a + b).InferShape({{"a", {2, 3}}, {"b", {3, 2}}});
    FAIL();
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("node '_plus"), std::string::npos) << what;
    EXPECT_NE(what.find("(3,2)"), std::string::npos) << what;
  }
  EXPECT_THROW(a.InferShape({{"c", {1}}}), Error);  // not an input
}

// Partly known shapes (0: an unknown dimension, MXNet 1.x's infer_shape_partial): each op fills
// what the known dims give, inputs merge dim by dim, and a known dim that differs is an error.
TEST(Symbol, InferShapePartial) {
  Symbol data = Symbol::Variable("data", {{"__shape__", "(1,0,0,0)"}});
  Symbol conv = Symbol::Create("Convolution", std::vector<Symbol>{data},
                               {{"kernel", "(7,7)"}, {"num_filter", "64"}, {"no_bias", "True"}});
  Symbol::Shapes s = conv.InferShape({});
  EXPECT_FALSE(s.complete);
  EXPECT_EQ(s.arguments[0], Shape({1, 0, 0, 0}));
  EXPECT_EQ(s.arguments[1], Shape({64, 0, 7, 7}));
  EXPECT_EQ(s.outputs[0], Shape({1, 64, 0, 0}));
  // (2, ?) + (?, 5): each side gives the other its dim.
  Symbol a = Symbol::Variable("a", {{"__shape__", "(2,0)"}});
  Symbol b = Symbol::Variable("b", {{"__shape__", "(0,5)"}});
  s = (a + b).InferShape({});
  EXPECT_TRUE(s.complete);
  EXPECT_EQ(s.arguments[0], Shape({2, 5}));
  EXPECT_EQ(s.arguments[1], Shape({2, 5}));
  EXPECT_THROW((a + b).InferShape({{"a", {2, 4}}}), Error);  // 4 against b's 5
  Symbol bn = Symbol::Create(
      "BatchNorm", std::vector<Symbol>{Symbol::Variable("x", {{"__shape__", "(0,3,4,4)"}})});
  s = bn.InferShape({});
  EXPECT_EQ(s.arguments[1], Shape({3}));  // gamma from the known channel count
  EXPECT_EQ(s.auxiliary[0], Shape({3}));
  EXPECT_EQ(s.outputs[0], Shape({0, 3, 4, 4}));
}

TEST(Symbol, CreateChecksArguments) {
  Symbol x = Symbol::Variable("x");
  EXPECT_THROW(Symbol::Create("Activation", std::map<std::string, Symbol>{{"weight", x}},
                              {{"act_type", "relu"}}, "act"),
               Error);
  EXPECT_THROW(Symbol::Create("Activation", std::vector<Symbol>{x, x}, {{"act_type", "relu"}}),
               Error);
}

TEST(Symbol, GetInternalsListsEveryOutput) {
  Symbol net = models::Mlp();
  Names internals = net.GetInternals().ListOutputs();
  EXPECT_NE(std::find(internals.begin(), internals.end(), "fc1_output"), internals.end());
  EXPECT_NE(std::find(internals.begin(), internals.end(), "relu2_output"), internals.end());
  EXPECT_NE(std::find(internals.begin(), internals.end(), "data"), internals.end());
}

}  // namespace
}  // namespace cohort
