// GraphPlan: entries, shapes, readers and lifetimes of a bound graph (Note [Graph plan]).
#include "executor/graph_plan.h"

#include <algorithm>
#include <optional>

#include "executor/place_devices.h"

namespace cohort {

GraphPlan GraphPlan::Make(const Symbol& symbol, const Bound& bound) {
  GraphPlan g;
  g.NumberEntries(symbol);
  g.InferShapes(symbol, bound);
  g.PlaceEntries(bound);
  g.FindReaders(symbol);
  g.PlanValues();
  g.PlanGradients();
  g.ShareIdentityGradients();
  return g;
}

void GraphPlan::NumberEntries(const Symbol& symbol) {
  order = symbol.TopoOrder();
  op_index.assign(order.size(), -1);
  int entries = 0;
  for (size_t n = 0; n < order.size(); ++n) {
    first_entry_[order[n].get()] = entries;
    entries += order[n]->num_outputs();
    if (!order[n]->is_variable()) {
      op_index[n] = num_ops++;
      node_of_op.push_back(static_cast<int>(n));
    }
  }
  shape.resize(entries);
  dtype.assign(entries, DType::kFloat32);
  needs_grad.assign(entries, false);
  is_variable.assign(entries, false);
  is_head.assign(entries, false);
  arg_of.assign(entries, -1);
  aux_of.assign(entries, -1);
  readers.resize(entries);
  data_plan.assign(entries, -1);
  grad_plan.assign(entries, -1);
}

// One pass suffices, since every variable's shape and dtype is bound, but for an op that cannot
// tell an output from its inputs alone.
void GraphPlan::InferShapes(const Symbol& symbol, const Bound& bound) {
  const std::vector<std::string> arg_names = symbol.ListArguments();
  const std::vector<std::string> aux_names = symbol.ListAuxiliaryStates();
  std::unordered_map<std::string, int> arg_index, aux_index;
  for (size_t i = 0; i < arg_names.size(); ++i) arg_index[arg_names[i]] = static_cast<int>(i);
  for (size_t i = 0; i < aux_names.size(); ++i) aux_index[aux_names[i]] = static_cast<int>(i);
  arg_entry.assign(arg_names.size(), -1);
  needs_backward = std::find(bound.arg_needs_grad.begin(), bound.arg_needs_grad.end(), true) !=
                   bound.arg_needs_grad.end();

  // The whole graph's inference, made only when an op cannot tell an output from its inputs.
  std::optional<Symbol::NodeShapes> whole_graph;
  auto bound_shapes = [&] {
    std::map<std::string, Shape> known;
    for (size_t i = 0; i < arg_names.size(); ++i) known[arg_names[i]] = bound.arg_shapes[i];
    for (size_t i = 0; i < aux_names.size(); ++i) known[aux_names[i]] = bound.aux_shapes[i];
    return known;
  };
  for (const auto& node_ptr : order) {
    const SymbolNode& node = *node_ptr;
    const int e0 = FirstEntry(node);
    if (node.is_variable()) {
      is_variable[e0] = true;
      if (auto a = arg_index.find(node.name); a != arg_index.end()) {
        arg_of[e0] = a->second;
        arg_entry[a->second] = e0;
        shape[e0] = bound.arg_shapes[a->second];
        dtype[e0] = bound.arg_dtypes[a->second];
        needs_grad[e0] = bound.arg_needs_grad[a->second];
      } else {
        aux_of[e0] = aux_index.at(node.name);
        shape[e0] = bound.aux_shapes[aux_of[e0]];
        dtype[e0] = bound.aux_dtypes[aux_of[e0]];
      }
      continue;
    }
    std::vector<Shape> in, out(node.num_outputs()), aux;
    op::TypeSlots in_types, out_types(node.num_outputs()), aux_types;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const int e = EntryId(node.inputs[i]);
      const bool is_arg = static_cast<int>(i) < node.num_arguments();
      (is_arg ? in : aux).push_back(shape[e]);
      (is_arg ? in_types : aux_types).push_back(dtype[e]);
    }
    node.impl->InferShape(in, out, aux);
    // An output the op cannot tell from its inputs (an RNN cell's begin state, zeros of shape
    // (0, hidden)) takes what the ops reading it give, as Symbol::InferShape works it out.
    for (int k = 0; k < node.num_outputs(); ++k) {
      if (op::ShapeKnown(out[k])) continue;
      if (!whole_graph) whole_graph = symbol.InferNodeShapes(bound_shapes());
      const auto it = whole_graph->find(&node);
      if (it != whole_graph->end()) op::AssignShape(out[k], it->second[k], node.op, "output");
    }
    try {
      node.impl->InferType(in_types, out_types, aux_types);
    } catch (const Error& err) {
      COHORT_THROW() << "Bind: node '" << node.name << "' (" << node.op << "): " << err.message();
    }
    // Every slot the kernels touch must be of a type they compute in.
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const DType t = dtype[EntryId(node.inputs[i])];
      COHORT_CHECK(node.impl->TakesDType(t))
          << "Bind: node '" << node.name << "' (" << node.op << ") has no kernel for " << t
          << " (input '" << node.inputs[i].node->name << "'); it takes "
          << op::TakenDTypes(*node.impl) << ": Cast the input";
    }
    for (int k = 0; k < node.num_outputs(); ++k) {
      // An extent of 0 or below is unknown: memory cannot be planned for it.
      COHORT_CHECK(op::ShapeKnown(out[k]))
          << "Bind: node '" << node.name << "' (" << node.op << "): cannot infer output " << k
          << "'s shape (got " << out[k] << ")";
      shape[e0 + k] = out[k];
      COHORT_CHECK(out_types[k].has_value()) << "Bind: node '" << node.name << "' (" << node.op
                                             << "): cannot infer output " << k << "'s dtype";
      dtype[e0 + k] = *out_types[k];
      COHORT_CHECK(node.impl->TakesDType(dtype[e0 + k]))
          << "Bind: node '" << node.name << "' (" << node.op << ") has no kernel for "
          << dtype[e0 + k] << " outputs; it takes " << op::TakenDTypes(*node.impl);
    }
    bool any = false;
    for (int i = 0; i < node.num_arguments(); ++i) any |= needs_grad[EntryId(node.inputs[i])];
    for (int k = 0; k < node.impl->NumVisibleOutputs(); ++k) needs_grad[e0 + k] = any;
  }
}

