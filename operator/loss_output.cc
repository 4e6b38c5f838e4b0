// Loss layers on the CPU, which start backward themselves: SoftmaxOutput,
// LinearRegressionOutput, LogisticRegressionOutput, MAERegressionOutput, MakeLoss; and BlockGrad,
// which stops it. The math is loss_output.h's.
#include "operator/loss_output.h"
#include "operator/common/kernel_util.h"

namespace cohort::op {

// loss_output.cu (Note [GPU kernels]).
void SoftmaxOutputForwardGpu(const OpContext& ctx, const SoftmaxOutputRows& rows, int64_t outer,
                             int64_t inner);
void SoftmaxOutputBackwardGpu(const OpContext& ctx, const SoftmaxOutputParam& p, const NDArray& out,
                              const NDArray& label, const std::vector<GradReq>& req,
                              const std::vector<NDArray>& in_grad, int64_t outer, int64_t size,
                              int64_t inner);
void RegressionOutputForwardGpu(const OpContext& ctx, RegressionKind kind, const NDArray& in,
                                const NDArray& out);
void RegressionOutputBackwardGpu(const OpContext& ctx, RegressionKind kind, float grad_scale,
                                 const NDArray& out, const NDArray& label,
                                 const std::vector<GradReq>& req,
                                 const std::vector<NDArray>& in_grad);
void LossIdentityForwardGpu(const OpContext& ctx, const NDArray& in, const NDArray& out);
void MakeLossBackwardGpu(const OpContext& ctx, const MakeLossParam& p, GradReq req,
                         const NDArray& out, const NDArray& in_grad);
void BlockGradBackwardGpu(const OpContext& ctx, GradReq req, const NDArray& in_grad);

LossNormalization ParseLossNormalization(ParamReader& r) {
  const std::string n = r.Enum("normalization");
  return n == "batch"   ? LossNormalization::kBatch
         : n == "valid" ? LossNormalization::kValid
                        : LossNormalization::kNull;
}

SoftmaxOutputParam SoftmaxOutputParam::Parse(const Attrs& attrs) {
  ParamReader r("SoftmaxOutput", attrs);
  SoftmaxOutputParam p;
  p.grad_scale = static_cast<float>(r.Float("grad_scale"));
  p.ignore_label = static_cast<float>(r.Float("ignore_label"));
  p.multi_output = r.Bool("multi_output");
  p.use_ignore = r.Bool("use_ignore");
  p.preserve_shape = r.Bool("preserve_shape");
  p.normalization = ParseLossNormalization(r);
  // out_grad=True multiplies MXNet's gradient by the head gradient of the output; not
  // implemented, so refused rather than read and ignored.
  COHORT_CHECK(!r.Bool("out_grad"))
      << "SoftmaxOutput: out_grad=True (scaling by the output's head gradient) is not supported";
  p.smooth_alpha = static_cast<float>(r.Float("smooth_alpha"));
  r.Finish();
  return p;
}

MakeLossParam MakeLossParam::Parse(const Attrs& attrs) {
  ParamReader r("MakeLoss", attrs);
  MakeLossParam p;
  p.grad_scale = static_cast<float>(r.Float("grad_scale"));
  p.valid_thresh = static_cast<float>(r.Float("valid_thresh"));
  p.normalization = ParseLossNormalization(r);
  r.Finish();
  return p;
}

namespace {

// SoftmaxOutput's rows built for AVX2 and AVX-512 too (Note [CPU clones]).
COHORT_CPU_CLONES void RunSoftmaxOutputRows(const SoftmaxOutputRows& body, int64_t first,
                                            int64_t last, int64_t size, int64_t inner) {
  RunRows(body, first, last, size, inner);
}

// MXNet's SoftmaxOutput: softmax forward; backward (softmax - one_hot(label)) * grad_scale / norm.
class SoftmaxOutput : public Operator {
 public:
  explicit SoftmaxOutput(const Attrs& attrs) : p_(SoftmaxOutputParam::Parse(attrs)) {}

