// What the extension module's files share: each registers one part of Cohort with pybind11, and
// the conversions between Python values and Cohort's (shapes, contexts, dtypes).
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>

#include "base/context.h"
#include "base/dtype.h"
#include "base/shape.h"

namespace cohort::python {

namespace py = pybind11;

void RegisterErrors(py::module_& m);
void RegisterNDArray(py::module_& m);
void RegisterSymbol(py::module_& m);
void RegisterExecutor(py::module_& m);
void RegisterImperative(py::module_& m);
void RegisterIO(py::module_& m);
void RegisterDataSections(py::module_& m);
void RegisterMetric(py::module_& m);
void RegisterManager(py::module_& m);
void RegisterDLPack(py::module_& m);
void RegisterOptimizer(py::module_& m);
void RegisterKVStore(py::module_& m);
void RegisterModel(py::module_& m);
void RegisterTrainer(py::module_& m);
void RegisterGeneration(py::module_& m);

// A tuple or list of ints as a Shape; TypeError/ValueError naming `what` otherwise.
Shape ShapeFromPython(const py::handle& value, const std::string& what);
py::tuple ShapeToPython(const Shape& shape);
// Contexts travel as "cpu:0" / "gpu:1" (the Python Context's str form).
inline Context ContextFromText(const std::string& text) { return Context::Parse(text); }

}  // namespace cohort::python
