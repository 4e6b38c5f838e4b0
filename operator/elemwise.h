// Elementwise arithmetic (elemwise_add/_sub/_mul/_div and the scalar forms _plus_scalar, ...,
// _maximum_scalar and _minimum_scalar):
// the kinds and each one's value and gradients, shared by the CPU loops (elemwise.cc) and the
// CUDA kernels (elemwise.cu). Values are computed in an element type's ComputeType (float for
// the half types); integers stay exact, wrapping on overflow as numpy does, and a division by
// zero gives 0 (numpy's floor_divide; MXNet 1.9 dies of SIGFPE).
#pragma once

#include <cstdint>
#include <type_traits>

#include "base/dtype.h"
#include "base/host_device.h"
#include "operator/broadcast.h"
#include "operator/common/exact_math.h"

namespace cohort::op {

enum class BinaryKind { kAdd, kSub, kMul, kDiv };
// The comparisons (_equal_scalar, ...) give 1 or 0 in the array's type and no gradient.
enum class ScalarKind {
  kPlus,
  kMinus,
  kRMinus,
  kMul,
  kDiv,
  kRDiv,
  kMaximum,
  kMinimum,
  kEqual,
  kNotEqual,
  kGreater,
  kGreaterEqual,
  kLesser,
  kLesserEqual
};

template <typename T>
COHORT_HOST_DEVICE T BinaryValue(BinaryKind kind, T a, T b) {
  switch (kind) {
    case BinaryKind::kAdd: return WrapAdd(a, b);
    case BinaryKind::kSub: return WrapSub(a, b);
    case BinaryKind::kMul: return WrapMul(a, b);
    case BinaryKind::kDiv: return Divide(a, b);
  }
  return T(0);
}

// The gradient of `side` (0: lhs, 1: rhs) at element i for head gradient g, in T's ComputeType
// (float for the half types). a and b are read only by kMul and kDiv (BinaryGradReadsInputs) and
// may be null for the others. Floating types.
template <typename T>
COHORT_HOST_DEVICE ComputeType<T> BinaryGrad(BinaryKind kind, int side, ComputeType<T> g,
                                             const T* a, const T* b, int64_t i) {
  using C = ComputeType<T>;
  switch (kind) {
    case BinaryKind::kAdd: return g;
    case BinaryKind::kSub: return side == 0 ? g : -g;
    case BinaryKind::kMul: return g * ConvertValue<C>(side == 0 ? b[i] : a[i]);
    case BinaryKind::kDiv: {
      const C bi = ConvertValue<C>(b[i]);
      return side == 0 ? g / bi : -g * ConvertValue<C>(a[i]) / (bi * bi);
    }
  }
  return C(0);
}
inline bool BinaryGradReadsInputs(BinaryKind kind) {
  return kind == BinaryKind::kMul || kind == BinaryKind::kDiv;
}

// The scalar is converted to the array's type first, as MXNet does (int32 + 2.5 adds 2).
template <typename T>
COHORT_HOST_DEVICE T ScalarValue(ScalarKind kind, T x, T s) {
  switch (kind) {
    case ScalarKind::kPlus: return WrapAdd(x, s);
    case ScalarKind::kMinus: return WrapSub(x, s);
    case ScalarKind::kRMinus: return WrapSub(s, x);
    case ScalarKind::kMul: return WrapMul(x, s);
    case ScalarKind::kDiv: return Divide(x, s);
    case ScalarKind::kRDiv: return Divide(s, x);
    // A NaN input is the result (broadcast_maximum's rule).
    case ScalarKind::kMaximum: return x > s || x != x ? x : s;
    case ScalarKind::kMinimum: return x < s || x != x ? x : s;
    // The comparisons are the broadcast ones (broadcast.h) against the scalar.
    case ScalarKind::kEqual: return BroadcastValue(BroadcastKind::kEqual, x, s);
    case ScalarKind::kNotEqual: return BroadcastValue(BroadcastKind::kNotEqual, x, s);
    case ScalarKind::kGreater: return BroadcastValue(BroadcastKind::kGreater, x, s);
    case ScalarKind::kGreaterEqual: return BroadcastValue(BroadcastKind::kGreaterEqual, x, s);
    case ScalarKind::kLesser: return BroadcastValue(BroadcastKind::kLesser, x, s);
    case ScalarKind::kLesserEqual: return BroadcastValue(BroadcastKind::kLesserEqual, x, s);
  }
  return T(0);
}

// The gradient at element i for head gradient g; x is read only by kRDiv, kMaximum and kMinimum
// (ScalarGradReadsInput) and may be null for the others. maximum passes the gradient where
// x >= s, minimum where x <= s, as MXNet's _backward_maximum_scalar / _minimum_scalar do.
// Floating types, computed in T's ComputeType (s is the scalar rounded to T first).
template <typename T>
COHORT_HOST_DEVICE ComputeType<T> ScalarGrad(ScalarKind kind, ComputeType<T> g, const T* x,
                                             ComputeType<T> s, int64_t i) {
  using C = ComputeType<T>;
  switch (kind) {
    case ScalarKind::kPlus:
    case ScalarKind::kMinus: return g;
    case ScalarKind::kRMinus: return -g;
    case ScalarKind::kMul: return g * s;
    case ScalarKind::kDiv: return g / s;
    case ScalarKind::kRDiv: {
      const C xi = ConvertValue<C>(x[i]);
      return g * (-s / (xi * xi));
    }
    case ScalarKind::kMaximum: return ConvertValue<C>(x[i]) >= s ? g : C(0);
    case ScalarKind::kMinimum: return ConvertValue<C>(x[i]) <= s ? g : C(0);
    default: return C(0);  // the comparisons
  }
}
inline bool ScalarGradReadsInput(ScalarKind kind) {
  return kind == ScalarKind::kRDiv || kind == ScalarKind::kMaximum || kind == ScalarKind::kMinimum;
}

}  // namespace cohort::op
