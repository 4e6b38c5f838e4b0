// softmax and log_softmax on the GPU (Note [GPU kernels]): softmax.h's row bodies, one row per
// block or thread (Note [Row lanes]). Sums run in float as on the CPU; only their order differs.
#include "operator/common/pointwise_gpu.cuh"
#include "operator/softmax.h"

namespace cohort::op {

void SoftmaxForwardGpu(const OpContext& ctx, const SoftmaxRows& rows, int64_t outer,
                       int64_t inner) {
  ForEachRow(Gpu(ctx), outer, rows.size, inner, rows);
}

void SoftmaxBackwardGpu(const OpContext& ctx, const SoftmaxGradRows& rows, int64_t outer,
                        int64_t inner) {
  ForEachRow(Gpu(ctx), outer, rows.size, inner, rows);
}

}  // namespace cohort::op
