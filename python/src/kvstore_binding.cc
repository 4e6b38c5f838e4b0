// KVStore: the reduction cohort.kv builds on (sums over the devices of a call and, under mpirun,
// over workers), without the GIL while it runs.
#include "kvstore/kvstore.h"
#include "python/src/bindings.h"

namespace cohort::python {

void RegisterKVStore(py::module_& m) {
  // An uncaught exception on one worker of an mpirun job ends the whole job (Python's exit
  // would otherwise leave the others waiting in a collective): cohort.kvstore's excepthook.
  m.def("distributed_rank", &DistributedRank);
  m.def("abort_distributed_job", &AbortDistributedJob, py::arg("exit_code"));
  py::class_<KVStore>(m, "KVStoreHandle")
      .def(py::init([](const std::string& type) { return KVStore::Create(type); }), py::arg("type"))
      .def_property_readonly("type", &KVStore::type)
      .def_property_readonly("rank", &KVStore::rank)
      .def_property_readonly("num_workers", &KVStore::num_workers)
      .def("barrier", &KVStore::Barrier, py::call_guard<py::gil_scoped_release>())
      // Note [Gradient compression]: false where no gradient crosses a wire.
      .def(
          "set_gradient_compression",
          [](KVStore& kv, const std::string& wire) {
            return kv.SetGradientCompression(ParseDType(wire));
          },
          py::arg("wire"))
      .def("init", &KVStore::Init, py::arg("keys"), py::arg("values"),
           py::call_guard<py::gil_scoped_release>())
      .def(
          "pushpull",
          [](KVStore& kv, const std::vector<int>& keys,
             const std::vector<std::vector<NDArray>>& values,
             const std::vector<std::vector<NDArray>>& outs) { kv.PushPull(keys, values, outs); },
          py::arg("keys"), py::arg("values"), py::arg("outs"),
          py::call_guard<py::gil_scoped_release>());
}

}  // namespace cohort::python
