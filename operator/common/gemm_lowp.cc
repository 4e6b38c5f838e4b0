// GEMMs of float16 and bfloat16 operands (Note [Low-precision GEMM]).
#include "operator/common/gemm_lowp.h"

#include <cpuid.h>
#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <compare>
#include <cstdio>
#include <map>
#include <mutex>
#include <unordered_map>

#include "ndarray/convert.h"
#include "operator/common/kernel_util.h"

namespace cohort::op {
namespace {

const dnnl::engine& Engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

struct MatmulKey {
  bool transpose_a, transpose_b, accumulate;
  int64_t m, n, k, lda, ldb, ldc;
  auto operator<=>(const MatmulKey&) const = default;
};

// A matmul primitive for one shape, with its memory objects and argument map, rebound to new
// data each call (no allocation after the first).
struct Matmul {
  dnnl::matmul primitive;
  dnnl::memory a, b, c;
  std::unordered_map<int, dnnl::memory> args;
};

// The thread's matmul for `key`, or null where oneDNN has no bfloat16 matmul for this CPU.
Matmul* MatmulFor(const MatmulKey& key) {
  thread_local std::map<MatmulKey, std::unique_ptr<Matmul>> cache;
  if (auto it = cache.find(key); it != cache.end()) return it->second.get();
  using dt = dnnl::memory::data_type;
  using dims = dnnl::memory::dims;
  const dnnl::memory::desc a({key.m, key.k}, dt::bf16,
                             key.transpose_a ? dims{1, key.lda} : dims{key.lda, 1});
  const dnnl::memory::desc b({key.k, key.n}, dt::bf16,
                             key.transpose_b ? dims{1, key.ldb} : dims{key.ldb, 1});
  const dnnl::memory::desc c({key.m, key.n}, dt::f32, dims{key.ldc, 1});
  dnnl::primitive_attr attr;
  if (key.accumulate) {
    dnnl::post_ops ops;
    ops.append_sum(1.0f);
    attr.set_post_ops(ops);
  }
  std::unique_ptr<Matmul> made;
  try {
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), attr, Engine());
    made = std::make_unique<Matmul>();
    made->primitive = dnnl::matmul(pd);
  } catch (const dnnl::error&) {
    made.reset();  // no bfloat16 matmul on this CPU: the caller widens
  }
  if (made) {
    made->a = dnnl::memory(a, Engine(), DNNL_MEMORY_NONE);
    made->b = dnnl::memory(b, Engine(), DNNL_MEMORY_NONE);
    made->c = dnnl::memory(c, Engine(), DNNL_MEMORY_NONE);
    made->args = {{DNNL_ARG_SRC, made->a}, {DNNL_ARG_WEIGHTS, made->b}, {DNNL_ARG_DST, made->c}};
  }
  return cache.emplace(key, std::move(made)).first->second.get();
}

// X (rows x cols, leading dimension ld) widened into a dense float32 matrix, as stored (the
// caller's Gemm applies the transpose).
template <typename T>
float* Widened(const T* x, int64_t ld, int64_t rows, int64_t cols, int slot) {
  float* out = Scratch(static_cast<size_t>(rows * cols), slot);
  if (ld == cols) {  // dense: one call, not one a row (batch_dot's rows are a head's 32 values)
    WidenToFloat(DTypeOf<T>::value, x, rows * cols, out);
    return out;
  }
  for (int64_t i = 0; i < rows; ++i) {
    WidenToFloat(DTypeOf<T>::value, x + i * ld, cols, out + i * cols);
  }
  return out;
}

template <typename T>
void WidenedGemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, const T* a,
                 int64_t lda, const T* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  const int64_t a_cols = transpose_a ? m : k, b_cols = transpose_b ? k : n;
  const float* wa = Widened(a, lda, transpose_a ? k : m, a_cols, 2);
  const float* wb = Widened(b, ldb, transpose_b ? n : k, b_cols, 3);
  Gemm(transpose_a, transpose_b, m, n, k, 1.0f, wa, a_cols, wb, b_cols, beta, c, ldc);
}

bool CpuHasAmxBFloat16() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  return (edx >> 22) & 1u;  // CPUID.(EAX=7,ECX=0):EDX[22], AMX-BF16
}

}  // namespace

bool BFloat16MatmulPays(bool amd, bool avx512_bf16, bool amx_bf16) {
  return amx_bf16 || (amd && avx512_bf16);
}

