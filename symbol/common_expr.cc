// Symbol::EliminateCommonExpr: MXNet's common-expression elimination (MXNET_ELIMINATE_COMMON_EXPR,
// done at bind), here as a pass over the graph that returns a new symbol.
#include <map>
#include <tuple>
#include <unordered_map>

#include "symbol/graph_pass.h"
#include "symbol/symbol.h"

namespace cohort {
namespace {

// Whether two nodes of `node`'s op with equal attributes and inputs may become one: not a draw
// of random numbers (IsDeterministic), not an op that updates state in place (auxiliary states,
// training steps), not a loss (which ignores its head gradient, so two of them send twice the
// gradient one does). As MXNet, a node without inputs is never merged.
bool Mergeable(const SymbolNode& node) {
  return !node.is_variable() && !node.inputs.empty() && node.impl->IsDeterministic() &&
         node.impl->ListAuxiliaryStates().empty() && !node.impl->IsLoss();
}

}  // namespace

Symbol Symbol::EliminateCommonExpr() const {
  using Inputs = std::vector<std::pair<const SymbolNode*, int>>;
  std::map<std::tuple<std::string, op::Attrs, Inputs>, std::shared_ptr<SymbolNode>> made;
  std::unordered_map<const SymbolNode*, std::shared_ptr<SymbolNode>> now;  // old node -> new
  bool merged = false;
  for (const auto& node : TopoOrder()) {
    std::shared_ptr<SymbolNode> kept = node;
    std::vector<NodeEntry> inputs;
    Inputs key_inputs;
    bool moved = false;
    for (const NodeEntry& in : node->inputs) {
      const std::shared_ptr<SymbolNode>& to = now.at(in.node.get());
      moved |= to != in.node;
      inputs.push_back({to, in.index});
      key_inputs.emplace_back(to.get(), in.index);
    }
    if (moved) kept = WithInputs(*node, std::move(inputs));  // its inputs were merged
    if (Mergeable(*node)) {
      auto [it, first] = made.emplace(std::make_tuple(node->op, node->attrs, key_inputs), kept);
      if (!first) {
        kept = it->second;
        merged = true;
      }
    }
    now[node.get()] = kept;
  }
  std::vector<NodeEntry> outputs;
  for (const NodeEntry& out : outputs_) outputs.push_back({now.at(out.node.get()), out.index});
  if (merged) {
    // Outputs that became one entry are copied, so that each output keeps its own array:
    // "<node>_<k>_copy" for the k-th repeat, as MXNet names them.
    std::map<std::pair<const SymbolNode*, int>, int> repeats;
    for (NodeEntry& out : outputs) {
      auto [it, first] = repeats.emplace(std::make_pair(out.node.get(), out.index), 0);
      if (first) continue;
      const std::string name = out.node->name + "_" + std::to_string(it->second++) + "_copy";
      out = Symbol::Create("_copy", {Symbol({out})}, {}, name).outputs_[0];
    }
  }
  return Symbol(std::move(outputs));
}

}  // namespace cohort
