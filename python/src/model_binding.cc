// MXNet's model checkpoints (PREFIX-symbol.json, PREFIX-NNNN.params) through the trainer's
// checkpoint code, so cohort.model and cohort-train write and read them alike: each file
// appears whole or not at all.
#include "python/src/bindings.h"
#include "trainer/checkpoint.h"

namespace cohort::python {

void RegisterModel(py::module_& m) {
  m.def(
      "save_checkpoint",
      [](const std::string& prefix, int epoch, const Symbol& symbol,
         const std::map<std::string, NDArray>& arg_params,
         const std::map<std::string, NDArray>& aux_params) {
        py::gil_scoped_release release;
        SaveCheckpoint(prefix, CheckpointPosition{epoch, 0}, symbol, arg_params, aux_params);
      },
      py::arg("prefix"), py::arg("epoch"), py::arg("symbol"), py::arg("arg_params"),
      py::arg("aux_params"));
  // (arg_params, aux_params) of any .params file: "arg:"/"aux:" names, unprefixed ones as args.
  m.def(
      "load_arg_aux_params",
      [](const std::string& path) {
        std::map<std::string, NDArray> args, aux;
        {
          py::gil_scoped_release release;
          LoadArgAuxParams(path, &args, &aux);
        }
        return py::make_tuple(args, aux);
      },
      py::arg("path"));
}

}  // namespace cohort::python
