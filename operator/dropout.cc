// Dropout on the CPU: in training, zeroes each element with probability p and scales the rest by
// 1/(1-p); the mask (dropout.h's hash, as on the GPU) is a hidden output that backward reads.
// Seeded per forward by the executor.
#include "operator/dropout.h"
#include "operator/common/exact_math.h"
#include "operator/common/kernel_util.h"

namespace cohort::op {

// dropout.cu (Note [GPU kernels]).
void DropoutForwardGpu(const OpContext& ctx, const DropoutParam& p, const NDArray& in,
                       const NDArray& out, const NDArray& mask);
void DropoutBackwardGpu(const OpContext& ctx, GradReq req, const NDArray& out_grad,
                        const NDArray& mask, const NDArray& in_grad);

DropoutParam DropoutParam::Parse(const Attrs& attrs) {
  ParamReader r("Dropout", attrs);
  DropoutParam p;
  p.p = static_cast<float>(r.Float("p"));
  p.mode = r.EnumValue<DropoutMode>("mode", kDropoutModeNames);
  const Shape axes = r.Tuple("axes");
  r.OptionalBool("cudnn_off");
  r.Finish();
  COHORT_CHECK(p.p >= 0 && p.p < 1) << "Dropout: p=" << p.p << " must be in [0, 1)";
  COHORT_CHECK_EQ(axes.ndim(), 0) << "Dropout: axes are not supported";
  return p;
}

Attrs DropoutParam::ToAttrs() const {
  return {{"p", AttrText(p)}, {"mode", kDropoutModeNames[static_cast<int>(mode)]}};
}

namespace {

class Dropout : public Operator {
 public:
  explicit Dropout(const Attrs& attrs) : p_(DropoutParam::Parse(attrs)) {}

  std::vector<std::string> ListOutputs() const override { return {"output", "mask"}; }
  int NumVisibleOutputs() const override { return 1; }
  bool IsDeterministic() const override { return false; }
  bool TakesDType(DType dtype) const override { return IsFloatingPoint(dtype); }
  bool BackwardNeedsInputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    AssignShape(out[0], in[0], "Dropout", "output");
    AssignShape(out[1], in[0], "Dropout", "mask");
    return ShapeKnown(in[0]);
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(ctx, DropoutForwardGpu(ctx, p_, in[0], out[0], out[1]));
    DispatchFloating(type(), in[0].dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* x = in[0].data<T>();
      T* y = out[0].data<T>();
      T* mask = out[1].data<T>();
      const int64_t n = in[0].size();
      if (!p_.Active(ctx.is_train)) {
        for (int64_t i = 0; i < n; ++i) {
          mask[i] = ConvertValue<T>(1.0f);
          y[i] = x[i];
        }
        return;
      }
      const DropoutMask draw(ctx.seed, p_.p);
      const int64_t offset = DropoutMask::ElementOffset(ctx, n);
      for (int64_t i = 0; i < n; ++i) {
        mask[i] = ConvertValue<T>(draw.At(offset + i));
        y[i] = DropoutValue(x[i], mask[i]);
      }
    });
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>&, const std::vector<NDArray>& out,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    if (req[0] == GradReq::kNull) return;
    COHORT_GPU_DISPATCH(ctx, DropoutBackwardGpu(ctx, req[0], out_grad[0], out[1], in_grad[0]));
    DispatchFloating(type(), out_grad[0].dtype(), [&](auto tag) {
      using T = decltype(tag);
      using C = ComputeType<T>;
      const T* dy = out_grad[0].data<T>();
      const T* mask = out[1].data<T>();
      T* dx = in_grad[0].data<T>();
      for (int64_t i = 0; i < in_grad[0].size(); ++i) {
        AssignReq(req[0], dx, i, ConvertValue<C>(dy[i]) * ConvertValue<C>(mask[i]));
      }
    });
  }

 private:
  DropoutParam p_;
};

}  // namespace

namespace {

// What this file's operators take (Note [Operator specs], operator/common/operator.cc).
std::vector<OpSpec> Specs() {
  return {
      {"Dropout",
       "Applies dropout operation to input array.",
       {"data"},
       "",
       {{"p", "float", "0.5", "Fraction of the input that gets dropped out during training time."},
        {"mode", "{'always', 'training'}", "training",
         "Whether to only turn on dropout during training or to also turn on for inference."},
        {"axes", "Shape(tuple)", "[]", "Axes for variational dropout kernel."},
        {"cudnn_off", "boolean or None", "0",
         "Whether to turn off cudnn in dropout operator. This option is ignored if axes is "
         "specified."}}},
  };
}

}  // namespace

void RegisterDropout(OpRegistry& r) {
  for (OpSpec& spec : Specs()) r.Declare(std::move(spec));
  r.Register("Dropout", [](const Attrs& a) { return std::make_unique<Dropout>(a); });
}

}  // namespace cohort::op
