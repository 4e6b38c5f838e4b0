// Loss layers and BlockGrad on the GPU (Note [GPU kernels]), with loss_output.cc's semantics.
// Normalisations that count elements on the device ("valid") write grad_scale / count into the
// workspace, which the gradient kernel reads: no copy back to the host, no synchronisation.
// The CPU throws on a label outside the classes; a GPU kernel cannot, and such a label matches
// no class (its row gets the gradient of an all-zero target).
#include "operator/pointwise_gpu.cuh"

namespace cohort::op {
namespace {

// SoftmaxOutput's forward: y = e^(x - max) / Σ e^(x - max) over each row, summed in float.
struct SoftmaxOutputRows {
  const float* x;
  float* y;
  int64_t size, stride;

  template <typename Lanes>
  __device__ void operator()(Lanes lanes, int64_t base) const {
    const float* xr = x + base;
    float* yr = y + base;
    float max = -INFINITY;
    for (int64_t c = lanes.first(); c < size; c += lanes.step()) max = fmaxf(max, xr[c * stride]);
    max = lanes.Reduce(max, MaxOp{});
    float sum = 0;
    for (int64_t c = lanes.first(); c < size; c += lanes.step()) {
      const float e = expf(xr[c * stride] - max);
      yr[c * stride] = e;
      sum += e;
    }
    sum = lanes.Reduce(sum, SumOp{});
    for (int64_t c = lanes.first(); c < size; c += lanes.step()) yr[c * stride] /= sum;
  }
};

constexpr int kCountThreads = 1024;

// *scale = grad_scale / max(#{i < n : counted(i)}, 1). One block: the counts are of labels or
// loss values, small enough that a second pass would cost more than it saves.
template <typename Pred>
__global__ void ScaleByCountKernel(int64_t n, Pred counted, float grad_scale, float* scale) {
  unsigned long long count = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) count += counted(i) ? 1 : 0;
  count = BlockAllReduce(count, SumOp{});
  if (threadIdx.x == 0) *scale = grad_scale / static_cast<float>(count > 1 ? count : 1);
}

// Launches ScaleByCountKernel; the result lives in the workspace until its next use.
template <typename Pred>
const float* ScaleByCount(GpuResources::Impl& g, int64_t n, Pred counted, float grad_scale) {
  float* scale = static_cast<float*>(g.Workspace(sizeof(float)));
  ScaleByCountKernel<<<1, kCountThreads, 0, g.stream>>>(n, counted, grad_scale, scale);
  CUDA_CHECK(cudaGetLastError());
  return scale;
}

// Labels get no gradient: zeroed for kWrite, left alone otherwise (as on the CPU).
void ZeroLabelGrad(const GpuResources::Impl& g, const std::vector<GradReq>& req,
                   const std::vector<NDArray>& in_grad) {
  if (req.size() > 1 && req[1] == GradReq::kWrite) ZeroOnStream(g, in_grad[1]);
}

}  // namespace

void SoftmaxOutputForwardGpu(const OpContext& ctx, const NDArray& in, const NDArray& out,
                             int64_t outer, int64_t size, int64_t inner) {
  ForEachRow(Gpu(ctx), outer, size, inner, SoftmaxOutputRows{G(in), G(out), size, inner});
}

