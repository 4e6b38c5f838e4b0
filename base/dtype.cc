// DType names, sizes and MXNet type flags.
#include "base/dtype.h"

namespace cohort {

size_t DTypeSize(DType dtype) {
  return DispatchDType(dtype, [](auto tag) { return sizeof(tag); });
}

std::string_view DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "float32";
    case DType::kFloat64: return "float64";
    case DType::kFloat16: return "float16";
    case DType::kUint8: return "uint8";
    case DType::kInt32: return "int32";
    case DType::kInt8: return "int8";
    case DType::kInt64: return "int64";
    case DType::kBool: return "bool";
    case DType::kBFloat16: return "bfloat16";
  }
  return "unknown";
}

std::optional<DType> DTypeFromFlag(int32_t flag) {
  switch (flag) {
    case 0:
    case 1:
    case 2:
    case 3:
    case 4:
    case 5:
    case 6:
    case 7:
    case 12: return static_cast<DType>(flag);
    default: return std::nullopt;
  }
}

DType ParseDType(std::string_view name) {
  for (int32_t flag : {0, 1, 2, 3, 4, 5, 6, 7, 12}) {
    DType dtype = static_cast<DType>(flag);
    if (DTypeName(dtype) == name) return dtype;
  }
  COHORT_THROW() << "unknown dtype '" << name
                 << "': expected float32, float64, float16, bfloat16, uint8, int8, int32, int64 "
                    "or bool";
  return DType::kFloat32;
}

bool IsFloatingPoint(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat64 || dtype == DType::kFloat16 ||
         dtype == DType::kBFloat16;
}

std::ostream& operator<<(std::ostream& os, DType dtype) { return os << DTypeName(dtype); }

}  // namespace cohort
