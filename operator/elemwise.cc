// Elementwise arithmetic on the CPU: elemwise_add/_sub/_mul/_div on equal shapes, and the scalar
// forms (_plus_scalar, _minus_scalar, _rminus_scalar, _mul_scalar, _div_scalar, _rdiv_scalar),
// with elemwise.h's functions.
#include "operator/elemwise.h"
#include "operator/common/kernel_util.h"

namespace cohort::op {

// elemwise.cu (Note [GPU kernels]); `in` is null unless backward reads the input.
void BinaryForwardGpu(const OpContext& ctx, BinaryKind kind, const NDArray& lhs, const NDArray& rhs,
                      const NDArray& out);
void BinaryBackwardGpu(const OpContext& ctx, BinaryKind kind, const NDArray& out_grad,
                       const std::vector<NDArray>& in, const std::vector<GradReq>& req,
                       const std::vector<NDArray>& in_grad);
void ScalarForwardGpu(const OpContext& ctx, ScalarKind kind, float scalar, const NDArray& in,
                      const NDArray& out);
void ScalarBackwardGpu(const OpContext& ctx, ScalarKind kind, float scalar, GradReq req,
                       const NDArray& out_grad, const NDArray* in, const NDArray& in_grad);

namespace {

// One loop per kind, the kind a constant inside it (vectorized, no dispatch per element).
template <BinaryKind kKind>
[[gnu::always_inline]] inline void BinaryLoop(int64_t n, const float* a, const float* b, float* y) {
  COHORT_ELEMENTWISE
  for (int64_t i = 0; i < n; ++i) y[i] = BinaryValue(kKind, a[i], b[i]);
}
template <ScalarKind kKind>
[[gnu::always_inline]] inline void ScalarLoop(int64_t n, const float* x, float s, float* y) {
  COHORT_ELEMENTWISE
  for (int64_t i = 0; i < n; ++i) y[i] = ScalarValue(kKind, x[i], s);
}
// The gradients likewise, the kind (and the side, the request) fixed outside the loop.
template <BinaryKind kKind>
void BinaryGradLoop(GradReq req, int side, int64_t n, const float* dy, const float* a,
                    const float* b, float* dx) {
  if (side == 0) {
    WriteGrad(req, n, dx, [&](int64_t i) { return BinaryGrad(kKind, 0, dy[i], a, b, i); });
  } else {
    WriteGrad(req, n, dx, [&](int64_t i) { return BinaryGrad(kKind, 1, dy[i], a, b, i); });
  }
}
void BinaryGradCpu(BinaryKind kind, GradReq req, int side, int64_t n, const float* dy,
                   const float* a, const float* b, float* dx) {
  switch (kind) {
    case BinaryKind::kAdd: return BinaryGradLoop<BinaryKind::kAdd>(req, side, n, dy, a, b, dx);
    case BinaryKind::kSub: return BinaryGradLoop<BinaryKind::kSub>(req, side, n, dy, a, b, dx);
    case BinaryKind::kMul: return BinaryGradLoop<BinaryKind::kMul>(req, side, n, dy, a, b, dx);
    case BinaryKind::kDiv: return BinaryGradLoop<BinaryKind::kDiv>(req, side, n, dy, a, b, dx);
  }
}
template <ScalarKind kKind>
void ScalarGradLoop(GradReq req, int64_t n, const float* dy, const float* x, float s, float* dx) {
  WriteGrad(req, n, dx, [&](int64_t i) { return ScalarGrad(kKind, dy[i], x, s, i); });
}

class Binary : public Operator {
 public:
  Binary(BinaryKind kind, const std::string& name, const Attrs& attrs) : kind_(kind) {
    ParamReader(name, attrs).Finish();
  }
  std::vector<std::string> ListArguments() const override { return {"lhs", "rhs"}; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    for (int pass = 0; pass < 2; ++pass) {  // any known shape determines the other two
      AssignShape(out[0], in[0], type(), "output");
      AssignShape(out[0], in[1], type(), "output");
      AssignShape(in[0], out[0], type(), "lhs");
      AssignShape(in[1], out[0], type(), "rhs");
    }
    return ShapeKnown(out[0]);
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(ctx, BinaryForwardGpu(ctx, kind_, in[0], in[1], out[0]));
    const float* a = F(in[0]);
    const float* b = F(in[1]);
    float* y = F(out[0]);
    const int64_t n = out[0].size();
    switch (kind_) {
      case BinaryKind::kAdd: return BinaryLoop<BinaryKind::kAdd>(n, a, b, y);
      case BinaryKind::kSub: return BinaryLoop<BinaryKind::kSub>(n, a, b, y);
      case BinaryKind::kMul: return BinaryLoop<BinaryKind::kMul>(n, a, b, y);
      case BinaryKind::kDiv: return BinaryLoop<BinaryKind::kDiv>(n, a, b, y);
    }
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>& in, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(ctx, BinaryBackwardGpu(ctx, kind_, out_grad[0], in, req, in_grad));
    const float* dy = F(out_grad[0]);
    const int64_t n = out_grad[0].size();
    const float* a = BackwardNeedsInputs() ? F(in[0]) : nullptr;
    const float* b = BackwardNeedsInputs() ? F(in[1]) : nullptr;
    for (int side = 0; side < 2; ++side) {
      if (req[side] == GradReq::kNull) continue;
      float* dx = F(in_grad[side]);
      BinaryGradCpu(kind_, req[side], side, n, dy, a, b, dx);
    }
  }

