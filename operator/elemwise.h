// Elementwise arithmetic (elemwise_add/_sub/_mul/_div and the scalar forms _plus_scalar, ...,
// _maximum_scalar and _minimum_scalar):
// the kinds and each one's value and gradients, shared by the CPU loops (elemwise.cc) and the
// CUDA kernels (elemwise.cu).
#pragma once

#include <cstdint>

#include "base/host_device.h"

namespace cohort::op {

enum class BinaryKind { kAdd, kSub, kMul, kDiv };
enum class ScalarKind { kPlus, kMinus, kRMinus, kMul, kDiv, kRDiv, kMaximum, kMinimum };

COHORT_HOST_DEVICE float BinaryValue(BinaryKind kind, float a, float b) {
  switch (kind) {
    case BinaryKind::kAdd: return a + b;
    case BinaryKind::kSub: return a - b;
    case BinaryKind::kMul: return a * b;
    case BinaryKind::kDiv: return a / b;
  }
  return 0;
}

// The gradient of `side` (0: lhs, 1: rhs) at element i for head gradient g. a and b are read
// only by kMul and kDiv (BinaryGradReadsInputs) and may be null for the others.
COHORT_HOST_DEVICE float BinaryGrad(BinaryKind kind, int side, float g, const float* a,
                                    const float* b, int64_t i) {
  switch (kind) {
    case BinaryKind::kAdd: return g;
    case BinaryKind::kSub: return side == 0 ? g : -g;
    case BinaryKind::kMul: return g * (side == 0 ? b[i] : a[i]);
    case BinaryKind::kDiv: return side == 0 ? g / b[i] : -g * a[i] / (b[i] * b[i]);
  }
  return 0;
}
inline bool BinaryGradReadsInputs(BinaryKind kind) {
  return kind == BinaryKind::kMul || kind == BinaryKind::kDiv;
}

COHORT_HOST_DEVICE float ScalarValue(ScalarKind kind, float x, float s) {
  switch (kind) {
    case ScalarKind::kPlus: return x + s;
    case ScalarKind::kMinus: return x - s;
    case ScalarKind::kRMinus: return s - x;
    case ScalarKind::kMul: return x * s;
    case ScalarKind::kDiv: return x / s;
    case ScalarKind::kRDiv: return s / x;
    // A NaN input is the result (broadcast_maximum's rule).
    case ScalarKind::kMaximum: return x > s || x != x ? x : s;
    case ScalarKind::kMinimum: return x < s || x != x ? x : s;
  }
  return 0;
}

// The gradient at element i for head gradient g; x is read only by kRDiv, kMaximum and kMinimum
// (ScalarGradReadsInput) and may be null for the others. maximum passes the gradient where
// x >= s, minimum where x <= s, as MXNet's _backward_maximum_scalar / _minimum_scalar do.
COHORT_HOST_DEVICE float ScalarGrad(ScalarKind kind, float g, const float* x, float s, int64_t i) {
  switch (kind) {
    case ScalarKind::kPlus:
    case ScalarKind::kMinus: return g;
    case ScalarKind::kRMinus: return -g;
    case ScalarKind::kMul: return g * s;
    case ScalarKind::kDiv: return g / s;
    case ScalarKind::kRDiv: return g * (-s / (x[i] * x[i]));
    case ScalarKind::kMaximum: return x[i] >= s ? g : 0.0f;
    case ScalarKind::kMinimum: return x[i] <= s ? g : 0.0f;
  }
  return 0;
}
inline bool ScalarGradReadsInput(ScalarKind kind) {
  return kind == ScalarKind::kRDiv || kind == ScalarKind::kMaximum || kind == ScalarKind::kMinimum;
}

}  // namespace cohort::op
