// transpose on the GPU (Note [GPU kernels]): one thread per output element through
// transpose.h's index map, as the CPU does.
#include "operator/common/pointwise_gpu.cuh"
#include "operator/transpose.h"

namespace cohort::op {

void TransposeGpu(const OpContext& ctx, const TransposeLayout& l, bool backward, GradReq req,
                  const NDArray& src, const NDArray& dst) {
  const float* s = G(src);
  float* d = G(dst);
  if (!backward) {
    ForEach(Gpu(ctx), dst.size(), [=] __device__(int64_t i) { d[i] = s[TransposeSource(l, i)]; });
  } else {
    ForEach(Gpu(ctx), src.size(),
            [=] __device__(int64_t i) { AssignReq(req, d, TransposeSource(l, i), s[i]); });
  }
}

}  // namespace cohort::op