  bool BackwardNeedsInputs() const override { return BinaryGradReadsInputs(kind_); }
  bool BackwardNeedsOutputs() const override { return false; }
  std::vector<std::pair<int, int>> ForwardInplace() const override { return {{0, 0}, {1, 0}}; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

 private:
  BinaryKind kind_;
};

class Scalar : public Operator {
 public:
  Scalar(ScalarKind kind, const std::string& name, const Attrs& attrs) : kind_(kind) {
    ParamReader r(name, attrs);
    scalar_ = static_cast<float>(r.Float("scalar", 1.0));
    r.Bool("is_int", false);  // MXNet 1.9 records whether the scalar was an integer
    r.Finish();
  }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    return InferSameShape(in, out, type());
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(ctx, ScalarForwardGpu(ctx, kind_, scalar_, in[0], out[0]));
    const float* x = F(in[0]);
    float* y = F(out[0]);
    const int64_t n = out[0].size();
    const float s = scalar_;
    switch (kind_) {
      case ScalarKind::kPlus: return ScalarLoop<ScalarKind::kPlus>(n, x, s, y);
      case ScalarKind::kMinus: return ScalarLoop<ScalarKind::kMinus>(n, x, s, y);
      case ScalarKind::kRMinus: return ScalarLoop<ScalarKind::kRMinus>(n, x, s, y);
      case ScalarKind::kMul: return ScalarLoop<ScalarKind::kMul>(n, x, s, y);
      case ScalarKind::kDiv: return ScalarLoop<ScalarKind::kDiv>(n, x, s, y);
      case ScalarKind::kRDiv: return ScalarLoop<ScalarKind::kRDiv>(n, x, s, y);
      case ScalarKind::kMaximum: return ScalarLoop<ScalarKind::kMaximum>(n, x, s, y);
      case ScalarKind::kMinimum: return ScalarLoop<ScalarKind::kMinimum>(n, x, s, y);
    }
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>& in, const std::vector<NDArray>&,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    if (req[0] == GradReq::kNull) return;
    COHORT_GPU_DISPATCH(ctx,
                        ScalarBackwardGpu(ctx, kind_, scalar_, req[0], out_grad[0],
                                          BackwardNeedsInputs() ? &in[0] : nullptr, in_grad[0]));
    const float* dy = F(out_grad[0]);
    const float* x = BackwardNeedsInputs() ? F(in[0]) : nullptr;
    float* dx = F(in_grad[0]);
    const int64_t n = out_grad[0].size();
    const GradReq r = req[0];
    const float s = scalar_;
    switch (kind_) {
      case ScalarKind::kPlus: return ScalarGradLoop<ScalarKind::kPlus>(r, n, dy, x, s, dx);
      case ScalarKind::kMinus: return ScalarGradLoop<ScalarKind::kMinus>(r, n, dy, x, s, dx);
      case ScalarKind::kRMinus: return ScalarGradLoop<ScalarKind::kRMinus>(r, n, dy, x, s, dx);
      case ScalarKind::kMul: return ScalarGradLoop<ScalarKind::kMul>(r, n, dy, x, s, dx);
      case ScalarKind::kDiv: return ScalarGradLoop<ScalarKind::kDiv>(r, n, dy, x, s, dx);
      case ScalarKind::kRDiv: return ScalarGradLoop<ScalarKind::kRDiv>(r, n, dy, x, s, dx);
      case ScalarKind::kMaximum: return ScalarGradLoop<ScalarKind::kMaximum>(r, n, dy, x, s, dx);
      case ScalarKind::kMinimum: return ScalarGradLoop<ScalarKind::kMinimum>(r, n, dy, x, s, dx);
    }
  }

