// LoadModel, ParseShapeOptions and InferModelShapes for the model tools.
#include "apps/model_shapes.h"

#include <filesystem>

#include "base/error.h"
#include "symbol/models/models.h"

namespace cohort {

Symbol LoadModel(const std::string& source) {
  const bool is_file = std::filesystem::exists(source) || source.ends_with(".json");
  return is_file ? Symbol::Load(source) : models::ByName(source);
}

std::map<std::string, Shape> ParseShapeOptions(const std::vector<std::string>& specs) {
  std::map<std::string, Shape> shapes;
  for (const std::string& spec : specs) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw ConfigError("--shape '" + spec + "': expected NAME=DIMS, e.g. data=1,1,28,28", __FILE__,
                        __LINE__);
    }
    shapes[spec.substr(0, eq)] = Shape::Parse(spec.substr(eq + 1));
  }
  return shapes;
}

bool ModelShapes::IsInput(const std::string& variable_name) const {
  return given.count(variable_name) > 0 || variable_name.ends_with("label");
}

ModelShapes InferModelShapes(const Symbol& net, const std::map<std::string, Shape>& inputs) {
  ModelShapes m;
  m.given = inputs;
  m.shapes = net.InferShape(inputs);
  const auto args = net.ListArguments(), aux = net.ListAuxiliaryStates();
  for (size_t i = 0; i < args.size(); ++i) m.variable[args[i]] = m.shapes.arguments[i];
  for (size_t i = 0; i < aux.size(); ++i) m.variable[aux[i]] = m.shapes.auxiliary[i];
  // Every internal output's shape, from the internals symbol, by the name of its node.
  const Symbol internals = net.GetInternals();
  const Symbol::Shapes inner = internals.InferShape(inputs);
  const std::vector<std::string> inner_names = internals.ListOutputs();
  std::unordered_map<std::string, Shape> by_output;
  for (size_t i = 0; i < inner_names.size(); ++i) by_output[inner_names[i]] = inner.outputs[i];
  for (const auto& node : net.TopoOrder()) {
    if (node->is_variable()) continue;
    auto it = by_output.find(node->name + "_" + node->impl->ListOutputs()[0]);
    if (it != by_output.end()) m.output[node->name] = it->second;
  }
  return m;
}

}  // namespace cohort
