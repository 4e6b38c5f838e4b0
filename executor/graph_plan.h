// GraphPlan: what binding learns from a symbol's graph and the bound shapes alone, before any
// memory exists (Note [Graph plan]).
#pragma once

#include <memory>
#include <unordered_map>
#include <vector>

#include "executor/memory_plan.h"
#include "symbol/symbol.h"

namespace cohort {

// Note [Graph plan]
// Binding works in two halves. This half knows the graph and the shapes bound to its variables:
// it numbers the entries (every output of every node, node by node in topological order),
// infers their shapes, finds which entries need a gradient, who reads each entry and which ops
// run backward, and lists the arrays the executor must allocate with their lifetimes for
// PlanMemory (Note [Static memory plan]): the forward step of op k is step k, its backward step
// 2K-1-k. The executor's half (Executor::Build) gives entries memory and makes the steps.
struct GraphPlan {
  struct Reader {
    int op;       // the consumer's position among the op nodes
    bool is_arg;  // read as an argument (else as an auxiliary state)
  };

  std::vector<std::shared_ptr<SymbolNode>> order;  // every node, topologically
  std::vector<int> op_index;    // node position -> position among op nodes (-1: a variable)
  std::vector<int> node_of_op;  // and back
  int num_ops = 0;

  // Per entry.
  std::vector<Shape> shape;
  std::vector<DType> dtype;
  std::vector<bool> needs_grad, is_variable, is_head;
  std::vector<int> arg_of, aux_of;  // the argument / auxiliary state a variable entry binds, or -1
  std::vector<std::vector<Reader>> readers;
  // Per argument: its entry (the last variable node of that name).
  std::vector<int> arg_entry;
  // Per entry, the context it lives on; per op, the context its kernels run on (its outputs',
  // except a cross-device copy's, Note [Device placement]). `spaces` lists the contexts the
  // planned arrays live on: PlannedArray::space indexes it.
  std::vector<Context> entry_ctx, op_ctx, spaces;
  // Per op: whether its backward runs (some argument of it needs a gradient).
  std::vector<bool> runs_backward;
  bool needs_backward = false;  // any argument has a gradient request

  // The arrays to allocate: each entry's value (op outputs) and gradient (op outputs that some
  // consumer or a head gradient writes) as an index into `planned`, or -1.
  std::vector<PlannedArray> planned;
  std::vector<int> data_plan, grad_plan;

  // The bound arrays' shapes and dtypes; arg_needs_grad: per argument, whether its grad_req is
  // not null. A node whose kernels lack an inferred dtype is an error naming it.
  struct Bound {
    std::vector<Shape> arg_shapes, aux_shapes;
    std::vector<DType> arg_dtypes, aux_dtypes;
    std::vector<bool> arg_needs_grad;
    std::vector<Context> arg_ctx, aux_ctx;  // where the bound arrays live
    Context ctx;                            // where op nodes run, unless placed
    // Where each op node's outputs live (PlaceDevices), or null: all on ctx.
    const std::unordered_map<const SymbolNode*, Context>* placed = nullptr;
  };
  static GraphPlan Make(const Symbol& symbol, const Bound& bound);

  size_t num_entries() const { return shape.size(); }
  int FirstEntry(const SymbolNode& node) const { return first_entry_.at(&node); }
  int EntryId(const NodeEntry& e) const { return FirstEntry(*e.node) + e.index; }
  static int ForwardStep(int k) { return k; }
  int BackwardStep(int k) const { return 2 * num_ops - 1 - k; }

 private:
  void NumberEntries(const Symbol& symbol);
  void PropagateZeroGradients();
  void InferShapes(const Symbol& symbol, const Bound& bound);
  void PlaceEntries(const Bound& bound);
  int SpaceOf(int entry);
  int64_t Bytes(int entry) const;
  void FindReaders(const Symbol& symbol);
  void PlanValues();
  void PlanGradients();
  void ShareIdentityGradients();

  std::unordered_map<const SymbolNode*, int> first_entry_;
};

}  // namespace cohort
