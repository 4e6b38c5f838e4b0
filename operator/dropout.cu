// Dropout on the GPU (Note [GPU kernels]). The CPU draws its mask from one mt19937_64 stream,
// which threads cannot share; here element i's draw is a hash of (seed, i) instead: the
// splitmix64 output i of a generator seeded with mix(seed). So GPU masks differ from CPU masks
// for the same seed, but are deterministic per seed, independent of the launch shape, and keep
// an element with the CPU's probability (the same 64-bit threshold). The mask output means what
// it means on the CPU (0 or 1/(1-p) per element; 1 when inactive), and backward is mask · dy.
#include "operator/pointwise_gpu.cuh"

namespace cohort::op {
namespace {

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

// splitmix64's finaliser (Steele, Lea and Flood): a bijection with full avalanche.
__host__ __device__ __forceinline__ uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

// active: training or mode "always" (the .cc decides); p == 0 is inactive too.
void DropoutForwardGpu(const OpContext& ctx, float p, bool active, const NDArray& in,
                       const NDArray& out, const NDArray& mask_arr) {
  const GpuResources::Impl& g = Gpu(ctx);
  const float* x = G(in);
  float* y = G(out);
  float* mask = G(mask_arr);
  if (!active || p == 0) {
    ForEach(g, in.size(), [=] __device__(int64_t i) {
      mask[i] = 1.0f;
      y[i] = x[i];
    });
    return;
  }
  const uint64_t key = Mix64(ctx.seed);  // seeds of successive steps may differ in few bits
  const uint64_t threshold =
      static_cast<uint64_t>(static_cast<double>(p) * 18446744073709551615.0);  // as the CPU
  const float keep = 1.0f / (1.0f - p);
  ForEach(g, in.size(), [=] __device__(int64_t i) {
    const uint64_t bits = Mix64(key + (static_cast<uint64_t>(i) + 1) * kGolden);
    const float m = bits >= threshold ? keep : 0.0f;
    mask[i] = m;
    y[i] = x[i] * m;
  });
}

void DropoutBackwardGpu(const OpContext& ctx, GradReq req, const NDArray& out_grad,
                        const NDArray& mask_arr, const NDArray& in_grad) {
  if (req == GradReq::kNull) return;
  const float* dy = G(out_grad);
  const float* mask = G(mask_arr);
  float* dx = G(in_grad);
  ForEach(Gpu(ctx), in_grad.size(),
          [=] __device__(int64_t i) { AssignReq(req, dx, i, dy[i] * mask[i]); });
}

}  // namespace cohort::op
