// softmax and log_softmax on the GPU (Note [GPU kernels]), one row per block or thread
// (Note [GPU rows]). Sums run in double as on the CPU; only their order differs.
#include "operator/pointwise_gpu.cuh"

namespace cohort::op {
namespace {

// y = softmax((x - max) / t) or its log over each row; y may be x.
struct SoftmaxRows {
  const float* x;
  float* y;
  int64_t size, stride;
  float t;
  bool log;

  template <typename Lanes>
  __device__ void operator()(Lanes lanes, int64_t base) const {
    const float* xr = x + base;
    float* yr = y + base;
    float max = -INFINITY;
    for (int64_t c = lanes.first(); c < size; c += lanes.step()) max = fmaxf(max, xr[c * stride]);
    max = lanes.Reduce(max, MaxOp{});
    double sum = 0;
    for (int64_t c = lanes.first(); c < size; c += lanes.step()) {
      sum += expf((xr[c * stride] - max) / t);
    }
    const float log_sum = static_cast<float>(::log(lanes.Reduce(sum, SumOp{})));
    for (int64_t c = lanes.first(); c < size; c += lanes.step()) {
      const float z = (xr[c * stride] - max) / t - log_sum;
      yr[c * stride] = log ? z : expf(z);
    }
  }
};

// dx (=|+=) (y (dy - Σ dy·y), or dy - e^y Σ dy for log) / t; dx may be dy.
struct SoftmaxGradRows {
  const float* y;
  const float* dy;
  float* dx;
  int64_t size, stride;
  float t;
  bool log;
  GradReq req;

  template <typename Lanes>
  __device__ void operator()(Lanes lanes, int64_t base) const {
    double dot = 0;
    for (int64_t c = lanes.first(); c < size; c += lanes.step()) {
      const int64_t k = base + c * stride;
      dot += log ? dy[k] : dy[k] * y[k];
    }
    const float d = static_cast<float>(lanes.Reduce(dot, SumOp{}));
    for (int64_t c = lanes.first(); c < size; c += lanes.step()) {
      const int64_t k = base + c * stride;
      const float g = log ? dy[k] - expf(y[k]) * d : y[k] * (dy[k] - d);
      AssignReq(req, dx, k, g / t);
    }
  }
};

}  // namespace

void SoftmaxForwardGpu(const OpContext& ctx, bool log, float temperature, const NDArray& in,
                       const NDArray& out, int64_t outer, int64_t size, int64_t inner) {
  ForEachRow(Gpu(ctx), outer, size, inner,
             SoftmaxRows{G(in), G(out), size, inner, temperature, log});
}

void SoftmaxBackwardGpu(const OpContext& ctx, bool log, float temperature, GradReq req,
                        const NDArray& out_grad, const NDArray& out, const NDArray& in_grad,
                        int64_t outer, int64_t size, int64_t inner) {
  if (req == GradReq::kNull) return;
  ForEachRow(Gpu(ctx), outer, size, inner,
             SoftmaxGradRows{G(out), G(out_grad), G(in_grad), size, inner, temperature, log, req});
}

}  // namespace cohort::op
