// _masked_softmax on the GPU (Note [GPU kernels]): masked_softmax.h's row bodies, one row per
// block (Note [Row lanes]). Sums run in float as on the CPU; only their order differs.
#include "operator/common/exact_math.h"
#include "operator/common/pointwise_gpu.cuh"
#include "operator/masked_softmax.h"

namespace cohort::op {
namespace {

template <typename In, typename Out>
void BackwardOf(GpuResources::Impl& g, const MaskedSoftmaxGradRows<In, Out>& rows, int64_t outer,
                const NDArray& dmask_array, GradReq mask_req) {
  const int64_t size = rows.forward.size;
  if (rows.req != GradReq::kNull) ForEachRow(g, outer, size, 1, rows);
  if (mask_req == GradReq::kNull) return;
  const MaskedSoftmaxRowStats<In, Out> stats{
      rows, static_cast<float*>(g.Workspace(outer * 3 * sizeof(float)))};
  ForEachRow(g, outer, size, 1, stats);
  float* dmask = G(dmask_array);
  const bool add = mask_req == GradReq::kAdd;
  ForEach(g, dmask_array.size(), [=] __device__(int64_t j) {
    const float v = stats.MaskGradient(j, outer);
    dmask[j] = add ? dmask[j] + v : v;
  });
}

}  // namespace

void MaskedSoftmaxForwardGpu(const OpContext& ctx, const NDArray& x, const NDArray& mask,
                             const NDArray& y, int64_t mask_rows, double scale) {
  const int64_t size = x.shape()[x.shape().ndim() - 1];
  DispatchFloat32OrHalf("_masked_softmax", x.dtype(), [&](auto in_tag) {
    using In = decltype(in_tag);
    DispatchFloat32OrHalf("_masked_softmax", y.dtype(), [&](auto out_tag) {
      using Out = decltype(out_tag);
      const MaskedSoftmaxRows<In, Out> rows{static_cast<const In*>(x.raw_data()),
                                            G(mask),
                                            static_cast<Out*>(y.raw_data()),
                                            size,
                                            mask_rows,
                                            static_cast<float>(ConvertValue<In>(scale))};
      ForEachRow(Gpu(ctx), x.size() / size, size, 1, rows);
    });
  });
}

void MaskedSoftmaxBackwardGpu(const OpContext& ctx, const NDArray& x, const NDArray& mask,
                              const NDArray& dy, const NDArray& dx, GradReq req,
                              const NDArray& dmask, GradReq mask_req, int64_t mask_rows,
                              double scale) {
  const int64_t size = x.shape()[x.shape().ndim() - 1];
  DispatchFloat32OrHalf("_masked_softmax", x.dtype(), [&](auto in_tag) {
    using In = decltype(in_tag);
    DispatchFloat32OrHalf("_masked_softmax", dy.dtype(), [&](auto out_tag) {
      using Out = decltype(out_tag);
      const MaskedSoftmaxRows<In, Out> forward{
          static_cast<const In*>(x.raw_data()),       G(mask), nullptr, size, mask_rows,
          static_cast<float>(ConvertValue<In>(scale))};
      const MaskedSoftmaxGradRows<In, Out> rows{
          forward, static_cast<const Out*>(dy.raw_data()),
          req == GradReq::kNull ? nullptr : static_cast<In*>(dx.raw_data()), req};
      BackwardOf(Gpu(ctx), rows, x.size() / size, dmask, mask_req);
    });
  });
}

}  // namespace cohort::op
