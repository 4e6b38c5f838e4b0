// Helpers shared by the CUDA kernels of the pointwise and small ops (activation.cu, softmax.cu,
// loss_output.cu, ...): block reductions, row launchers (Note [Row lanes]), zero fills. nvcc only.
#pragma once

#include <cmath>
#include <cstdint>

#include "operator/common/gpu_common.cuh"

namespace cohort::op {

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

// The GPU's lanes for row bodies (Note [Row lanes]): all threads of a block, used when rows are
// contiguous or few (reads coalesce along the row); SerialLanes, one thread a row, when rows are
// strided and many (neighbouring threads read neighbouring rows).
struct BlockLanes {
  __device__ int64_t first() const { return threadIdx.x; }
  __device__ int64_t step() const { return blockDim.x; }
  template <typename F>
  __device__ float Sum(int64_t size, F f) const {
    float sum = 0;
    for (int64_t c = first(); c < size; c += step()) sum += f(c);
    return BlockAllReduce(sum, SumOp{});
  }
  template <typename F>
  __device__ float Max(int64_t size, F f) const {
    float max = -INFINITY;
    for (int64_t c = first(); c < size; c += step()) max = MaxOp{}(max, f(c));
    return BlockAllReduce(max, MaxOp{});
  }
};

template <typename Body>
__global__ void BlockRowsKernel(int64_t rows, int64_t size, int64_t inner, Body body) {
  // r is the same for the whole block, so all its threads reach the barriers together.
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    body(BlockLanes{}, RowBase(r, size, inner));
  }
}
template <typename Body>
__global__ void ThreadRowsKernel(int64_t rows, int64_t size, int64_t inner, Body body) {
  COHORT_CUDA_LOOP(r, rows) body(SerialLanes{}, RowBase(r, size, inner));
}

// Runs body over the outer·inner rows on the executor's stream (Note [Row lanes]).
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

// Sets an array of any type to 0 on the executor's stream: all-zero bytes are zero in every
// dtype (a bfloat16 gradient zeroed before a slice adds into it, say).
inline void ZeroOnStream(const GpuResources::Impl& g, const NDArray& a) {
  COHORT_CHECK(a.ctx().is_gpu()) << "ZeroOnStream: an array on " << a.ctx();
  if (a.size() > 0) CUDA_CHECK(cudaMemsetAsync(a.raw_data(), 0, a.nbytes(), g.stream));
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
