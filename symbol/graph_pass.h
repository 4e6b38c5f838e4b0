// What the passes over a symbol's graph share (symbol/common_expr.cc, executor/place_devices.cc,
// the fusions symbol/fuse_*.cc).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>
#include <utility>
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

// How often each entry of a graph is read and which entries are its outputs: a fusion may fold an
// entry away only where one op reads it and it is no graph output (Inner).
class EntryUses {
 public:
  EntryUses(const Symbol& symbol, const std::vector<std::shared_ptr<SymbolNode>>& order) {
    for (const auto& node : order) {
      for (const NodeEntry& in : node->inputs) ++readers_[Key(in)];
    }
    for (const NodeEntry& out : symbol.outputs()) outputs_.insert(Key(out));
  }
  bool IsOutput(const NodeEntry& e) const { return outputs_.count(Key(e)) != 0; }
  // Whether exactly one op reads the entry and it is no graph output.
  bool Inner(const NodeEntry& e) const {
    const auto it = readers_.find(Key(e));
    return it != readers_.end() && it->second == 1 && !IsOutput(e);
  }

 private:
  using EntryKey = std::pair<const SymbolNode*, int>;
  static EntryKey Key(const NodeEntry& e) { return {e.node.get(), e.index}; }
  std::map<EntryKey, int> readers_;
  std::set<EntryKey> outputs_;
};

// An old entry's place in the graph being rebuilt.
using MovedEntry = std::function<NodeEntry(const NodeEntry&)>;

// The graph rebuilt node by node in `order` (topological): where `replace` gives a node (it may
// read the rebuilt graph through `moved`), that node's outputs stand for the old node's (index
// for index); every other node keeps its op and reads its inputs' new places.
inline Symbol RebuildGraph(
    const Symbol& symbol, const std::vector<std::shared_ptr<SymbolNode>>& order,
    const std::function<std::shared_ptr<SymbolNode>(const SymbolNode&, const MovedEntry&)>&
        replace) {
  std::unordered_map<const SymbolNode*, std::shared_ptr<SymbolNode>> now;  // old -> new
  const MovedEntry moved = [&](const NodeEntry& e) {
    return NodeEntry{now.at(e.node.get()), e.index};
  };
  for (const auto& node : order) {
    if (std::shared_ptr<SymbolNode> made = replace(*node, moved)) {
      now[node.get()] = std::move(made);
      continue;
    }
    std::vector<NodeEntry> inputs;
    bool changed = false;
    for (const NodeEntry& in : node->inputs) {
      inputs.push_back(moved(in));
      changed |= inputs.back().node != in.node;
    }
    now[node.get()] = changed ? WithInputs(*node, std::move(inputs)) : node;
  }
  std::vector<NodeEntry> outputs;
  for (const NodeEntry& out : symbol.outputs()) outputs.push_back(moved(out));
  return Symbol::FromEntries(std::move(outputs));
}

}  // namespace cohort
