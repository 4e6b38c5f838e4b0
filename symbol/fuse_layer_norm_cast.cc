// FuseLayerNormCast (Note [LayerNorm cast fusion]).
#include "symbol/fuse_layer_norm_cast.h"

#include <map>
#include <set>
#include <unordered_map>

#include "operator/common/operator.h"
#include "symbol/graph_pass.h"

namespace cohort {

Symbol FuseLayerNormCast(const Symbol& symbol) {
  using EntryKey = std::pair<const SymbolNode*, int>;
  const std::vector<std::shared_ptr<SymbolNode>> order = symbol.TopoOrder();
  std::map<EntryKey, int> readers;
  std::set<EntryKey> outputs;
  for (const auto& node : order) {
    for (const NodeEntry& in : node->inputs) ++readers[{in.node.get(), in.index}];
  }
  for (const NodeEntry& out : symbol.outputs()) outputs.insert({out.node.get(), out.index});
  // The casts to fold, by their LayerNorm.
  std::unordered_map<const SymbolNode*, const SymbolNode*> cast_of;
  for (const auto& node : order) {
    if (node->op != "amp_cast" || node->inputs.size() != 1) continue;
    const auto dtype = node->attrs.find("dtype");
    if (dtype == node->attrs.end() || (dtype->second != "bfloat16" && dtype->second != "float16")) {
      continue;
    }
    if (outputs.count({node.get(), 0})) continue;  // the graph's output keeps its name
    const NodeEntry& in = node->inputs[0];
    const EntryKey key{in.node.get(), in.index};
    if (in.node->op != "LayerNorm" || in.index != 0 || readers[key] != 1 || outputs.count(key)) {
      continue;
    }
    cast_of[in.node.get()] = node.get();
  }
  if (cast_of.empty()) return symbol;
  std::unordered_map<const SymbolNode*, std::shared_ptr<SymbolNode>> now;  // old -> new
  auto moved = [&](const NodeEntry& e) { return NodeEntry{now.at(e.node.get()), e.index}; };
  for (const auto& node : order) {
    if (auto it = cast_of.find(node.get()); it != cast_of.end()) {
      auto fused = std::make_shared<SymbolNode>();
      fused->op = "_layer_norm";
      fused->name = node->name;
      fused->attrs = node->attrs;
      fused->attrs["out_dtype"] = it->second->attrs.at("dtype");
      fused->impl = op::OpRegistry::Get().Create(fused->op, fused->attrs);
      for (const NodeEntry& in : node->inputs) fused->inputs.push_back(moved(in));
      now[node.get()] = fused;
      now[it->second] = fused;  // the cast's output 0 is the fused op's
      continue;
    }
    if (now.count(node.get())) continue;  // a folded cast
    std::vector<NodeEntry> inputs;
    bool changed = false;
    for (const NodeEntry& in : node->inputs) {
      inputs.push_back(moved(in));
      changed |= inputs.back().node != in.node;
    }
    now[node.get()] = changed ? WithInputs(*node, std::move(inputs)) : node;
  }
  std::vector<NodeEntry> result;
  for (const NodeEntry& out : symbol.outputs()) result.push_back(moved(out));
  return Symbol::FromEntries(std::move(result));
}

}  // namespace cohort
