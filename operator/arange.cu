// _arange and _contrib_arange_like on the GPU (Note [GPU kernels]): arange.h's value at every
// position, as on the CPU.
#include "operator/arange.h"
#include "operator/common/pointwise_gpu.cuh"

namespace cohort::op {

namespace {

template <typename T>
void ArangeTyped(const GpuResources::Impl& g, const ArangeParam& p, const NDArray& out) {
  T* y = static_cast<T*>(out.raw_data());
  const double start = p.start, step = p.step;
  const int64_t repeat = p.repeat;
  ForEach(g, out.size(),
          [=] __device__(int64_t i) { y[i] = ArangeValue<T>(start, step, repeat, i); });
}

}  // namespace

void ArangeGpu(const OpContext& ctx, const ArangeParam& p, const NDArray& out) {
  DispatchDType(out.dtype(), [&](auto tag) {
    if constexpr (!std::is_same_v<decltype(tag), bool>) {
      ArangeTyped<decltype(tag)>(Gpu(ctx), p, out);
    }
  });
}

void ZeroGradGpu(const OpContext& ctx, const NDArray& grad) { ZeroOnStream(Gpu(ctx), grad); }

}  // namespace cohort::op
