// Small helpers shared by the CPU kernels: typed access, grad_req writes, BLAS, splitting work
// over threads, CPU clones, reductions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "base/cpu_clones.h"
#include "base/thread_arena.h"

#include "operator/common/operator.h"
#include "operator/common/shared_kernel.h"

namespace cohort::op {

// Note [Elementwise loops]
// Elementwise ops run in place (y is x), and GCC vectorizes `y[i] = f(x[i])` only behind a
// runtime overlap check that fails when y == x exactly, falling back to scalar code (tanh in
// place ran 1.4x slower than out of place). Element i reads only index i, so there is no
// dependence between iterations; COHORT_ELEMENTWISE (before the `for`) says so to the compiler.
#define COHORT_ELEMENTWISE _Pragma("GCC ivdep")

// dx[i] = grad(i), or += for kAdd, over [0, n): one loop per request, so that the branch is
// not inside the loop and the loop vectorizes (with grad a lambda the compiler can inline).
// grad gives T's ComputeType: the half types add in float and round once.
template <typename T, typename Grad>
[[gnu::always_inline]] inline void WriteGrad(GradReq req, int64_t n, T* dx, Grad grad) {
  using C = ComputeType<T>;
  if (req == GradReq::kAdd) {
    COHORT_ELEMENTWISE
    for (int64_t i = 0; i < n; ++i) dx[i] = ConvertValue<T>(ConvertValue<C>(dx[i]) + grad(i));
  } else {
    COHORT_ELEMENTWISE
    for (int64_t i = 0; i < n; ++i) dx[i] = ConvertValue<T>(grad(i));
  }
}

// Note [GPU kernels]
// An op with CUDA kernels defines them in its own .cu file (declared in its .cc), returns
// COHORT_GPU_KERNELS from HasGpuKernel, and begins Forward and Backward with
// COHORT_GPU_DISPATCH(ctx, call): on a gpu context it runs `call` and returns. Builds without
// CUDA compile neither the .cu files nor the calls; the executor refuses gpu contexts there.
// The GPU kernels run on the executor's stream (Note [GPU streams]) and honour grad_req as the
// CPU ones do; tests/operator/gpu_ops_test.cc runs each op on both contexts and compares.
#if COHORT_CUDA
#define COHORT_GPU_KERNELS true
#define COHORT_GPU_DISPATCH(ctx, call) \
  if ((ctx).ctx.is_gpu()) {            \
    call;                              \
    return;                            \
  }
#else
#define COHORT_GPU_KERNELS false
#define COHORT_GPU_DISPATCH(ctx, call) \
  COHORT_CHECK(!(ctx).ctx.is_gpu()) << "this build of Cohort has no GPU kernels"
#endif

// The float32 data of an array on either side, for the parameter structs of shared row bodies
// that both kernels take (Note [Shared kernel logic]); the dispatch decides which side reads it.
inline float* FloatsOf(const NDArray& a) {
  COHORT_CHECK(a.dtype() == DType::kFloat32) << "kernels take float32 arrays, got " << a.dtype();
  return static_cast<float*>(a.raw_data());
}

// The float32 host data of an array used by a CPU kernel.
inline float* F(const NDArray& a) {
  COHORT_CHECK(a.dtype() == DType::kFloat32 && a.ctx().is_host())
      << "CPU kernels take float32 host arrays, got " << a.dtype() << " on " << a.ctx();
  return static_cast<float*>(a.raw_data());
}

// Row-major C = alpha * op(A) * op(B) + beta * C, op(X) = X or Xᵀ; A is M×K after op, B K×N.
// OpenBLAS runs on the calling thread only (Note [Kernel threads]).
void Gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
          const float* a, const float* b, float beta, float* c);
// The same with explicit leading dimensions, for blocks of larger matrices.
void Gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
          const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
          int64_t ldc);
// Note [Which GEMM]: whether OpenBLAS's kernels of `core` (openblas_get_corename) are as new as
// the CPU, and whether Gemm runs a product on oneDNN rather than OpenBLAS.
bool OpenBlasKernelsFit(const std::string& core, bool cpu_has_avx2);
bool GemmOnOneDnn(int64_t m, int64_t n, int64_t k, bool transpose_a, bool transpose_b,
                  bool openblas_fits);

