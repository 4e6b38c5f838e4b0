// Elementwise arithmetic on the GPU (Note [GPU kernels]): the same expressions as elemwise.cc,
// one grid-stride loop each. The kind is uniform over a launch, so its switch never diverges.
#include "operator/pointwise_gpu.cuh"

namespace cohort::op {
namespace {

// The orders of BinaryKind and ScalarKind in elemwise.cc, which passes their values as ints.
enum class BinaryKind { kAdd, kSub, kMul, kDiv };
enum class ScalarKind { kPlus, kMinus, kRMinus, kMul, kDiv, kRDiv };

__device__ __forceinline__ float Binary(BinaryKind kind, float a, float b) {
  switch (kind) {
    case BinaryKind::kAdd: return a + b;
    case BinaryKind::kSub: return a - b;
    case BinaryKind::kMul: return a * b;
    case BinaryKind::kDiv: return a / b;
  }
  return 0;
}

// The gradient of `side` (0: lhs, 1: rhs) for head gradient g, as elemwise.cc computes it.
__device__ __forceinline__ float BinaryGrad(BinaryKind kind, int side, float g, const float* a,
                                            const float* b, int64_t i) {
  switch (kind) {
    case BinaryKind::kAdd: return g;
    case BinaryKind::kSub: return side == 0 ? g : -g;
    case BinaryKind::kMul: return g * (side == 0 ? b[i] : a[i]);
    case BinaryKind::kDiv: return side == 0 ? g / b[i] : -g * a[i] / (b[i] * b[i]);
  }
  return 0;
}

__device__ __forceinline__ float Scalar(ScalarKind kind, float x, float s) {
  switch (kind) {
    case ScalarKind::kPlus: return x + s;
    case ScalarKind::kMinus: return x - s;
    case ScalarKind::kRMinus: return s - x;
    case ScalarKind::kMul: return x * s;
    case ScalarKind::kDiv: return x / s;
    case ScalarKind::kRDiv: return s / x;
  }
  return 0;
}

__device__ __forceinline__ float ScalarGrad(ScalarKind kind, float g, const float* x, float s,
                                            int64_t i) {
  switch (kind) {
    case ScalarKind::kPlus:
    case ScalarKind::kMinus: return g;
    case ScalarKind::kRMinus: return -g;
    case ScalarKind::kMul: return g * s;
    case ScalarKind::kDiv: return g / s;
    case ScalarKind::kRDiv: return g * (-s / (x[i] * x[i]));
  }
  return 0;
}

}  // namespace

void BinaryForwardGpu(const OpContext& ctx, int kind, const NDArray& lhs, const NDArray& rhs,
                      const NDArray& out) {
  const float* a = G(lhs);
  const float* b = G(rhs);
  float* y = G(out);  // may be a or b
  const BinaryKind k = static_cast<BinaryKind>(kind);
  ForEach(Gpu(ctx), out.size(), [=] __device__(int64_t i) { y[i] = Binary(k, a[i], b[i]); });
}

// One loop per side, lhs first, as on the CPU (so a gradient sharing memory with the head
// gradient sees the same data there).
void BinaryBackwardGpu(const OpContext& ctx, int kind, const NDArray& out_grad,
                       const std::vector<NDArray>& in, const std::vector<GradReq>& req,
                       const std::vector<NDArray>& in_grad) {
  const GpuResources::Impl& g = Gpu(ctx);
  const BinaryKind k = static_cast<BinaryKind>(kind);
  const bool reads_inputs = k == BinaryKind::kMul || k == BinaryKind::kDiv;
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

void ScalarForwardGpu(const OpContext& ctx, int kind, float s, const NDArray& in,
                      const NDArray& out) {
  const float* x = G(in);
  float* y = G(out);  // may be x
  const ScalarKind k = static_cast<ScalarKind>(kind);
  ForEach(Gpu(ctx), out.size(), [=] __device__(int64_t i) { y[i] = Scalar(k, x[i], s); });
}

void ScalarBackwardGpu(const OpContext& ctx, int kind, float s, GradReq req,
                       const NDArray& out_grad, const NDArray* in, const NDArray& in_grad) {
  if (req == GradReq::kNull) return;
  const float* dy = G(out_grad);
  const float* x = in ? G(*in) : nullptr;
  float* dx = G(in_grad);
  const ScalarKind k = static_cast<ScalarKind>(kind);
  ForEach(Gpu(ctx), out_grad.size(),
          [=] __device__(int64_t i) { AssignReq(req, dx, i, ScalarGrad(k, dy[i], x, s, i)); });
}

}  // namespace cohort::op
