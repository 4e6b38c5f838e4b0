// Which library runs a float32 product (Note [Which GEMM]): OpenBLAS for small ones while its
// kernels fit the CPU, oneDNN from 32K multiply-adds where OpenBLAS fell back to older kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "operator/common/gemm_lowp.h"
#include "operator/common/kernel_util.h"

namespace cohort::op {
namespace {

TEST(GemmPick, OpenBlasKernelsOlderThanTheCpuAreNotUsed) {
  // A CPU with AVX2 or AVX-512: OpenBLAS's own kernels for it fit, its fallbacks do not.
  for (const char* fits : {"Haswell", "SkylakeX", "SAPPHIRERAPIDS", "Zen", "CooperLake"}) {
    EXPECT_TRUE(OpenBlasKernelsFit(fits, true)) << fits;
  }
  for (const char* old : {"Prescott", "Core2", "Nehalem", "Sandybridge", "Barcelona", ""}) {
    EXPECT_FALSE(OpenBlasKernelsFit(old, true)) << old;
  }
  EXPECT_TRUE(OpenBlasKernelsFit("Prescott", false));  // a CPU without AVX2 loses nothing
}

TEST(GemmPick, SmallProductsGoToOneDnnOnlyWhereOpenBlasDoesNotFit) {
  EXPECT_FALSE(GemmOnOneDnn(64, 64, 64, false, false, true));
  EXPECT_TRUE(GemmOnOneDnn(2048, 512, 128, false, true, true));
  EXPECT_FALSE(GemmOnOneDnn(2048, 512, 128, true, true, true));  // Aᵀ·Bᵀ stays OpenBLAS's
  EXPECT_TRUE(GemmOnOneDnn(64, 64, 64, false, false, false));
  EXPECT_TRUE(GemmOnOneDnn(64, 64, 64, true, true, false));
  EXPECT_FALSE(GemmOnOneDnn(8, 8, 8, false, false, false));  // tiny: a microsecond at most
}

// bfloat16 products run on oneDNN's bfloat16 matmul only where they outpace float32's (Note
// [Low-precision GEMM]): AMX, or AMD's AVX512-BF16; an Intel CPU with AVX512-BF16 alone widens.
TEST(GemmPick, BFloat16MatmulOnlyWhereItOutpacesFloat32) {
  EXPECT_TRUE(BFloat16MatmulPays(/*amd=*/true, /*avx512_bf16=*/true, /*amx_bf16=*/false));
  EXPECT_TRUE(BFloat16MatmulPays(false, true, true));
  EXPECT_FALSE(BFloat16MatmulPays(false, true, false));
  EXPECT_FALSE(BFloat16MatmulPays(true, false, false));
}

// bfloat16 operands, either path: the float32 sum of exact products (small integers).
TEST(GemmPick, BFloat16ProductsAreExactSums) {
  const int64_t m = 70, n = 50, k = 40;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      std::vector<bfloat16> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
      for (size_t i = 0; i < a.size(); ++i) a[i] = bfloat16(static_cast<float>(i % 7) - 3.0f);
      for (size_t i = 0; i < b.size(); ++i) b[i] = bfloat16(static_cast<float>(i % 5) - 2.0f);
      std::vector<float> c(static_cast<size_t>(m * n));
      GemmLowPrecision(DType::kBFloat16, ta, tb, m, n, k, a.data(), ta ? m : k, b.data(),
                       tb ? k : n, 0.0f, c.data(), n);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          float want = 0;
          for (int64_t l = 0; l < k; ++l) {
            want += static_cast<float>(ta ? a[l * m + i] : a[i * k + l]) *
                    static_cast<float>(tb ? b[j * k + l] : b[l * n + j]);
          }
          ASSERT_EQ(c[i * n + j], want) << ta << tb << i << j;
        }
      }
    }
  }
}

// Whichever library runs it, a product is the product.
TEST(GemmPick, EveryPathMultiplies) {
  for (int64_t size : {4, 64, 160}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        const int64_t m = size, n = size + 3, k = size + 5;
        std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n)),
            c(static_cast<size_t>(m * n), 1.0f);
        for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) - 3.0f;
        for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 5) - 2.0f;
        Gemm(ta, tb, m, n, k, 1.0f, a.data(), b.data(), 1.0f, c.data());
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            double want = 1.0;
            for (int64_t l = 0; l < k; ++l) {
              want += double{ta ? a[l * m + i] : a[i * k + l]} * (tb ? b[j * k + l] : b[l * n + j]);
            }
            ASSERT_EQ(c[i * n + j], static_cast<float>(want)) << size << ta << tb << i << j;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace cohort::op
