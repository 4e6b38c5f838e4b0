// Symbol::EliminateCommonExpr (MXNet's MXNET_ELIMINATE_COMMON_EXPR pass) and the executor that
// binds its result: which nodes merge, the copies of outputs that became one, and equal
// values and gradients with the pass on and off.
#include <gtest/gtest.h>

#include <cstdlib>

#include "executor/executor.h"
#include "symbol/symbol.h"

namespace cohort {
namespace {

size_t NodesOf(const Symbol& s) { return s.TopoOrder().size(); }

Symbol Op(const std::string& op, const std::vector<Symbol>& in, const op::Attrs& attrs = {}) {
  return Symbol::Create(op, in, attrs);
}

TEST(CommonExpr, EqualNodesMergeOthersStay) {
  Symbol a = Symbol::Variable("a"), b = Symbol::Variable("b"), c = Symbol::Variable("c");
  EXPECT_EQ(NodesOf(((a + 5.0) + (a + 5.0)).EliminateCommonExpr()),
            NodesOf((a + 5.0) + (a + 5.0)) - 1);
  EXPECT_EQ(NodesOf(((a + 1.0) + (a + 2.0)).EliminateCommonExpr()), 4u);  // other scalars
  EXPECT_EQ(NodesOf(((a + b) + (b + a)).EliminateCommonExpr()), 5u);      // other input order
  // Merging cascades: the two (a+b)+c are one once their a+b are.
  Symbol deep = ((a + b) + c) + ((a + b) + c);
  EXPECT_EQ(NodesOf(deep.EliminateCommonExpr()), NodesOf(deep) - 2);
  EXPECT_EQ(deep.EliminateCommonExpr().ListArguments(), deep.ListArguments());
  // Random draws, losses (which ignore their head gradient) and ops with state stay apart.
  Symbol drop = Op("Dropout", {a}) + Op("Dropout", {a});
  EXPECT_EQ(NodesOf(drop.EliminateCommonExpr()), NodesOf(drop));
  Symbol losses = Symbol::Group({Op("MakeLoss", {a}), Op("MakeLoss", {a})});
  EXPECT_EQ(NodesOf(losses.EliminateCommonExpr()), NodesOf(losses));
  Symbol bn = Symbol::Create("BatchNorm",
                             std::map<std::string, Symbol>{{"data", a}, {"gamma", b}, {"beta", c}},
                             {}, "bn1");
  Symbol bn2 = Symbol::Create("BatchNorm",
                              std::map<std::string, Symbol>{{"data", a}, {"gamma", b}, {"beta", c}},
                              {}, "bn2");
  EXPECT_EQ(NodesOf((bn + bn2).EliminateCommonExpr()), NodesOf(bn + bn2));
}

TEST(CommonExpr, OutputsThatBecomeOneAreCopied) {
  Symbol a = Symbol::Variable("a");
  Symbol d = a + 1.0;
  Symbol first = a * d;
  Symbol twice = Symbol::Group({first, a * d}).EliminateCommonExpr();
  ASSERT_EQ(twice.num_outputs(), 2u);
  EXPECT_EQ(twice.outputs()[0].node.get(), first.outputs()[0].node.get());
  EXPECT_EQ(twice.outputs()[1].node->op, "_copy");
  EXPECT_EQ(twice.outputs()[1].node->name, first.name() + "_0_copy");
  EXPECT_EQ(twice.outputs()[1].node->inputs[0].node.get(), first.outputs()[0].node.get());
  EXPECT_EQ(NodesOf(twice), 4u);  // a, d, a*d and the copy: as many as before
}

// The executor runs the merged graph unless MXNET_ELIMINATE_COMMON_EXPR=0, with the same outputs
// and gradients (kWrite and kAdd) either way.
TEST(CommonExpr, ExecutorRunsTheMergedGraphWithEqualResults) {
  Symbol a = Symbol::Variable("a"), b = Symbol::Variable("b");
  Symbol net = Symbol::Group({(a * b + 5.0) * (a * b + 5.0), a * b + 5.0});
  std::vector<std::vector<float>> results[2];
  for (int on = 0; on < 2; ++on) {
    setenv("MXNET_ELIMINATE_COMMON_EXPR", on ? "1" : "0", 1);
    for (GradReq req : {GradReq::kWrite, GradReq::kAdd}) {
      auto exec = Executor::SimpleBind(net, Context::CPU(), {{"a", {3}}, {"b", {3}}}, req);
      EXPECT_EQ(NodesOf(exec->optimized_symbol()), on ? 5u : 9u);
      NDArray::FromVector<float>({3}, {1, -2, 0.5f}).CopyTo(exec->arg_dict().at("a"));
      NDArray::FromVector<float>({3}, {3, 0.25f, -1}).CopyTo(exec->arg_dict().at("b"));
      exec->grad_dict().at("a").Fill(1);
      exec->grad_dict().at("b").Fill(1);
      exec->Forward(true);
      exec->Backward({NDArray::Full({3}, 1.0), NDArray::Full({3}, 2.0)});
      for (const NDArray& out : exec->outputs()) results[on].push_back(out.ToVector<float>());
      results[on].push_back(exec->grad_dict().at("a").ToVector<float>());
      results[on].push_back(exec->grad_dict().at("b").ToVector<float>());
    }
  }
  unsetenv("MXNET_ELIMINATE_COMMON_EXPR");
  EXPECT_EQ(results[0], results[1]);
  // d/da of (ab+5)² + 2(ab+5) = (2(ab+5) + 2) b at a=1, b=3: (16 + 2) · 3 = 54 (kWrite).
  EXPECT_FLOAT_EQ(results[1][2][0], 54.0f);
  setenv("MXNET_ELIMINATE_COMMON_EXPR", "yes", 1);
  EXPECT_THROW(Executor::SimpleBind(net, Context::CPU(), {{"a", {3}}, {"b", {3}}}), ConfigError);
  unsetenv("MXNET_ELIMINATE_COMMON_EXPR");
}

}  // namespace
}  // namespace cohort
