// BatchNorm in CUDA kernels of its own (Note [GPU kernels]) rather than cuDNN's: cuDNN moves the
// running variance by the unbiased batch variance, while the CPU (as MXNet's CPU kernel) moves
// it by the biased one; these kernels do as the CPU. The "var" output holds 1/sqrt(var + eps).
//
// One block per channel: the channel's sums reduce in float per thread and in double across
// threads (as the CPU sums rows in float and the rows in double), in a fixed order; the
// per-channel and per-element math is batch_norm.h's, as on the CPU. The data, the output and
// their gradients are float32, bfloat16 or float16 (T), read into float and rounded once when
// stored; the parameters and statistics float32 (Note [BatchNorm in low precision]).
#include <cstdint>

#include "operator/batch_norm.h"
#include "operator/common/exact_math.h"
#include "operator/common/gpu_common.cuh"

namespace cohort::op {
namespace {

constexpr int kBnThreads = 512;

// The data as (outer, channels, inner) around the channel axis.
struct BnDims {
  int64_t outer, channels, inner;
};

// Σ v over the block, in double; every thread gets the same total (the same order everywhere).
__device__ double BlockSum(double v) {
  __shared__ double warp_sums[kBnThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  __syncthreads();  // a previous call's readers are done with warp_sums
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  double total = 0;
  for (int w = 0; w < kBnThreads / 32; ++w) total += warp_sums[w];
  return total;
}

// Calls f(index) for this thread's share of channel c's elements: every kBnThreads-th in
// (sample, position) order, neighbouring threads on neighbouring addresses, no division per step.
template <typename F>
__device__ void ForChannel(const BnDims& d, int64_t c, F f) {
  if (d.inner == 0) return;
  int64_t o = threadIdx.x / d.inner, i = threadIdx.x % d.inner;
  const int64_t step_o = kBnThreads / d.inner, step_i = kBnThreads % d.inner;
  while (o < d.outer) {
    f((o * d.channels + c) * d.inner + i);
    i += step_i;
    o += step_o;
    if (i >= d.inner) {
      i -= d.inner;
      ++o;
    }
  }
}

// Batch statistics (training) or the moving ones (inference, use_global_stats) into mean and
// inv_std, the moving ones updated in training; then y = x * scale + shift.
template <typename T>
__global__ void __launch_bounds__(kBnThreads)
    BatchNormForwardKernel(BnDims d, BatchNormParam p, bool batch_stats, const T* x,
                           const float* gamma, const float* beta, T* y, float* mean, float* inv_std,
                           float* moving_mean, float* moving_var) {
  const int64_t c = blockIdx.x;
  float mu, sigma2;
  if (batch_stats) {
    const double m = static_cast<double>(d.outer * d.inner);
    float sum = 0;
    ForChannel(d, c, [&](int64_t k) { sum += static_cast<float>(x[k]); });
    mu = static_cast<float>(BlockSum(sum) / m);
    float sq = 0;
    ForChannel(d, c, [&](int64_t k) {
      const float v = static_cast<float>(x[k]) - mu;
      sq += v * v;
    });
    sigma2 = static_cast<float>(BlockSum(sq) / m);
    if (threadIdx.x == 0) {
      moving_mean[c] = BatchNormMoving(moving_mean[c], mu, p.momentum);
      moving_var[c] = BatchNormMoving(moving_var[c], sigma2, p.momentum);
    }
  } else {
    mu = moving_mean[c];
    sigma2 = moving_var[c];
  }
  const float inv = BatchNormInvStd(p, sigma2);
  if (threadIdx.x == 0) {
    mean[c] = mu;
    inv_std[c] = inv;
  }
  const BatchNormAffine affine = BatchNormAffineOf(p, gamma[c], beta[c], mu, inv);
  ForChannel(d, c, [&](int64_t k) { y[k] = T(BatchNormValue(affine, static_cast<float>(x[k]))); });
}

// Gradients from the saved mean and inverse std (BatchNormGradOf). A null gradient pointer is a
// kNull request.
template <typename T>
__global__ void __launch_bounds__(kBnThreads)
    BatchNormBackwardKernel(BnDims d, BatchNormParam p, bool batch_stats, const T* x, const T* dy,
                            const float* gamma, const float* mean, const float* inv_std, T* dx,
                            float* dgamma, float* dbeta, GradReq req_x, GradReq req_gamma,
                            GradReq req_beta) {
  const int64_t c = blockIdx.x;
  const float mu = mean[c];
  float part_dy = 0, part_dy_xmu = 0;
  ForChannel(d, c, [&](int64_t k) {
    const float g = static_cast<float>(dy[k]);
    part_dy += g;
    part_dy_xmu += g * (static_cast<float>(x[k]) - mu);
  });
  const double sum_dy = BlockSum(part_dy);
  const double sum_dy_xmu = BlockSum(part_dy_xmu);
  const BatchNormGrad grad = BatchNormGradOf(p, batch_stats, gamma[c], inv_std[c], sum_dy,
                                             sum_dy_xmu, static_cast<double>(d.outer * d.inner));
  if (threadIdx.x == 0) {
    if (dgamma) AssignReq(req_gamma, dgamma, c, grad.dgamma);
    if (dbeta) AssignReq(req_beta, dbeta, c, grad.dbeta);
  }
  if (!dx) return;
  // Every thread has finished reading dy (BlockSum's barriers), so dx may be dy itself.
  ForChannel(d, c, [&](int64_t j) {
    const float v =
        BatchNormInputGrad(grad, static_cast<float>(dy[j]), static_cast<float>(x[j]), mu);
    dx[j] = T(req_x == GradReq::kAdd ? static_cast<float>(dx[j]) + v : v);
  });
}

float* GradOrNull(GradReq req, const NDArray& a) { return req == GradReq::kNull ? nullptr : G(a); }

}  // namespace

void BatchNormForwardGpu(const OpContext& ctx, const BatchNormParam& p, bool batch_stats,
                         const std::vector<NDArray>& in, const std::vector<NDArray>& out,
                         const std::vector<NDArray>& aux, int64_t outer, int64_t channels,
                         int64_t inner) {
  const GpuResources::Impl& g = Gpu(ctx);
  if (channels == 0) return;
  DispatchFloat32OrHalf("BatchNorm", in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    BatchNormForwardKernel<T><<<static_cast<unsigned>(channels), kBnThreads, 0, g.stream>>>(
        BnDims{outer, channels, inner}, p, batch_stats, static_cast<const T*>(in[0].raw_data()),
        G(in[1]), G(in[2]), static_cast<T*>(out[0].raw_data()), G(out[1]), G(out[2]), G(aux[0]),
        G(aux[1]));
  });
  CUDA_CHECK(cudaGetLastError());
}

void BatchNormBackwardGpu(const OpContext& ctx, const BatchNormParam& p, bool batch_stats,
                          const std::vector<NDArray>& out_grad, const std::vector<NDArray>& in,
                          const std::vector<NDArray>& out, const std::vector<GradReq>& req,
                          const std::vector<NDArray>& in_grad, int64_t outer, int64_t channels,
                          int64_t inner) {
  const GpuResources::Impl& g = Gpu(ctx);
  if (channels == 0) return;
  DispatchFloat32OrHalf("BatchNorm", in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    BatchNormBackwardKernel<T><<<static_cast<unsigned>(channels), kBnThreads, 0, g.stream>>>(
        BnDims{outer, channels, inner}, p, batch_stats, static_cast<const T*>(in[0].raw_data()),
        static_cast<const T*>(out_grad[0].raw_data()), G(in[1]), G(out[1]), G(out[2]),
        req[0] == GradReq::kNull ? nullptr : static_cast<T*>(in_grad[0].raw_data()),
        GradOrNull(req[1], in_grad[1]), GradOrNull(req[2], in_grad[2]), req[0], req[1], req[2]);
  });
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace cohort::op