  std::vector<std::string> ListArguments() const override { return {"data", "label"}; }
  bool IsLoss() const override { return true; }
  bool BackwardNeedsInputs() const override { return true; }  // the label
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    const Shape& d = in[0];
    if (!ShapeKnown(d)) {
      AssignShape(out[0], d, "SoftmaxOutput", "output");  // what partly known data gives
      return false;
    }
    Shape label;
    if (p_.multi_output) {  // (N, C, rest...) -> labels (N, rest...)
      std::vector<int64_t> dims = {d[0]};
      for (int i = 2; i < d.ndim(); ++i) dims.push_back(d[i]);
      label = Shape(std::span<const int64_t>(dims));
    } else if (p_.preserve_shape) {
      label = Shape(d.dims().subspan(0, d.ndim() - 1));
    } else {
      label = Shape({d[0]});
    }
    if (ShapeKnown(in[1]) && in[1].Size() == label.Size() && !(in[1] == label)) {
      // (N, 1) labels are accepted for (N,) as MXNet does.
    } else {
      COHORT_CHECK(!(in[1] == d) || d == label)
          << "SoftmaxOutput: label has the data's shape " << d << ": probability (soft) labels "
          << "are not supported; expected class numbers of shape " << label;
      AssignShape(in[1], label, "SoftmaxOutput", "label");
    }
    AssignShape(out[0], d, "SoftmaxOutput", "output");
    return true;
  }

  // The data as (outer, classes, inner): softmax runs over `classes`, one label per (outer, inner).
  AxisSplit Split(const Shape& d) const {
    if (p_.multi_output) return SplitAt(d, 1);
    if (p_.preserve_shape) return SplitAt(d, d.ndim() - 1);
    return {d[0], d.Size() / d[0], 1};
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    const AxisSplit s = Split(in[0].shape());
    const SoftmaxOutputRows rows{FloatsOf(in[0]), FloatsOf(out[0]), s.size, s.inner};
    COHORT_GPU_DISPATCH(ctx, SoftmaxOutputForwardGpu(ctx, rows, s.outer, s.inner));
    ForEachRowOnCpu(ctx, s.outer, s.size, s.inner, rows, &RunSoftmaxOutputRows);
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>&, const std::vector<NDArray>& in,
                const std::vector<NDArray>& out, const std::vector<GradReq>& req,
                const std::vector<NDArray>& in_grad, const std::vector<NDArray>&) const override {
    const AxisSplit s = Split(in[0].shape());
    SoftmaxOutputParam p = p_;
    p.grad_scale *= ctx.loss_scale;  // Note [Loss scaling]
    COHORT_GPU_DISPATCH(ctx, SoftmaxOutputBackwardGpu(ctx, p, out[0], in[1], req, in_grad, s.outer,
                                                      s.size, s.inner));
    if (req[1] == GradReq::kWrite) in_grad[1].Fill(0);  // labels get no gradient
    if (req[0] == GradReq::kNull) return;
    const float* y = F(out[0]);
    const float* label = F(in[1]);
    float* dx = F(in_grad[0]);
    int64_t valid = 0;
    for (int64_t j = 0; j < s.outer * s.inner; ++j) valid += !SoftmaxOutputIgnored(p, label[j]);
    const float scale = p.grad_scale / SoftmaxOutputNorm(p, s.outer, s.inner, valid);
    const float off = SoftmaxOutputOffTarget(p, s.size);
    for (int64_t o = 0; o < s.outer; ++o) {
      for (int64_t i = 0; i < s.inner; ++i) {
        const float l = label[o * s.inner + i];
        const int64_t target = static_cast<int64_t>(l);
        if (!SoftmaxOutputIgnored(p, l) && !(target >= 0 && target < s.size && l == target)) {
          // The labels the data gave: fractional ones were truncated silently before.
          throw LabelError("SoftmaxOutput: label " + std::to_string(l) +
                               " is not a class number from 0 to " + std::to_string(s.size - 1),
                           l, __FILE__, __LINE__);
        }
        for (int64_t c = 0; c < s.size; ++c) {
          const int64_t k = (o * s.size + c) * s.inner + i;
          AssignReq(req[0], dx, k, SoftmaxOutputGrad(p, y[k], l, c, off, scale));
        }
      }
    }
  }

