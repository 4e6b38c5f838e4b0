// FuseWideningAdd (Note [Widening add fusion], operator/cast.cc).
#include "symbol/fuse_widening_add.h"

#include <set>
#include <unordered_map>

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
  using EntryKey = std::pair<const SymbolNode*, int>;
  const std::vector<std::shared_ptr<SymbolNode>> order = symbol.TopoOrder();
  std::map<EntryKey, int> readers;
  std::set<EntryKey> outputs;
  for (const auto& node : order) {
    for (const NodeEntry& in : node->inputs) ++readers[{in.node.get(), in.index}];
  }
  for (const NodeEntry& out : symbol.outputs()) outputs.insert({out.node.get(), out.index});
  auto type_of = [&](const NodeEntry& e) -> std::optional<DType> {
    const auto it = types.find(e.node.get());
    return it == types.end() ? std::nullopt : it->second[e.index];
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
    if (readers[{&cast, 0}] != 1 || outputs.count({&cast, 0})) return e;
    return is_half(type_of(cast.inputs[0])) ? cast.inputs[0] : e;
  };
  std::unordered_map<const SymbolNode*, std::shared_ptr<SymbolNode>> now;  // old -> new
  auto moved = [&](const NodeEntry& e) { return NodeEntry{now.at(e.node.get()), e.index}; };
  bool fused_any = false;
  for (const auto& node : order) {
    if (op::OpRegistry::Get().Canonical(node->op) == "elemwise_add" && node->inputs.size() == 2 &&
        type_of({node, 0}) == DType::kFloat32) {
      const NodeEntry lhs = unwrapped(node->inputs[0]), rhs = unwrapped(node->inputs[1]);
      if (lhs.node != node->inputs[0].node || rhs.node != node->inputs[1].node) {
        auto fused = std::make_shared<SymbolNode>();
        fused->op = "_widening_add";
        fused->name = node->name;
        fused->attrs = node->attrs;  // elemwise_add has none but "__...__" ones (ctx_group)
        fused->impl = op::OpRegistry::Get().Create(fused->op, fused->attrs);
        fused->inputs = {moved(lhs), moved(rhs)};
        now[node.get()] = std::move(fused);
        fused_any = true;
        continue;
      }
    }
    std::vector<NodeEntry> inputs;
    bool changed = false;
    for (const NodeEntry& in : node->inputs) {
      inputs.push_back(moved(in));
      changed |= inputs.back().node != in.node;
    }
    now[node.get()] = changed ? WithInputs(*node, std::move(inputs)) : node;
  }
  if (!fused_any) return symbol;
  std::vector<NodeEntry> result;
  for (const NodeEntry& out : symbol.outputs()) result.push_back(moved(out));
  return Symbol::FromEntries(std::move(result));
}

}  // namespace cohort
