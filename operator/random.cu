// _random_uniform and _random_normal on the GPU (Note [GPU kernels]): random.h's value at every
// position, as on the CPU.
#include "operator/common/pointwise_gpu.cuh"
#include "operator/random.h"

namespace cohort::op {

void RandomGpu(const OpContext& ctx, const RandomParam& p, uint64_t key, const NDArray& out) {
  float* y = G(out);
  const RandomKind kind = p.kind;
  const double a = p.a, b = p.b;
  ForEach(Gpu(ctx), out.size(),
          [=] __device__(int64_t i) { y[i] = RandomValue(kind, key, a, b, i); });
}

}  // namespace cohort::op
