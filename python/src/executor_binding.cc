// Executors: bind and simple_bind, forward and backward without the GIL, the bound arrays,
// reshape, parameter copies and monitor callbacks into Python.
#include "executor/executor.h"
#include "python/src/bindings.h"

namespace cohort::python {
namespace {

std::map<std::string, Shape> ShapesFromPython(const py::dict& shapes, const std::string& what) {
  std::map<std::string, Shape> out;
  for (const auto& [name, shape] : shapes) {
    const std::string key = py::str(name);
    out[key] = ShapeFromPython(shape, what + ": " + key);
  }
  return out;
}

std::map<std::string, Context> GroupsFromText(const std::map<std::string, std::string>& groups) {
  std::map<std::string, Context> out;
  for (const auto& [group, ctx] : groups) out[group] = ContextFromText(ctx);
  return out;
}

std::unique_ptr<Executor> SimpleBind(const Symbol& symbol, const std::string& ctx,
                                     const py::dict& shapes, const std::string& grad_req,
                                     const std::map<std::string, std::string>& grad_reqs,
                                     const Executor* shared_exec,
                                     const std::map<std::string, std::string>& type_dict,
                                     const std::map<std::string, std::string>& group2ctx) {
  std::map<std::string, GradReq> reqs;
  for (const auto& [name, req] : grad_reqs) reqs[name] = ParseGradReq(req);
  const std::map<std::string, Shape> known = ShapesFromPython(shapes, "simple_bind");
  const GradReq req = ParseGradReq(grad_req);
  std::map<std::string, DType> types;
  for (const auto& [name, dtype] : type_dict) types[name] = ParseDType(dtype);
  const std::map<std::string, Context> groups = GroupsFromText(group2ctx);
  py::gil_scoped_release release;
  return Executor::SimpleBind(symbol, ContextFromText(ctx), known, req, reqs, shared_exec, types,
                              groups);
}

std::unique_ptr<Executor> Bind(const Symbol& symbol, const std::string& ctx,
                               const std::vector<NDArray>& args,
                               const std::vector<std::optional<NDArray>>& grads,
                               const std::vector<std::string>& grad_reqs,
                               const std::vector<NDArray>& aux, const Executor* shared_exec,
                               const std::map<std::string, std::string>& group2ctx) {
  std::vector<NDArray> arg_grads;
  for (const auto& g : grads) arg_grads.push_back(g ? *g : NDArray());
  std::vector<GradReq> reqs;
  for (const std::string& r : grad_reqs) reqs.push_back(ParseGradReq(r));
  const std::map<std::string, Context> groups = GroupsFromText(group2ctx);
  py::gil_scoped_release release;
  return Executor::Bind(symbol, ContextFromText(ctx), args, arg_grads, reqs, aux, shared_exec,
                        groups);
}

}  // namespace

void RegisterExecutor(py::module_& m) {
  py::class_<Executor>(m, "ExecutorHandle")
      .def_static("simple_bind", &SimpleBind, py::arg("symbol"), py::arg("ctx"), py::arg("shapes"),
                  py::arg("grad_req"), py::arg("grad_reqs"), py::arg("shared_exec").none(true),
                  py::arg("type_dict") = std::map<std::string, std::string>{},
                  py::arg("group2ctx") = std::map<std::string, std::string>{})
      .def_static("bind", &Bind, py::arg("symbol"), py::arg("ctx"), py::arg("args"),
                  py::arg("grads"), py::arg("grad_reqs"), py::arg("aux"),
                  py::arg("shared_exec").none(true),
                  py::arg("group2ctx") = std::map<std::string, std::string>{})
      .def(
          "forward", [](Executor& e, bool is_train) { e.Forward(is_train); },
          py::call_guard<py::gil_scoped_release>())
      .def(
          "backward",
          [](Executor& e, const std::vector<NDArray>& head_grads) { e.Backward(head_grads); },
          py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("outputs", &Executor::outputs)
      .def_property_readonly("arg_arrays", &Executor::arg_arrays)
      .def_property_readonly("grad_arrays", &Executor::grad_arrays)
      .def_property_readonly("aux_arrays", &Executor::aux_arrays)
      .def_property_readonly("grad_reqs",
                             [](const Executor& e) {
                               std::vector<std::string> out;
                               for (GradReq r : e.grad_reqs()) out.push_back(GradReqName(r));
                               return out;
                             })
      .def_property_readonly("symbol", &Executor::symbol)
      .def_property_readonly("optimized_symbol", &Executor::optimized_symbol)
      .def_property_readonly("context", [](const Executor& e) { return e.ctx().ToString(); })
      .def("copy_params_from", &Executor::CopyParamsFrom, py::arg("arg_params"),
           py::arg("aux_params"), py::arg("allow_extra"), py::call_guard<py::gil_scoped_release>())
      .def(
          "reshape",
          [](const Executor& e, const py::dict& shapes, bool partial_shaping,
             bool allow_up_sizing) {
            const std::map<std::string, Shape> known = ShapesFromPython(shapes, "reshape");
            py::gil_scoped_release release;
            return e.Reshape(known, partial_shaping, allow_up_sizing);
          },
          py::arg("shapes"), py::arg("partial_shaping"), py::arg("allow_up_sizing"))
      .def(
          "set_monitor_callback",
          [](Executor& e, py::object callback, bool monitor_all) {
            if (callback.is_none()) {
              e.SetMonitorCallback(nullptr, monitor_all);
              return;
            }
            // Called on the thread running forward, which holds no GIL: take it for Python.
            auto shared = std::make_shared<py::object>(std::move(callback));
            e.SetMonitorCallback(
                [shared](const std::string& name, const NDArray& array) {
                  py::gil_scoped_acquire gil;
                  (*shared)(name, array);
                },
                monitor_all);
          },
          py::arg("callback").none(true), py::arg("monitor_all"))
      .def("debug_str", &Executor::DebugStr)
      .def("wait_all", &Executor::WaitAll, py::call_guard<py::gil_scoped_release>());
}

}  // namespace cohort::python
