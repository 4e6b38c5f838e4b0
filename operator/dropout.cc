// Dropout: in training, zeroes each element with probability p and scales the rest by 1/(1-p);
// the mask is a hidden output that backward reads. Seeded per forward by the executor.
#include <random>

#include "operator/kernel_util.h"

namespace cohort::op {

// dropout.cu (Note [GPU kernels]): its masks come from a hash of (seed, index), not from the
// CPU's mt19937_64 stream, so they differ from the CPU's but are as deterministic per seed.
void DropoutForwardGpu(const OpContext& ctx, float p, bool active, const NDArray& in,
                       const NDArray& out, const NDArray& mask);
void DropoutBackwardGpu(const OpContext& ctx, GradReq req, const NDArray& out_grad,
                        const NDArray& mask, const NDArray& in_grad);

namespace {

class Dropout : public Operator {
 public:
  explicit Dropout(const Attrs& attrs) {
    ParamReader r("Dropout", attrs);
    p_ = static_cast<float>(r.Float("p", 0.5));
    always_ = r.Enum("mode", {"training", "always"}, "training") == "always";
    const Shape axes = r.Tuple("axes", Shape());
    r.Bool("cudnn_off", false);
    r.Finish();
    COHORT_CHECK(p_ >= 0 && p_ < 1) << "Dropout: p=" << p_ << " must be in [0, 1)";
    COHORT_CHECK_EQ(axes.ndim(), 0) << "Dropout: axes are not supported";
  }

  std::vector<std::string> ListOutputs() const override { return {"output", "mask"}; }
  int NumVisibleOutputs() const override { return 1; }
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
    COHORT_GPU_DISPATCH(ctx,
                        DropoutForwardGpu(ctx, p_, ctx.is_train || always_, in[0], out[0], out[1]));
    const float* x = F(in[0]);
    float* y = F(out[0]);
    float* mask = F(out[1]);
    const int64_t n = in[0].size();
    if (!(ctx.is_train || always_) || p_ == 0) {
      for (int64_t i = 0; i < n; ++i) {
        mask[i] = 1.0f;
        y[i] = x[i];
      }
      return;
    }
    std::mt19937_64 rng(ctx.seed);
    const uint64_t threshold =
        static_cast<uint64_t>(static_cast<double>(p_) * 18446744073709551615.0);
    const float keep = 1.0f / (1.0f - p_);
    for (int64_t i = 0; i < n; ++i) {
      mask[i] = rng() >= threshold ? keep : 0.0f;
      y[i] = x[i] * mask[i];
    }
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>&, const std::vector<NDArray>& out,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    if (req[0] == GradReq::kNull) return;
    COHORT_GPU_DISPATCH(ctx, DropoutBackwardGpu(ctx, req[0], out_grad[0], out[1], in_grad[0]));
    const float* dy = F(out_grad[0]);
    const float* mask = F(out[1]);
    float* dx = F(in_grad[0]);
    for (int64_t i = 0; i < in_grad[0].size(); ++i) Assign(req[0], dx, i, dy[i] * mask[i]);
  }

 private:
  float p_;
  bool always_;
};

}  // namespace

void RegisterDropout(OpRegistry& r) {
  r.Register("Dropout", [](const Attrs& a) { return std::make_unique<Dropout>(a); });
}

}  // namespace cohort::op
