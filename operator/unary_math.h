// Unary math (MXNet's elementwise functions: roots, exponentials and logarithms, trigonometric
// and hyperbolic functions, rounding, clip, and _copy, MXNet's identity): the kinds, the
// parameters, and each function with its gradient, shared by the CPU loops (unary_math.cc) and
// the CUDA kernels (unary_math.cu).
#pragma once

#include <cmath>
#include <type_traits>

#include "base/half.h"
#include "base/host_device.h"
#include "operator/common/exact_math.h"
#include "operator/common/operator.h"

namespace cohort::op {

// X(kind, registered name): every function of the family, in one list that the enum, the
// registration and the CPU dispatch are made from.
#define COHORT_UNARY_KINDS(X)                                                                     \
  X(kSqrt, "sqrt")                                                                                \
  X(kExp, "exp") X(kLog, "log") X(kSquare, "square") X(kClip, "clip") X(kCopy, "_copy")           \
      X(kAbs, "abs") X(kSign, "sign") X(kReciprocal, "reciprocal") X(kRsqrt, "rsqrt")             \
          X(kCbrt, "cbrt") X(kRcbrt, "rcbrt") X(kSin, "sin") X(kCos, "cos") X(kTan, "tan")        \
              X(kArcsin, "arcsin") X(kArccos, "arccos") X(kArctan, "arctan") X(kSinh, "sinh")     \
                  X(kCosh, "cosh") X(kArcsinh, "arcsinh") X(kArccosh, "arccosh")                  \
                      X(kArctanh, "arctanh") X(kDegrees, "degrees") X(kRadians, "radians")        \
                          X(kFloor, "floor") X(kCeil, "ceil") X(kRound, "round") X(kRint, "rint") \
                              X(kFix, "fix") X(kTrunc, "trunc") X(kLog10, "log10")                \
                                  X(kLog2, "log2") X(kLog1p, "log1p") X(kExpm1, "expm1")          \
                                      X(kZerosLike, "zeros_like") X(kOnesLike, "ones_like")

#define COHORT_UNARY_ENUM(k, name) k,
enum class UnaryKind { COHORT_UNARY_KINDS(COHORT_UNARY_ENUM) };
#undef COHORT_UNARY_ENUM

struct UnaryParam {
  UnaryKind kind = UnaryKind::kSqrt;
  float a_min = 0, a_max = 0;  // clip only

