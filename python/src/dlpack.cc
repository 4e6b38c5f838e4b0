// DLPack both ways without a copy: an NDArray as a "dltensor" capsule (__dlpack__,
// to_dlpack_for_read/write) and any producer's capsule as an NDArray (nd.from_dlpack), for
// numpy, PyTorch, CuPy and the like. The structs are DLPack's ABI (v0.8, dlpack.h), written out
// here: Debian's python3-numpy does not ship the header.
#include <algorithm>
#include <cstring>

#include "ndarray/ndarray.h"
#include "python/src/bindings.h"

namespace cohort::python {
namespace {

struct DLDevice {
  int32_t device_type;  // kDLCPU 1, kDLCUDA 2, kDLCUDAHost 3
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;  // kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4, kDLBool 6
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // null: row-major
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

constexpr int32_t kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3;
constexpr const char* kCapsule = "dltensor";
constexpr const char* kUsedCapsule = "used_dltensor";

DLDataType ToDL(DType dtype) {
  const uint8_t bits = static_cast<uint8_t>(DTypeSize(dtype) * 8);
  switch (dtype) {
    case DType::kFloat32:
    case DType::kFloat64:
    case DType::kFloat16: return {2, bits, 1};
    case DType::kBFloat16: return {4, bits, 1};
    case DType::kUint8: return {1, bits, 1};
    case DType::kInt8:
    case DType::kInt32:
    case DType::kInt64: return {0, bits, 1};
    case DType::kBool: return {6, 8, 1};
  }
  throw py::type_error("DLPack: no DLPack type for " + std::string(DTypeName(dtype)));
}

DType FromDL(DLDataType t) {
  if (t.lanes != 1) throw py::type_error("from_dlpack: vector types (lanes > 1) are not arrays");
  const std::pair<DLDataType, DType> known[] = {
      {{2, 32, 1}, DType::kFloat32},  {{2, 64, 1}, DType::kFloat64}, {{2, 16, 1}, DType::kFloat16},
      {{4, 16, 1}, DType::kBFloat16}, {{1, 8, 1}, DType::kUint8},    {{0, 8, 1}, DType::kInt8},
      {{0, 32, 1}, DType::kInt32},    {{0, 64, 1}, DType::kInt64},   {{6, 8, 1}, DType::kBool}};
  for (const auto& [dl, dtype] : known) {
    if (dl.code == t.code && dl.bits == t.bits) return dtype;
  }
  throw py::type_error("from_dlpack: DLPack type code " + std::to_string(t.code) + ", " +
                       std::to_string(t.bits) + " bits has no Cohort dtype");
}

DLDevice DeviceOf(const Context& ctx) {
  switch (ctx.type) {
    case DeviceType::kGPU: return {kDLCUDA, ctx.id};
    case DeviceType::kCPUPinned: return {kDLCUDAHost, 0};
    case DeviceType::kCPU: break;
  }
  return {kDLCPU, 0};
}

// What an exported tensor owns: the array (its storage stays alive) and the shape it points to.
struct Exported {
  NDArray array;
  std::vector<int64_t> shape;
  DLManagedTensor managed{};
};

void DeleteExported(DLManagedTensor* self) { delete static_cast<Exported*>(self->manager_ctx); }

py::capsule ToDLPack(const NDArray& a) {
  if (a.is_none()) throw py::value_error("to_dlpack: the array is none");
  auto* e = new Exported{a, {a.shape().begin(), a.shape().end()}};
  DLTensor& t = e->managed.dl_tensor;
  t.data = a.raw_data();
  t.device = DeviceOf(a.ctx());
  t.ndim = a.shape().ndim();
  t.dtype = ToDL(a.dtype());
  t.shape = e->shape.data();
  t.strides = nullptr;
  t.byte_offset = 0;
  e->managed.manager_ctx = e;
  e->managed.deleter = DeleteExported;
  // A capsule nobody consumed still owns the tensor: its destructor deletes it.
  return py::capsule(&e->managed, kCapsule, [](PyObject* capsule) {
    if (PyCapsule_IsValid(capsule, kCapsule)) {
      auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsule));
      if (managed && managed->deleter) managed->deleter(managed);
    }
  });
}

NDArray FromDLPack(const py::object& source) {
  py::object capsule = source;
  if (py::hasattr(source, "__dlpack__")) capsule = source.attr("__dlpack__")();
  if (!PyCapsule_IsValid(capsule.ptr(), kCapsule)) {
    throw py::type_error(
        "from_dlpack: expected an object with __dlpack__ or an unused "
        "'dltensor' capsule");
  }
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), kCapsule));
  const DLTensor& t = managed->dl_tensor;
  // Checks before taking ownership: a refusal leaves the capsule to its producer.
  if (t.ndim < 0 || t.ndim > Shape::kMaxNdim) {
    throw py::value_error("from_dlpack: " + std::to_string(t.ndim) +
                          " dimensions; Cohort's arrays have at most " +
                          std::to_string(Shape::kMaxNdim));
  }
  const DType dtype = FromDL(t.dtype);
  std::vector<int64_t> dims(t.shape, t.shape + t.ndim);
  // MXNet 1.x's shapes have no scalars and no zero extents (they mean "unknown").
  if (dims.empty() ||
      std::find_if(dims.begin(), dims.end(), [](int64_t d) { return d <= 0; }) != dims.end()) {
    throw py::value_error(
        "from_dlpack: a scalar or empty tensor (a zero extent) has no MXNet "
        "1.x shape");
  }
  if (t.strides) {  // only row-major (compact) tensors: a view of another layout needs a copy
    int64_t expected = 1;
    for (int d = t.ndim - 1; d >= 0; --d) {
      if (dims[d] != 1 && t.strides[d] != expected) {
        throw py::value_error(
            "from_dlpack: the tensor is not row-major (contiguous); pass a "
            "contiguous copy");
      }
      expected *= dims[d];
    }
  }
  Context ctx = Context::CPU();
  if (t.device.device_type == kDLCUDA) {
    ctx = Context::GPU(t.device.device_id);
  } else if (t.device.device_type == kDLCUDAHost) {
    ctx = Context::CPUPinned();
  } else if (t.device.device_type != kDLCPU) {
    throw py::value_error("from_dlpack: DLPack device type " +
                          std::to_string(t.device.device_type) + " is neither CPU nor CUDA");
  }
  void* data = static_cast<char*>(t.data) + t.byte_offset;
  PyCapsule_SetName(capsule.ptr(), kUsedCapsule);  // ours now: the capsule must not delete it
  return NDArray::Wrap(data, Shape(std::span<const int64_t>(dims)), dtype, ctx, [managed] {
    if (managed->deleter) managed->deleter(managed);
  });
}

}  // namespace

void RegisterDLPack(py::module_& m) {
  m.def("to_dlpack", &ToDLPack, py::arg("array"));
  m.def("from_dlpack", &FromDLPack, py::arg("source"));
  m.def("dlpack_device", [](const NDArray& a) {
    const DLDevice d = DeviceOf(a.ctx());
    return py::make_tuple(d.device_type, d.device_id);
  });
}

}  // namespace cohort::python
