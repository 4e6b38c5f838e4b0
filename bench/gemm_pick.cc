// Times OpenBLAS's cblas_sgemm beside oneDNN's dnnl_sgemm, one thread each, over the shapes
// Cohort's models run (GPT layers and attention, LeNet, MLP, ResNet im2col) and small ones, and
// prints one JSON line per shape and transpose pair: the evidence for Note [Which GEMM]
// (operator/common/blas.cc). The machine is noisy: compare the ratio, run it twice.
//   build/bench/gemm_pick
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <oneapi/dnnl/dnnl.h>
#include <vector>

namespace {

template <typename F>
double MicrosPerCall(const F& f, int64_t flops) {
  f();
  const int calls = static_cast<int>(std::max<int64_t>(5, 200'000'000 / std::max<int64_t>(flops, 1)));
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) f();
  const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
  return took.count() / calls;
}

}  // namespace

int main() {
  openblas_set_num_threads(1);
  omp_set_num_threads(1);
  const int shapes[][3] = {{8, 8, 8},      {16, 10, 64},   {64, 64, 64},    {128, 10, 128},
                           {20, 576, 25},  {50, 64, 500},  {32, 128, 784},  {64, 256, 576},
                           {16, 1024, 144}, {128, 128, 32}, {2048, 512, 128}, {2048, 128, 512},
                           {512, 128, 2048}};
  for (const auto& s : shapes) {
    const int m = s[0], n = s[1], k = s[2];
    std::vector<float> a(static_cast<size_t>(m) * k, 0.5f), b(static_cast<size_t>(k) * n, 0.25f),
        c(static_cast<size_t>(m) * n);
    for (int ta = 0; ta < 2; ++ta) {
      for (int tb = 0; tb < 2; ++tb) {
        const int lda = ta ? m : k, ldb = tb ? k : n;
        const int64_t flops = int64_t{2} * m * n * k;
        const double openblas = MicrosPerCall(
            [&] {
              cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
                          tb ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a.data(), lda, b.data(),
                          ldb, 0.0f, c.data(), n);
            },
            flops);
        const double onednn = MicrosPerCall(
            [&] {
              dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a.data(), lda, b.data(),
                         ldb, 0.0f, c.data(), n);
            },
            flops);
        std::printf(
            "{\"m\":%d,\"n\":%d,\"k\":%d,\"op\":\"%c%c\",\"openblas_us\":%.2f,\"onednn_us\":%.2f,"
            "\"onednn_speedup\":%.2f}\n",
            m, n, k, ta ? 'T' : 'N', tb ? 'T' : 'N', openblas, onednn, openblas / onednn);
      }
    }
  }
}
