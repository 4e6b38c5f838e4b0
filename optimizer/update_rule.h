// The optimizers' update rules, element by element: one function that the CPU update loop
// (optimizer.cc) and the CUDA kernel (optimizer_gpu.cu) both run, so a GPU update computes what
// a CPU update computes (both compile without FMA contraction).
#pragma once

#include <cmath>
#include <cstdint>

#include "base/host_device.h"

namespace cohort {

// Everything one update of one key needs, resolved on the host (learning rate from the
// schedule, weight decay for this key, Adam's bias correction for this step).
struct UpdateRule {
  enum Kind { kSGD, kNAG, kAdam, kAdamW, kRMSProp } kind = kSGD;
  float lr = 0, wd = 0, momentum = 0;
  float rescale = 1, clip = 0;                     // g * rescale, clipped to ±clip when clip > 0
  float beta1 = 0, beta2 = 0, lr_t = 0;            // Adam: lr_t has the bias correction folded in
  float one_minus_beta1 = 0, one_minus_beta2 = 0;  // 1 - beta in double, then float
  float epsilon = 0, gamma1 = 0;
};

// The states each kind keeps per weight (momentum; Adam's two moments; RMSProp's mean square).
inline int UpdateStates(UpdateRule::Kind kind, float momentum) {
  switch (kind) {
    case UpdateRule::kSGD: return momentum > 0 ? 1 : 0;
    case UpdateRule::kAdam:
    case UpdateRule::kAdamW: return 2;
    default: return 1;
  }
}

// Updates weight i (and its states s0, s1 where the kind has them), MXNet 1.x's rules:
// sgd:     w -= lr (g + wd w), or mom = momentum mom - lr (g + wd w); w += mom
// nag:     m = momentum mom; w' = w - m + (momentum + 1) (m - lr (g + wd w));
//          mom = m - lr (g + wd w'), as MXNet 1.9.1's nag_mom_update in place: its momentum
//          reads the weight after writing it, so the decay term takes the new weight (kept,
//          with MXNet's order of operations, so that runs and .states files match MXNet's)
// adam:    m = b1 m + (1 - b1) g'; v = b2 v + (1 - b2) g'^2; w -= lr_t m / (sqrt(v) + eps)
// adamw:   as adam with g' = g, and w -= lr wd w first (decoupled decay)
// rmsprop: n = (1 - gamma1) g'^2 + gamma1 n; w -= lr g' / sqrt(n + eps)
// g is rescaled and clipped first (std::clamp's comparisons, which keep a NaN).
COHORT_HOST_DEVICE void ApplyUpdate(const UpdateRule& r, float* w, const float* g, float* s0,
                                    float* s1, int64_t i) {
  float grad = g[i] * r.rescale;
  if (r.clip > 0) grad = grad < -r.clip ? -r.clip : (r.clip < grad ? r.clip : grad);
  switch (r.kind) {
    case UpdateRule::kSGD:
      grad += r.wd * w[i];
      if (r.momentum > 0) {
        s0[i] = r.momentum * s0[i] - r.lr * grad;
        w[i] += s0[i];
      } else {
        w[i] -= r.lr * grad;
      }
      break;
    case UpdateRule::kNAG: {
      const float m = r.momentum * s0[i];
      w[i] = w[i] - m + (r.momentum + 1) * (m - r.lr * (grad + r.wd * w[i]));
      s0[i] = m - r.lr * (grad + r.wd * w[i]);
      break;
    }
    case UpdateRule::kAdam:
    case UpdateRule::kAdamW: {
      const bool decoupled = r.kind == UpdateRule::kAdamW;
      if (!decoupled) grad += r.wd * w[i];
      s0[i] = r.beta1 * s0[i] + r.one_minus_beta1 * grad;
      s1[i] = r.beta2 * s1[i] + r.one_minus_beta2 * grad * grad;
      if (decoupled) w[i] -= r.lr * r.wd * w[i];
      w[i] -= r.lr_t * s0[i] / (sqrtf(s1[i]) + r.epsilon);
      break;
    }
    case UpdateRule::kRMSProp:
      grad += r.wd * w[i];
      s0[i] = (1 - r.gamma1) * grad * grad + r.gamma1 * s0[i];
      w[i] -= r.lr * grad / sqrtf(s0[i] + r.epsilon);
      break;
  }
}

// Updates n weights on GPU `device` (optimizer_gpu.cu), on the default stream, which orders it
// after the executors' kernels (Note [GPU streams]).
void ApplyUpdateOnGpu(const UpdateRule& rule, int device, float* w, const float* g, float* s0,
                      float* s1, int64_t n);

}  // namespace cohort