  bool BackwardNeedsInputs() const override { return ScalarGradReadsInput(kind_); }
  bool BackwardNeedsOutputs() const override { return false; }
  std::vector<std::pair<int, int>> ForwardInplace() const override { return {{0, 0}}; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

 private:
  ScalarKind kind_;
  float scalar_;
};

}  // namespace

void RegisterElemwise(OpRegistry& r) {
  const std::pair<const char*, BinaryKind> binary[] = {{"elemwise_add", BinaryKind::kAdd},
                                                       {"elemwise_sub", BinaryKind::kSub},
                                                       {"elemwise_mul", BinaryKind::kMul},
                                                       {"elemwise_div", BinaryKind::kDiv}};
  for (auto [name, kind] : binary) {
    std::string n = name;
    r.Register(n, [k = kind, n](const Attrs& a) { return std::make_unique<Binary>(k, n, a); });
  }
  for (auto [alias, name] : {std::pair{"_Plus", "elemwise_add"},
                             {"_plus", "elemwise_add"},
                             {"_add", "elemwise_add"},
                             {"_Minus", "elemwise_sub"},
                             {"_minus", "elemwise_sub"},
                             {"_sub", "elemwise_sub"},
                             {"_Mul", "elemwise_mul"},
                             {"_mul", "elemwise_mul"},
                             {"_Div", "elemwise_div"},
                             {"_div", "elemwise_div"}}) {
    r.Alias(alias, name);
  }
  const std::pair<const char*, ScalarKind> scalar[] = {
      {"_plus_scalar", ScalarKind::kPlus},     {"_minus_scalar", ScalarKind::kMinus},
      {"_rminus_scalar", ScalarKind::kRMinus}, {"_mul_scalar", ScalarKind::kMul},
      {"_div_scalar", ScalarKind::kDiv},       {"_rdiv_scalar", ScalarKind::kRDiv},
      {"_maximum_scalar", ScalarKind::kMaximum}, {"_minimum_scalar", ScalarKind::kMinimum}};
  for (auto [name, kind] : scalar) {
    std::string n = name;
    r.Register(n, [k = kind, n](const Attrs& a) { return std::make_unique<Scalar>(k, n, a); });
  }
  for (auto [alias, name] : {std::pair{"_PlusScalar", "_plus_scalar"},
                             {"_MinusScalar", "_minus_scalar"},
                             {"_RMinusScalar", "_rminus_scalar"},
                             {"_MulScalar", "_mul_scalar"},
                             {"_DivScalar", "_div_scalar"},
                             {"_MaximumScalar", "_maximum_scalar"},
                             {"_MinimumScalar", "_minimum_scalar"},
                             {"_RDivScalar", "_rdiv_scalar"}}) {
    r.Alias(alias, name);
  }
}

}  // namespace cohort::op
