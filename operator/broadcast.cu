// Broadcasting binary ops and `where` on the GPU (Note [GPU kernels]): forward one thread per
// output element, backward one thread per input element gathering its gradient in output order
// (Note [Broadcast layout]), with broadcast.h's functions as on the CPU.
#include "operator/broadcast.h"
#include "operator/common/pointwise_gpu.cuh"

namespace cohort::op {

namespace {

template <typename T>
void BroadcastForwardTyped(const GpuResources::Impl& g, BroadcastKind k, const BroadcastLayout& l,
                           const NDArray& a, const NDArray& b, const NDArray& out) {
  using C = ComputeType<T>;
  const T* pa = static_cast<const T*>(a.raw_data());
  const T* pb = static_cast<const T*>(b.raw_data());
  T* y = static_cast<T*>(out.raw_data());
  ForEach(g, out.size(), [=] __device__(int64_t i) {
    y[i] = ConvertValue<T>(BroadcastValue<C>(k, ConvertValue<C>(pa[BroadcastSource(l, 0, i)]),
                                             ConvertValue<C>(pb[BroadcastSource(l, 1, i)])));
  });
}

}  // namespace

void BroadcastForwardGpu(const OpContext& ctx, BroadcastKind k, const BroadcastLayout& l,
                         const NDArray& a, const NDArray& b, const NDArray& out) {
  DispatchArithmetic("broadcast", out.dtype(), [&](auto tag) {
    BroadcastForwardTyped<decltype(tag)>(Gpu(ctx), k, l, a, b, out);
  });
}

void BroadcastBackwardGpu(const OpContext& ctx, BroadcastKind k, const BroadcastLayout& l,
                          const NDArray& out_grad, const float* a, const float* b,
                          const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad) {
  const GpuResources::Impl& g = Gpu(ctx);
  const float* dy = G(out_grad);
  for (int side = 0; side < 2; ++side) {
    const GradReq r = req[side];
    if (r == GradReq::kNull) continue;
    float* dx = G(in_grad[side]);
    ForEach(g, l.in_size[side], [=] __device__(int64_t j) {
      const BroadcastGradTerm term{&l, k, side, dy, a, b};
      AssignReq(r, dx, j, BroadcastGather(l, side, j, term));
    });
  }
}

void WhereForwardGpu(const OpContext& ctx, const std::vector<NDArray>& in, const NDArray& out) {
  const float* c = G(in[0]);
  const float* x = G(in[1]);
  const float* y = G(in[2]);
  float* o = G(out);
  const int64_t row = out.size() / (in[0].size() > 0 ? in[0].size() : 1);
  ForEach(Gpu(ctx), out.size(), [=] __device__(int64_t i) { o[i] = WhereValue(c, x, y, i, row); });
}

void WhereBackwardGpu(const OpContext& ctx, const NDArray& out_grad, const NDArray& cond,
                      const std::vector<GradReq>& req, const std::vector<NDArray>& in_grad) {
  const GpuResources::Impl& g = Gpu(ctx);
  if (req[0] == GradReq::kWrite) ZeroOnStream(g, in_grad[0]);
  const float* c = G(cond);
  const float* dy = G(out_grad);
  const int64_t row = out_grad.size() / (cond.size() > 0 ? cond.size() : 1);
  for (int side = 0; side < 2; ++side) {
    const GradReq r = req[side + 1];
    if (r == GradReq::kNull) continue;
    float* dx = G(in_grad[side + 1]);
    ForEach(g, out_grad.size(),
            [=] __device__(int64_t i) { AssignReq(r, dx, i, WhereGrad(c, side, dy[i], i, row)); });
  }
}

}  // namespace cohort::op
