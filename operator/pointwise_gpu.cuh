// Helpers shared by the CUDA kernels of the pointwise and small ops (activation.cu, softmax.cu,
// loss_output.cu, ...): block reductions, softmax-style row launchers, zero fills. nvcc only.
#pragma once

#include <cmath>
#include <cstdint>

#include "operator/gpu_common.cuh"

namespace cohort::op {

struct SumOp {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return a + b;
  }
};
struct MaxOp {  // std::max's order: a NaN in `a` stays, one in `b` is dropped
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return a < b ? b : a;
  }
};

// Combines v over all threads of the block; every thread gets the result. Every thread must
// call it (it has barriers); blockDim.x must be a multiple of 32, at most 1024. The partials are
// combined in warp order, so the result does not depend on scheduling.
template <typename T, typename Op>
__device__ T BlockAllReduce(T v, Op op) {
  __shared__ T partial[32];
  for (int offset = 16; offset > 0; offset >>= 1) {
    v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  }
  __syncthreads();  // a previous call may still be reading `partial`
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
  __syncthreads();
  v = partial[0];
  for (int w = 1; w < static_cast<int>(blockDim.x / 32); ++w) v = op(v, partial[w]);
  return v;
}

// Note [GPU rows]
// Softmax-like ops work on rows of an (outer, size, inner) array: row r holds the `size` values
// spaced `inner` apart from RowBase(r). A row body walks its row with `lanes`: all threads of a
// block (BlockLanes, when rows are contiguous or few: reads coalesce along the row) or a single
// thread (ThreadLanes, when rows are strided and many: neighbouring threads read neighbouring
// rows). Body is a functor with
//   template <typename Lanes> __device__ void operator()(Lanes lanes, int64_t base) const;
// that visits c = lanes.first(), += lanes.step() and combines with lanes.Reduce. Each element is
// visited by the same thread in every pass, so a body may write y[k] where it read x[k] (in place).
struct BlockLanes {
  __device__ int64_t first() const { return threadIdx.x; }
  __device__ int64_t step() const { return blockDim.x; }
  template <typename T, typename Op>
  __device__ T Reduce(T v, Op op) const {
    return BlockAllReduce(v, op);
  }
};
struct ThreadLanes {
  __device__ int64_t first() const { return 0; }
  __device__ int64_t step() const { return 1; }
  template <typename T, typename Op>
  __device__ T Reduce(T v, Op) const {
    return v;
  }
};

__device__ __forceinline__ int64_t RowBase(int64_t r, int64_t size, int64_t inner) {
  return r / inner * size * inner + r % inner;
}

template <typename Body>
__global__ void BlockRowsKernel(int64_t rows, int64_t size, int64_t inner, Body body) {
  // r is the same for the whole block, so all its threads reach the barriers together.
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    body(BlockLanes{}, RowBase(r, size, inner));
  }
}
template <typename Body>
__global__ void ThreadRowsKernel(int64_t rows, int64_t size, int64_t inner, Body body) {
  COHORT_CUDA_LOOP(r, rows) body(ThreadLanes{}, RowBase(r, size, inner));
}

// Runs body over the outer·inner rows on the executor's stream (Note [GPU rows]).
template <typename Body>
void ForEachRow(const GpuResources::Impl& g, int64_t outer, int64_t size, int64_t inner,
                Body body) {
  const int64_t rows = outer * inner;
  if (rows <= 0 || size <= 0) return;
  if (inner == 1 || rows < 1024) {
    int threads = 32;  // a power of two up to kCudaThreads, no wider than the row needs
    while (threads < size && threads < kCudaThreads) threads *= 2;
    const int blocks = static_cast<int>(rows < 65536 ? rows : 65536);
    BlockRowsKernel<<<blocks, threads, 0, g.stream>>>(rows, size, inner, body);
  } else {
    ThreadRowsKernel<<<CudaBlocks(rows), kCudaThreads, 0, g.stream>>>(rows, size, inner, body);
  }
  CUDA_CHECK(cudaGetLastError());
}

// Sets a float array to 0 on the executor's stream (all-zero bytes are 0.0f).
inline void ZeroOnStream(const GpuResources::Impl& g, const NDArray& a) {
  if (a.size() > 0) CUDA_CHECK(cudaMemsetAsync(G(a), 0, a.nbytes(), g.stream));
}

// dst (=|+=) src over n floats for a gradient's grad_req; kNull leaves dst alone. kWrite is a
// copy (nothing when dst is src).
inline void AssignOnStream(const GpuResources::Impl& g, GradReq req, float* dst, const float* src,
                           int64_t n) {
  if (req == GradReq::kNull || n <= 0) return;
  if (req == GradReq::kWrite) {
    CopyOnStream(g, dst, src, static_cast<size_t>(n) * sizeof(float));
  } else {
    ForEach(g, n, [=] __device__(int64_t i) { dst[i] += src[i]; });
  }
}

}  // namespace cohort::op
