// Evaluation metrics of the C++ core by name (mx.metric.create's kinds), their mergeable state.
#include "metric/eval_metric.h"
#include "python/src/bindings.h"

namespace cohort::python {

void RegisterMetric(py::module_& m) {
  py::class_<EvalMetric, std::shared_ptr<EvalMetric>>(m, "MetricHandle")
      .def_static(
          "create",
          [](const std::string& name, const std::map<std::string, std::string>& options) {
            return std::shared_ptr<EvalMetric>(CreateMetric(name, options));
          },
          py::arg("name"), py::arg("options"))
      .def_property_readonly("name", &EvalMetric::name)
      .def("update", &EvalMetric::Update, py::arg("labels"), py::arg("preds"),
           py::call_guard<py::gil_scoped_release>())
      .def("get", &EvalMetric::Get)
      .def("reset", &EvalMetric::Reset)
      .def("state", &EvalMetric::State)
      .def("set_state",
           [](EvalMetric& metric, const std::vector<double>& state) { metric.SetState(state); })
      .def("clone",
           [](const EvalMetric& metric) { return std::shared_ptr<EvalMetric>(metric.Clone()); });
}

}  // namespace cohort::python
