// The optimizers' update rules, element by element, as MXNet 1.9.1 computes them: one function
// that MXNet's update operators (operator/optimizer_ops.{cc,cu}), cohort-train's optimizers
// (optimizer.cc, optimizer_gpu.cu) and their CPU and CUDA loops all run, so that one rule
// serves every front end and device (all compile without FMA contraction).
//
// Note [Update rules]
// The kinds with an MXNet update operator (sgd, sgd_mom, nag_mom, signsgd, signum, adam,
// rmsprop, rmspropalex, ftrl, ftml, and LAMB's two phases) follow MXNet's kernels operation
// for operation (Note [Update operators], operator/optimizer_ops.h); AdaGrad, AdaDelta, Adamax
// and SGLD, which MXNet's Python optimizers compute in NDArray arithmetic, follow that arithmetic
// one rounding at a time (a scalar such as 1 - rho is computed in double, then made the
// weight's type, as MXNet's scalar operators do). AdamW is Cohort's (decoupled weight decay,
// bias-corrected step), as MXNet's contrib adamw_update. The optimizers fold what MXNet's
// Python optimizers compute on the host into the parameters: Adam's and Adamax's bias
// correction into lr, AdamW's decay lr·wd into wd. tests/optimizer/optimizer_test.cc checks
// cohort-train's optimizers against MXNet 1.9.1's three steps of each.
//
// (A departure from DESIGN.md's dependencies: operator/ includes this header, the rules' one
// home; it links nothing of optimizer/.)
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "base/host_device.h"
#include "base/random_stream.h"

