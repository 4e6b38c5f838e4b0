// Float reductions in 16 interleaved partial sums (SumOf16, shared_kernel.h), built for AVX2 and
// AVX-512 too.
#include "operator/common/kernel_util.h"

namespace cohort::op {

COHORT_CPU_CLONES float Sum(const float* x, int64_t n) {
  return SumOf16(n, [x](int64_t i) { return x[i]; });
}

COHORT_CPU_CLONES float SumSquaredDeviations(const float* x, int64_t n, float mean) {
  return SumOf16(n, [x, mean](int64_t i) { return (x[i] - mean) * (x[i] - mean); });
}

COHORT_CPU_CLONES float SumProductsOfDeviations(const float* a, const float* x, int64_t n,
                                                float mean) {
  return SumOf16(n, [a, x, mean](int64_t i) { return a[i] * (x[i] - mean); });
}

}  // namespace cohort::op
