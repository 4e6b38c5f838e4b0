// BatchNorm over axis 1 (channels), with moving statistics as auxiliary states.
#include <cmath>

#include "operator/kernel_util.h"

namespace cohort::op {

// batch_norm.cu (Note [GPU kernels]); the data splits as (outer, channels, inner) around axis 1.
void BatchNormForwardGpu(const OpContext& ctx, const std::vector<NDArray>& in,
                         const std::vector<NDArray>& out, const std::vector<NDArray>& aux,
                         int64_t outer, int64_t channels, int64_t inner, float eps, float momentum,
                         bool fix_gamma, bool batch_stats);
void BatchNormBackwardGpu(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                          const std::vector<NDArray>& in, const std::vector<NDArray>& out,
                          const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                          int64_t outer, int64_t channels, int64_t inner, float eps, bool fix_gamma,
                          bool batch_stats);

namespace {

class BatchNorm : public Operator {
 public:
  explicit BatchNorm(const Attrs& attrs) {
    ParamReader r("BatchNorm", attrs);
    eps_ = static_cast<float>(r.Float("eps", 1e-3));
    momentum_ = static_cast<float>(r.Float("momentum", 0.9));
    fix_gamma_ = r.Bool("fix_gamma", true);
    use_global_stats_ = r.Bool("use_global_stats", false);
    output_mean_var_ = r.Bool("output_mean_var", false);
    const int64_t axis = r.Int("axis", 1);
    r.Bool("cudnn_off", false);
    r.OptionalInt("min_calib_range");
    r.OptionalInt("max_calib_range");
    r.Finish();
    COHORT_CHECK_EQ(axis, 1) << "BatchNorm: only axis=1 (channels) is supported";
  }

  std::vector<std::string> ListArguments() const override { return {"data", "gamma", "beta"}; }
  std::vector<std::string> ListAuxiliaryStates() const override {
    return {"moving_mean", "moving_var"};
  }
  // The batch mean and variance are outputs too, saved for backward (MXNet's layout).
  std::vector<std::string> ListOutputs() const override { return {"output", "mean", "var"}; }
  int NumVisibleOutputs() const override { return output_mean_var_ ? 3 : 1; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>& aux) const override {
    const Shape& d = in[0];
    if (!ShapeKnown(d)) return false;
    COHORT_CHECK_GE(d.ndim(), 2) << "BatchNorm: data needs a channel axis, got " << d;
    const Shape c({d[1]});
    AssignShape(in[1], c, "BatchNorm", "gamma");
    AssignShape(in[2], c, "BatchNorm", "beta");
    AssignShape(aux[0], c, "BatchNorm", "moving_mean");
    AssignShape(aux[1], c, "BatchNorm", "moving_var");
    AssignShape(out[0], d, "BatchNorm", "output");
    AssignShape(out[1], c, "BatchNorm", "mean");
    AssignShape(out[2], c, "BatchNorm", "var");
    return true;
  }

