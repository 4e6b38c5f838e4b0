// OpenBLAS behind Gemm.
#include <cblas.h>

#include <vector>

#include "operator/common/kernel_util.h"

namespace cohort::op {

void Gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
          const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
          int64_t ldc) {
  if (m == 0 || n == 0) return;
  cblas_sgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans,
              transpose_b ? CblasTrans : CblasNoTrans, static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), alpha, a, static_cast<blasint>(lda),
              b, static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
}

void Gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
          const float* a, const float* b, float beta, float* c) {
  Gemm(transpose_a, transpose_b, m, n, k, alpha, a, transpose_a ? m : k, b, transpose_b ? k : n,
       beta, c, n);
}

namespace {
// Note [Kernel threads]: OpenBLAS never starts threads of its own.
const bool kBlasSingleThreaded = (openblas_set_num_threads(1), true);
}  // namespace

float* Scratch(size_t n, int slot) {
  thread_local std::vector<float> buffers[4];
  COHORT_CHECK(slot >= 0 && slot < 4) << "Scratch slot " << slot;
  if (buffers[slot].size() < n) buffers[slot].resize(n);
  return buffers[slot].data();
}

}  // namespace cohort::op