  // `op` is the registered name ("sqrt", ..., "clip", "_copy").
  static UnaryParam Parse(const std::string& op, const Attrs& attrs);
  // sqrt and exp differentiate from their output, the others from their input.
  bool GradReadsInput() const { return kind != UnaryKind::kSqrt && kind != UnaryKind::kExp; }
  bool PassesGradient() const;
};

inline constexpr float kDegreesPerRadian = 57.29577951308232f;

COHORT_HOST_DEVICE float UnaryValue(UnaryKind kind, float x, float a_min, float a_max) {
  switch (kind) {
    case UnaryKind::kSqrt: return sqrtf(x);
    case UnaryKind::kExp: return expf(x);
    case UnaryKind::kLog: return logf(x);
    case UnaryKind::kSquare: return x * x;
    case UnaryKind::kClip: return x < a_min ? a_min : x > a_max ? a_max : x;
    case UnaryKind::kCopy: return x;
    case UnaryKind::kAbs: return fabsf(x);
    case UnaryKind::kSign: return x > 0 ? 1.0f : x < 0 ? -1.0f : 0.0f;
    case UnaryKind::kReciprocal: return 1.0f / x;
    case UnaryKind::kRsqrt: return 1.0f / sqrtf(x);
    case UnaryKind::kCbrt: return cbrtf(x);
    case UnaryKind::kRcbrt: return 1.0f / cbrtf(x);
    case UnaryKind::kSin: return sinf(x);
    case UnaryKind::kCos: return cosf(x);
    case UnaryKind::kTan: return tanf(x);
    case UnaryKind::kArcsin: return asinf(x);
    case UnaryKind::kArccos: return acosf(x);
    case UnaryKind::kArctan: return atanf(x);
    case UnaryKind::kSinh: return sinhf(x);
    case UnaryKind::kCosh: return coshf(x);
    case UnaryKind::kArcsinh: return asinhf(x);
    case UnaryKind::kArccosh: return acoshf(x);
    case UnaryKind::kArctanh: return atanhf(x);
    case UnaryKind::kDegrees: return x * kDegreesPerRadian;
    case UnaryKind::kRadians: return x / kDegreesPerRadian;
    case UnaryKind::kFloor: return floorf(x);
    case UnaryKind::kCeil: return ceilf(x);
    case UnaryKind::kRound: return roundf(x);  // halves away from zero, as MXNet's
    case UnaryKind::kRint: return rintf(x);    // halves to even
    case UnaryKind::kFix:                      // toward zero
    case UnaryKind::kTrunc: return truncf(x);
    case UnaryKind::kLog10: return log10f(x);
    case UnaryKind::kLog2: return log2f(x);
    case UnaryKind::kLog1p: return log1pf(x);
    case UnaryKind::kExpm1: return expm1f(x);
    case UnaryKind::kZerosLike: return 0.0f;
    case UnaryKind::kOnesLike: return 1.0f;
  }
  return 0;
}

// UnaryValue in double (float64 arrays; Note [Typed unary math]).
COHORT_HOST_DEVICE double UnaryValue64(UnaryKind kind, double x, double a_min, double a_max) {
  switch (kind) {
    case UnaryKind::kSqrt: return sqrt(x);
    case UnaryKind::kExp: return exp(x);
    case UnaryKind::kLog: return log(x);
    case UnaryKind::kSquare: return x * x;
    case UnaryKind::kClip: return x < a_min ? a_min : x > a_max ? a_max : x;
    case UnaryKind::kCopy: return x;
    case UnaryKind::kAbs: return fabs(x);
    case UnaryKind::kSign: return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0;
    case UnaryKind::kReciprocal: return 1.0 / x;
    case UnaryKind::kRsqrt: return 1.0 / sqrt(x);
    case UnaryKind::kCbrt: return cbrt(x);
    case UnaryKind::kRcbrt: return 1.0 / cbrt(x);
    case UnaryKind::kSin: return sin(x);
    case UnaryKind::kCos: return cos(x);
    case UnaryKind::kTan: return tan(x);
    case UnaryKind::kArcsin: return asin(x);
    case UnaryKind::kArccos: return acos(x);
    case UnaryKind::kArctan: return atan(x);
    case UnaryKind::kSinh: return sinh(x);
    case UnaryKind::kCosh: return cosh(x);
    case UnaryKind::kArcsinh: return asinh(x);
    case UnaryKind::kArccosh: return acosh(x);
    case UnaryKind::kArctanh: return atanh(x);
    case UnaryKind::kDegrees: return x * 57.29577951308232;
    case UnaryKind::kRadians: return x / 57.29577951308232;
    case UnaryKind::kFloor: return floor(x);
    case UnaryKind::kCeil: return ceil(x);
    case UnaryKind::kRound: return round(x);
    case UnaryKind::kRint: return rint(x);
    case UnaryKind::kFix:
    case UnaryKind::kTrunc: return trunc(x);
    case UnaryKind::kLog10: return log10(x);
    case UnaryKind::kLog2: return log2(x);
    case UnaryKind::kLog1p: return log1p(x);
    case UnaryKind::kExpm1: return expm1(x);
    case UnaryKind::kZerosLike: return 0.0;
    case UnaryKind::kOnesLike: return 1.0;
  }
  return 0;
}

// Whether a function's derivative is nonzero somewhere: sign, the rounding functions,
// zeros_like and ones_like pass no gradient (Note [Zero gradients]).
COHORT_HOST_DEVICE bool UnaryPassesGradient(UnaryKind kind) {
  switch (kind) {
    case UnaryKind::kSign:
    case UnaryKind::kFloor:
    case UnaryKind::kCeil:
    case UnaryKind::kRound:
    case UnaryKind::kRint:
    case UnaryKind::kFix:
    case UnaryKind::kTrunc:
    case UnaryKind::kZerosLike:
    case UnaryKind::kOnesLike: return false;
    default: return true;
  }
}

// Element types other than float32 (Note [Typed unary math]): the functions without a gradient
// (sign, rounding, zeros_like, ones_like) and copies, abs, square and clip are exact on integers.
inline bool UnaryExactOnIntegers(UnaryKind kind) {
  return !UnaryPassesGradient(kind) || kind == UnaryKind::kCopy || kind == UnaryKind::kAbs ||
         kind == UnaryKind::kSquare || kind == UnaryKind::kClip;
}
inline bool UnaryTakes(UnaryKind kind, DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat64: return true;
    case DType::kBool: return kind == UnaryKind::kZerosLike || kind == UnaryKind::kOnesLike;
    default: return UnaryExactOnIntegers(kind);  // the integers
  }
}

