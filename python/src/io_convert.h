// DataDesc as it crosses to Python: (name, shape, dtype name, layout).
#pragma once

#include "io/data_desc.h"
#include "python/src/bindings.h"

namespace cohort::python {

py::tuple DescToPython(const DataDesc& d);
DataDesc DescFromPython(const py::handle& value);
std::vector<DataDesc> DescsFromPython(const py::list& values);

}  // namespace cohort::python
