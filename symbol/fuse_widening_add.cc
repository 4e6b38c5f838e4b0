// FuseWideningAdd (Note [Widening add fusion], operator/cast.cc).
#include "symbol/fuse_widening_add.h"


#include "operator/common/operator.h"
#include "symbol/graph_pass.h"

namespace cohort {

Symbol FuseWideningAdd(const Symbol& symbol, const std::map<std::string, DType>& dtypes) {
  Symbol::NodeTypes types;
  try {
    types = symbol.InferNodeTypes(dtypes);
  } catch (const Error&) {
    return symbol;  // binding infers the types again and says what is wrong
  }
  const std::vector<std::shared_ptr<SymbolNode>> order = symbol.TopoOrder();
  const EntryUses uses(symbol, order);
  auto type_of = [&](const SymbolNode* node, int index) -> std::optional<DType> {
    const auto it = types.find(node);
    return it == types.end() ? std::nullopt : it->second[index];
  };
  auto is_half = [](std::optional<DType> t) {
    return t == DType::kBFloat16 || t == DType::kFloat16;
  };
  // The entry an add input stands for: a widening cast's input where it can be read instead.
  auto unwrapped = [&](const NodeEntry& e) {
    const SymbolNode& cast = *e.node;
    if (cast.op != "amp_cast" || e.index != 0 || cast.inputs.size() != 1) return e;
    const auto dtype = cast.attrs.find("dtype");
    if (dtype == cast.attrs.end() || dtype->second != "float32") return e;
    if (!uses.Inner(e)) return e;
    const NodeEntry& in = cast.inputs[0];
    return is_half(type_of(in.node.get(), in.index)) ? in : e;
  };
  bool fused_any = false;
  Symbol rebuilt = RebuildGraph(
      symbol, order,
      [&](const SymbolNode& node, const MovedEntry& moved) -> std::shared_ptr<SymbolNode> {
        if (op::OpRegistry::Get().Canonical(node.op) != "elemwise_add" ||
            node.inputs.size() != 2 || type_of(&node, 0) != DType::kFloat32) {
          return nullptr;
        }
        const NodeEntry lhs = unwrapped(node.inputs[0]), rhs = unwrapped(node.inputs[1]);
        if (lhs.node == node.inputs[0].node && rhs.node == node.inputs[1].node) return nullptr;
        auto fused = std::make_shared<SymbolNode>();
        fused->op = "_widening_add";
        fused->name = node.name;
        fused->attrs = node.attrs;  // elemwise_add has none but "__...__" ones (ctx_group)
        fused->impl = op::OpRegistry::Get().Create(fused->op, fused->attrs);
        fused->inputs = {moved(lhs), moved(rhs)};
        fused_any = true;
        return fused;
      });
  return fused_any ? rebuilt : symbol;
}

}  // namespace cohort
