// Unary math (sqrt, exp, log, square, clip, and _copy, MXNet's identity): the kinds, the parameters, and each function with
// its gradient, shared by the CPU loops (unary_math.cc) and the CUDA kernels (unary_math.cu).
#pragma once

#include <cmath>

#include "base/host_device.h"
#include "operator/common/operator.h"

namespace cohort::op {

enum class UnaryKind { kSqrt, kExp, kLog, kSquare, kClip, kCopy };

struct UnaryParam {
  UnaryKind kind = UnaryKind::kSqrt;
  float a_min = 0, a_max = 0;  // clip only

  // `op` is the registered name ("sqrt", ..., "clip", "_copy").
  static UnaryParam Parse(const std::string& op, const Attrs& attrs);
  // sqrt and exp differentiate from their output, the others from their input.
  bool GradReadsInput() const { return kind != UnaryKind::kSqrt && kind != UnaryKind::kExp; }
};

COHORT_HOST_DEVICE float UnaryValue(UnaryKind kind, float x, float a_min, float a_max) {
  switch (kind) {
    case UnaryKind::kSqrt: return sqrtf(x);
    case UnaryKind::kExp: return expf(x);
    case UnaryKind::kLog: return logf(x);
    case UnaryKind::kSquare: return x * x;
    case UnaryKind::kClip: return x < a_min ? a_min : x > a_max ? a_max : x;
    case UnaryKind::kCopy: return x;
  }
  return 0;
}

// dL/dx for head gradient g, input x and output y (MXNet's _backward_* of each function; clip
// passes the gradient through where a_min <= x <= a_max, as MXNet's does).
COHORT_HOST_DEVICE float UnaryGrad(UnaryKind kind, float g, float x, float y, float a_min,
                                   float a_max) {
  switch (kind) {
    case UnaryKind::kSqrt: return g * (0.5f / y);
    case UnaryKind::kExp: return g * y;
    case UnaryKind::kLog: return g / x;
    case UnaryKind::kSquare: return g * (2.0f * x);
    case UnaryKind::kClip: return x < a_min || x > a_max ? 0.0f : g;
    case UnaryKind::kCopy: return g;
  }
  return 0;
}

}  // namespace cohort::op
