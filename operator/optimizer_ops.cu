// MXNet's optimizer update operators on the GPU (Note [Update operators], optimizer_ops.h): a
// thread an element, UpdateElementOf as on the CPU.
#include "operator/common/pointwise_gpu.cuh"
#include "operator/optimizer_ops.h"

namespace cohort::op {

namespace {

// One kind's elements: a typed function of its own, since a __device__ lambda may not sit in
// a generic lambda.
template <UpdateKind K, typename T>
void UpdateLoop(const GpuResources::Impl& g, const UpdateOpParam& p, const T* w, const T* gr, T* s0,
                T* s1, T* s2, T* y, int64_t n) {
  ForEach(g, n, [=] __device__(int64_t i) { UpdateElementOf<K, T>(p, i, w, gr, s0, s1, s2, y); });
}

template <typename T>
void UpdateTyped(const GpuResources::Impl& g, const UpdateOpParam& p, const NDArray& weight,
                 const NDArray& grad, const std::vector<NDArray>& states, const NDArray& out) {
  T* s[3] = {nullptr, nullptr, nullptr};
  for (size_t k = 0; k < states.size(); ++k) s[k] = static_cast<T*>(states[k].raw_data());
  T *s0 = s[0], *s1 = s[1], *s2 = s[2];
  const T* w = static_cast<const T*>(weight.raw_data());
  const T* gr = static_cast<const T*>(grad.raw_data());
  T* y = static_cast<T*>(out.raw_data());
  DispatchUpdateKind(p.kind, [&](auto kind) {
    UpdateLoop<decltype(kind)::value, T>(g, p, w, gr, s0, s1, s2, y, out.size());
  });
}

template <typename T>
void LambTyped(const GpuResources::Impl& g, int phase, const LambParam& p,
               const std::vector<NDArray>& in, const std::vector<NDArray>& states,
               const NDArray& out) {
  const T* w = static_cast<const T*>(in[0].raw_data());
  const T* d = static_cast<const T*>(in[1].raw_data());
  T* y = static_cast<T*>(out.raw_data());
  if (phase == 1) {
    T* mean = static_cast<T*>(states[0].raw_data());
    T* var = static_cast<T*>(states[1].raw_data());
    ForEach(g, out.size(),
            [=] __device__(int64_t i) { LambPhase1Element<T>(p, i, w, d, mean, var, y); });
  } else {
    const T* r1 = static_cast<const T*>(in[2].raw_data());
    const T* r2 = static_cast<const T*>(in[3].raw_data());
    ForEach(g, out.size(),
            [=] __device__(int64_t i) { LambPhase2Element<T>(p, i, w, d, r1, r2, y); });
  }
}

}  // namespace

void LambGpu(const OpContext& ctx, int phase, const LambParam& p, const std::vector<NDArray>& in,
             const std::vector<NDArray>& states, const NDArray& out) {
  if (out.dtype() == DType::kFloat64) {
    LambTyped<double>(Gpu(ctx), phase, p, in, states, out);
  } else {
    LambTyped<float>(Gpu(ctx), phase, p, in, states, out);
  }
}

void UpdateGpu(const OpContext& ctx, const UpdateOpParam& p, const NDArray& weight,
               const NDArray& grad, const std::vector<NDArray>& states, const NDArray& out) {
  if (weight.dtype() == DType::kFloat64) {
    UpdateTyped<double>(Gpu(ctx), p, weight, grad, states, out);
  } else {
    UpdateTyped<float>(Gpu(ctx), p, weight, grad, states, out);
  }
}

}  // namespace cohort::op
