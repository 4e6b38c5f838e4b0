// COHORT_HOST_DEVICE: marks an inline function that both the CPU kernels (g++) and the CUDA
// kernels (nvcc) call, so that the math an op's two kernels share is written once, in the op's
// header, and the CPU tests execute it (Note [Shared kernel logic], operator/common/kernel_util.h).
#pragma once

#include <bit>
#include <cstdint>

// COHORT_EXEC_CHECK_DISABLE goes before the `template` of a COHORT_HOST_DEVICE template whose
// instantiations may call __device__-only members of their arguments (the GPU's row lanes,
// Note [Row lanes]): nvcc then checks each instantiation where it is used, not the template.
#if defined(__CUDACC__)
#define COHORT_HOST_DEVICE __host__ __device__ __forceinline__
#define COHORT_EXEC_CHECK_DISABLE _Pragma("nv_exec_check_disable")
#else
#define COHORT_HOST_DEVICE [[gnu::always_inline]] inline
#define COHORT_EXEC_CHECK_DISABLE
#endif

// COHORT_SIMD_MAX(var) goes before a loop that only takes maxima into `var` (`var = var < v ? v
// : var`): OpenMP's simd reduction (-fopenmp-simd) lets g++ vectorize it. A maximum is exact in
// any grouping, so the result does not depend on the vector width; nvcc ignores it.
#if defined(__CUDACC__)
#define COHORT_SIMD_MAX(var)
#else
#define COHORT_PRAGMA(text) _Pragma(#text)
#define COHORT_SIMD_MAX(var) COHORT_PRAGMA(omp simd reduction(max : var))
#endif

// COHORT_INDEPENDENT goes before a loop whose iteration k reads and writes only element k of
// its arrays, which may be the same array (in place): g++ then vectorizes it without a runtime
// overlap check, which fails for in-place data and falls back to scalar code (Note
// [Elementwise loops], operator/common/kernel_util.h); nvcc ignores it.
#if defined(__CUDACC__)
#define COHORT_INDEPENDENT
#else
#define COHORT_INDEPENDENT _Pragma("GCC ivdep")
#endif

namespace cohort {

// std::bit_cast for the types kernels reinterpret, on either side.
COHORT_HOST_DEVICE uint32_t FloatBits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  return std::bit_cast<uint32_t>(f);
#endif
}
COHORT_HOST_DEVICE float BitsFloat(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  return std::bit_cast<float>(u);
#endif
}

}  // namespace cohort
