// softmax and log_softmax along an axis (with temperature).
#include <algorithm>
#include <cmath>

#include "operator/kernel_util.h"

namespace cohort::op {

// softmax.cu (Note [GPU kernels]); the softmax runs over `size` of the (outer, size, inner) data.
void SoftmaxForwardGpu(const OpContext& ctx, bool log, float temperature, const NDArray& in,
                       const NDArray& out, int64_t outer, int64_t size, int64_t inner);
void SoftmaxBackwardGpu(const OpContext& ctx, bool log, float temperature, GradReq req,
                        const NDArray& out_grad, const NDArray& out, const NDArray& in_grad,
                        int64_t outer, int64_t size, int64_t inner);

namespace {

class Softmax : public Operator {
 public:
  Softmax(bool log, const Attrs& attrs) : log_(log) {
    ParamReader r(log ? "log_softmax" : "softmax", attrs);
    axis_ = static_cast<int>(r.Int("axis", -1));
    temperature_ = 1.0f;  // "None" means 1
    if (auto it = attrs.find("temperature"); it != attrs.end() && it->second != "None") {
      temperature_ = static_cast<float>(r.Float("temperature"));
    } else {
      r.OptionalInt("temperature");
    }
    r.Enum("dtype", {"None", "float32"}, "None");
    r.Bool("use_length", false);
    r.Finish();
  }

  bool BackwardNeedsInputs() const override { return false; }
  std::vector<std::pair<int, int>> ForwardInplace() const override { return {{0, 0}}; }
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>&) const override {
    return InferSameShape(in, out, type());
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>&) const override {
    const AxisSplit s = SplitAt(in[0].shape(), Axis(in[0].shape()));
    COHORT_GPU_DISPATCH(
        ctx, SoftmaxForwardGpu(ctx, log_, temperature_, in[0], out[0], s.outer, s.size, s.inner));
    const float* x = F(in[0]);
    float* y = F(out[0]);
    for (int64_t o = 0; o < s.outer; ++o) {
      for (int64_t i = 0; i < s.inner; ++i) {
        const int64_t base = o * s.size * s.inner + i;
        float max = x[base];
        for (int64_t c = 1; c < s.size; ++c) max = std::max(max, x[base + c * s.inner]);
        double sum = 0;
        for (int64_t c = 0; c < s.size; ++c) {
          sum += std::exp((x[base + c * s.inner] - max) / temperature_);
        }
        const float log_sum = static_cast<float>(std::log(sum));
        for (int64_t c = 0; c < s.size; ++c) {
          const float z = (x[base + c * s.inner] - max) / temperature_ - log_sum;
          y[base + c * s.inner] = log_ ? z : std::exp(z);
        }
      }
    }
  }

  void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                const std::vector<NDArray>&, const std::vector<NDArray>& out,
                const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                const std::vector<NDArray>&) const override {
    if (req[0] == GradReq::kNull) return;
    const AxisSplit s = SplitAt(out[0].shape(), Axis(out[0].shape()));
    COHORT_GPU_DISPATCH(ctx, SoftmaxBackwardGpu(ctx, log_, temperature_, req[0], out_grad[0],
                                                out[0], in_grad[0], s.outer, s.size, s.inner));
    const float* y = F(out[0]);
    const float* dy = F(out_grad[0]);
    float* dx = F(in_grad[0]);
    for (int64_t o = 0; o < s.outer; ++o) {
      for (int64_t i = 0; i < s.inner; ++i) {
        const int64_t base = o * s.size * s.inner + i;
        double dot = 0;
        for (int64_t c = 0; c < s.size; ++c) {
          const int64_t k = base + c * s.inner;
          dot += log_ ? dy[k] : dy[k] * y[k];
        }
        for (int64_t c = 0; c < s.size; ++c) {
          const int64_t k = base + c * s.inner;
          const float g = log_ ? dy[k] - std::exp(y[k]) * static_cast<float>(dot)
                               : y[k] * (dy[k] - static_cast<float>(dot));
          Assign(req[0], dx, k, g / temperature_);
        }
      }
    }
  }

 private:
  int Axis(const Shape& s) const {
    const int axis = axis_ < 0 ? axis_ + s.ndim() : axis_;
    COHORT_CHECK(axis >= 0 && axis < s.ndim()) << type() << ": axis " << axis_ << " for " << s;
    return axis;
  }

  bool log_;
  int axis_;
  float temperature_;
};

}  // namespace

void RegisterSoftmax(OpRegistry& r) {
  r.Register("softmax", [](const Attrs& a) { return std::make_unique<Softmax>(false, a); });
  r.Register("log_softmax", [](const Attrs& a) { return std::make_unique<Softmax>(true, a); });
}

}  // namespace cohort::op
