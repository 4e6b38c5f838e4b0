// _random_uniform and _random_normal on the GPU (Note [GPU kernels]): random.h's value at every
// position, as on the CPU.
#include "operator/common/pointwise_gpu.cuh"
#include "operator/random.h"

namespace cohort::op {

namespace {

template <typename T>
void RandomTyped(const GpuResources::Impl& g, const RandomParam& p, uint64_t key,
                 const NDArray& out) {
  T* y = static_cast<T*>(out.raw_data());
  const RandomKind kind = p.kind;
  const double a = p.a, b = p.b;
  ForEach(g, out.size(),
          [=] __device__(int64_t i) { y[i] = static_cast<T>(RandomValue(kind, key, a, b, i)); });
}

}  // namespace

// The float draw rounded to the output's type (float16, float32 or float64), as on the CPU.
void RandomGpu(const OpContext& ctx, const RandomParam& p, uint64_t key, const NDArray& out) {
  if (out.dtype() == DType::kFloat64) {
    RandomTyped<double>(Gpu(ctx), p, key, out);
  } else if (out.dtype() == DType::kFloat16) {
    RandomTyped<float16>(Gpu(ctx), p, key, out);
  } else {
    RandomTyped<float>(Gpu(ctx), p, key, out);
  }
}

}  // namespace cohort::op
