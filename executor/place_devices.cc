// PlaceDevices (Note [Device placement]).
#include "executor/place_devices.h"

#include <optional>
#include <tuple>
#include <vector>

#include "base/error.h"
#include "symbol/graph_pass.h"

namespace cohort {
namespace {

constexpr const char* kGroupKey = "__ctx_group__";
constexpr const char* kCopyOp = "_CrossDeviceCopy";

std::string GroupNames(const std::map<std::string, Context>& group2ctx) {
  std::string names;
  for (const auto& [group, ctx] : group2ctx) names += (names.empty() ? "" : ", ") + group;
  return names;
}

}  // namespace

bool IsCrossDeviceCopy(const SymbolNode& node) { return node.op == kCopyOp; }

Context VariableContext(const op::Attrs& variable_attrs, Context default_ctx,
                        const std::map<std::string, Context>& group2ctx) {
  auto group = variable_attrs.find(kGroupKey);
  if (group == variable_attrs.end()) return default_ctx;
  auto placed = group2ctx.find(group->second);
  return placed != group2ctx.end() ? placed->second : default_ctx;
}

Placement PlaceDevices(const Symbol& symbol, Context default_ctx,
                       const std::map<std::string, Context>& group2ctx,
                       const std::map<std::string, Context>& variable_ctx) {
  const std::vector<std::shared_ptr<SymbolNode>> order = symbol.TopoOrder();
  std::unordered_map<const SymbolNode*, std::optional<Context>> ctx;
  for (const auto& node : order) {
    std::optional<Context>& c = ctx[node.get()];
    if (node->is_variable()) {
      auto it = variable_ctx.find(node->name);
      COHORT_CHECK(it != variable_ctx.end())
          << "PlaceDevices: no context for variable '" << node->name << "'";
      c = it->second;
    } else if (auto group = node->attrs.find(kGroupKey); group != node->attrs.end()) {
      auto placed = group2ctx.find(group->second);
      COHORT_CHECK(placed != group2ctx.end())
          << "node '" << node->name << "' (" << node->op << ") is in ctx_group '" << group->second
          << "', which group2ctx does not place (it places: " << GroupNames(group2ctx) << ")";
      c = placed->second;
    } else if (!node->inputs.empty()) {
      c = ctx.at(node->inputs[0].node.get());
    }
  }
  // Ops without inputs run where their first consumer does (consumers come later in `order`).
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const std::optional<Context>& c = ctx.at(it->get());
    if (!c) continue;
    for (const NodeEntry& in : (*it)->inputs) {
      std::optional<Context>& from = ctx.at(in.node.get());
      if (!from) from = c;
    }
  }

  Placement out;
  std::unordered_map<const SymbolNode*, std::shared_ptr<SymbolNode>> now;  // old node -> new
  std::map<std::tuple<const SymbolNode*, int, Context>, NodeEntry> copies;
  for (const auto& node : order) {
    const Context here = ctx.at(node.get()).value_or(default_ctx);
    std::vector<NodeEntry> inputs;
    bool changed = false;
    for (size_t i = 0; i < node->inputs.size(); ++i) {
      const NodeEntry& in = node->inputs[i];
      NodeEntry from{now.at(in.node.get()), in.index};
      const Context there = out.ctx.at(from.node.get());
      // An auxiliary state is updated in place: a copy would take the update.
      COHORT_CHECK(there == here || static_cast<int>(i) < node->num_arguments())
          << "node '" << node->name << "' (" << node->op << ") runs on " << here
          << " but its auxiliary state '" << from.node->name << "' is on " << there
          << ": put both in one ctx_group";
      if (there != here) {
        auto [it, first] = copies.try_emplace({from.node.get(), from.index, here});
        if (first) {
          const std::string name = from.node->name + "_" + std::to_string(from.index) + "_copy";
          it->second =
              Symbol::Create(kCopyOp, {Symbol::FromEntries({from})}, {}, name).outputs()[0];
          out.ctx[it->second.node.get()] = here;
        }
        from = it->second;
      }
      changed |= from.node != in.node;
      inputs.push_back(std::move(from));
    }
    const std::shared_ptr<SymbolNode> kept = changed ? WithInputs(*node, std::move(inputs)) : node;
    now[node.get()] = kept;
    out.ctx[kept.get()] = here;
  }
  std::vector<NodeEntry> outputs;
  for (const NodeEntry& o : symbol.outputs()) outputs.push_back({now.at(o.node.get()), o.index});
  out.symbol = Symbol::FromEntries(std::move(outputs));
  return out;
}

}  // namespace cohort