 private:
  SoftmaxOutputParam p_;
};

// out = data (or sigmoid(data)); grad = grad_scale / per_sample * (out - label) (or its sign).
class RegressionOutput : public Operator {
 public:
  RegressionOutput(RegressionKind kind, const std::string& name, const Attrs& attrs) : kind_(kind) {
    ParamReader r(name, attrs);
    grad_scale_ = static_cast<float>(r.Float("grad_scale"));
    r.Finish();
  }
  std::vector<std::string> ListArguments() const override { return {"data", "label"}; }
  bool IsLoss() const override { return true; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    if (!ShapeKnown(in[0])) return false;
    // (N,) labels are accepted for (N, 1) data.
    if (!(ShapeKnown(in[1]) && in[1].Size() == in[0].Size())) {
      AssignShape(in[1], in[0], type(), "label");
    }
    AssignShape(out[0], in[0], type(), "output");
    return true;
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(ctx, RegressionOutputForwardGpu(ctx, kind_, in[0], out[0]));
    const float* x = F(in[0]);
    float* y = F(out[0]);
    for (int64_t i = 0; i < in[0].size(); ++i) {
      y[i] = RegressionValue(kind_, x[i]);
    }
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>&, const std::vector<NDArray>& in,
                const std::vector<NDArray>& out, const std::vector<GradReq>& req,
                const std::vector<NDArray>& in_grad, const std::vector<NDArray>&) const override {
    const float grad_scale = grad_scale_ * ctx.loss_scale;  // Note [Loss scaling]
    COHORT_GPU_DISPATCH(
        ctx, RegressionOutputBackwardGpu(ctx, kind_, grad_scale, out[0], in[1], req, in_grad));
    if (req[1] == GradReq::kWrite) in_grad[1].Fill(0);
    if (req[0] == GradReq::kNull) return;
    const float* y = F(out[0]);
    const float* label = F(in[1]);
    float* dx = F(in_grad[0]);
    const int64_t n = out[0].size();
    const int64_t per_sample = n / out[0].shape()[0];
    const float scale = grad_scale / static_cast<float>(per_sample);
    for (int64_t i = 0; i < n; ++i) {
      AssignReq(req[0], dx, i, RegressionGrad(kind_, y[i], label[i], scale));
    }
  }

 private:
  RegressionKind kind_;
  float grad_scale_;
};

// out = data; backward sends grad_scale (normalised) to every element, ignoring head gradients.
class MakeLoss : public Operator {
 public:
  explicit MakeLoss(const Attrs& attrs) : p_(MakeLossParam::Parse(attrs)) {}
  bool IsLoss() const override { return true; }
  bool BackwardNeedsInputs() const override { return false; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }
  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    AssignShape(out[0], in[0], "MakeLoss", "output");
    return ShapeKnown(in[0]);
  }
  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(ctx, LossIdentityForwardGpu(ctx, in[0], out[0]));
    if (out[0].raw_data() != in[0].raw_data()) in[0].CopyTo(out[0]);
  }
  void Backward(const OpContext& ctx, const std::vector<NDArray>&, const std::vector<NDArray>&,
                const std::vector<NDArray>& out, const std::vector<GradReq>& req,
                const std::vector<NDArray>& in_grad, const std::vector<NDArray>&) const override {
    if (req[0] == GradReq::kNull) return;
    MakeLossParam p = p_;
    p.grad_scale *= ctx.loss_scale;  // Note [Loss scaling]
    COHORT_GPU_DISPATCH(ctx, MakeLossBackwardGpu(ctx, p, req[0], out[0], in_grad[0]));
    const float* y = F(out[0]);
    const int64_t n = out[0].size();
    float norm = 1;
    if (p_.normalization == LossNormalization::kBatch) norm = static_cast<float>(out[0].shape()[0]);
    if (p_.normalization == LossNormalization::kValid) {
      int64_t valid = 0;
      for (int64_t i = 0; i < n; ++i) valid += MakeLossCounts(p, y[i]);
      norm = static_cast<float>(std::max<int64_t>(valid, 1));
    }
    float* dx = F(in_grad[0]);
    for (int64_t i = 0; i < n; ++i) AssignReq(req[0], dx, i, p.grad_scale / norm);
  }

 private:
  MakeLossParam p_;
};

// out = data; no gradient flows back (written as zeros).
class BlockGrad : public Operator {
 public:
  explicit BlockGrad(const Attrs& attrs) { ParamReader("BlockGrad", attrs).Finish(); }
  bool PassesGradient() const override { return false; }
  bool BackwardNeedsInputs() const override { return false; }
  bool BackwardNeedsOutputs() const override { return false; }
  bool IsIdentity() const override { return true; }
  std::vector<std::pair<int, int>> ForwardInplace() const override { return {{0, 0}}; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }
  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    return InferSameShape(in, out, "BlockGrad");
  }
  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(ctx, LossIdentityForwardGpu(ctx, in[0], out[0]));
    if (out[0].raw_data() != in[0].raw_data()) in[0].CopyTo(out[0]);
  }
  void Backward(const OpContext& ctx, const std::vector<NDArray>&, const std::vector<NDArray>&,
                const std::vector<NDArray>&, const std::vector<GradReq>& req,
                const std::vector<NDArray>& in_grad, const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(ctx, BlockGradBackwardGpu(ctx, req[0], in_grad[0]));
    if (req[0] == GradReq::kWrite) in_grad[0].Fill(0);
  }
};

}  // namespace

