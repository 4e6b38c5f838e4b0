// cohort::Error as cohort.base.MXNetError, with the same message.
#include <exception>

#include "base/error.h"
#include "python/src/bindings.h"

namespace cohort::python {

void RegisterErrors(py::module_& m) {
  static py::exception<Error> error(m, "MXNetError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      error(e.message().c_str());
    } catch (const std::bad_alloc&) {
      PyErr_SetString(PyExc_MemoryError, "out of memory (an allocation failed)");
    }
  });
}

}  // namespace cohort::python
