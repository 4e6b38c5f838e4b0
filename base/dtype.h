// DType: element types, numbered with MXNet's type flags so they round-trip through .params.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string_view>
#include <type_traits>

#include "base/error.h"
#include "base/half.h"
#include "base/host_device.h"

namespace cohort {

// Values are mshadow's TypeFlag, as written in MXNet's .params files and symbol JSON.
enum class DType : int32_t {
  kFloat32 = 0,
  kFloat64 = 1,
  kFloat16 = 2,
  kUint8 = 3,
  kInt32 = 4,
  kInt8 = 5,
  kInt64 = 6,
  kBool = 7,
  kBFloat16 = 12,
};

// Every dtype, in flag order.
inline constexpr DType kAllDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                                       DType::kUint8,   DType::kInt32,   DType::kInt8,
                                       DType::kInt64,   DType::kBool,    DType::kBFloat16};

size_t DTypeSize(DType dtype);
// "float32", "float16", "bfloat16", "uint8", "bool", ... (numpy's names, as MXNet prints them).
std::string_view DTypeName(DType dtype);
// Accepts DTypeName's names; throws naming the text otherwise.
DType ParseDType(std::string_view name);
// The DType for an MXNet type flag, or nullopt for a flag Cohort does not know.
std::optional<DType> DTypeFromFlag(int32_t flag);
bool IsFloatingPoint(DType dtype);

std::ostream& operator<<(std::ostream& os, DType dtype);

// The DType of a C++ element type.
template <typename T>
struct DTypeOf;
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::kFloat32;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DType::kFloat64;
};
template <>
struct DTypeOf<float16> {
  static constexpr DType value = DType::kFloat16;
};
template <>
struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::kUint8;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DType::kInt32;
};
template <>
struct DTypeOf<int8_t> {
  static constexpr DType value = DType::kInt8;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DType::kInt64;
};
template <>
struct DTypeOf<bool> {
  static constexpr DType value = DType::kBool;
};
template <>
struct DTypeOf<bfloat16> {
  static constexpr DType value = DType::kBFloat16;
};
template <typename T>
inline constexpr DType kDTypeOf = DTypeOf<T>::value;

// Calls fn(T{}) with T the C++ type of dtype: DispatchDType(d, [&](auto tag) { using T = ...; }).
template <typename Fn>
decltype(auto) DispatchDType(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32: return fn(float{});
    case DType::kFloat64: return fn(double{});
    case DType::kFloat16: return fn(float16{});
    case DType::kUint8: return fn(uint8_t{});
    case DType::kInt32: return fn(int32_t{});
    case DType::kInt8: return fn(int8_t{});
    case DType::kInt64: return fn(int64_t{});
    case DType::kBool: return fn(bool{});
    case DType::kBFloat16: return fn(bfloat16{});
  }
  COHORT_THROW() << "unknown dtype flag " << static_cast<int32_t>(dtype);
  return fn(float{});  // not reached: the line above throws
}

// Converts one value between element types as numpy's astype does (bool: nonzero -> true;
// float -> int truncates toward zero). Half types convert through float. Both kernels' sides
// call it (Cast); a NaN or out-of-range float to an integer is whatever the hardware's
// truncating conversion gives (x86: the type's minimum; CUDA: saturated, NaN 0).
template <typename To, typename From>
COHORT_HOST_DEVICE To ConvertValue(From value) {
  if constexpr (std::is_same_v<From, float16> || std::is_same_v<From, bfloat16>) {
    return ConvertValue<To>(static_cast<float>(value));
  } else if constexpr (std::is_same_v<To, float16> || std::is_same_v<To, bfloat16>) {
    return To(static_cast<float>(value));
  } else if constexpr (std::is_same_v<To, bool>) {
    return value != From(0);
  } else {
    return static_cast<To>(value);
  }
}

}  // namespace cohort
