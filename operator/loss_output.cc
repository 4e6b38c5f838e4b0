// Loss layers, which start backward themselves: SoftmaxOutput, LinearRegressionOutput,
// LogisticRegressionOutput, MAERegressionOutput, MakeLoss; and BlockGrad, which stops it.
#include <algorithm>
#include <cmath>

#include "operator/kernel_util.h"

namespace cohort::op {

// loss_output.cu (Note [GPU kernels]). normalization: 0 null, 1 batch, 2 valid.
void SoftmaxOutputForwardGpu(const OpContext& ctx, const NDArray& in, const NDArray& out,
                             int64_t outer, int64_t size, int64_t inner);
void SoftmaxOutputBackwardGpu(const OpContext& ctx, const NDArray& out, const NDArray& label,
                              const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                              int64_t outer, int64_t size, int64_t inner, float grad_scale,
                              float ignore_label, float smooth_alpha, bool use_ignore,
                              bool multi_output, int normalization);
void RegressionOutputForwardGpu(const OpContext& ctx, bool logistic, const NDArray& in,
                                const NDArray& out);
void RegressionOutputBackwardGpu(const OpContext& ctx, bool mae, float grad_scale,
                                 const NDArray& out, const NDArray& label,
                                 const std::vector<GradReq>& req,
                                 const std::vector<NDArray>& in_grad);
void LossIdentityForwardGpu(const OpContext& ctx, const NDArray& in, const NDArray& out);
void MakeLossBackwardGpu(const OpContext& ctx, GradReq req, const NDArray& out,
                         const NDArray& in_grad, float grad_scale, float valid_thresh,
                         int normalization);
void BlockGradBackwardGpu(const OpContext& ctx, GradReq req, const NDArray& in_grad);

namespace {

// "null", "batch", "valid" as the GPU functions number them.
inline int NormalizationCode(const std::string& normalization) {
  return normalization == "batch" ? 1 : normalization == "valid" ? 2 : 0;
}

// Softmax of `size` values spaced `stride` apart.
void SoftmaxStrided(const float* x, float* y, int64_t size, int64_t stride) {
  float max = x[0];
  for (int64_t c = 1; c < size; ++c) max = std::max(max, x[c * stride]);
  float sum = 0;
  for (int64_t c = 0; c < size; ++c) {
    y[c * stride] = std::exp(x[c * stride] - max);
    sum += y[c * stride];
  }
  for (int64_t c = 0; c < size; ++c) y[c * stride] /= sum;
}

// MXNet's SoftmaxOutput: softmax forward; backward (softmax - one_hot(label)) * grad_scale / norm.
class SoftmaxOutput : public Operator {
 public:
  explicit SoftmaxOutput(const Attrs& attrs) {
    ParamReader r("SoftmaxOutput", attrs);
    grad_scale_ = static_cast<float>(r.Float("grad_scale", 1.0));
    ignore_label_ = static_cast<float>(r.Float("ignore_label", -1.0));
    multi_output_ = r.Bool("multi_output", false);
    use_ignore_ = r.Bool("use_ignore", false);
    preserve_shape_ = r.Bool("preserve_shape", false);
    normalization_ = r.Enum("normalization", {"null", "batch", "valid"}, "null");
    r.Bool("out_grad", false);
    smooth_alpha_ = static_cast<float>(r.Float("smooth_alpha", 0.0));
    r.Finish();
  }

  std::vector<std::string> ListArguments() const override { return {"data", "label"}; }
  bool IsLoss() const override { return true; }
  bool BackwardNeedsInputs() const override { return true; }  // the label
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    const Shape& d = in[0];
    if (!ShapeKnown(d)) return false;
    Shape label;
    if (multi_output_) {  // (N, C, rest...) -> labels (N, rest...)
      std::vector<int64_t> dims = {d[0]};
      for (int i = 2; i < d.ndim(); ++i) dims.push_back(d[i]);
      label = Shape(std::span<const int64_t>(dims));
    } else if (preserve_shape_) {
      label = Shape(d.dims().subspan(0, d.ndim() - 1));
    } else {
      label = Shape({d[0]});
    }
    if (ShapeKnown(in[1]) && in[1].Size() == label.Size() && !(in[1] == label)) {
      // (N, 1) labels are accepted for (N,) as MXNet does.
    } else {
      AssignShape(in[1], label, "SoftmaxOutput", "label");
    }
    AssignShape(out[0], d, "SoftmaxOutput", "output");
    return true;
  }