// Note [Typed unary math]
// float16 and bfloat16 compute in float32 through UnaryValue, as MXNet computes them; float64
// computes every function in double (UnaryValue64, UnaryGrad64), as MXNet's float64 kernels do.
// The integer types take the functions that are exact on them (UnaryExactOnIntegers): copies,
// abs, sign and square (wrapping as numpy's), clip (bounds compared in double), the rounding
// functions (unchanged), zeros_like and ones_like; the others are refused at bind. Gradients
// (UnaryTypedGrad): the half types through UnaryGrad in float, float64 through UnaryGrad64;
// integers have none.
template <typename T>
COHORT_HOST_DEVICE T UnaryTyped(UnaryKind kind, T x, float a_min, float a_max) {
  if constexpr (std::is_same_v<T, bool>) {  // zeros_like and ones_like (UnaryTakes)
    return kind == UnaryKind::kOnesLike ? true : kind == UnaryKind::kZerosLike ? false : x;
  } else if constexpr (!std::is_same_v<ComputeType<T>, T>) {  // the half types
    return T(UnaryValue(kind, static_cast<float>(x), a_min, a_max));
  } else {
    switch (kind) {
      case UnaryKind::kCopy: return x;
      case UnaryKind::kAbs: return x < T(0) ? WrapSub(T(0), x) : x;
      case UnaryKind::kSign: return x > T(0) ? T(1) : x < T(0) ? T(-1) : T(0);
      case UnaryKind::kSquare: return WrapMul(x, x);
      case UnaryKind::kClip: {
        const double v = static_cast<double>(x);
        return v < a_min ? static_cast<T>(a_min) : v > a_max ? static_cast<T>(a_max) : x;
      }
      case UnaryKind::kZerosLike: return T(0);
      case UnaryKind::kOnesLike: return T(1);
      default: break;
    }
    if constexpr (std::is_floating_point_v<T>) {
      switch (kind) {
        case UnaryKind::kFloor: return floor(x);
        case UnaryKind::kCeil: return ceil(x);
        case UnaryKind::kRound: return round(x);
        case UnaryKind::kRint: return rint(x);
        case UnaryKind::kFix:
        case UnaryKind::kTrunc: return trunc(x);
        default:
          if constexpr (std::is_same_v<T, double>) return UnaryValue64(kind, x, a_min, a_max);
          return T(UnaryValue(kind, static_cast<float>(x), a_min, a_max));
      }
    }
    return x;  // the rounding functions leave integers as they are
  }
}

inline bool UnaryParam::PassesGradient() const { return UnaryPassesGradient(kind); }

// dL/dx for head gradient g, input x and output y (MXNet's _backward_* of each function; clip
// passes the gradient through where a_min <= x <= a_max, as MXNet's does; sign and the
// rounding functions pass none, nor do zeros_like and ones_like). Only one of x and y is read: the
// output for sqrt and exp, the input otherwise (GradReadsInput).
COHORT_HOST_DEVICE float UnaryGrad(UnaryKind kind, float g, float x, float y, float a_min,
                                   float a_max) {
  if (!UnaryPassesGradient(kind)) return 0.0f;
  switch (kind) {
    case UnaryKind::kSqrt: return g * (0.5f / y);
    case UnaryKind::kExp: return g * y;
    case UnaryKind::kLog: return g / x;
    case UnaryKind::kSquare: return g * (2.0f * x);
    case UnaryKind::kClip: return x < a_min || x > a_max ? 0.0f : g;
    case UnaryKind::kCopy: return g;
    case UnaryKind::kAbs: return x > 0 ? g : x < 0 ? -g : 0.0f;
    case UnaryKind::kReciprocal: return -g / (x * x);
    case UnaryKind::kRsqrt: return -0.5f * g / (x * sqrtf(x));
    case UnaryKind::kCbrt: {
      const float c = cbrtf(x);
      return g / (3.0f * c * c);
    }
    case UnaryKind::kRcbrt: return -g / (3.0f * x * cbrtf(x));
    case UnaryKind::kSin: return g * cosf(x);
    case UnaryKind::kCos: return -g * sinf(x);
    case UnaryKind::kTan: {
      const float t = tanf(x);
      return g * (1.0f + t * t);
    }
    case UnaryKind::kArcsin: return g / sqrtf(1.0f - x * x);
    case UnaryKind::kArccos: return -g / sqrtf(1.0f - x * x);
    case UnaryKind::kArctan: return g / (1.0f + x * x);
    case UnaryKind::kSinh: return g * coshf(x);
    case UnaryKind::kCosh: return g * sinhf(x);
    case UnaryKind::kArcsinh: return g / sqrtf(x * x + 1.0f);
    case UnaryKind::kArccosh: return g / sqrtf(x * x - 1.0f);
    case UnaryKind::kArctanh: return g / (1.0f - x * x);
    case UnaryKind::kDegrees: return g * kDegreesPerRadian;
    case UnaryKind::kRadians: return g / kDegreesPerRadian;
    case UnaryKind::kLog10: return g / (x * 2.302585093f);
    case UnaryKind::kLog2: return g / (x * 0.6931471806f);
    case UnaryKind::kLog1p: return g / (1.0f + x);
    case UnaryKind::kExpm1: return g * expf(x);
    default: return 0.0f;  // UnaryPassesGradient's kinds
  }
  return 0;
}

