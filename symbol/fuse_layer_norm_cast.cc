// FuseLayerNormCast (Note [LayerNorm cast fusion]).
#include "symbol/fuse_layer_norm_cast.h"

#include <unordered_map>

#include "operator/common/operator.h"
#include "symbol/graph_pass.h"

namespace cohort {

Symbol FuseLayerNormCast(const Symbol& symbol) {
  const std::vector<std::shared_ptr<SymbolNode>> order = symbol.TopoOrder();
  const EntryUses uses(symbol, order);
  // The casts to fold, by their LayerNorm.
  std::unordered_map<const SymbolNode*, const SymbolNode*> cast_of;
  for (const auto& node : order) {
    if (node->op != "amp_cast" || node->inputs.size() != 1) continue;
    const auto dtype = node->attrs.find("dtype");
    if (dtype == node->attrs.end() || (dtype->second != "bfloat16" && dtype->second != "float16")) {
      continue;
    }
    if (uses.IsOutput({node, 0})) continue;  // the graph's output keeps its name
    const NodeEntry& in = node->inputs[0];
    if (in.node->op != "LayerNorm" || in.index != 0 || !uses.Inner(in)) continue;
    cast_of[in.node.get()] = node.get();
  }
  if (cast_of.empty()) return symbol;
  std::unordered_map<const SymbolNode*, std::shared_ptr<SymbolNode>> fused_for;  // by the cast
  return RebuildGraph(
      symbol, order,
      [&](const SymbolNode& node, const MovedEntry& moved) -> std::shared_ptr<SymbolNode> {
        if (auto it = fused_for.find(&node); it != fused_for.end()) {
          return it->second;  // the cast's output 0 is the fused op's
        }
        const auto it = cast_of.find(&node);
        if (it == cast_of.end()) return nullptr;
        auto fused = std::make_shared<SymbolNode>();
        fused->op = "_layer_norm";
        fused->name = node.name;
        fused->attrs = node.attrs;
        fused->attrs["out_dtype"] = it->second->attrs.at("dtype");
        fused->impl = op::OpRegistry::Get().Create(fused->op, fused->attrs);
        for (const NodeEntry& in : node.inputs) fused->inputs.push_back(moved(in));
        fused_for[it->second] = fused;
        return fused;
      });
}

}  // namespace cohort
