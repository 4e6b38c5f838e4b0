// What the passes over a symbol's graph share (symbol/common_expr.cc, executor/place_devices.cc).
#pragma once

#include <memory>
#include <vector>

#include "symbol/symbol.h"

namespace cohort {

// `node` reading `inputs` instead: nodes are immutable, so a pass that changes a node's inputs
// makes a new one (same op, name, attributes and operator).
inline std::shared_ptr<SymbolNode> WithInputs(const SymbolNode& node,
                                              std::vector<NodeEntry> inputs) {
  auto made = std::make_shared<SymbolNode>();
  made->op = node.op;
  made->name = node.name;
  made->attrs = node.attrs;
  made->impl = node.impl;
  made->inputs = std::move(inputs);
  return made;
}

}  // namespace cohort