// normalization: 0 null, 1 batch, 2 valid (loss_output.cc's order).
void SoftmaxOutputBackwardGpu(const OpContext& ctx, const NDArray& out, const NDArray& label_arr,
                              const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad,
                              int64_t outer, int64_t size, int64_t inner, float grad_scale,
                              float ignore_label, float smooth_alpha, bool use_ignore,
                              bool multi_output, int normalization) {
  GpuResources::Impl& g = Gpu(ctx);
  ZeroLabelGrad(g, req, in_grad);
  const GradReq r = req[0];
  if (r == GradReq::kNull) return;
  const float* y = G(out);
  const float* label = G(label_arr);
  float* dx = G(in_grad[0]);
  // The scale as the CPU computes it; only "valid" with ignored labels needs the device.
  const int64_t labels = outer * inner;
  float norm = 1;
  if (normalization == 1) norm = static_cast<float>(outer);
  if (normalization == 2) norm = static_cast<float>(labels > 1 ? labels : 1);
  if (multi_output && normalization != 2) norm *= static_cast<float>(inner);
  const float host_scale = grad_scale / norm;
  const float* device_scale = nullptr;
  if (normalization == 2 && use_ignore) {
    device_scale = ScaleByCount(
        g, labels, [=] __device__(int64_t j) { return !(label[j] == ignore_label); }, grad_scale);
  }
  const float off = smooth_alpha / fmaxf(1.0f, static_cast<float>(size - 1));
  ForEach(g, outer * size * inner, [=] __device__(int64_t k) {
    const int64_t i = k % inner;
    const int64_t c = k / inner % size;
    const int64_t o = k / (inner * size);
    const float l = label[o * inner + i];
    float grad = 0;
    if (!(use_ignore && l == ignore_label)) {
      const bool hit = c == static_cast<int64_t>(l);
      const float want = smooth_alpha > 0 ? (hit ? 1 - smooth_alpha : off) : (hit ? 1.0f : 0.0f);
      grad = (y[k] - want) * (device_scale ? *device_scale : host_scale);
    }
    AssignReq(r, dx, k, grad);
  });
}

void RegressionOutputForwardGpu(const OpContext& ctx, bool logistic, const NDArray& in,
                                const NDArray& out) {
  const float* x = G(in);
  float* y = G(out);
  ForEach(Gpu(ctx), in.size(),
          [=] __device__(int64_t i) { y[i] = logistic ? 1.0f / (1.0f + expf(-x[i])) : x[i]; });
}

// dx (=|+=) scale · (y - label), or scale · sign(y - label) for MAE, with scale = grad_scale
// over the values per sample.
void RegressionOutputBackwardGpu(const OpContext& ctx, bool mae, float grad_scale,
                                 const NDArray& out, const NDArray& label_arr,
                                 const std::vector<GradReq>& req,
                                 const std::vector<NDArray>& in_grad) {
  const GpuResources::Impl& g = Gpu(ctx);
  ZeroLabelGrad(g, req, in_grad);
  const GradReq r = req[0];
  if (r == GradReq::kNull) return;
  const float* y = G(out);
  const float* label = G(label_arr);
  float* dx = G(in_grad[0]);
  const int64_t n = out.size();
  if (n == 0) return;
  const float scale = grad_scale / static_cast<float>(n / out.shape()[0]);
  ForEach(g, n, [=] __device__(int64_t i) {
    const float d = y[i] - label[i];
    const float grad = mae ? (d > 0 ? 1.0f : d < 0 ? -1.0f : 0.0f) : d;
    AssignReq(r, dx, i, grad * scale);
  });
}

// MakeLoss and BlockGrad forward: out = in, a copy unless both are one buffer.
void LossIdentityForwardGpu(const OpContext& ctx, const NDArray& in, const NDArray& out) {
  CopyOnStream(Gpu(ctx), G(out), G(in), out.nbytes());
}

// dx (=|+=) grad_scale / norm everywhere; normalization as for SoftmaxOutputBackwardGpu, "valid"
// counting the outputs above valid_thresh.
void MakeLossBackwardGpu(const OpContext& ctx, GradReq req, const NDArray& out,
                         const NDArray& in_grad, float grad_scale, float valid_thresh,
                         int normalization) {
  if (req == GradReq::kNull) return;
  GpuResources::Impl& g = Gpu(ctx);
  const float host_scale =
      grad_scale / (normalization == 1 ? static_cast<float>(out.shape()[0]) : 1.0f);
  const float* device_scale = nullptr;
  if (normalization == 2) {
    const float* y = G(out);
    device_scale = ScaleByCount(
        g, out.size(), [=] __device__(int64_t i) { return y[i] > valid_thresh; }, grad_scale);
  }
  float* dx = G(in_grad);
  ForEach(g, in_grad.size(), [=] __device__(int64_t i) {
    AssignReq(req, dx, i, device_scale ? *device_scale : host_scale);
  });
}

// No gradient flows back: zeros for kWrite, nothing otherwise.
void BlockGradBackwardGpu(const OpContext& ctx, GradReq req, const NDArray& in_grad) {
  if (req == GradReq::kWrite) ZeroOnStream(Gpu(ctx), in_grad);
}

}  // namespace cohort::op
