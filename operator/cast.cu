// Cast on the GPU (Note [GPU kernels]): cast.h's conversion, a thread an element, one kernel per
// pair of dtypes.
#include "operator/cast.h"
#include "operator/common/exact_math.h"
#include "operator/common/pointwise_gpu.cuh"

namespace cohort::op {
namespace {

template <typename From, typename To>
__global__ void CastKernel(int64_t n, const From* x, To* y, bool add) {
  COHORT_CUDA_LOOP(i, n) y[i] = CastElement(x[i], y[i], add);
}

template <typename A, typename B>
__global__ void WideningAddKernel(int64_t n, const A* a, const B* b, float* y) {
  COHORT_CUDA_LOOP(i, n) y[i] = ConvertValue<float>(a[i]) + ConvertValue<float>(b[i]);
}

}  // namespace

void CastGpu(const OpContext& ctx, const NDArray& src, const NDArray& dst, bool add) {
  const int64_t n = src.size();
  if (n <= 0) return;
  const GpuResources::Impl& g = Gpu(ctx);
  COHORT_CHECK(src.ctx().is_gpu() && dst.ctx().is_gpu()) << "Cast: GPU arrays expected";
  DispatchDType(src.dtype(), [&](auto from_tag) {
    using From = decltype(from_tag);
    DispatchDType(dst.dtype(), [&](auto to_tag) {
      using To = decltype(to_tag);
      CastKernel<From, To><<<CudaBlocks(n), kCudaThreads, 0, g.stream>>>(
          n, static_cast<const From*>(src.raw_data()), static_cast<To*>(dst.raw_data()), add);
    });
  });
  CUDA_CHECK(cudaGetLastError());
}

void WideningAddGpu(const OpContext& ctx, const NDArray& a, const NDArray& b, const NDArray& out) {
  const int64_t n = out.size();
  if (n <= 0) return;
  const GpuResources::Impl& g = Gpu(ctx);
  DispatchFloat32OrHalf("_widening_add", a.dtype(), [&](auto a_tag) {
    using A = decltype(a_tag);
    DispatchFloat32OrHalf("_widening_add", b.dtype(), [&](auto b_tag) {
      using B = decltype(b_tag);
      WideningAddKernel<A, B><<<CudaBlocks(n), kCudaThreads, 0, g.stream>>>(
          n, a.data<A>(), b.data<B>(), out.data<float>());
    });
  });
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace cohort::op
