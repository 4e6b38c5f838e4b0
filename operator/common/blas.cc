// Gemm: oneDNN's sgemm for large products, OpenBLAS for small ones (Note [Which GEMM]).
#include <cblas.h>
#include <omp.h>

#include <oneapi/dnnl/dnnl.h>

#include <cctype>
#include <string>
#include <vector>

#include "operator/common/kernel_util.h"

namespace cohort::op {

// Note [Which GEMM]
// Single-threaded on this Zen 4 (AVX-512), oneDNN's dnnl_sgemm beats OpenBLAS by 10-30% on
// products of a few million multiply-adds (a GPT's 2048x512x128 layers: 98-106 GFLOP/s against
// 81-92) but costs 0.3-1 us more per call, so OpenBLAS wins below about 2M (64x64x64: 4.9 against
// 5.7 us) and for Aᵀ·Bᵀ at every size; measured by bench/gemm_pick. oneDNN mallocs one
// packing buffer per call (74 KB for 2048x512x128, from the thread's malloc arena, no syscall);
// OpenBLAS packs into its own pool.
// OpenBLAS (DYNAMIC_ARCH) picks its kernels by the CPU's vendor, family and model, and gives a CPU
// it does not know the oldest x86-64 kernels: on a virtual machine's Intel Xeon with AVX-512
// (CPUID model hidden) Debian's OpenBLAS 0.3.21 ran Prescott's SSE3 kernels, 4.9x slower than
// oneDNN at 64x64x64 (18.9 against 3.9 us; a GPT step's attention products took 127 ms instead of
// about 30). oneDNN picks its kernels by the instruction sets themselves, so where OpenBLAS's
// kernels are older than the CPU the products from 32K multiply-adds go to oneDNN (below, the
// old kernels lose under a microsecond a call, and the tiny products keep OpenBLAS's rows, which
// do not depend on how many rows a device was given: oneDNN's do).
constexpr int64_t kDnnlMinProduct = int64_t{1} << 21;
constexpr int64_t kDnnlMinProductOverOldKernels = int64_t{1} << 15;

bool OpenBlasKernelsFit(const std::string& core, bool cpu_has_avx2) {
  if (!cpu_has_avx2) return true;  // no AVX2 kernel to miss
  std::string name;
  for (char ch : core) name += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (const char* modern :
       {"haswell", "skylakex", "cooperlake", "sapphirerapids", "zen", "excavator"}) {
    if (name == modern) return true;
  }
  return false;
}

bool GemmOnOneDnn(int64_t m, int64_t n, int64_t k, bool transpose_a, bool transpose_b,
                  bool openblas_fits) {
  if (!openblas_fits) return m * n * k >= kDnnlMinProductOverOldKernels;
  return m * n * k >= kDnnlMinProduct && !(transpose_a && transpose_b);
}

namespace {
// Note [Kernel threads]: OpenBLAS never starts threads of its own.
const bool kBlasSingleThreaded = (openblas_set_num_threads(1), true);
const bool kOpenBlasFits =
    OpenBlasKernelsFit(openblas_get_corename(), __builtin_cpu_supports("avx2"));
}  // namespace

void Gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
          const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
          int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (GemmOnOneDnn(m, n, k, transpose_a, transpose_b, kOpenBlasFits)) {
    // Note [Kernel threads]: oneDNN's OpenMP team is this thread alone.
    thread_local const bool one_thread = (omp_set_num_threads(1), true);
    (void)one_thread;
    const dnnl_status_t status =
        dnnl_sgemm(transpose_a ? 'T' : 'N', transpose_b ? 'T' : 'N', m, n, k, alpha, a, lda, b,
                   ldb, beta, c, ldc);
    COHORT_CHECK(status == dnnl_success)
        << "oneDNN sgemm " << m << "x" << n << "x" << k << " failed with status " << status;
    return;
  }
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

float* Scratch(size_t n, int slot) {
  thread_local std::vector<float> buffers[kScratchSlots];
  COHORT_CHECK(slot >= 0 && slot < kScratchSlots) << "Scratch slot " << slot;
  if (buffers[slot].size() < n) buffers[slot].resize(n);
  return buffers[slot].data();
}

}  // namespace cohort::op
