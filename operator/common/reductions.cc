// Float reductions in 8 interleaved partial sums (kernel_util.h).
#include "operator/common/kernel_util.h"

namespace cohort::op {
namespace {

// Σ f(i) for i in [0, n), in 8 partial sums combined pairwise: a fixed order, so every run and
// CPU gives the same result, and independent adds that vectorize (a single running float sum is
// one dependent add after another).
template <typename F>
[[gnu::always_inline]] inline float Sum8(int64_t n, F f) {
  float acc[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) acc[j] += f(i + j);
  }
  for (; i < n; ++i) acc[i % 8] += f(i);
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

}  // namespace

COHORT_CPU_CLONES float Sum(const float* x, int64_t n) {
  return Sum8(n, [x](int64_t i) { return x[i]; });
}

COHORT_CPU_CLONES float SumSquaredDeviations(const float* x, int64_t n, float mean) {
  return Sum8(n, [x, mean](int64_t i) { return (x[i] - mean) * (x[i] - mean); });
}

COHORT_CPU_CLONES float SumProductsOfDeviations(const float* a, const float* x, int64_t n,
                                                float mean) {
  return Sum8(n, [a, x, mean](int64_t i) { return a[i] * (x[i] - mean); });
}

}  // namespace cohort::op