namespace {

// What this file's operators take (Note [Operator specs], operator/common/operator.cc).
std::vector<OpSpec> Specs() {
  const std::vector<ParamSpec> grad_scale = {
      {"grad_scale", "float", "1", "Scale the gradient by a float factor"}};
  return {
      {"BlockGrad", "Stops gradient computation.", {"data"}, "", {}},
      {"LinearRegressionOutput",
       "Computes and optimizes for squared loss during backward propagation. Just outputs ``data`` "
       "during forward propagation.",
       {"data", "label"},
       "",
       grad_scale},
      {"LogisticRegressionOutput",
       "Applies a logistic function to the input.",
       {"data", "label"},
       "",
       grad_scale},
      {"MAERegressionOutput",
       "Computes mean absolute error of the input.",
       {"data", "label"},
       "",
       grad_scale},
      {"MakeLoss",
       "Make your own loss function in network construction.",
       {"data"},
       "",
       {{"grad_scale", "float", "1",
         "Gradient scale as a supplement to unary and binary operators"},
        {"valid_thresh", "float", "0",
         "clip each element in the array to 0 when it is less than ``valid_thresh``. This is used "
         "when ``normalization`` is set to ``'valid'``."},
        {"normalization", "{'batch', 'null', 'valid'}", "null",
         "If this is set to null, the output gradient will not be normalized. If this is set to "
         "batch, the output gradient will be divided by the batch size. If this is set to valid, "
         "the output gradient will be divided by the number of valid input elements."}}},
      {"SoftmaxOutput",
       "Computes the gradient of cross entropy loss with respect to softmax output.",
       {"data", "label"},
       "",
       {{"grad_scale", "float", "1", "Scales the gradient by a float factor."},
        {"ignore_label", "float", "-1",
         "The instances whose `labels` == `ignore_label` will be ignored during backward, if "
         "`use_ignore` is set to ``true``)."},
        {"multi_output", "boolean", "0",
         "If set to ``true``, the softmax function will be computed along axis ``1``. This is "
         "applied when the shape of input array differs from the shape of label array."},
        {"use_ignore", "boolean", "0",
         "If set to ``true``, the `ignore_label` value will not contribute to the backward "
         "gradient."},
        {"preserve_shape", "boolean", "0",
         "If set to ``true``, the softmax function will be computed along the last axis (``-1``)."},
        {"normalization", "{'batch', 'null', 'valid'}", "null", "Normalizes the gradient."},
        {"out_grad", "boolean", "0", "Multiplies gradient with output gradient element-wise."},
        {"smooth_alpha", "float", "0",
         "Constant for computing a label smoothed version of cross-entropyfor the backwards pass. "
         "This constant gets subtracted from theone-hot encoding of the gold label and distributed "
         "uniformly toall other labels."}}},
  };
}

}  // namespace

void RegisterLossOutputs(OpRegistry& r) {
  for (OpSpec& spec : Specs()) r.Declare(std::move(spec));
  r.Register("SoftmaxOutput", [](const Attrs& a) { return std::make_unique<SoftmaxOutput>(a); });
  r.Alias("Softmax", "SoftmaxOutput");
  for (auto [name, kind] : {std::pair{"LinearRegressionOutput", RegressionKind::kLinear},
                            {"LogisticRegressionOutput", RegressionKind::kLogistic},
                            {"MAERegressionOutput", RegressionKind::kMAE}}) {
    std::string n = name;
    r.Register(
        n, [k = kind, n](const Attrs& a) { return std::make_unique<RegressionOutput>(k, n, a); });
  }
  r.Register("MakeLoss", [](const Attrs& a) { return std::make_unique<MakeLoss>(a); });
  r.Alias("make_loss", "MakeLoss");
  r.Register("BlockGrad", [](const Attrs& a) { return std::make_unique<BlockGrad>(a); });
  r.Alias("stop_gradient", "BlockGrad");
}

}  // namespace cohort::op
