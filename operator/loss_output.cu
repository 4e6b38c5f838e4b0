// Loss layers and BlockGrad on the GPU (Note [GPU kernels]), calling loss_output.h's functions.
// Normalisations that count elements on the device ("valid") write grad_scale / count into the
// workspace, which the gradient kernel reads: no copy back to the host, no synchronisation.
// The CPU throws on a label outside the classes; a GPU kernel cannot, and such a label matches
// no class (its row gets the gradient of an all-zero target).
#include "operator/common/pointwise_gpu.cuh"
#include "operator/loss_output.h"

namespace cohort::op {
namespace {

constexpr int kCountThreads = 1024;

// *scale = grad_scale / max(#{i < n : counted(i)}, 1). One block: the counts are of labels or
// loss values, small enough that a second pass would cost more than it saves.
template <typename Pred>
__global__ void __launch_bounds__(kCountThreads) ScaleByCountKernel(int64_t n, Pred counted, float grad_scale, float* scale) {
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

void SoftmaxOutputForwardGpu(const OpContext& ctx, const SoftmaxOutputRows& rows, int64_t outer,
                             int64_t inner) {
  ForEachRow(Gpu(ctx), outer, rows.size, inner, rows);
}

void SoftmaxOutputBackwardGpu(const OpContext& ctx, const SoftmaxOutputParam& p, const NDArray& out,
                              const NDArray& label_arr, const std::vector<GradReq>& req,
                              const std::vector<NDArray>& in_grad, int64_t outer, int64_t size,
                              int64_t inner) {
  GpuResources::Impl& g = Gpu(ctx);
  ZeroLabelGrad(g, req, in_grad);
  const GradReq r = req[0];
  if (r == GradReq::kNull) return;
  const float* y = G(out);
  const float* label = G(label_arr);
  float* dx = G(in_grad[0]);
  // The scale as the CPU computes it; only "valid" with ignored labels counts on the device.
  const int64_t labels = outer * inner;
  const float host_scale = p.grad_scale / SoftmaxOutputNorm(p, outer, inner, labels);
  const float* device_scale = nullptr;
  if (p.normalization == LossNormalization::kValid && p.use_ignore) {
    device_scale = ScaleByCount(
        g, labels, [=] __device__(int64_t j) { return !SoftmaxOutputIgnored(p, label[j]); },
        p.grad_scale);
  }
  const float off = SoftmaxOutputOffTarget(p, size);
  ForEach(g, outer * size * inner, [=] __device__(int64_t k) {
    const int64_t i = k % inner, c = k / inner % size, o = k / (inner * size);
    const float scale = device_scale ? *device_scale : host_scale;
    AssignReq(r, dx, k, SoftmaxOutputGrad(p, y[k], label[o * inner + i], c, off, scale));
  });
}

void RegressionOutputForwardGpu(const OpContext& ctx, RegressionKind kind, const NDArray& in,
                                const NDArray& out) {
  const float* x = G(in);
  float* y = G(out);
  ForEach(Gpu(ctx), in.size(), [=] __device__(int64_t i) { y[i] = RegressionValue(kind, x[i]); });
}

// scale = grad_scale over the values per sample.
void RegressionOutputBackwardGpu(const OpContext& ctx, RegressionKind kind, float grad_scale,
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
    AssignReq(r, dx, i, RegressionGrad(kind, y[i], label[i], scale));
  });
}

// MakeLoss and BlockGrad forward: out = in, a copy unless both are one buffer.
void LossIdentityForwardGpu(const OpContext& ctx, const NDArray& in, const NDArray& out) {
  CopyOnStream(Gpu(ctx), G(out), G(in), out.nbytes());
}

// dx (=|+=) grad_scale / norm everywhere; "valid" counts the outputs above valid_thresh.
void MakeLossBackwardGpu(const OpContext& ctx, const MakeLossParam& p, GradReq req,
                         const NDArray& out, const NDArray& in_grad) {
  if (req == GradReq::kNull) return;
  GpuResources::Impl& g = Gpu(ctx);
  const float host_scale =
      p.grad_scale /
      (p.normalization == LossNormalization::kBatch ? static_cast<float>(out.shape()[0]) : 1.0f);
  const float* device_scale = nullptr;
  if (p.normalization == LossNormalization::kValid) {
    const float* y = G(out);
    device_scale = ScaleByCount(
        g, out.size(), [=] __device__(int64_t i) { return MakeLossCounts(p, y[i]); }, p.grad_scale);
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
