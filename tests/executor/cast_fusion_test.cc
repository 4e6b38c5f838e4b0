// Mixed precision's casts folded into their neighbours (Notes [LayerNorm cast fusion] and
// [Widening add fusion]): which nodes binding fuses, and outputs and gradients equal bit for bit
// with COHORT_FUSE_OPS on and off under the bfloat16 and float16 AMP passes, on the CPU and on a
// GPU when one is visible.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>

#include "executor/executor.h"
#include "ndarray/device_api.h"
#include "symbol/amp_convert.h"
#include "symbol/symbol.h"
#include "tests/executor/fusion_test_util.h"

namespace cohort {
namespace {

const Shape kX{6, 5, 16};  // batch, time, d_model

// LayerNorm over d_model, then a FullyConnected of it (a transformer block's first half); with
// `residual` the normalized values are also added to the layer's output, a second reader.
Symbol Block(bool residual) {
  const Symbol x = Symbol::Variable("x");
  const Symbol ln = Symbol::Create("LayerNorm", {x}, {{"axis", "-1"}}, "ln");
  const Symbol fc =
      Symbol::Create("FullyConnected", {ln}, {{"num_hidden", "16"}, {"flatten", "False"}}, "fc");
  return residual ? Symbol::Create("elemwise_add", std::vector<Symbol>{fc, ln}, {}, "residual")
                  : fc;
}

// A FullyConnected added to its input (a residual connection): under AMP the layer's output is
// widened for the add. With `tapped` the widened output is also a graph output.
Symbol Residual(bool tapped) {
  const Symbol x = Symbol::Variable("x");
  const Symbol fc =
      Symbol::Create("FullyConnected", {x}, {{"num_hidden", "16"}, {"flatten", "False"}}, "fc");
  const Symbol sum = Symbol::Create("elemwise_add", std::vector<Symbol>{x, fc}, {}, "residual");
  return tapped ? Symbol::Group({sum, fc}) : sum;
}

Symbol Amp(const Symbol& net, DType dtype) {
  return ConvertToMixedPrecision(
      net, AmpOptions{.target = dtype, .target_ops = {}, .float32_ops = {}, .excluded_names = {}});
}

std::vector<float> Values(size_t n, uint32_t seed) { return testing::LcgValues(n, seed, 2.0f); }

using testing::CountOps;

using OpCounts = std::map<std::string, size_t>;

struct Result {
  std::vector<std::vector<float>> values;  // the output, then every argument's gradient
  OpCounts ops;                            // the bound graph's nodes by op
};

Result Train(const Symbol& net, const Context& ctx, bool fuse, GradReq req) {
  setenv("COHORT_FUSE_OPS", fuse ? "1" : "0", 1);
  auto exec = Executor::SimpleBind(net, ctx, {{"x", kX}}, req);
  unsetenv("COHORT_FUSE_OPS");
  uint32_t seed = 1;
  const std::vector<std::string> args = net.ListArguments();
  for (const std::string& name : args) {
    const NDArray& arg = exec->arg_dict().at(name);
    NDArray::FromVector<float>(arg.shape(), Values(static_cast<size_t>(arg.size()), seed++))
        .CopyTo(arg);
    if (req == GradReq::kAdd) {
      const NDArray& grad = exec->grad_dict().at(name);
      NDArray::FromVector<float>(grad.shape(), Values(static_cast<size_t>(grad.size()), seed++))
          .CopyTo(grad);
    }
  }
  exec->Forward(true);
  const Shape out = exec->outputs()[0].shape();
  exec->Backward(
      {NDArray::FromVector<float>(out, Values(static_cast<size_t>(out.Size()), 99)).CopyTo(ctx)});
  Result r;
  r.values.push_back(exec->outputs()[0].CopyTo(Context::CPU()).ToVector<float>());
  for (const std::string& name : args) {
    r.values.push_back(exec->grad_dict().at(name).CopyTo(Context::CPU()).ToVector<float>());
  }
  for (const auto& node : exec->optimized_symbol().TopoOrder()) ++r.ops[node->op];
  return r;
}

std::vector<Context> Contexts() {
  std::vector<Context> contexts = {Context::CPU()};
  if (device::Count() > 0) contexts.push_back(Context::GPU(0));
  return contexts;
}

// `float32_net` under the bfloat16 and float16 AMP passes (4 casts each), trained with fusion on
// and off, on each context, gradients written and added: the same values bit for bit, the bound
// graphs holding the ops counted in `fused_ops` and `plain_ops`; and not vacuously (the
// low-precision output differs from float32's, whose graph has no `fused_op`).
void ExpectFusedEqualsUnfused(const Symbol& float32_net, const std::string& fused_op,
                              const OpCounts& fused_ops, const OpCounts& plain_ops) {
  for (const Context& ctx : Contexts()) {
    for (DType dtype : {DType::kBFloat16, DType::kFloat16}) {
      const Symbol net = Amp(float32_net, dtype);
      ASSERT_EQ(CountOps(net, "amp_cast"), 4u);
      for (GradReq req : {GradReq::kWrite, GradReq::kAdd}) {
        SCOPED_TRACE(::testing::Message()
                     << ctx << " " << dtype << (req == GradReq::kAdd ? " add" : " write"));
        Result fused = Train(net, ctx, true, req);
        Result plain = Train(net, ctx, false, req);
        for (const auto& [op, n] : fused_ops) EXPECT_EQ(fused.ops[op], n) << op << " fused";
        for (const auto& [op, n] : plain_ops) EXPECT_EQ(plain.ops[op], n) << op << " unfused";
        EXPECT_EQ(fused.values, plain.values);
        Result float32 = Train(float32_net, ctx, true, req);
        EXPECT_EQ(float32.ops[fused_op], 0u);
        EXPECT_NE(fused.values[0], float32.values[0]);
      }
    }
  }
}

TEST(LayerNormCastFusion, FusedEqualsUnfusedBitForBit) {
  // Casts of the LayerNorm's output, the weight, the bias and the output; the first is folded.
  ExpectFusedEqualsUnfused(Block(false), "_layer_norm",
                           {{"_layer_norm", 1}, {"LayerNorm", 0}, {"amp_cast", 3}},
                           {{"_layer_norm", 0}, {"LayerNorm", 1}});
  if (Contexts().size() == 1) GTEST_SKIP() << "no GPU visible (CPU cases passed)";
}

TEST(LayerNormCastFusion, ALayerNormReadElsewhereStaysAsWritten) {
  // The normalized values also feed the residual add: the float32 output is needed.
  Result r = Train(Amp(Block(true), DType::kBFloat16), Context::CPU(), true, GradReq::kWrite);
  EXPECT_EQ(r.ops["_layer_norm"], 0u);
  EXPECT_EQ(r.ops["LayerNorm"], 1u);
  // float32 graphs have no cast to fold.
  EXPECT_EQ(Train(Block(false), Context::CPU(), true, GradReq::kWrite).ops["_layer_norm"], 0u);
}

TEST(WideningAddFusion, FusedEqualsUnfusedBitForBit) {
  // x, the weight and the bias narrowed for the layer, its output widened for the add (folded).
  ExpectFusedEqualsUnfused(Residual(false), "_widening_add",
                           {{"_widening_add", 1}, {"amp_cast", 3}}, {{"_widening_add", 0}});
  if (Contexts().size() == 1) GTEST_SKIP() << "no GPU visible (CPU cases passed)";
}

TEST(WideningAddFusion, AWideningReadElsewhereStaysAsWritten) {
  // The widened layer output is also a graph output: the cast stays, and so does the add.
  setenv("COHORT_FUSE_OPS", "1", 1);
  auto exec = Executor::SimpleBind(Amp(Residual(true), DType::kBFloat16), Context::CPU(),
                                   {{"x", kX}}, GradReq::kWrite);
  unsetenv("COHORT_FUSE_OPS");
  EXPECT_EQ(CountOps(exec->optimized_symbol(), "_widening_add"), 0u);
  EXPECT_EQ(CountOps(exec->optimized_symbol(), "amp_cast"), 4u);
}

}  // namespace
}  // namespace cohort
