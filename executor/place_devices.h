// PlaceDevices: MXNet's group2ctx, the placement of a graph's nodes on several contexts with
// copies where an entry crosses between them (Note [Device placement]).
#pragma once

#include <map>
#include <string>
#include <unordered_map>

#include "symbol/symbol.h"

namespace cohort {

// Note [Device placement]
// Nodes made under AttrScope(ctx_group=G) carry "__ctx_group__"=G; binding with group2ctx
// {G: context} runs them there (model parallelism: layers on different GPUs). As MXNet's
// PlaceDevice pass (nnvm place_device.cc): a variable lives where its bound array is (SimpleBind
// allocates it on its group's context, else the default); an op node of a group runs on that
// group's context, an op node of no group on its first input's, and one without inputs on its
// first consumer's, else the default. An op of a group that group2ctx does not name is an error.
// Wherever a node reads an entry that lives on another context, a _CrossDeviceCopy node named
// "<producer>_<output>_copy" (MXNet's name) brings it over, one per entry and context, shared
// by every reader there (Note [Cross-device copies], operator/shape_ops.cc). Copies are made
// between host contexts too, as MXNet does: the graph, get_optimized_symbol and the arrays'
// contexts are MXNet's, and the copy path runs on any machine.
struct Placement {
  Symbol symbol;  // the graph with its copy nodes
  // Where each node's outputs live; every node of `symbol` is here.
  std::unordered_map<const SymbolNode*, Context> ctx;
};

// variable_ctx: the context of every variable, by name (the bound arrays').
Placement PlaceDevices(const Symbol& symbol, Context default_ctx,
                       const std::map<std::string, Context>& group2ctx,
                       const std::map<std::string, Context>& variable_ctx);

// The context SimpleBind allocates a variable on: its group's, else default_ctx.
Context VariableContext(const op::Attrs& variable_attrs, Context default_ctx,
                        const std::map<std::string, Context>& group2ctx);

// Whether the node is a copy PlaceDevices inserts: it runs on its input's context.
bool IsCrossDeviceCopy(const SymbolNode& node);

}  // namespace cohort
