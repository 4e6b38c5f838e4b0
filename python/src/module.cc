// The extension module cohort._cohort: Cohort's C++ parts as the Python package's backend
// (Note [Python package]).
#include "python/src/bindings.h"

#include <pybind11/numpy.h>

#include "base/error.h"
#include "ndarray/device_api.h"

namespace cohort::python {

// Note [Python package]
// python/cohort holds MXNet 1.x's Python API (nd, sym, executor, ...) as thin Python modules over
// this one extension, which binds the same C++ that cohort-train runs: NDArray handles, Symbol,
// Executor, and one imperative entry point that runs any registered operator on arrays (a
// one-op graph bound to them). Nothing is computed twice: Python code arranges arguments and
// names, C++ does the work. The GIL is released around forward, backward and copies between
// devices, and taken back to call Python (monitor callbacks). Every cohort::Error reaches
// Python as cohort.base.MXNetError carrying the same message; host arrays are shared with
// numpy without a copy (the buffer protocol keeps the array's storage alive).

Shape ShapeFromPython(const py::handle& value, const std::string& what) {
  if (py::isinstance<py::int_>(value)) {
    return Shape{value.cast<int64_t>()};
  }
  if (!py::isinstance<py::tuple>(value) && !py::isinstance<py::list>(value)) {
    throw py::type_error(what + ": expected a shape (a tuple of ints), got " +
                         std::string(py::str(value.get_type().attr("__name__"))));
  }
  const py::sequence seq = py::reinterpret_borrow<py::sequence>(value);
  if (seq.size() > static_cast<size_t>(Shape::kMaxNdim)) {
    throw py::value_error(what + ": a shape of " + std::to_string(seq.size()) +
                          " dimensions; Cohort's arrays have at most " +
                          std::to_string(Shape::kMaxNdim));
  }
  std::vector<int64_t> dims;
  for (const py::handle item : seq) {
    if (!py::isinstance<py::int_>(item) &&
        !py::isinstance(item, py::module_::import("numpy").attr("integer"))) {
      throw py::type_error(what + ": expected a shape (a tuple of ints), got the element " +
                           std::string(py::repr(item)));
    }
    dims.push_back(item.cast<int64_t>());
  }
  return Shape{std::span<const int64_t>(dims)};
}

py::tuple ShapeToPython(const Shape& shape) {
  py::tuple t(static_cast<size_t>(shape.ndim()));
  for (int i = 0; i < shape.ndim(); ++i) t[static_cast<size_t>(i)] = py::int_(shape[i]);
  return t;
}

PYBIND11_MODULE(_cohort, m) {
  m.doc() = "Cohort's C++ core (the cohort package's backend; use cohort, not this module)";
  RegisterErrors(m);
  RegisterNDArray(m);
  RegisterSymbol(m);
  RegisterExecutor(m);
  RegisterImperative(m);
  RegisterIO(m);
  RegisterDataSections(m);
  RegisterMetric(m);
  RegisterManager(m);
  RegisterDLPack(m);
  RegisterOptimizer(m);
  RegisterKVStore(m);
  RegisterModel(m);
  RegisterTrainer(m);
  RegisterGeneration(m);
  m.def("num_gpus", &device::Count);
  // What this build was compiled with, for cohort.runtime.Features.
  py::dict built;
#if COHORT_CUDA
  built["CUDA"] = true;
#else
  built["CUDA"] = false;
#endif
#if COHORT_NCCL
  built["NCCL"] = true;
#else
  built["NCCL"] = false;
#endif
#ifndef NDEBUG
  built["DEBUG"] = true;
#else
  built["DEBUG"] = false;
#endif
  m.attr("build_features") = built;
}

}  // namespace cohort::python