// UnaryGrad in double (float64 arrays).
COHORT_HOST_DEVICE double UnaryGrad64(UnaryKind kind, double g, double x, double y, double a_min,
                                      double a_max) {
  if (!UnaryPassesGradient(kind)) return 0.0;
  switch (kind) {
    case UnaryKind::kSqrt: return g * (0.5 / y);
    case UnaryKind::kExp: return g * y;
    case UnaryKind::kLog: return g / x;
    case UnaryKind::kSquare: return g * (2.0 * x);
    case UnaryKind::kClip: return x < a_min || x > a_max ? 0.0 : g;
    case UnaryKind::kCopy: return g;
    case UnaryKind::kAbs: return x > 0 ? g : x < 0 ? -g : 0.0;
    case UnaryKind::kReciprocal: return -g / (x * x);
    case UnaryKind::kRsqrt: return -0.5 * g / (x * sqrt(x));
    case UnaryKind::kCbrt: {
      const double c = cbrt(x);
      return g / (3.0 * c * c);
    }
    case UnaryKind::kRcbrt: return -g / (3.0 * x * cbrt(x));
    case UnaryKind::kSin: return g * cos(x);
    case UnaryKind::kCos: return -g * sin(x);
    case UnaryKind::kTan: {
      const double t = tan(x);
      return g * (1.0 + t * t);
    }
    case UnaryKind::kArcsin: return g / sqrt(1.0 - x * x);
    case UnaryKind::kArccos: return -g / sqrt(1.0 - x * x);
    case UnaryKind::kArctan: return g / (1.0 + x * x);
    case UnaryKind::kSinh: return g * cosh(x);
    case UnaryKind::kCosh: return g * sinh(x);
    case UnaryKind::kArcsinh: return g / sqrt(x * x + 1.0);
    case UnaryKind::kArccosh: return g / sqrt(x * x - 1.0);
    case UnaryKind::kArctanh: return g / (1.0 - x * x);
    case UnaryKind::kDegrees: return g * 57.29577951308232;
    case UnaryKind::kRadians: return g / 57.29577951308232;
    case UnaryKind::kLog10: return g / (x * 2.302585092994046);
    case UnaryKind::kLog2: return g / (x * 0.6931471805599453);
    case UnaryKind::kLog1p: return g / (1.0 + x);
    case UnaryKind::kExpm1: return g * exp(x);
    default: return 0.0;  // UnaryPassesGradient's kinds
  }
}

// The gradient in a floating type other than float32 (Note [Typed unary math]), in its
// ComputeType: the half types through UnaryGrad in float; float64, which takes only
// UnaryExactOnIntegers's functions, in double.
template <typename T>
COHORT_HOST_DEVICE ComputeType<T> UnaryTypedGrad(UnaryKind kind, ComputeType<T> g, T x, T y,
                                                 float a_min, float a_max) {
  using C = ComputeType<T>;
  if constexpr (std::is_same_v<C, float>) {
    return UnaryGrad(kind, g, ConvertValue<float>(x), ConvertValue<float>(y), a_min, a_max);
  } else if constexpr (std::is_same_v<T, double>) {
    return UnaryGrad64(kind, g, x, y, a_min, a_max);
  } else {
    const C v = ConvertValue<C>(x);
    switch (kind) {
      case UnaryKind::kCopy: return g;
      case UnaryKind::kAbs: return v > 0 ? g : v < 0 ? -g : C(0);
      case UnaryKind::kSquare: return g * (C(2) * v);
      case UnaryKind::kClip: return v < a_min || v > a_max ? C(0) : g;
      default: return C(0);  // no gradient (UnaryPassesGradient), or refused at bind
    }
  }
}

}  // namespace cohort::op
