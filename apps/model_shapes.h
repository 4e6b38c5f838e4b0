// What the model tools (cohort-model, cohort-plan) read of a network: the network itself from a
// file or a zoo name, the input shapes of --shape options, and every variable's and op's shape.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "symbol/symbol.h"

namespace cohort {

// A symbol JSON file (a path that exists or ends in .json) or a model zoo name.
Symbol LoadModel(const std::string& source);

// "NAME=DIMS" options (data=1,1,28,28) as input shapes; throws a ConfigError naming a bad one.
std::map<std::string, Shape> ParseShapeOptions(const std::vector<std::string>& specs);

// The shapes inferred from the given inputs: by variable name (arguments and auxiliary states)
// and by op node name (the node's first output). Unknown shapes have ndim 0.
struct ModelShapes {
  Symbol::Shapes shapes;
  std::unordered_map<std::string, Shape> variable, output;
  std::map<std::string, Shape> given;
  // A data input: given a shape, or a label (its name ends in "label").
  bool IsInput(const std::string& variable_name) const;
};
ModelShapes InferModelShapes(const Symbol& net, const std::map<std::string, Shape>& inputs);

}  // namespace cohort