void GraphPlan::PlaceEntries(const Bound& bound) {
  entry_ctx.assign(num_entries(), bound.ctx);
  op_ctx.assign(num_ops, bound.ctx);
  for (size_t n = 0; n < order.size(); ++n) {
    const SymbolNode& node = *order[n];
    const int e0 = FirstEntry(node);
    if (node.is_variable()) {
      entry_ctx[e0] = arg_of[e0] >= 0 ? bound.arg_ctx[arg_of[e0]] : bound.aux_ctx[aux_of[e0]];
      continue;
    }
    const Context c = bound.placed ? bound.placed->at(&node) : bound.ctx;
    for (int j = 0; j < node.num_outputs(); ++j) entry_ctx[e0 + j] = c;
    op_ctx[op_index[n]] = IsCrossDeviceCopy(node) ? entry_ctx[EntryId(node.inputs[0])] : c;
  }
}

int GraphPlan::SpaceOf(int entry) {
  const Context c = entry_ctx[entry];
  auto it = std::find(spaces.begin(), spaces.end(), c);
  if (it != spaces.end()) return static_cast<int>(it - spaces.begin());
  spaces.push_back(c);
  return static_cast<int>(spaces.size() - 1);
}

int64_t GraphPlan::Bytes(int entry) const {
  return shape[entry].Size() * static_cast<int64_t>(DTypeSize(dtype[entry]));
}

void GraphPlan::FindReaders(const Symbol& symbol) {
  runs_backward.assign(num_ops, false);
  for (size_t n = 0; n < order.size(); ++n) {
    const SymbolNode& node = *order[n];
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const bool is_arg = static_cast<int>(i) < node.num_arguments();
      readers[EntryId(node.inputs[i])].push_back({op_index[n], is_arg});
      if (is_arg && needs_backward && needs_grad[EntryId(node.inputs[i])]) {
        runs_backward[op_index[n]] = true;
      }
    }
  }
  for (const NodeEntry& e : symbol.outputs()) is_head[EntryId(e)] = true;
  PropagateZeroGradients();
}