  // The data as (outer, classes, inner): softmax runs over `classes`, one label per (outer, inner).
  AxisSplit Split(const Shape& d) const {
    if (multi_output_) return SplitAt(d, 1);
    if (preserve_shape_) return SplitAt(d, d.ndim() - 1);
    return {d[0], d.Size() / d[0], 1};
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    const AxisSplit s = Split(in[0].shape());
    COHORT_GPU_DISPATCH(ctx, SoftmaxOutputForwardGpu(ctx, in[0], out[0], s.outer, s.size, s.inner));
    const float* x = F(in[0]);
    float* y = F(out[0]);
    for (int64_t o = 0; o < s.outer; ++o) {
      for (int64_t i = 0; i < s.inner; ++i) {
        const int64_t base = o * s.size * s.inner + i;
        SoftmaxStrided(x + base, y + base, s.size, s.inner);
      }
    }
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>&, const std::vector<NDArray>& in,
                const std::vector<NDArray>& out, const std::vector<GradReq>& req,
                const std::vector<NDArray>& in_grad, const std::vector<NDArray>&) const override {
    const AxisSplit s = Split(in[0].shape());
    COHORT_GPU_DISPATCH(
        ctx, SoftmaxOutputBackwardGpu(ctx, out[0], in[1], req, in_grad, s.outer, s.size, s.inner,
                                      grad_scale_, ignore_label_, smooth_alpha_, use_ignore_,
                                      multi_output_, NormalizationCode(normalization_)));
    if (req[1] == GradReq::kWrite) in_grad[1].Fill(0);  // labels get no gradient
    if (req[0] == GradReq::kNull) return;
    const float* y = F(out[0]);
    const float* label = F(in[1]);
    float* dx = F(in_grad[0]);
    int64_t valid = 0;
    for (int64_t j = 0; j < s.outer * s.inner; ++j)
      valid += !(use_ignore_ && label[j] == ignore_label_);
    float norm = 1;
    if (normalization_ == "batch") norm = static_cast<float>(s.outer);
    if (normalization_ == "valid") norm = static_cast<float>(std::max<int64_t>(valid, 1));
    // As MXNet: multi_output gradients are also divided by the positions per sample, except
    // under "valid" normalization.
    if (multi_output_ && normalization_ != "valid") norm *= static_cast<float>(s.inner);
    const float scale = grad_scale_ / norm;
    const float off = smooth_alpha_ / std::max<float>(1, static_cast<float>(s.size - 1));
    for (int64_t o = 0; o < s.outer; ++o) {
      for (int64_t i = 0; i < s.inner; ++i) {
        const float l = label[o * s.inner + i];
        const bool ignored = use_ignore_ && l == ignore_label_;
        const int64_t target = static_cast<int64_t>(l);
        COHORT_CHECK(ignored || (target >= 0 && target < s.size))
            << "SoftmaxOutput: label " << l << " is outside the " << s.size << " classes";
        for (int64_t c = 0; c < s.size; ++c) {
          const int64_t k = (o * s.size + c) * s.inner + i;
          float g = 0;
          if (!ignored) {
            const float want = smooth_alpha_ > 0 ? (c == target ? 1 - smooth_alpha_ : off)
                                                 : (c == target ? 1.0f : 0.0f);
            g = (y[k] - want) * scale;
          }
          Assign(req[0], dx, k, g);
        }
      }
    }
  }

