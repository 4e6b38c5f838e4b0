// Elementwise arithmetic on the GPU (Note [GPU kernels]): one grid-stride loop per launch calling
// elemwise.h's functions, as the CPU loops do. The kind is uniform over a launch, so its switch
// never diverges.
#include "operator/common/pointwise_gpu.cuh"
#include "operator/elemwise.h"

namespace cohort::op {

void BinaryForwardGpu(const OpContext& ctx, BinaryKind k, const NDArray& lhs, const NDArray& rhs,
                      const NDArray& out) {
  const float* a = G(lhs);
  const float* b = G(rhs);
  float* y = G(out);  // may be a or b
  ForEach(Gpu(ctx), out.size(), [=] __device__(int64_t i) { y[i] = BinaryValue(k, a[i], b[i]); });
}

// One loop per side, lhs first, as on the CPU (so a gradient sharing memory with the head
// gradient sees the same data there).
void BinaryBackwardGpu(const OpContext& ctx, BinaryKind k, const NDArray& out_grad,
                       const std::vector<NDArray>& in, const std::vector<GradReq>& req,
                       const std::vector<NDArray>& in_grad) {
  const GpuResources::Impl& g = Gpu(ctx);
  const bool reads_inputs = BinaryGradReadsInputs(k);
  const float* dy = G(out_grad);
  const float* a = reads_inputs ? G(in[0]) : nullptr;
  const float* b = reads_inputs ? G(in[1]) : nullptr;
  for (int side = 0; side < 2; ++side) {
    const GradReq r = req[side];
    if (r == GradReq::kNull) continue;
    float* dx = G(in_grad[side]);
    ForEach(g, out_grad.size(), [=] __device__(int64_t i) {
      AssignReq(r, dx, i, BinaryGrad(k, side, dy[i], a, b, i));
    });
  }
}

void ScalarForwardGpu(const OpContext& ctx, ScalarKind k, float s, const NDArray& in,
                      const NDArray& out) {
  const float* x = G(in);
  float* y = G(out);  // may be x
  ForEach(Gpu(ctx), out.size(), [=] __device__(int64_t i) { y[i] = ScalarValue(k, x[i], s); });
}

void ScalarBackwardGpu(const OpContext& ctx, ScalarKind k, float s, GradReq req,
                       const NDArray& out_grad, const NDArray* in, const NDArray& in_grad) {
  if (req == GradReq::kNull) return;
  const float* dy = G(out_grad);
  const float* x = in ? G(*in) : nullptr;
  float* dx = G(in_grad);
  ForEach(Gpu(ctx), out_grad.size(),
          [=] __device__(int64_t i) { AssignReq(req, dx, i, ScalarGrad(k, dy[i], x, s, i)); });
}

}  // namespace cohort::op