// Note [Zero gradients]
// As MXNet's zero propagation: a gradient flows into an entry only from a head, from a loss
// layer, or through the backward of a consumer that passes gradients (not BlockGrad, not a
// function whose derivative is zero) and through which a gradient flows itself. Walking the ops
// from the heads back, an op none of whose outputs a gradient reaches does not run backward, so
// nothing before it that only it would feed runs either: stop_gradient at the end of a network
// leaves no backward at all and keeps no activation alive for one. An argument whose gradient
// nothing writes holds zeros (Executor::FindFinalGradients).
void GraphPlan::PropagateZeroGradients() {
  std::vector<bool> flows(num_entries(), false);
  for (size_t e = 0; e < num_entries(); ++e) flows[e] = is_head[e];
  for (size_t n = order.size(); n-- > 0;) {  // consumers before their producers
    const SymbolNode& node = *order[n];
    if (node.is_variable()) continue;
    const int k = op_index[n], e0 = FirstEntry(node);
    bool reached = node.impl->IsLoss();
    for (int j = 0; j < node.impl->NumVisibleOutputs(); ++j) reached = reached || flows[e0 + j];
    if (!reached || !node.impl->PassesGradient()) runs_backward[k] = false;
    if (!runs_backward[k]) continue;
    COHORT_CHECK(node.impl->HasGradient())
        << "Bind: node '" << node.name << "' (" << node.op << ") is non-differentiable, but a "
        << "gradient is required through it: bind its inputs with grad_req 'null', or put "
        << "stop_gradient (BlockGrad) after it";
    for (int i = 0; i < node.num_arguments(); ++i) flows[EntryId(node.inputs[i])] = true;
  }
}

// Op outputs live from their forward step to their last reader: a consumer's forward, or its
// backward when that reads its inputs (or the output is an auxiliary input), or the producer's
// backward when that reads its outputs (hidden outputs are always kept for it).
void GraphPlan::PlanValues() {
  for (size_t n = 0; n < order.size(); ++n) {
    const SymbolNode& node = *order[n];
    if (node.is_variable()) continue;
    const int k = op_index[n], e0 = FirstEntry(node);
    for (int j = 0; j < node.num_outputs(); ++j) {
      const int e = e0 + j;
      PlannedArray pa{Bytes(e), ForwardStep(k), ForwardStep(k)};
      const bool hidden = j >= node.impl->NumVisibleOutputs();
      if (runs_backward[k] && (node.impl->BackwardNeedsOutputs() || hidden)) {
        pa.last_step = BackwardStep(k);
      }
      for (auto [consumer, is_arg] : readers[e]) {
        pa.last_step = std::max(pa.last_step, ForwardStep(consumer));
        const SymbolNode& c = *order[node_of_op[consumer]];
        if (runs_backward[consumer] && (c.impl->BackwardNeedsInputs() || !is_arg)) {
          pa.last_step = std::max(pa.last_step, BackwardStep(consumer));
        }
      }
      pa.persistent = is_head[e];
      pa.space = SpaceOf(e);
      for (auto [in, out] : node.impl->ForwardInplace()) {
        if (out != j || in >= static_cast<int>(node.inputs.size())) continue;
        const int src = EntryId(node.inputs[in]);
        if (!is_variable[src] && data_plan[src] >= 0 && dtype[src] == dtype[e]) {
          pa.inplace_of = data_plan[src];
        }
      }
      data_plan[e] = static_cast<int>(planned.size());
      planned.push_back(pa);
    }
  }
}

// Gradient buffers of op outputs: written by the first consumer's backward (or by the head
// gradient), read by the producer's backward.
void GraphPlan::PlanGradients() {
  for (size_t n = 0; n < order.size(); ++n) {
    const SymbolNode& node = *order[n];
    if (node.is_variable() || !runs_backward[op_index[n]] || node.impl->IsLoss()) continue;
    const int k = op_index[n], e0 = FirstEntry(node);
    for (int j = 0; j < node.impl->NumVisibleOutputs(); ++j) {
      const int e = e0 + j;
      int first = is_head[e] ? BackwardStep(num_ops - 1) : BackwardStep(k);
      bool written = is_head[e];
      for (auto [consumer, is_arg] : readers[e]) {
        if (!is_arg || !runs_backward[consumer]) continue;
        first = std::min(first, BackwardStep(consumer));
        written = true;
      }
      if (!written) continue;  // nobody sends a gradient: the executor gives it zeros
      grad_plan[e] = static_cast<int>(planned.size());
      planned.push_back({Bytes(e), first, BackwardStep(k)});
      planned.back().space = SpaceOf(e);
    }
  }
}

// An identity op (Reshape, Flatten) passes its output's gradient on unchanged: its input's
// gradient may take over that buffer when the op is the input's first gradient writer and the
// output's gradient dies there (PlanMemory checks both), and the backward copies nothing.
void GraphPlan::ShareIdentityGradients() {
  for (const auto& node_ptr : order) {
    const SymbolNode& node = *node_ptr;
    if (node.is_variable() || !node.impl->IsIdentity() || node.impl->IsLoss()) continue;
    const int in = EntryId(node.inputs[0]), out = FirstEntry(node);
    if (grad_plan[in] >= 0 && grad_plan[out] >= 0)
      planned[grad_plan[in]].inplace_of = grad_plan[out];
  }
}

}  // namespace cohort