 private:
  float grad_scale_, ignore_label_, smooth_alpha_;
  bool multi_output_, use_ignore_, preserve_shape_;
  std::string normalization_;
};

enum class Regression { kLinear, kLogistic, kMAE };

// out = data (or sigmoid(data)); grad = grad_scale / per_sample * (out - label) (or its sign).
class RegressionOutput : public Operator {
 public:
  RegressionOutput(Regression kind, const std::string& name, const Attrs& attrs) : kind_(kind) {
    ParamReader r(name, attrs);
    grad_scale_ = static_cast<float>(r.Float("grad_scale", 1.0));
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
    COHORT_GPU_DISPATCH(
        ctx, RegressionOutputForwardGpu(ctx, kind_ == Regression::kLogistic, in[0], out[0]));
    const float* x = F(in[0]);
    float* y = F(out[0]);
    for (int64_t i = 0; i < in[0].size(); ++i) {
      y[i] = kind_ == Regression::kLogistic ? 1.0f / (1.0f + std::exp(-x[i])) : x[i];
    }
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>&, const std::vector<NDArray>& in,
                const std::vector<NDArray>& out, const std::vector<GradReq>& req,
                const std::vector<NDArray>& in_grad, const std::vector<NDArray>&) const override {
    COHORT_GPU_DISPATCH(ctx, RegressionOutputBackwardGpu(ctx, kind_ == Regression::kMAE,
                                                         grad_scale_, out[0], in[1], req, in_grad));
    if (req[1] == GradReq::kWrite) in_grad[1].Fill(0);
    if (req[0] == GradReq::kNull) return;
    const float* y = F(out[0]);
    const float* label = F(in[1]);
    float* dx = F(in_grad[0]);
    const int64_t n = out[0].size();
    const int64_t per_sample = n / out[0].shape()[0];
    const float scale = grad_scale_ / static_cast<float>(per_sample);
    for (int64_t i = 0; i < n; ++i) {
      const float d = y[i] - label[i];
      const float g = kind_ == Regression::kMAE ? (d > 0 ? 1.0f : d < 0 ? -1.0f : 0.0f) : d;
      Assign(req[0], dx, i, g * scale);
    }
  }

 private:
  Regression kind_;
  float grad_scale_;
};

// out = data; backward sends grad_scale (normalised) to every element, ignoring head gradients.
class MakeLoss : public Operator {
 public:
  explicit MakeLoss(const Attrs& attrs) {
    ParamReader r("MakeLoss", attrs);
    grad_scale_ = static_cast<float>(r.Float("grad_scale", 1.0));
    valid_thresh_ = static_cast<float>(r.Float("valid_thresh", 0.0));
    normalization_ = r.Enum("normalization", {"null", "batch", "valid"}, "null");
    r.Finish();
  }
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
    COHORT_GPU_DISPATCH(ctx, MakeLossBackwardGpu(ctx, req[0], out[0], in_grad[0], grad_scale_,
                                                 valid_thresh_, NormalizationCode(normalization_)));
    const float* y = F(out[0]);
    const int64_t n = out[0].size();
    float norm = 1;
    if (normalization_ == "batch") norm = static_cast<float>(out[0].shape()[0]);
    if (normalization_ == "valid") {
      int64_t valid = 0;
      for (int64_t i = 0; i < n; ++i) valid += y[i] > valid_thresh_;
      norm = static_cast<float>(std::max<int64_t>(valid, 1));
    }
    float* dx = F(in_grad[0]);
    for (int64_t i = 0; i < n; ++i) Assign(req[0], dx, i, grad_scale_ / norm);
  }

 private:
  float grad_scale_, valid_thresh_;
  std::string normalization_;
};

// out = data; no gradient flows back (written as zeros).
class BlockGrad : public Operator {
 public:
  explicit BlockGrad(const Attrs& attrs) { ParamReader("BlockGrad", attrs).Finish(); }
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

void RegisterLossOutputs(OpRegistry& r) {
  r.Register("SoftmaxOutput", [](const Attrs& a) { return std::make_unique<SoftmaxOutput>(a); });
  r.Alias("Softmax", "SoftmaxOutput");
  for (auto [name, kind] : {std::pair{"LinearRegressionOutput", Regression::kLinear},
                            {"LogisticRegressionOutput", Regression::kLogistic},
                            {"MAERegressionOutput", Regression::kMAE}}) {
    std::string n = name;
    r.Register(
        n, [kind, n](const Attrs& a) { return std::make_unique<RegressionOutput>(kind, n, a); });
  }
  r.Register("MakeLoss", [](const Attrs& a) { return std::make_unique<MakeLoss>(a); });
  r.Alias("make_loss", "MakeLoss");
  r.Register("BlockGrad", [](const Attrs& a) { return std::make_unique<BlockGrad>(a); });
  r.Alias("stop_gradient", "BlockGrad");
}

}  // namespace cohort::op
