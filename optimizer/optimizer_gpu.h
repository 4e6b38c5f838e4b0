// The optimizer update rules as one CUDA kernel, for weights that live on a GPU (trainer updates
// on each device without update_on_kvstore, and the nccl kvstore). Same arithmetic as the CPU's
// Step functions in optimizer.cc, in float32.
#pragma once

#include <cstdint>

namespace cohort {

struct GpuStepRule {
  enum Kind { kSGD, kNAG, kAdam, kAdamW, kRMSProp } kind = kSGD;
  float lr = 0, wd = 0, momentum = 0;
  float rescale = 1, clip = 0;           // Prepare(): g * rescale, clipped to ±clip when clip > 0
  float beta1 = 0, beta2 = 0, lr_t = 0;  // Adam: lr_t has the bias correction folded in
  float one_minus_beta1 = 0, one_minus_beta2 = 0;  // 1 - beta in double, then float (as the CPU)
  float epsilon = 0, gamma1 = 0;
};

// Updates n weights (and their states s0, s1 where the rule has them) on GPU `device`, on the
// default stream, which orders it after the executors' kernels (Note [GPU streams]).
void StepOnGpu(const GpuStepRule& rule, int device, float* w, const float* g, float* s0, float* s1,
               int64_t n);

}  // namespace cohort