bool BFloat16ProductsPayHere() {
  static const bool pays = BFloat16MatmulPays(
      __builtin_cpu_is("amd"), __builtin_cpu_supports("avx512bf16"), CpuHasAmxBFloat16());
  return pays;
}

bool ProductsWidenHere(DType dtype) {
  return dtype == DType::kFloat16 || !BFloat16ProductsPayHere();
}

void GemmLowPrecision(DType dtype, bool transpose_a, bool transpose_b, int64_t m, int64_t n,
                      int64_t k, const void* a, int64_t lda, const void* b, int64_t ldb, float beta,
                      float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  COHORT_CHECK(beta == 0.0f || beta == 1.0f) << "GemmLowPrecision: beta " << beta;
  if (k == 0) {  // an empty sum: C = beta·C, with beta 0 overwriting (whatever C held)
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0f ? 0.0f : c[i * ldc + j];
    }
    return;
  }
  COHORT_CHECK(dtype == DType::kBFloat16 || dtype == DType::kFloat16)
      << "GemmLowPrecision: " << dtype << " operands";
  if (ProductsWidenHere(dtype)) {
    if (dtype == DType::kFloat16) {
      WidenedGemm(transpose_a, transpose_b, m, n, k, static_cast<const float16*>(a), lda,
                  static_cast<const float16*>(b), ldb, beta, c, ldc);
    } else {
      WidenedGemm(transpose_a, transpose_b, m, n, k, static_cast<const bfloat16*>(a), lda,
                  static_cast<const bfloat16*>(b), ldb, beta, c, ldc);
    }
    return;
  }
  Matmul* matmul = MatmulFor({transpose_a, transpose_b, beta != 0.0f, m, n, k, lda, ldb, ldc});
  if (matmul == nullptr) {
    static std::once_flag said;
    std::call_once(said, [] {
      std::fprintf(stderr,
                   "cohort: warning: oneDNN made no bfloat16 matmul for this CPU: "
                   "bfloat16 products run widened to float32\n");
    });
    WidenedGemm(transpose_a, transpose_b, m, n, k, static_cast<const bfloat16*>(a), lda,
                static_cast<const bfloat16*>(b), ldb, beta, c, ldc);
    return;
  }
  // Note [Kernel threads]: oneDNN's OpenMP team is this thread alone.
  thread_local const bool one_thread = (omp_set_num_threads(1), true);
  (void)one_thread;
  thread_local dnnl::stream stream(Engine());
  matmul->a.set_data_handle(const_cast<void*>(a));
  matmul->b.set_data_handle(const_cast<void*>(b));
  matmul->c.set_data_handle(c);
  matmul->primitive.execute(stream, matmul->args);
  stream.wait();
}

LowPrecisionOperand LowPrecisionOperandOf(const OpContext& ctx, const NDArray& a, int slot) {
  COHORT_CHECK(slot >= 4 && slot <= 6) << "LowPrecisionOperandOf: scratch slot " << slot;
  const DType dtype = a.dtype();
  if (!ProductsWidenHere(dtype)) return {dtype, a.raw_data(), nullptr};
  const int64_t n = a.size();
  float* out = Scratch(static_cast<size_t>(n), slot);
  const char* src = static_cast<const char*>(a.raw_data());
  constexpr int64_t kMinChunk = 1 << 16;  // values a chunk widens
  ParallelChunks(
      n, ChunksFor(ctx, n / kMinChunk),
      [&](int64_t, int64_t begin, int64_t end) {
        WidenToFloat(dtype, src + begin * 2, end - begin, out + begin);
      },
      ctx.arena);
  return {dtype, a.raw_data(), out};
}

void GemmLowPrecision(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k,
                      const LowPrecisionOperand& a, int64_t lda, const LowPrecisionOperand& b,
                      int64_t ldb, float beta, float* c, int64_t ldc) {
  if (a.widened && b.widened) {
    if (m == 0 || n == 0) return;
    Gemm(transpose_a, transpose_b, m, n, k, 1.0f, a.widened, lda, b.widened, ldb, beta, c, ldc);
    return;
  }
  COHORT_CHECK(a.dtype == b.dtype) << "GemmLowPrecision: " << a.dtype << " and " << b.dtype;
  GemmLowPrecision(a.dtype, transpose_a, transpose_b, m, n, k, a.data, lda, b.data, ldb, beta, c,
                   ldc);
}

}  // namespace cohort::op