namespace cohort {

enum class UpdateKind {
  kSGD,
  kSGDMom,
  kNAGMom,
  kSignSGD,
  kSignum,
  kAdam,
  kRMSProp,
  kRMSPropAlex,  // centered RMSProp (Graves 2013)
  kFtrl,
  kFtml,
  kAdamW,
  kAdaGrad,
  kAdaDelta,
  kAdamax,
  kSGLD
};

// Everything one update of one weight needs, resolved on the host.
struct UpdateParams {
  UpdateKind kind = UpdateKind::kSGD;
  float lr = 0, wd = 0, rescale_grad = 1, clip_gradient = -1;  // clipping where >= 0
  float momentum = 0, wd_lh = 0;                               // sgd_mom, nag_mom, signum
  float beta1 = 0.9f, beta2 = 0.999f;                          // adam(w), adamax, ftml
  double epsilon = 1e-8;                                       // adam(w), rmsprop, ftml, ada*
  float gamma1 = 0.95f, gamma2 = 0.9f, clip_weights = -1;      // rmsprop(alex)
  float lamda1 = 0.01f, beta = 1;                              // ftrl
  int64_t t = 0;                                               // ftml's step
  float rho = 0.9f, one_minus_rho = 0.1f;                      // adadelta
  float one_minus_beta1 = 0.1f;                                // adamax
  float sgld_step = 0;                                         // sgld: -lr / 2, from lr in double
  double noise_stddev = 0;                                     // sgld: sqrt(lr)
  uint64_t noise_key = 0;  // sgld: this update's stream (Mix64 of seed, key and step)
};

// The states a kind keeps per weight (nag and sgd with momentum: 1; adam: 2; ...).
inline int UpdateStateCount(UpdateKind kind) {
  switch (kind) {
    case UpdateKind::kSGD:
    case UpdateKind::kSignSGD:
    case UpdateKind::kSGLD: return 0;
    case UpdateKind::kSGDMom:
    case UpdateKind::kNAGMom:
    case UpdateKind::kSignum:
    case UpdateKind::kRMSProp:
    case UpdateKind::kAdaGrad: return 1;
    case UpdateKind::kRMSPropAlex:
    case UpdateKind::kFtml: return 3;
    default: return 2;
  }
}

template <typename T>
COHORT_HOST_DEVICE T UpdateClip(T x, T bound) {
  return x > bound ? bound : (x < -bound ? -bound : x);  // mshadow_op::clip
}

template <typename T>
COHORT_HOST_DEVICE T UpdateSqrt(T x) {
  if constexpr (sizeof(T) == sizeof(float)) {
    return sqrtf(x);
  } else {
    return sqrt(x);
  }
}

template <typename T>
COHORT_HOST_DEVICE T UpdatePow(T x, T y) {
  if constexpr (sizeof(T) == sizeof(float)) {
    return powf(x, y);
  } else {
    return pow(x, y);
  }
}

template <typename T>
COHORT_HOST_DEVICE T UpdateSign(T x) {
  return static_cast<T>((x > T(0)) - (x < T(0)));
}

// Element i of kind K: out[i] from w[i] and g[i], the states s0..s2 (as many as the kind has)
// updated in place. MXNet's kernels' arithmetic, operation for operation (Note [Update
// operators]). The kind is a template argument so that the CPU's loop over elements has no
// branch on it and vectorizes (400k floats of sgd_mom: 4.4 ms a call before, per element).
template <UpdateKind K, typename T>
COHORT_HOST_DEVICE void UpdateElementOf(const UpdateParams& p, int64_t i, const T* w, const T* g,
                                        T* s0, T* s1, T* s2, T* out) {
  const T lr = static_cast<T>(p.lr), wd = static_cast<T>(p.wd);
  const T rescale = static_cast<T>(p.rescale_grad), clip = static_cast<T>(p.clip_gradient);
  const bool clipping = p.clip_gradient >= 0.0f;
  if constexpr (K == UpdateKind::kSGD) {
    out[i] = clipping ? (1.f - lr * wd) * w[i] - (lr)*UpdateClip(rescale * g[i], clip)
                      : (1.f - lr * wd) * w[i] - (lr * rescale) * g[i];
  } else if constexpr (K == UpdateKind::kSGDMom) {
    // Without a state (s0 null), on a momentum of zero: MXNet's SGD optimizer without momentum,
    // which runs this rule rather than sgd_update's (they round differently).
    const T momentum = static_cast<T>(p.momentum);
    const T previous = s0 ? momentum * s0[i] : T(0);
    const T mom = clipping ? previous - lr * wd * w[i] - lr * UpdateClip(rescale * g[i], clip)
                           : previous - lr * wd * w[i] - lr * rescale * g[i];
    if (s0) s0[i] = mom;
    out[i] = w[i] + mom;
  } else if constexpr (K == UpdateKind::kNAGMom) {
    const T momentum = static_cast<T>(p.momentum);
    const T grad = clipping ? UpdateClip(rescale * g[i], clip) : rescale * g[i];
    s0[i] = momentum * s0[i];
    out[i] = w[i] - s0[i] + (momentum + 1) * (s0[i] - (lr * (grad + (wd * w[i]))));
    s0[i] = s0[i] - (lr * (grad + (wd * out[i])));  // the new weight, as MXNet in place
  } else if constexpr (K == UpdateKind::kSignSGD) {
    out[i] = (1.f - lr * wd) * w[i] - (lr)*UpdateSign(g[i]);
  } else if constexpr (K == UpdateKind::kSignum) {
    const T momentum = static_cast<T>(p.momentum), wd_lh = static_cast<T>(p.wd_lh);
    s0[i] = clipping
                ? momentum * s0[i] - (1 - momentum) * wd * w[i] -
                      (1 - momentum) * UpdateClip(rescale * g[i], clip)
                : momentum * s0[i] - (1 - momentum) * wd * w[i] - (1 - momentum) * rescale * g[i];
    out[i] = (1.f - lr * wd_lh) * w[i] + (lr)*UpdateSign(s0[i]);
  } else if constexpr (K == UpdateKind::kAdam) {
    const T beta1 = static_cast<T>(p.beta1), beta2 = static_cast<T>(p.beta2);
    T grad = g[i] * rescale + w[i] * wd;
    if (clipping) grad = UpdateClip(grad, clip);
    s0[i] = beta1 * s0[i] + (1.f - beta1) * grad;
    s1[i] = beta2 * s1[i] + (1.f - beta2) * grad * grad;
    out[i] = w[i] - lr * s0[i] / (UpdateSqrt(s1[i]) + static_cast<T>(p.epsilon));
  } else if constexpr (K == UpdateKind::kRMSProp) {
    const T gamma1 = static_cast<T>(p.gamma1);
    T grad = rescale * g[i] + wd * w[i];
    if (clipping) grad = UpdateClip(grad, clip);
    s0[i] = (1.f - gamma1) * (grad * grad) + gamma1 * s0[i];
    T weight = w[i] - lr * (grad / UpdateSqrt(s0[i] + static_cast<T>(p.epsilon)));
    if (p.clip_weights >= 0.0f) weight = UpdateClip(weight, static_cast<T>(p.clip_weights));
    out[i] = weight;
  } else if constexpr (K == UpdateKind::kRMSPropAlex) {  // states n, g, delta
    const T gamma1 = static_cast<T>(p.gamma1), gamma2 = static_cast<T>(p.gamma2);
    T grad = rescale * g[i] + wd * w[i];
    if (clipping) grad = UpdateClip(grad, clip);
    s0[i] = (1.f - gamma1) * grad * grad + gamma1 * s0[i];
    s1[i] = (1.f - gamma1) * grad + gamma1 * s1[i];
    s2[i] = gamma2 * s2[i] -
            (lr * (grad) / (UpdateSqrt(s0[i] - s1[i] * s1[i] + static_cast<T>(p.epsilon))));
    out[i] = p.clip_weights >= 0.0f ? UpdateClip(w[i] + s2[i], static_cast<T>(p.clip_weights))
                                    : w[i] + s2[i];
  } else if constexpr (K == UpdateKind::kFtrl) {  // states z, n
    const T lamda1 = static_cast<T>(p.lamda1), beta = static_cast<T>(p.beta);
    T grad = g[i] * rescale;
    if (clipping) grad = UpdateClip(grad, clip);
    s0[i] += grad - (UpdateSqrt(s1[i] + grad * grad) - UpdateSqrt(s1[i])) * w[i] / lr;
    s1[i] += grad * grad;
    const T z = s0[i];
    const T above = (z < 0 ? -z : z) > lamda1 ? T(1) : T(0);
    out[i] = (UpdateSign(z) * lamda1 - z) / ((beta + UpdateSqrt(s1[i])) / lr + wd) * above;
  } else if constexpr (K == UpdateKind::kFtml) {  // states d, v, z
    const T beta1 = static_cast<T>(p.beta1), beta2 = static_cast<T>(p.beta2);
    const T t = static_cast<T>(p.t), epsilon = static_cast<T>(p.epsilon);
    const T grad =
        clipping ? UpdateClip(rescale * g[i] + wd * w[i], clip) : (rescale * g[i] + wd * w[i]);
    s1[i] = beta2 * s1[i] + (1 - beta2) * (grad * grad);
    const T d_t =
        (1 - UpdatePow(beta1, t)) / lr * (UpdateSqrt(s1[i] / (1 - UpdatePow(beta2, t))) + epsilon);
    s2[i] = beta1 * s2[i] + (1 - beta1) * grad - (d_t - beta1 * s0[i]) * w[i];
    s0[i] = d_t;
    out[i] = -s2[i] / d_t;
  } else if constexpr (K == UpdateKind::kAdamW) {  // states mean, var; wd is lr·wd
    T grad = g[i] * rescale;
    if (clipping) grad = UpdateClip(grad, clip);
    const T beta1 = static_cast<T>(p.beta1), beta2 = static_cast<T>(p.beta2);
    s0[i] = beta1 * s0[i] + (1.f - beta1) * grad;
    s1[i] = beta2 * s1[i] + (1.f - beta2) * grad * grad;
    const T decayed = w[i] - wd * w[i];
    out[i] = decayed - lr * s0[i] / (UpdateSqrt(s1[i]) + static_cast<T>(p.epsilon));
  } else if constexpr (K == UpdateKind::kAdaGrad) {  // state: the sum of squares
    T grad = g[i] * rescale;
    if (clipping) grad = UpdateClip(grad, clip);
    s0[i] = s0[i] + grad * grad;
    const T div = grad / UpdateSqrt(s0[i] + static_cast<T>(p.epsilon));
    out[i] = w[i] + (div + w[i] * wd) * -lr;
  } else if constexpr (K == UpdateKind::kAdaDelta) {  // states acc_g, acc_delta
    const T rho = static_cast<T>(p.rho), one_minus_rho = static_cast<T>(p.one_minus_rho);
    const T epsilon = static_cast<T>(p.epsilon);
    T grad = g[i] * rescale;
    if (clipping) grad = UpdateClip(grad, clip);
    s0[i] = s0[i] * rho;
    s0[i] = s0[i] + one_minus_rho * grad * grad;
    const T delta = UpdateSqrt(s1[i] + epsilon) / UpdateSqrt(s0[i] + epsilon) * grad;
    s1[i] = s1[i] * rho;
    s1[i] = s1[i] + one_minus_rho * delta * delta;
    out[i] = w[i] - (delta + w[i] * wd);
  } else if constexpr (K == UpdateKind::kSGLD) {  // MXNet's SGLD (Welling and Teh, 2011)
    // Half a step down the gradient, then Gaussian noise of variance lr: Cohort's own stream,
    // the same on every device that updates this key at this step (MXNet's differs).
    T grad = g[i] * rescale;
    if (clipping) grad = UpdateClip(grad, clip);
    const T moved = w[i] + (grad + w[i] * wd) * static_cast<T>(p.sgld_step);
    out[i] = moved + static_cast<T>(RandomGaussian(p.noise_key, static_cast<uint64_t>(i), 0.0,
                                                   p.noise_stddev));
  } else {  // kAdamax: states m, u; lr has the bias correction
    const T beta1 = static_cast<T>(p.beta1), beta2 = static_cast<T>(p.beta2);
    T grad = g[i] * rescale + w[i] * wd;
    if (clipping) grad = UpdateClip(grad, clip);
    s0[i] = s0[i] * beta1;
    s0[i] = s0[i] + static_cast<T>(p.one_minus_beta1) * grad;
    const T decayed_u = s1[i] * beta2, magnitude = grad < T(0) ? -grad : grad;
    s1[i] = decayed_u > magnitude ? decayed_u : magnitude;
    out[i] = w[i] - s0[i] * lr / s1[i];
  }
}

// Calls fn(std::integral_constant<UpdateKind, K>{}) for K = kind: a kernel's loop then takes
// the kind as a constant.
template <typename Fn>
COHORT_HOST_DEVICE void DispatchUpdateKind(UpdateKind kind, Fn&& fn) {
  switch (kind) {
    case UpdateKind::kSGD: return fn(std::integral_constant<UpdateKind, UpdateKind::kSGD>{});
    case UpdateKind::kSGDMom: return fn(std::integral_constant<UpdateKind, UpdateKind::kSGDMom>{});
    case UpdateKind::kNAGMom: return fn(std::integral_constant<UpdateKind, UpdateKind::kNAGMom>{});
    case UpdateKind::kSignSGD:
      return fn(std::integral_constant<UpdateKind, UpdateKind::kSignSGD>{});
    case UpdateKind::kSignum: return fn(std::integral_constant<UpdateKind, UpdateKind::kSignum>{});
    case UpdateKind::kAdam: return fn(std::integral_constant<UpdateKind, UpdateKind::kAdam>{});
    case UpdateKind::kRMSProp:
      return fn(std::integral_constant<UpdateKind, UpdateKind::kRMSProp>{});
    case UpdateKind::kRMSPropAlex:
      return fn(std::integral_constant<UpdateKind, UpdateKind::kRMSPropAlex>{});
    case UpdateKind::kFtrl: return fn(std::integral_constant<UpdateKind, UpdateKind::kFtrl>{});
    case UpdateKind::kFtml: return fn(std::integral_constant<UpdateKind, UpdateKind::kFtml>{});
    case UpdateKind::kAdamW: return fn(std::integral_constant<UpdateKind, UpdateKind::kAdamW>{});
    case UpdateKind::kAdaGrad:
      return fn(std::integral_constant<UpdateKind, UpdateKind::kAdaGrad>{});
    case UpdateKind::kAdaDelta:
      return fn(std::integral_constant<UpdateKind, UpdateKind::kAdaDelta>{});
    case UpdateKind::kAdamax: return fn(std::integral_constant<UpdateKind, UpdateKind::kAdamax>{});
    case UpdateKind::kSGLD: return fn(std::integral_constant<UpdateKind, UpdateKind::kSGLD>{});
  }
}

// LAMB, in MXNet's two phases. Phase 1 (lamb_update_phase1: weight, grad, mean, var -> g)
// updates the moments in place and outputs the step direction g; the optimizer then takes the
// norms r1 = |w| and r2 = |g|, and phase 2 (lamb_update_phase2: weight, g, r1, r2 -> weight)
// steps by lr · r1 / r2 (r1 bounded by lower_bound and upper_bound where >= 0; lr alone when
// either norm is 0). MXNet's arithmetic: beta^t in double made the weight's type, phase 1's
// corrected mean divided in double.
struct LambRule {
  float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-6f, wd = 0, rescale_grad = 1;
  float clip_gradient = -1;
  int64_t t = 0;
  bool bias_correction = true;
  float lr = 0, lower_bound = -1, upper_bound = -1;  // phase 2
  double beta1_t = 0, beta2_t = 0;                   // beta^t, from t
};

template <typename T>
COHORT_HOST_DEVICE void LambPhase1Element(const LambRule& p, int64_t i, const T* w, const T* g,
                                          T* mean, T* var, T* out) {
  const T beta1 = static_cast<T>(p.beta1), beta2 = static_cast<T>(p.beta2);
  const T epsilon = static_cast<T>(p.epsilon), wd = static_cast<T>(p.wd);
  T grad = g[i] * static_cast<T>(p.rescale_grad);
  if (p.clip_gradient >= 0.0f) grad = UpdateClip(grad, static_cast<T>(p.clip_gradient));
  mean[i] = beta1 * mean[i] + (1.f - beta1) * grad;
  var[i] = beta2 * var[i] + (1.f - beta2) * grad * grad;
  T direction = mean[i] / (UpdateSqrt(var[i]) + epsilon) + wd * w[i];
  if (p.bias_correction) {
    const T beta1_t = static_cast<T>(p.beta1_t), beta2_t = static_cast<T>(p.beta2_t);
    const T mean_hat = static_cast<T>(mean[i] / (1. - beta1_t));
    const T var_hat = var[i] / (1 - beta2_t);
    direction = mean_hat / (UpdateSqrt(var_hat) + epsilon) + wd * w[i];
  }
  out[i] = direction;
}

// r1 and r2 are the norms, one element each.
template <typename T>
COHORT_HOST_DEVICE void LambPhase2Element(const LambRule& p, int64_t i, const T* w, const T* g,
                                          const T* r1, const T* r2, T* out) {
  T new_r1 = r1[0];
  if (p.lower_bound >= 0) {
    const T bound = static_cast<T>(p.lower_bound);
    new_r1 = new_r1 < bound ? bound : new_r1;
  }
  if (p.upper_bound >= 0) {
    const T bound = static_cast<T>(p.upper_bound);
    new_r1 = new_r1 > bound ? bound : new_r1;
  }
  T lr = static_cast<T>(p.lr);
  lr = (new_r1 == T(0) || r2[0] == T(0)) ? lr * 1.0f : lr * new_r1 / r2[0];
  out[i] = w[i] - lr * g[i];
}

}  // namespace cohort
