// Symbol graphs: variables, operators by registry name, listing, shape inference and JSON.
#include <set>

#include "operator/common/operator.h"
#include "python/src/bindings.h"
#include "symbol/amp_convert.h"
#include "symbol/symbol.h"

namespace cohort::python {
namespace {

// Applies `op`: positional inputs fill its arguments in order, keyword inputs fill slots by name
// (arguments or auxiliary states); a slot given twice is an error naming it.
Symbol CreateOp(const std::string& op, const std::vector<Symbol>& positional,
                const std::map<std::string, Symbol>& keywords, const op::Attrs& attrs,
                const std::string& name) {
  const auto impl = op::OpRegistry::Get().Create(op, attrs);
  const std::vector<std::string> args = impl->ListArguments();
  if (positional.size() > args.size()) {
    throw py::type_error(op + (name.empty() ? "" : " '" + name + "'") + " takes " +
                         std::to_string(args.size()) + " input(s), " +
                         std::to_string(positional.size()) + " given");
  }
  std::map<std::string, Symbol> named = keywords;
  for (size_t i = 0; i < positional.size(); ++i) {
    if (!named.emplace(args[i], positional[i]).second) {
      throw py::type_error(op + (name.empty() ? "" : " '" + name + "'") + ": input '" + args[i] +
                           "' given by position and by keyword");
    }
  }
  return Symbol::Create(op, named, attrs, name);
}

py::list Shapes(const std::vector<Shape>& shapes) {
  py::list out;
  for (const Shape& s : shapes) out.append(ShapeToPython(s));
  return out;
}

}  // namespace

void RegisterSymbol(py::module_& m) {
  py::class_<Symbol>(m, "SymbolHandle")
      .def_static("variable", &Symbol::Variable, py::arg("name"), py::arg("attrs"))
      .def_static("create", &CreateOp, py::arg("op"), py::arg("positional"), py::arg("keywords"),
                  py::arg("attrs"), py::arg("name"))
      .def_static("group", &Symbol::Group)
      .def_static("from_json", &Symbol::FromJSON)
      .def_static("load", &Symbol::Load)
      .def("tojson", &Symbol::ToJSON)
      .def("save", &Symbol::Save)
      .def("num_outputs", &Symbol::num_outputs)
      .def("output", [](const Symbol& s, size_t i) { return s[i]; })
      .def("list_arguments", &Symbol::ListArguments)
      .def("list_outputs", &Symbol::ListOutputs)
      .def("list_auxiliary_states", &Symbol::ListAuxiliaryStates)
      .def("list_inputs", &Symbol::ListInputs)
      .def("get_internals", &Symbol::GetInternals)
      .def("compose", &Symbol::Compose)
      // One output's node: its name, op ("" for a variable) and attributes.
      .def("node_name", [](const Symbol& s, size_t i) { return s.outputs().at(i).node->name; })
      .def("node_op", [](const Symbol& s, size_t i) { return s.outputs().at(i).node->op; })
      .def("node_attrs", [](const Symbol& s, size_t i) { return s.outputs().at(i).node->attrs; })
      // The single-output node's inputs as symbols (MXNet's get_children); none for a variable.
      .def("children",
           [](const Symbol& s) -> py::object {
             const auto& node = s.outputs().at(0).node;
             if (node->is_variable()) return py::none();
             const Symbol internals = s.GetInternals();
             std::vector<Symbol> children;
             for (const NodeEntry& e : node->inputs) {
               for (size_t i = 0; i < internals.num_outputs(); ++i) {
                 const NodeEntry& o = internals.outputs()[i];
                 if (o.node == e.node && o.index == e.index) {
                   children.push_back(internals[i]);
                   break;
                 }
               }
             }
             return py::cast(Symbol::Group(children));
           })
      // Attributes of every node that has any, by node name (MXNet's attr_dict).
      .def("attr_dict",
           [](const Symbol& s) {
             std::map<std::string, op::Attrs> out;
             for (const auto& node : s.TopoOrder()) {
               if (!node->attrs.empty()) out[node->name] = node->attrs;
             }
             return out;
           })
      // (arg_shapes, out_shapes, aux_shapes, complete); unknown shapes are ().
      .def("infer_shape",
           [](const Symbol& s, const py::dict& known) {
             std::map<std::string, Shape> shapes;
             for (const auto& [name, shape] : known) {
               const std::string key = py::str(name);
               shapes[key] = ShapeFromPython(shape, "infer_shape: " + key);
             }
             const Symbol::Shapes r = s.InferShape(shapes);
             return py::make_tuple(Shapes(r.arguments), Shapes(r.outputs), Shapes(r.auxiliary),
                                   r.complete);
           })
      // (arg_types, out_types, aux_types, complete) as dtype names; unknown ones are None.
      .def("infer_type", [](const Symbol& s, const std::map<std::string, std::string>& known) {
        std::map<std::string, DType> types;
        for (const auto& [name, dtype] : known) types[name] = ParseDType(dtype);
        const Symbol::Types r = s.InferType(types);
        auto names = [](const op::TypeSlots& slots) {
          py::list out;
          for (const auto& t : slots) {
            if (t) {
              out.append(std::string(DTypeName(*t)));
            } else {
              out.append(py::none());
            }
          }
          return out;
        };
        return py::make_tuple(names(r.arguments), names(r.outputs), names(r.auxiliary), r.complete);
      });

  // Every name an operator answers to: canonical names, then aliases.
  // Mixed precision's graph pass (Note [AMP pass]), for cohort.contrib.amp.convert_symbol.
  m.def(
      "amp_convert_symbol",
      [](const Symbol& s, const std::string& target, const std::set<std::string>& target_ops,
         const std::set<std::string>& float32_ops, const std::set<std::string>& excluded) {
        return ConvertToMixedPrecision(s, {.target = ParseDType(target),
                                           .target_ops = target_ops,
                                           .float32_ops = float32_ops,
                                           .excluded_names = excluded});
      },
      py::arg("symbol"), py::arg("target"), py::arg("target_ops"), py::arg("float32_ops"),
      py::arg("excluded"));
  m.def("amp_remove_casts", &RemoveAmpCasts, py::arg("symbol"));
  m.def("amp_default_ops",
        [] { return std::make_pair(DefaultAmpTargetOps(), DefaultAmpFloat32Ops()); });
  m.def("op_names", [] {
    std::vector<std::string> names = op::OpRegistry::Get().Names();
    for (const auto& [alias, name] : op::OpRegistry::Get().aliases()) names.push_back(alias);
    return names;
  });
  m.def("op_canonical",
        [](const std::string& name) { return op::OpRegistry::Get().Canonical(name); });
  // What an operator takes (Note [Operator specs]): {doc, inputs, var_inputs, params: [{name,
  // type, default (None when required), required, doc}]}.
  m.def("op_spec", [](const std::string& name) {
    const op::OpSpec& spec = op::OpRegistry::Get().Spec(name);
    py::list params;
    for (const op::ParamSpec& p : spec.params) {
      py::dict d;
      d["name"] = p.name;
      d["type"] = p.type;
      d["default"] = p.default_text ? py::object(py::str(*p.default_text)) : py::none();
      d["required"] = !p.default_text.has_value();
      d["doc"] = p.doc;
      params.append(d);
    }
    py::dict out;
    out["doc"] = spec.doc;
    out["inputs"] = spec.inputs;
    out["var_inputs"] =
        spec.var_inputs.empty() ? py::object(py::none()) : py::object(py::str(spec.var_inputs));
    out["params"] = params;
    return out;
  });
  // The inputs an operator takes with these attributes: (arguments, auxiliary states, outputs).
  m.def("op_signature", [](const std::string& name, const op::Attrs& attrs) {
    const auto impl = op::OpRegistry::Get().Create(name, attrs);
    return py::make_tuple(impl->ListArguments(), impl->ListAuxiliaryStates(),
                          impl->NumVisibleOutputs());
  });
}

}  // namespace cohort::python
