// The attention softmax fusion (Note [Masked softmax fusion]): which chains binding fuses, and
// outputs and gradients equal bit for bit with COHORT_FUSE_OPS on and off, in float32 and under
// the bfloat16 and float16 AMP passes (Note [Masked softmax values]).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <utility>

#include "executor/executor.h"
#include "symbol/amp_convert.h"
#include "symbol/symbol.h"
#include "tests/executor/fusion_test_util.h"

namespace cohort {
namespace {

Symbol Op(const std::string& op, const std::vector<Symbol>& in, const op::Attrs& attrs = {},
          const std::string& name = "") {
  return Symbol::Create(op, in, attrs, name);
}

// 288 rows of 48: several of the CPU's blocks of rows and a partial one (Note [Masked softmax
// blocks]).
constexpr int64_t kBatch = 6, kTime = 48, kDim = 4;

// Attention weights of q and k over `mask`, applied to v: the GPT's chain.
Symbol Attention(const Symbol& mask, const op::Attrs& softmax_attrs = {{"axis", "-1"}}) {
  const Symbol q = Symbol::Variable("q"), k = Symbol::Variable("k"), v = Symbol::Variable("v");
  Symbol s = Op("batch_dot", {q, k}, {{"transpose_b", "True"}}, "scores");
  s = Op("_mul_scalar", {s}, {{"scalar", "0.35355339059327373"}}, "scale");
  s = Op("broadcast_add", {s, mask}, {}, "masked");
  s = Op("softmax", {s}, softmax_attrs, "weights");
  return Op("batch_dot", {s, v}, {}, "context");
}

// A causal mask of `shape` (the last two axes time × time, or 1 × time): -1e9 above the diagonal.
NDArray CausalMask(const Shape& shape) {
  const int64_t cols = shape[shape.ndim() - 1];
  std::vector<float> m(static_cast<size_t>(shape.Size()));
  for (size_t i = 0; i < m.size(); ++i) {
    const int64_t row = static_cast<int64_t>(i) / cols % kTime,
                  col = static_cast<int64_t>(i) % cols;
    m[i] = col > row ? -1e9f : 0.0f;
  }
  return NDArray::FromVector<float>(shape, m);
}

std::vector<float> Values(size_t n, uint32_t seed) { return testing::LcgValues(n, seed, 3.0f); }

using testing::CountOps;

struct Result {
  std::vector<std::vector<float>> values;  // the output, then the gradients of q, k, v
  size_t fused = 0, softmaxes = 0;
};

Result Train(const Symbol& net, const Shape& mask_shape, bool fuse, GradReq req,
             GradReq mask_req = GradReq::kNull) {
  setenv("COHORT_FUSE_OPS", fuse ? "1" : "0", 1);
  const Shape qk{kBatch, kTime, kDim};
  auto exec = Executor::SimpleBind(net, Context::CPU(),
                                   {{"q", qk}, {"k", qk}, {"v", qk}, {"mask", mask_shape}}, req,
                                   {{"mask", mask_req}});
  unsetenv("COHORT_FUSE_OPS");
  uint32_t seed = 1;
  for (const char* name : {"q", "k", "v"}) {
    NDArray::FromVector<float>(qk, Values(static_cast<size_t>(qk.Size()), seed++))
        .CopyTo(exec->arg_dict().at(name));
    if (req == GradReq::kAdd) {
      NDArray::FromVector<float>(qk, Values(static_cast<size_t>(qk.Size()), seed++))
          .CopyTo(exec->grad_dict().at(name));
    }
  }
  CausalMask(mask_shape).CopyTo(exec->arg_dict().at("mask"));
  exec->Forward(true);
  const Shape out = exec->outputs()[0].shape();
  exec->Backward({NDArray::FromVector<float>(out, Values(static_cast<size_t>(out.Size()), 9))});
  Result r;
  r.values.push_back(exec->outputs()[0].ToVector<float>());
  for (const char* name : {"q", "k", "v"}) {
    r.values.push_back(exec->grad_dict().at(name).ToVector<float>());
  }
  r.fused = CountOps(exec->optimized_symbol(), "_masked_softmax");
  r.softmaxes = CountOps(exec->optimized_symbol(), "softmax");
  return r;
}

TEST(MaskedSoftmaxFusion, FusedEqualsUnfusedBitForBitInFloat32AndTheHalfTypes) {
  const Symbol mask = Symbol::Variable("mask");
  const Symbol float32 = Attention(mask);
  const Symbol bfloat16 = ConvertToMixedPrecision(
      float32,
      AmpOptions{
          .target = DType::kBFloat16, .target_ops = {}, .float32_ops = {}, .excluded_names = {}});
  const Symbol float16 = ConvertToMixedPrecision(
      float32,
      AmpOptions{
          .target = DType::kFloat16, .target_ops = {}, .float32_ops = {}, .excluded_names = {}});
  // The AMP pass's chain has a cast on either side of the add and the softmax.
  ASSERT_EQ(CountOps(bfloat16, "amp_cast"), 6u);  // q, k, the scores, the weights, v, the output
  ASSERT_EQ(CountOps(float16, "amp_cast"), 6u);
  for (const Symbol* net : {&float32, &bfloat16, &float16}) {
    for (const Shape& mask_shape :
         {Shape{kTime, kTime}, Shape{1, 1, kTime}, Shape{kBatch, kTime, kTime}}) {
      for (GradReq req : {GradReq::kWrite, GradReq::kAdd}) {
        SCOPED_TRACE(::testing::Message()
                     << (net == &float32    ? "float32"
                         : net == &bfloat16 ? "bfloat16"
                                            : "float16")
                     << " mask " << mask_shape << (req == GradReq::kAdd ? " add" : ""));
        const Result fused = Train(*net, mask_shape, true, req);
        const Result plain = Train(*net, mask_shape, false, req);
        EXPECT_EQ(fused.fused, 1u);
        EXPECT_EQ(fused.softmaxes, 0u);
        EXPECT_EQ(plain.fused, 0u);
        EXPECT_EQ(fused.values, plain.values);
        // A masked-out position has no weight: the first query attends to the first key only,
        // so its context is v's first row (rounded to bfloat16 under AMP).
        for (int64_t c = 0; c < kDim; ++c) {
          const uint32_t v_seed = req == GradReq::kAdd ? 5 : 3;  // as Train draws them
          const float v0 = Values(static_cast<size_t>(kBatch * kTime * kDim), v_seed)[c];
          EXPECT_NEAR(fused.values[0][c], v0, std::abs(v0) * 1e-2f);
        }
      }
    }
  }
}

TEST(MaskedSoftmaxFusion, ChainsThatDoNotFitStayAsWritten) {
  const Symbol mask = Symbol::Variable("mask");
  const Shape square{kTime, kTime};
  // A mask that takes a gradient (the fused op computes none).
  EXPECT_EQ(Train(Attention(mask), square, true, GradReq::kWrite, GradReq::kWrite).fused, 0u);
  // A temperature, or another axis.
  EXPECT_EQ(Train(Attention(mask, {{"temperature", "2"}}), square, true, GradReq::kWrite).fused,
            0u);
  EXPECT_EQ(Train(Attention(mask, {{"temperature", "1.0"}}), square, true, GradReq::kWrite).fused,
            1u);
  // A mask that broadcasts along the last axis.
  EXPECT_EQ(Train(Attention(mask), Shape{kTime, 1}, true, GradReq::kWrite).fused, 0u);
  // An inner entry read elsewhere: the masked scores are also an output.
  const Symbol net = Attention(mask);
  Symbol masked;
  for (const auto& node : net.TopoOrder()) {
    if (node->name == "masked") masked = Symbol::FromEntries({{node, 0}});
  }
  const Symbol both = Symbol::Group({net, masked});
  setenv("COHORT_FUSE_OPS", "1", 1);
  const Shape qk{kBatch, kTime, kDim};
  auto exec = Executor::SimpleBind(both, Context::CPU(),
                                   {{"q", qk}, {"k", qk}, {"v", qk}, {"mask", square}},
                                   GradReq::kWrite, {{"mask", GradReq::kNull}});
  unsetenv("COHORT_FUSE_OPS");
  EXPECT_EQ(CountOps(exec->optimized_symbol(), "_masked_softmax"), 0u);
  setenv("COHORT_FUSE_OPS", "2", 1);
  EXPECT_THROW(Executor::SimpleBind(net, Context::CPU(),
                                    {{"q", qk}, {"k", qk}, {"v", qk}, {"mask", square}}),
               ConfigError);
  unsetenv("COHORT_FUSE_OPS");
}

// softmax(x · 0.5 + mask) over x and mask, as the op itself and as the chain it fuses.
std::pair<Symbol, Symbol> OpAndChain() {
  const Symbol x = Symbol::Variable("x"), mask = Symbol::Variable("mask");
  return {
      Op("_masked_softmax", {x, mask}, {{"scale", "0.5"}}, "weights"),
      Op("softmax", {Op("broadcast_add", {Op("_mul_scalar", {x}, {{"scalar", "0.5"}}), mask})})};
}

// The op as such (not only as the pass makes it) gives the mask its gradient too: the chain's,
// with the sums in another order.
TEST(MaskedSoftmaxFusion, TheMaskGradientIsTheChains) {
  const auto [fused, chain] = OpAndChain();
  const Shape shape{kBatch, kTime, kTime}, mask_shape{kTime, kTime};
  std::vector<std::vector<float>> results[2];
  for (int f = 0; f < 2; ++f) {
    for (GradReq req : {GradReq::kWrite, GradReq::kAdd}) {
      auto exec = Executor::SimpleBind(f ? fused : chain, Context::CPU(),
                                       {{"x", shape}, {"mask", mask_shape}}, req);
      // The chain stays unfused: its mask takes a gradient.
      ASSERT_EQ(CountOps(exec->optimized_symbol(), "_masked_softmax"), static_cast<size_t>(f));
      NDArray::FromVector<float>(shape, Values(static_cast<size_t>(shape.Size()), 1))
          .CopyTo(exec->arg_dict().at("x"));
      NDArray::FromVector<float>(mask_shape, Values(static_cast<size_t>(mask_shape.Size()), 2))
          .CopyTo(exec->arg_dict().at("mask"));
      exec->grad_dict().at("x").Fill(1);
      exec->grad_dict().at("mask").Fill(2);
      exec->Forward(true);
      exec->Backward(
          {NDArray::FromVector<float>(shape, Values(static_cast<size_t>(shape.Size()), 3))});
      results[f].push_back(exec->outputs()[0].ToVector<float>());
      results[f].push_back(exec->grad_dict().at("x").ToVector<float>());
      results[f].push_back(exec->grad_dict().at("mask").ToVector<float>());
    }
  }
  for (size_t i = 0; i < results[0].size(); ++i) {
    for (size_t j = 0; j < results[0][i].size(); ++j) {
      EXPECT_NEAR(results[1][i][j], results[0][i][j], 1e-5) << i << " " << j;
    }
  }
}

// float32 data with a bfloat16 output (the softmax's cast folded in): the op on the CPU's blocks
// (Note [Masked softmax blocks]) against the chain bound unfused, bit for bit, written and added.
TEST(MaskedSoftmaxFusion, Float32DataWithAHalfOutputIsTheChains) {
  const Symbol x = Symbol::Variable("x"), mask = Symbol::Variable("mask");
  const Symbol op = Op("_masked_softmax", {x, mask}, {{"scale", "0.5"}, {"out_dtype", "bfloat16"}});
  const Symbol chain = Op(
      "amp_cast",
      {Op("softmax", {Op("broadcast_add", {Op("_mul_scalar", {x}, {{"scalar", "0.5"}}), mask})})},
      {{"dtype", "bfloat16"}});
  const Shape shape{kBatch, kTime, kTime}, mask_shape{kTime, kTime};
  for (GradReq req : {GradReq::kWrite, GradReq::kAdd}) {
    std::vector<std::vector<float>> results[2];
    for (int f = 0; f < 2; ++f) {
      setenv("COHORT_FUSE_OPS", "0", 1);
      auto exec =
          Executor::SimpleBind(f ? op : chain, Context::CPU(), {{"x", shape}, {"mask", mask_shape}},
                               req, {{"mask", GradReq::kNull}});
      unsetenv("COHORT_FUSE_OPS");
      ASSERT_EQ(CountOps(exec->optimized_symbol(), "_masked_softmax"), static_cast<size_t>(f));
      NDArray::FromVector<float>(shape, Values(static_cast<size_t>(shape.Size()), 1))
          .CopyTo(exec->arg_dict().at("x"));
      CausalMask(mask_shape).CopyTo(exec->arg_dict().at("mask"));
      exec->grad_dict().at("x").Fill(0.25);
      exec->Forward(true);
      ASSERT_EQ(exec->outputs()[0].dtype(), DType::kBFloat16);
      exec->Backward(
          {NDArray::FromVector<float>(shape, Values(static_cast<size_t>(shape.Size()), 3))
               .AsType(DType::kBFloat16)});
      results[f].push_back(exec->outputs()[0].AsType(DType::kFloat32).ToVector<float>());
      results[f].push_back(exec->grad_dict().at("x").ToVector<float>());
    }
    EXPECT_EQ(results[1], results[0]) << (req == GradReq::kAdd ? "add" : "write");
  }
}

// A masked-out position weighs exactly 0, fused or not, and neither the weights nor the data's
// gradient hold a denormal: FastExp gives 0 below e^-87.3, where it gave e^-87.3 and the 1/Σ
// scaling made that denormal (every later multiplication with it a microcode assist).
TEST(MaskedSoftmaxFusion, MaskedPositionsWeighZeroAndNothingIsDenormal) {
  const auto [fused, chain] = OpAndChain();
  const Shape shape{kBatch, kTime, kTime}, mask_shape{kTime, kTime};
  for (const Symbol* net : {&fused, &chain}) {
    SCOPED_TRACE(net == &fused ? "fused" : "chain");
    auto exec = Executor::SimpleBind(*net, Context::CPU(), {{"x", shape}, {"mask", mask_shape}},
                                     GradReq::kWrite, {{"mask", GradReq::kNull}});
    NDArray::FromVector<float>(shape, Values(static_cast<size_t>(shape.Size()), 1))
        .CopyTo(exec->arg_dict().at("x"));
    CausalMask(mask_shape).CopyTo(exec->arg_dict().at("mask"));
    exec->Forward(true);
    exec->Backward(
        {NDArray::FromVector<float>(shape, Values(static_cast<size_t>(shape.Size()), 3))});
    const std::vector<float> weights = exec->outputs()[0].ToVector<float>();
    for (size_t i = 0; i < weights.size(); ++i) {
      const int64_t row = static_cast<int64_t>(i) / kTime % kTime,
                    col = static_cast<int64_t>(i) % kTime;
      if (col > row) {
        EXPECT_EQ(weights[i], 0.0f) << i;
      }
      EXPECT_NE(std::fpclassify(weights[i]), FP_SUBNORMAL) << i;
    }
    for (float g : exec->grad_dict().at("x").ToVector<float>()) {
      EXPECT_NE(std::fpclassify(g), FP_SUBNORMAL);
    }
  }
}

}  // namespace
}  // namespace cohort