  // Channels in parallel chunks (Note [Kernel threads]). Each row of a channel (one sample's
  // plane) is reduced in float with partial sums, the rows in double.
  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>& aux) const override {
    const AxisSplit s = SplitAt(in[0].shape(), 1);
    COHORT_GPU_DISPATCH(
        ctx, BatchNormForwardGpu(ctx, in, out, aux, s.outer, s.size, s.inner, eps_, momentum_,
                                 fix_gamma_, ctx.is_train && !use_global_stats_));
    const float* x = F(in[0]);
    const float* gamma = F(in[1]);
    const float* beta = F(in[2]);
    float* y = F(out[0]);
    float* mean = F(out[1]);
    float* var = F(out[2]);
    float* moving_mean = F(aux[0]);
    float* moving_var = F(aux[1]);
    const bool batch_stats = ctx.is_train && !use_global_stats_;
    const double m = static_cast<double>(s.outer * s.inner);
    auto channels = [&](int64_t, int64_t first, int64_t last) {
      for (int64_t c = first; c < last; ++c) {
        if (batch_stats) {
          double sum = 0, sq = 0;
          for (int64_t o = 0; o < s.outer; ++o) sum += Sum(x + (o * s.size + c) * s.inner, s.inner);
          const float mu = static_cast<float>(sum / m);
          for (int64_t o = 0; o < s.outer; ++o) {
            sq += SumSquaredDeviations(x + (o * s.size + c) * s.inner, s.inner, mu);
          }
          mean[c] = mu;
          var[c] = static_cast<float>(sq / m);
          moving_mean[c] = moving_mean[c] * momentum_ + mean[c] * (1 - momentum_);
          moving_var[c] = moving_var[c] * momentum_ + var[c] * (1 - momentum_);
        } else {
          mean[c] = moving_mean[c];
          var[c] = moving_var[c];
        }
        const float inv_std = 1.0f / std::sqrt(var[c] + eps_);
        const float scale = (fix_gamma_ ? 1.0f : gamma[c]) * inv_std;
        const float shift = beta[c] - mean[c] * scale;
        for (int64_t o = 0; o < s.outer; ++o) {
          const float* row = x + (o * s.size + c) * s.inner;
          float* dst = y + (o * s.size + c) * s.inner;
          for (int64_t i = 0; i < s.inner; ++i) dst[i] = row[i] * scale + shift;
        }
      }
    };
    ParallelChunks(s.size, ChunksFor(ctx, s.size), channels, ctx.arena);
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>& in, const std::vector<NDArray>& out,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    const AxisSplit s = SplitAt(in[0].shape(), 1);
    COHORT_GPU_DISPATCH(
        ctx, BatchNormBackwardGpu(ctx, out_grad, in, out, req, in_grad, s.outer, s.size, s.inner,
                                  eps_, fix_gamma_, ctx.is_train && !use_global_stats_));
    const float* x = F(in[0]);
    const float* gamma = F(in[1]);
    const float* dy = F(out_grad[0]);
    const float* mean = F(out[1]);
    const float* var = F(out[2]);
    float* dx = req[0] == GradReq::kNull ? nullptr : F(in_grad[0]);
    const bool batch_stats = ctx.is_train && !use_global_stats_;
    const double m = static_cast<double>(s.outer * s.inner);
    auto channels = [&](int64_t, int64_t first, int64_t last) {
      for (int64_t c = first; c < last; ++c) {
        const float inv_std = 1.0f / std::sqrt(var[c] + eps_);
        const float g = fix_gamma_ ? 1.0f : gamma[c];
        double sum_dy = 0, sum_dy_xmu = 0;  // Σ dy and Σ dy (x - mean)
        for (int64_t o = 0; o < s.outer; ++o) {
          const int64_t base = (o * s.size + c) * s.inner;
          sum_dy += Sum(dy + base, s.inner);
          sum_dy_xmu += SumProductsOfDeviations(dy + base, x + base, s.inner, mean[c]);
        }
        const double sum_dy_xhat = sum_dy_xmu * inv_std;
        if (req[1] != GradReq::kNull) {
          Assign(req[1], F(in_grad[1]), c, fix_gamma_ ? 0.0f : static_cast<float>(sum_dy_xhat));
        }
        if (req[2] != GradReq::kNull) Assign(req[2], F(in_grad[2]), c, static_cast<float>(sum_dy));
        if (!dx) continue;
        // dx = g inv_std (dy - mean(dy) - xhat mean(dy xhat)), xhat = (x - mean) inv_std;
        // with global statistics the mean and variance are constants: dx = g inv_std dy.
        const float a = g * inv_std;
        const float b = batch_stats ? static_cast<float>(sum_dy / m) : 0.0f;
        const float k = batch_stats ? static_cast<float>(sum_dy_xhat / m) * inv_std : 0.0f;
        const float mu = mean[c];
        const bool add = req[0] == GradReq::kAdd;
        for (int64_t o = 0; o < s.outer; ++o) {
          const int64_t base = (o * s.size + c) * s.inner;
          const float* d = dy + base;
          const float* xs = x + base;
          float* dst = dx + base;
          if (add) {
            for (int64_t i = 0; i < s.inner; ++i) dst[i] += a * (d[i] - b - (xs[i] - mu) * k);
          } else {
            for (int64_t i = 0; i < s.inner; ++i) dst[i] = a * (d[i] - b - (xs[i] - mu) * k);
          }
        }
      }
    };
    ParallelChunks(s.size, ChunksFor(ctx, s.size), channels, ctx.arena);
  }

 private:
  float eps_, momentum_;
  bool fix_gamma_, use_global_stats_, output_mean_var_;
};

}  // namespace

void RegisterBatchNorm(OpRegistry& r) {
  r.Register("BatchNorm", [](const Attrs& a) { return std::make_unique<BatchNorm>(a); });
}

}  // namespace cohort::op
