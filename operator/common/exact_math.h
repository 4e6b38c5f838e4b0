// Arithmetic on any element type as numpy computes it, for the elementwise and broadcast
// ops' kernels on both sides: integers wrap on overflow (in the unsigned type: signed overflow is
// undefined), a division by zero gives 0 (numpy's floor_divide; MXNet 1.9 dies of SIGFPE), and
// an integer power is exact.
#pragma once

#include <cmath>
#include <string>
#include <type_traits>

#include "base/dtype.h"
#include "base/half.h"
#include "base/host_device.h"

namespace cohort::op {

// The dtypes the arithmetic kernels compute in: every numeric type (not bool).
inline bool ArithmeticTakes(DType dtype) { return dtype != DType::kBool; }

// Calls fn(T{}) for T the element type of `dtype`, one that ArithmeticTakes (else throws naming
// `op`): the kernels' dispatch on both sides.
template <typename Fn>
void DispatchArithmetic(const std::string& op, DType dtype, Fn&& fn) {
  DispatchDType(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      COHORT_THROW() << op << ": no kernel for bool arrays";
    } else {
      fn(tag);
    }
  });
}

// Calls fn(T{}) for a floating `dtype` (float16, bfloat16, float32, float64), else throws naming
// `op`.
template <typename Fn>
void DispatchFloating(const std::string& op, DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32: return fn(float{});
    case DType::kFloat64: return fn(double{});
    case DType::kFloat16: return fn(float16{});
    case DType::kBFloat16: return fn(bfloat16{});
    default: COHORT_THROW() << op << ": no kernel for " << dtype << " arrays (floating types only)";
  }
}

// Calls fn(T{}) for float32, bfloat16 or float16 `dtype`, else throws naming `op`: the kernels
// that read and write the half types and compute in float32 registers (BatchNorm's data,
// _masked_softmax's data and output).
template <typename Fn>
void DispatchFloat32OrHalf(const std::string& op, DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32: return fn(float{});
    case DType::kBFloat16: return fn(bfloat16{});
    case DType::kFloat16: return fn(float16{});
    default:
      COHORT_THROW() << op << ": no kernel for " << dtype
                     << " arrays (float32, bfloat16 or float16)";
  }
}

// The same for the gradients, which the floating types have (the half types computed in float,
// rounded once per element); integers have none.
template <typename Fn>
void DispatchGradient(const std::string& op, DType dtype, Fn&& fn) {
  if (dtype == DType::kFloat32) return fn(float{});
  if (dtype == DType::kFloat64) return fn(double{});
  if (dtype == DType::kFloat16) return fn(float16{});
  if (dtype == DType::kBFloat16) return fn(bfloat16{});
  COHORT_THROW() << op << ": no gradient for " << dtype
                 << " arrays (float16, bfloat16, float32 and float64 have one)";
}

// *dst += v in T: integers wrap, the half types add in float (gradients scattered in any
// dtype, as MXNet's slice and topk backward give them).
template <typename T>
COHORT_HOST_DEVICE void AddInto(T* dst, T v);

// a + b, a - b, a * b for integers wrap (in the unsigned type: signed overflow is undefined).
template <typename T>
COHORT_HOST_DEVICE T WrapAdd(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}
template <typename T>
COHORT_HOST_DEVICE T WrapSub(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
  } else {
    return a - b;
  }
}
template <typename T>
COHORT_HOST_DEVICE T WrapMul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else {
    return a * b;
  }
}
// Integer division truncates (C++, MXNet); by zero it gives 0, and min / -1 wraps.
template <typename T>
COHORT_HOST_DEVICE T Divide(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == T(0)) return T(0);
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return WrapSub(T(0), a);
    }
    return static_cast<T>(a / b);
  } else {
    return a / b;
  }
}

// a ** b: exact by squaring for integers (a negative exponent gives 0 unless |a| is 1, as
// integer division would); pow for floating types.
template <typename T>
COHORT_HOST_DEVICE T Power(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if constexpr (std::is_signed_v<T>) {
      if (b < T(0)) {
        if (a == T(1)) return T(1);
        if (a == T(-1)) return (b % 2 == 0) ? T(1) : T(-1);
        return T(0);
      }
    }
    T result = T(1), base = a;
    for (T e = b; e > T(0); e = static_cast<T>(e / 2)) {
      if (e % 2 == 1) result = WrapMul(result, base);
      base = WrapMul(base, base);
    }
    return result;
  } else if constexpr (std::is_same_v<T, double>) {
    return pow(a, b);
  } else {
    return powf(a, b);
  }
}

template <typename T>
COHORT_HOST_DEVICE void AddInto(T* dst, T v) {
  if constexpr (std::is_integral_v<T>) {
    *dst = WrapAdd(*dst, v);
  } else {
    using C = ComputeType<T>;
    *dst = static_cast<T>(static_cast<C>(*dst) + static_cast<C>(v));
  }
}

}  // namespace cohort::op
