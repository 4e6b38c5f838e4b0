// Activation and LeakyReLU on the GPU (Note [GPU kernels]): one grid-stride loop per function.
// CUDA's accurate tanhf/expf/expm1f/log1pf stand in for fast_math.h's approximations (which are
// within ~3e-7 of them), so results agree with the CPU to a few ulps.
#include "operator/pointwise_gpu.cuh"

namespace cohort::op {
namespace {

// The order of Act in activation.cc, which passes its value as an int.
enum class Act { kRelu, kSigmoid, kTanh, kSoftrelu, kSoftsign, kLeaky, kElu, kSelu };

constexpr float kSeluAlpha = 1.6732632423543772f;
constexpr float kSeluLambda = 1.0507009873554805f;

// dx (=|+=) dy · d(x, y) for every element; x is null when d ignores it.
template <typename D>
void Grad(const GpuResources::Impl& g, GradReq req, int64_t n, const float* dy, const float* x,
          const float* y, float* dx, D d) {
  ForEach(g, n,
          [=] __device__(int64_t i) { AssignReq(req, dx, i, dy[i] * d(x ? x[i] : 0.0f, y[i])); });
}

}  // namespace

void ActivationForwardGpu(const OpContext& ctx, int act, float s, const NDArray& in,
                          const NDArray& out) {
  const GpuResources::Impl& g = Gpu(ctx);
  const float* x = G(in);
  float* y = G(out);  // may be x
  const int64_t n = in.size();
  switch (static_cast<Act>(act)) {
    case Act::kRelu:
      ForEach(g, n, [=] __device__(int64_t i) { y[i] = x[i] > 0 ? x[i] : 0.0f; });
      break;
    case Act::kSigmoid:
      ForEach(g, n, [=] __device__(int64_t i) { y[i] = 1.0f / (1.0f + expf(-x[i])); });
      break;
    case Act::kTanh: ForEach(g, n, [=] __device__(int64_t i) { y[i] = tanhf(x[i]); }); break;
    case Act::kSoftrelu:
      ForEach(g, n, [=] __device__(int64_t i) { y[i] = x[i] > 20 ? x[i] : log1pf(expf(x[i])); });
      break;
    case Act::kSoftsign:
      ForEach(g, n, [=] __device__(int64_t i) { y[i] = x[i] / (1 + fabsf(x[i])); });
      break;
    case Act::kLeaky:
      ForEach(g, n, [=] __device__(int64_t i) { y[i] = x[i] > 0 ? x[i] : s * x[i]; });
      break;
    case Act::kElu:
      ForEach(g, n, [=] __device__(int64_t i) { y[i] = x[i] > 0 ? x[i] : s * expm1f(x[i]); });
      break;
    case Act::kSelu:
      ForEach(g, n, [=] __device__(int64_t i) {
        y[i] = kSeluLambda * (x[i] > 0 ? x[i] : kSeluAlpha * expm1f(x[i]));
      });
      break;
  }
}

void ActivationBackwardGpu(const OpContext& ctx, int act, float s, GradReq req,
                           const NDArray& out_grad, const NDArray* in, const NDArray& out,
                           const NDArray& in_grad) {
  if (req == GradReq::kNull) return;
  const GpuResources::Impl& g = Gpu(ctx);
  const float* dy = G(out_grad);
  const float* x = in ? G(*in) : nullptr;
  const float* y = G(out);
  float* dx = G(in_grad);
  const int64_t n = out.size();
  switch (static_cast<Act>(act)) {
    case Act::kRelu:
      Grad(g, req, n, dy, x, y, dx, [] __device__(float, float v) { return v > 0 ? 1.0f : 0.0f; });
      break;
    case Act::kSigmoid:
      Grad(g, req, n, dy, x, y, dx, [] __device__(float, float v) { return v * (1 - v); });
      break;
    case Act::kTanh:
      Grad(g, req, n, dy, x, y, dx, [] __device__(float, float v) { return 1 - v * v; });
      break;
    case Act::kSoftrelu:  // sigmoid(x) = 1 - e^-y
      Grad(g, req, n, dy, x, y, dx, [] __device__(float, float v) { return -expm1f(-v); });
      break;
    case Act::kSoftsign:
      Grad(g, req, n, dy, x, y, dx, [] __device__(float u, float) {
        const float d = 1 + fabsf(u);
        return 1 / (d * d);
      });
      break;
    case Act::kLeaky:
      Grad(g, req, n, dy, x, y, dx, [s] __device__(float u, float) { return u > 0 ? 1.0f : s; });
      break;
    case Act::kElu:
      Grad(g, req, n, dy, x, y, dx,
           [s] __device__(float u, float) { return u > 0 ? 1.0f : s * expf(u); });
      break;
    case Act::kSelu:
      Grad(g, req, n, dy, x, y, dx, [] __device__(float u, float) {
        return kSeluLambda * (u > 0 ? 1.0f : kSeluAlpha * expf(u));
      });
      break;
  }
}

}  // namespace cohort::op
