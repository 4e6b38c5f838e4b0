// NDArray handles: made from numpy (one copy), read by numpy without a copy (buffer protocol on
// host arrays), views, copies across devices, and .params save/load.
#include <pybind11/numpy.h>

#include <cstring>

#include "ndarray/ndarray.h"
#include "ndarray/params_io.h"
#include "python/src/bindings.h"

namespace cohort::python {
namespace {

// The buffer-protocol format of each dtype numpy has; bfloat16 has none.
const char* BufferFormat(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "f";
    case DType::kFloat64: return "d";
    case DType::kFloat16: return "e";
    case DType::kUint8: return "B";
    case DType::kInt32: return "i";
    case DType::kInt8: return "b";
    case DType::kInt64: return "q";
    case DType::kBool: return "?";
    case DType::kBFloat16: break;
  }
  throw py::type_error("numpy has no " + std::string(DTypeName(dtype)) +
                       " type: astype('float32') first");
}

py::buffer_info HostBuffer(const NDArray& a) {
  if (a.is_none()) throw py::value_error("the array is none (it holds no storage)");
  if (!a.ctx().is_host()) {
    throw py::value_error("the array is on " + a.ctx().ToString() +
                          ": copy it to the host first (asnumpy() or copyto(cpu()))");
  }
  const auto item = static_cast<py::ssize_t>(DTypeSize(a.dtype()));
  std::vector<py::ssize_t> shape, strides(static_cast<size_t>(a.shape().ndim()));
  for (int64_t d : a.shape()) shape.push_back(static_cast<py::ssize_t>(d));
  py::ssize_t stride = item;
  for (int i = a.shape().ndim() - 1; i >= 0; --i) {
    strides[static_cast<size_t>(i)] = stride;
    stride *= shape[static_cast<size_t>(i)];
  }
  // A zero-size array may have no storage pointer; numpy needs one all the same.
  static char empty = 0;
  void* data = a.size() > 0 ? a.raw_data() : &empty;
  return py::buffer_info(data, item, BufferFormat(a.dtype()), a.shape().ndim(), shape, strides);
}

// A new array on ctx holding a C-contiguous numpy array's elements (numpy's dtype kept).
NDArray FromNumpy(const py::array& source, const std::string& ctx) {
  const py::array array = py::array::ensure(source, py::array::c_style);
  const DType dtype = ParseDType(std::string(py::str(array.dtype().attr("name"))));
  std::vector<int64_t> dims(array.shape(), array.shape() + array.ndim());
  if (dims.size() > static_cast<size_t>(Shape::kMaxNdim)) {
    throw py::value_error("an array of " + std::to_string(dims.size()) +
                          " dimensions; Cohort's arrays have at most " +
                          std::to_string(Shape::kMaxNdim));
  }
  const Shape shape{std::span<const int64_t>(dims)};
  const Context where = ContextFromText(ctx);
  NDArray host = NDArray::Empty(shape, dtype, where.is_host() ? where : Context::CPU());
  if (host.nbytes() > 0) std::memcpy(host.raw_data(), array.data(), host.nbytes());
  if (where.is_host()) return host;
  py::gil_scoped_release release;
  return host.CopyTo(where);
}

}  // namespace

void RegisterNDArray(py::module_& m) {
  py::class_<NDArray>(m, "NDArrayHandle", py::buffer_protocol())
      .def_buffer(&HostBuffer)
      .def_property_readonly("shape", [](const NDArray& a) { return ShapeToPython(a.shape()); })
      .def_property_readonly("dtype",
                             [](const NDArray& a) { return std::string(DTypeName(a.dtype())); })
      .def_property_readonly("context", [](const NDArray& a) { return a.ctx().ToString(); })
      .def_property_readonly("size", &NDArray::size)
      .def_property_readonly("is_none", &NDArray::is_none)
      // The first element's address: tests check that views and numpy share memory.
      .def_property_readonly(
          "address",
          [](const NDArray& a) {
            return reinterpret_cast<uintptr_t>(a.size() ? a.raw_data() : nullptr);
          })
      .def("shares_storage_with", &NDArray::SharesStorageWith)
      .def("slice", &NDArray::Slice)
      .def("at", &NDArray::At)
      .def("reshape",
           [](const NDArray& a, const py::handle& shape) {
             return a.Reshape(ShapeFromPython(shape, "reshape"));
           })
      .def(
          "copy_to", [](const NDArray& a, const NDArray& dst) { a.CopyTo(dst); },
          py::call_guard<py::gil_scoped_release>())
      .def(
          "copy_to_context",
          [](const NDArray& a, const std::string& ctx) { return a.CopyTo(ContextFromText(ctx)); },
          py::call_guard<py::gil_scoped_release>())
      .def(
          "astype",
          [](const NDArray& a, const std::string& dtype) { return a.AsType(ParseDType(dtype)); },
          py::call_guard<py::gil_scoped_release>())
      .def("fill", &NDArray::Fill, py::call_guard<py::gil_scoped_release>());

  m.def(
      "empty",
      [](const py::handle& shape, const std::string& dtype, const std::string& ctx) {
        return NDArray::Empty(ShapeFromPython(shape, "shape"), ParseDType(dtype),
                              ContextFromText(ctx));
      },
      py::arg("shape"), py::arg("dtype"), py::arg("ctx"));
  m.def("from_numpy", &FromNumpy, py::arg("array"), py::arg("ctx"));
  m.def(
      "save",
      [](const std::string& path, const std::vector<std::string>& names,
         const std::vector<NDArray>& arrays, bool numpy_shape) {
        ParamsFile file{names, arrays, {}};
        py::gil_scoped_release release;
        SaveParamsFile(path, file, numpy_shape ? ParamsFormat::kV3 : ParamsFormat::kAuto);
      },
      py::arg("path"), py::arg("names"), py::arg("arrays"), py::arg("numpy_shape"));
  // (names, arrays, per array whether it was saved under numpy shape semantics)
  m.def(
      "load",
      [](const std::string& path) {
        ParamsFile file;
        {
          py::gil_scoped_release release;
          file = LoadParamsFile(path);
        }
        return py::make_tuple(file.names, file.arrays, file.numpy_shape);
      },
      py::arg("path"));
  // One array's bytes as MXNet's NDArray::Save writes them (what a pickled NDArray carries).
  m.def(
      "save_raw",
      [](const NDArray& array, bool numpy_shape) {
        std::string bytes;
        {
          py::gil_scoped_release release;
          bytes = SerializeArray(array, numpy_shape ? ParamsFormat::kV3 : ParamsFormat::kAuto);
        }
        return py::bytes(bytes);
      },
      py::arg("array"), py::arg("numpy_shape"));
  m.def(
      "load_raw",
      [](const py::bytes& data) {
        const std::string_view bytes(data);
        bool numpy_shape = false;
        NDArray array = ParseArray(bytes, "NDArray state", &numpy_shape);
        return py::make_tuple(array, numpy_shape);
      },
      py::arg("bytes"));
}

}  // namespace cohort::python
