// DataParallelExecutorManager: one executor per device over slices of each batch, parameters
// shared, metrics updated through the group; forward, backward and loads without the GIL.
#include "executor_manager/executor_group.h"
#include "python/src/bindings.h"
#include "python/src/io_convert.h"

namespace cohort::python {
namespace {

std::vector<Context> Contexts(const std::vector<std::string>& texts) {
  std::vector<Context> out;
  for (const std::string& t : texts) out.push_back(ContextFromText(t));
  return out;
}

std::shared_ptr<DataParallelExecutorManager> MakeManager(
    const Symbol& symbol, const std::vector<std::string>& contexts, const py::list& data_shapes,
    const py::list& label_shapes, const std::vector<std::string>& param_names,
    const std::vector<double>& work_load, py::object sym_gen,
    std::optional<int64_t> default_bucket_key, const std::vector<std::string>& fixed_param_names,
    bool inputs_need_grad, const std::string& grad_req,
    const std::vector<std::map<std::string, std::string>>& group2ctxs) {
  if (grad_req != "write" && grad_req != "add") {
    throw py::value_error("grad_req '" + grad_req + "': expected 'write' or 'add'");
  }
  DataParallelExecutorManager::SymGen gen;
  if (!sym_gen.is_none()) {
    // Called while a batch of a new bucket loads, on a thread without the GIL.
    auto fn = std::make_shared<py::object>(std::move(sym_gen));
    gen = [fn](int64_t key) {
      py::gil_scoped_acquire gil;
      py::object result = (*fn)(key);
      if (py::isinstance<py::tuple>(result)) result = result.cast<py::tuple>()[0];
      return result.attr("handle").cast<Symbol>();
    };
  }
  const std::vector<DataDesc> data = DescsFromPython(data_shapes);
  const std::vector<DataDesc> label = DescsFromPython(label_shapes);
  DataParallelExecutorGroup::Group2Ctxs groups;
  for (const auto& device : group2ctxs) {
    groups.emplace_back();
    for (const auto& [group, ctx] : device) groups.back()[group] = ContextFromText(ctx);
  }
  py::gil_scoped_release release;
  return std::make_shared<DataParallelExecutorManager>(
      symbol, Contexts(contexts), data, label, param_names, work_load, gen, default_bucket_key,
      fixed_param_names, inputs_need_grad, grad_req == "add" ? GradReq::kAdd : GradReq::kWrite,
      groups);
}

DataBatch BatchFromPython(const std::vector<NDArray>& data, const std::vector<NDArray>& label,
                          int64_t pad, std::optional<int64_t> bucket_key,
                          const py::list& provide_data, const py::list& provide_label) {
  DataBatch b;
  b.data = data;
  b.label = label;
  b.pad = pad;
  b.bucket_key = bucket_key;
  b.provide_data = DescsFromPython(provide_data);
  b.provide_label = DescsFromPython(provide_label);
  return b;
}

}  // namespace

void RegisterManager(py::module_& m) {
  py::class_<DataParallelExecutorManager, std::shared_ptr<DataParallelExecutorManager>>(
      m, "ManagerHandle")
      .def(py::init(&MakeManager), py::arg("symbol"), py::arg("contexts"), py::arg("data_shapes"),
           py::arg("label_shapes"), py::arg("param_names"), py::arg("work_load"),
           py::arg("sym_gen").none(true), py::arg("default_bucket_key").none(true),
           py::arg("fixed_param_names"), py::arg("inputs_need_grad"), py::arg("grad_req"),
           py::arg("group2ctxs") = std::vector<std::map<std::string, std::string>>{})
      .def(
          "load_data_batch",
          [](DataParallelExecutorManager& manager, const std::vector<NDArray>& data,
             const std::vector<NDArray>& label, int64_t pad, std::optional<int64_t> bucket_key,
             const py::list& provide_data, const py::list& provide_label) {
            const DataBatch batch =
                BatchFromPython(data, label, pad, bucket_key, provide_data, provide_label);
            py::gil_scoped_release release;
            manager.LoadDataBatch(batch);
          },
          py::arg("data"), py::arg("label"), py::arg("pad"), py::arg("bucket_key").none(true),
          py::arg("provide_data"), py::arg("provide_label"))
      .def("forward", &DataParallelExecutorManager::Forward,
           py::call_guard<py::gil_scoped_release>())
      .def("backward", py::overload_cast<>(&DataParallelExecutorManager::Backward),
           py::call_guard<py::gil_scoped_release>())
      .def("backward_with",
           py::overload_cast<const std::vector<NDArray>&>(&DataParallelExecutorManager::Backward),
           py::arg("out_grads"), py::call_guard<py::gil_scoped_release>())
      .def("update_metric", &DataParallelExecutorManager::UpdateMetric, py::arg("metric"),
           py::arg("labels"), py::arg("pad"), py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("param_arrays", &DataParallelExecutorManager::param_arrays)
      .def_property_readonly("grad_arrays", &DataParallelExecutorManager::grad_arrays)
      .def_property_readonly("aux_arrays", &DataParallelExecutorManager::aux_arrays)
      .def_property_readonly("aux_names", &DataParallelExecutorManager::aux_names)
      .def_property_readonly("num_devices", &DataParallelExecutorManager::num_devices)
      // The bytes the default bucket's executors planned for their entries (MXNet's
      // Module._total_exec_bytes).
      .def_property_readonly("planned_bytes",
                             [](DataParallelExecutorManager& manager) {
                               size_t bytes = 0;
                               for (int d = 0; d < manager.num_devices(); ++d) {
                                 bytes += manager.default_group().executor(d).planned_bytes();
                               }
                               return bytes;
                             })
      // The current group's executors' outputs, one list per device.
      .def_property_readonly("outputs",
                             [](DataParallelExecutorManager& manager) {
                               std::vector<std::vector<NDArray>> out;
                               for (int d = 0; d < manager.num_devices(); ++d) {
                                 out.push_back(manager.current().executor(d).outputs());
                               }
                               return out;
                             })
      // Output `index` of the whole batch: the devices' parts joined along its batch axis
      // (Note [Batch axes]) into a new array beside device 0's part, in its dtype.
      .def(
          "merged_output",
          [](DataParallelExecutorManager& manager, int index) {
            DataParallelExecutorGroup& group = manager.current();
            const auto& first = group.executor(0).outputs();
            if (index < 0 || index >= static_cast<int>(first.size())) {
              throw py::index_error("output " + std::to_string(index) + " of " +
                                    std::to_string(first.size()));
            }
            Shape shape = first[index].shape();
            shape[group.output_axis(index)] = group.batch_size();
            NDArray merged = NDArray::Empty(shape, first[index].dtype(), first[index].ctx());
            py::gil_scoped_release release;
            group.CopyOutput(index, merged);
            return merged;
          },
          py::arg("index"))
      // Device d's executor of the current bucket, alive while the manager is.
      .def(
          "executor",
          [](DataParallelExecutorManager& manager, int d) -> Executor& {
            if (d < 0 || d >= manager.num_devices()) {
              throw py::index_error("executor " + std::to_string(d) + " of " +
                                    std::to_string(manager.num_devices()) + " devices");
            }
            return manager.current().executor(d);
          },
          py::arg("device"), py::return_value_policy::reference_internal)
      .def("set_params", &DataParallelExecutorManager::SetParams, py::arg("arg_params"),
           py::arg("aux_params"), py::arg("allow_extra"), py::call_guard<py::gil_scoped_release>())
      .def("copy_to",
           [](const DataParallelExecutorManager& manager) {
             std::map<std::string, NDArray> args, aux;
             {
               py::gil_scoped_release release;
               manager.CopyTo(&args, &aux);
             }
             return py::make_tuple(args, aux);
           })
      .def(
          "install_monitor",
          [](DataParallelExecutorManager& manager, py::object callback, bool monitor_all) {
            auto fn = std::make_shared<py::object>(std::move(callback));
            manager.InstallMonitor(
                [fn](const std::string& name, const NDArray& array) {
                  py::gil_scoped_acquire gil;
                  (*fn)(name, array);
                },
                monitor_all);
          },
          py::arg("callback"), py::arg("monitor_all"));

  m.def("split_batch", &SplitBatch, py::arg("batch_size"), py::arg("work_load"));
}

}  // namespace cohort::python