// Note [Kernel threads]
// OpenBLAS's own threads spin beside TBB's: with 2 of them, LeNet's 50x500x64 GEMMs ran 5 to 10
// times slower than on one thread, and a one-device run swung between 1550 and 3500 samples/s.
// So OpenBLAS stays single-threaded and kernels split their work at a coarser grain in the
// device's arena: samples of a convolution, row or column blocks of a fully connected layer.
// The split is static (chunk c of T always covers the same range) and partial sums are added in
// chunk order, so results do not depend on scheduling; with one thread it is the serial code.
//
// Calls body(chunk, begin, end) for the `chunks` static parts of [0, n), in parallel.
template <typename Body>
void ParallelChunks(int64_t n, int64_t chunks, const Body& body, ThreadArena* arena) {
  if (chunks <= 1 || arena == nullptr) {
    body(int64_t{0}, int64_t{0}, n);
    return;
  }
  arena->ParallelFor(0, chunks, 1, [&](int64_t first, int64_t last) {
    for (int64_t c = first; c < last; ++c) body(c, n * c / chunks, n * (c + 1) / chunks);
  });
}
// How many chunks to split n items into in this context: one per arena thread, at most n.
inline int64_t ChunksFor(const OpContext& ctx, int64_t n) {
  return ctx.arena ? std::max<int64_t>(1, std::min<int64_t>(ctx.arena->num_threads(), n)) : 1;
}

// A per-thread scratch buffer of at least n floats: grows on first use, then reused, so kernels
// allocate nothing in the steady state (one device = one thread).
// Slots 4 to 6 hold an op's operands widened once for all its chunks (LowPrecisionOperandOf).
inline constexpr int kScratchSlots = 8;
float* Scratch(size_t n, int slot = 0);

// Float reductions that vectorize, in a fixed order (operator/reductions.cc): Σ x[i],
// Σ (x[i] - mean)², Σ a[i] (x[i] - mean) over [0, n).
float Sum(const float* x, int64_t n);
float SumSquaredDeviations(const float* x, int64_t n, float mean);
float SumProductsOfDeviations(const float* a, const float* x, int64_t n, float mean);

// beta for a GEMM that writes a gradient: 0 overwrites, 1 accumulates.
inline float BetaFor(GradReq req) { return req == GradReq::kAdd ? 1.0f : 0.0f; }

// The rows [first, last) of an (outer, size, inner) array, one after another: the loop that an
// op wraps in a COHORT_CPU_CLONES function of its own (target_clones takes no templates), so
// that the row body's transcendentals run at the widest vector width the CPU has.
template <typename Body>
[[gnu::always_inline]] inline void RunRows(const Body& body, int64_t first, int64_t last,
                                           int64_t size, int64_t inner) {
  for (int64_t r = first; r < last; ++r) body(SerialLanes{}, RowBase(r, size, inner));
}
template <typename Body>
using RowsRunner = void (*)(const Body&, int64_t first, int64_t last, int64_t size, int64_t inner);

// Runs a row body (Note [Row lanes]) over every row of an (outer, size, inner) array, the rows
// split in static blocks over the device's arena (serially for small arrays); `run` is the op's
// cloned RunRows wrapper, or the baseline build of RunRows.
template <typename Body>
void ForEachRowOnCpu(const OpContext& ctx, int64_t outer, int64_t size, int64_t inner,
                     const Body& body, RowsRunner<Body> run = &RunRows<Body>) {
  constexpr int64_t kMinChunk = 1 << 13;  // elements per block of rows
  const int64_t rows = outer * inner;
  ParallelChunks(
      rows, ChunksFor(ctx, rows * size / kMinChunk),
      [&](int64_t, int64_t first, int64_t last) { run(body, first, last, size, inner); },
      ctx.arena);
}

// Collapses a shape to (outer, axis, inner) around `axis`.
struct AxisSplit {
  int64_t outer = 1, size = 1, inner = 1;
};
inline AxisSplit SplitAt(const Shape& s, int axis) {
  AxisSplit r;
  for (int d = 0; d < axis; ++d) r.outer *= s[d];
  r.size = s[axis];
  for (int d = axis + 1; d < s.ndim(); ++d) r.inner *= s[d];
  return r;
}

}  // namespace cohort::op
