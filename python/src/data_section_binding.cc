// cohort-train's data kinds from Python (Note [Data kinds]): an iterator made from a data section
// given as keywords, read and checked by the kind's own declaration, as the YAML's is.
#include <pybind11/stl.h>

#include "io/data_config.h"
#include "io/data_kinds.h"
#include "python/src/bindings.h"

namespace cohort::python {

namespace {

// The declared keys of `kind`: the common ones, then its own.
std::vector<OptionInfo> KeysOfKind(const std::string& kind) {
  std::vector<OptionInfo> keys = DataCommon::Table().Infos({});
  for (const DataKind& k : DataKinds()) {
    if (k.name == kind) {
      keys.insert(keys.end(), k.keys.begin(), k.keys.end());
      return keys;
    }
  }
  throw py::value_error("no data kind '" + kind + "'");
}

// A keyword's value as the Options value of its declared type (`what` names it in errors).
Options::Value ValueOf(const py::handle& value, const std::string& type, const std::string& what) {
  const bool is_list = type == "ints" || type == "floats" || type == "strings" || type == "paths";
  if (is_list) {
    // One path for a list of paths, as a list of one.
    if ((type == "paths" || type == "strings") && py::isinstance<py::str>(value)) {
      return std::vector<std::string>{value.cast<std::string>()};
    }
    if (!py::isinstance<py::sequence>(value) || py::isinstance<py::str>(value)) {
      throw py::type_error(what + ": expected a list (" + type + ")");
    }
  }
  try {
    if (type == "bool") {
      if (!py::isinstance<py::bool_>(value)) throw py::cast_error();
      return value.cast<bool>();
    }
    if (type == "int" || type == "int_or_auto") {
      if (py::isinstance<py::bool_>(value) || !py::isinstance<py::int_>(value)) {
        throw py::cast_error();
      }
      return value.cast<int64_t>();
    }
    if (type == "float") {
      if (py::isinstance<py::bool_>(value)) throw py::cast_error();
      return value.cast<double>();
    }
    if (type == "ints") return value.cast<std::vector<int64_t>>();
    if (type == "floats") return value.cast<std::vector<double>>();
    if (type == "strings" || type == "paths") return value.cast<std::vector<std::string>>();
    return value.cast<std::string>();
  } catch (const py::cast_error&) {
    throw py::type_error(what + ": expected " + type + ", got " +
                         py::repr(value).cast<std::string>());
  }
}

}  // namespace

void RegisterDataSections(py::module_& m) {
  m.def(
      "data_kind_keys",
      [](const std::string& kind) {
        std::vector<std::tuple<std::string, std::string, std::string, std::string>> out;
        for (const OptionInfo& k : KeysOfKind(kind))
          out.emplace_back(k.key, k.type, k.value, k.doc);
        return out;
      },
      py::arg("kind"));
  // (train, val) iterators of this worker for a data section of `kind` given as a dict; val is
  // None without validation data. Keywords the kind does not declare are the caller's to refuse.
  m.def(
      "data_section_iters",
      [](const std::string& kind, const py::dict& keys, int64_t batch_per_worker, uint64_t seed,
         int num_parts, int part_index, int64_t seq_len, int64_t vocab, const std::string& owner) {
        std::map<std::string, std::string> types;
        for (const OptionInfo& k : KeysOfKind(kind)) types[k.key] = k.type;
        Options data("data");
        data.Set("kind", kind);
        for (const auto& [key, value] : keys) {
          const std::string name = key.cast<std::string>();
          const auto type = types.find(name);
          if (type == types.end() || name == "kind") {
            throw py::type_error(owner + ": no keyword '" + name + "'");
          }
          data.Set(name, ValueOf(value, type->second, owner + "(" + name + "=...)"));
        }
        if (batch_per_worker < 1) {
          throw py::value_error(owner + ": batch_size " + std::to_string(batch_per_worker) +
                                " must be >= 1");
        }
        if (num_parts < 1 || part_index < 0 || part_index >= num_parts) {
          throw py::value_error(owner + ": part_index " + std::to_string(part_index) +
                                " of num_parts " + std::to_string(num_parts) +
                                ": expected 0 <= part_index < num_parts");
        }
        const DataContext context{.batch_per_worker = batch_per_worker,
                                  .rank = part_index,
                                  .num_workers = num_parts,
                                  .seed = seed,
                                  .seq_len = seq_len,
                                  .vocab = vocab};
        py::gil_scoped_release release;
        CheckDataOptions(data, context);
        DataIters iters = MakeDataIters(data, context);
        return std::make_pair(std::move(iters.train), std::move(iters.val));
      },
      py::arg("kind"), py::arg("keys"), py::arg("batch_per_worker"), py::arg("seed"),
      py::arg("num_parts"), py::arg("part_index"), py::arg("seq_len"), py::arg("vocab"),
      py::arg("owner"));
}

}  // namespace cohort::python
