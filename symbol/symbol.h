// Symbol: a computation graph of operators and variables, as MXNet's Symbol, with MXNet's
// naming, listing, shape inference and JSON format.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "operator/common/operator.h"

namespace cohort {

struct SymbolNode;

// Output `index` of a node.
struct NodeEntry {
  std::shared_ptr<SymbolNode> node;
  int index = 0;
};

// A variable (op empty) or an operator applied to input entries. Nodes are immutable once made
// and shared between the symbols that contain them.
struct SymbolNode {
  std::string op;  // canonical op name; empty for a variable ("null" in JSON)
  std::string name;
  op::Attrs attrs;  // every attribute as text: op parameters and "__shape__"-style hints
  std::vector<NodeEntry> inputs;             // the op's arguments, then its auxiliary states
  std::shared_ptr<const op::Operator> impl;  // null for a variable

  SymbolNode() = default;
  SymbolNode(const SymbolNode&) = delete;
  SymbolNode& operator=(const SymbolNode&) = delete;
  // Releases the inputs it alone holds iteratively: a chain of 300,000 ops destroyed
  // recursively overflowed the stack at exit.
  ~SymbolNode();

  bool is_variable() const { return op.empty(); }
  int num_outputs() const { return impl ? impl->NumOutputs() : 1; }
  int num_arguments() const { return impl ? static_cast<int>(impl->ListArguments().size()) : 0; }
};

// A handle to one or more outputs of a graph. Copying a Symbol shares the graph.
class Symbol {
 public:
  Symbol() = default;

  static Symbol Variable(const std::string& name, const op::Attrs& attrs = {});
  // Applies `op`: `inputs` fill its arguments in order; arguments and auxiliary states not given
  // become variables named "<name>_<argument>" (fc1_weight, bn_moving_mean). An empty name
  // is generated as MXNet does: the op's name in lower case and a counter (fullyconnected0).
  static Symbol Create(const std::string& op, const std::vector<Symbol>& inputs,
                       const op::Attrs& attrs = {}, const std::string& name = "");
  // The same with arguments by name ({"data", x}, {"weight", w}).
  static Symbol Create(const std::string& op, const std::map<std::string, Symbol>& inputs,
                       const op::Attrs& attrs = {}, const std::string& name = "");
  static Symbol Group(const std::vector<Symbol>& symbols);
  // The symbol whose outputs are these entries (graph passes that make new nodes).
  static Symbol FromEntries(std::vector<NodeEntry> outputs) { return Symbol(std::move(outputs)); }

  const std::vector<NodeEntry>& outputs() const { return outputs_; }
  size_t num_outputs() const { return outputs_.size(); }
  Symbol operator[](size_t index) const;
  // The name of a single-output symbol's node.
  const std::string& name() const;

  // Variables that are arguments / auxiliary states, in MXNet's order (depth-first from the
  // outputs, inputs left to right).
  std::vector<std::string> ListArguments() const;
  std::vector<std::string> ListAuxiliaryStates() const;
  // All variables in that order.
  std::vector<std::string> ListInputs() const;
  // The attributes of each variable that has any, by name (MXNet's attr_dict for variables):
  // "__lr_mult__", "__wd_mult__", "__init__", "__shape__".
  std::map<std::string, op::Attrs> VariableAttrs() const;
  // "<node>_output" (or "<node>_<output name>" for ops with several visible outputs).
  std::vector<std::string> ListOutputs() const;
  // Every visible output of every op node, and every variable, as one symbol (for monitoring).
  Symbol GetInternals() const;
  // The graph with the variables named in `inputs` replaced by those (single-output) symbols:
  // MXNet's composition, net(data=other). Nodes that depend on no replaced variable are shared
  // with this graph; a name that is no variable of it is an error naming it.
  Symbol Compose(const std::map<std::string, Symbol>& inputs) const;

  struct Shapes {
    std::vector<Shape> arguments, outputs, auxiliary;  // unknown ones have ndim 0
    bool complete = false;
  };
  // Shapes from any subset of argument shapes (and "__shape__" attributes). A conflict throws an
  // error naming the node and the input; unknown names in `known` are an error too.
  Shapes InferShape(const std::map<std::string, Shape>& known) const;
  // What InferShape works out for every node's outputs (inputs and inner nodes alike).
  using NodeShapes = std::unordered_map<const SymbolNode*, std::vector<Shape>>;
  NodeShapes InferNodeShapes(const std::map<std::string, Shape>& known) const;

  struct Types {
    op::TypeSlots arguments, outputs, auxiliary;  // unknown ones are nullopt
    bool complete = false;
  };
  // Element types from any subset of argument types and "__dtype__" attributes (Note [Operator
  // dtypes]), as InferShape: a conflict throws naming the node; so does an unknown name.
  Types InferType(const std::map<std::string, DType>& known) const;
  // What InferType works out for every node's outputs (unknown ones nullopt).
  using NodeTypes = std::unordered_map<const SymbolNode*, op::TypeSlots>;
  NodeTypes InferNodeTypes(const std::map<std::string, DType>& known) const;
  // The type a variable's "__dtype__" attribute gives (MXNet's type flag), if it has one; a
  // malformed one is an error naming the variable.
  static std::optional<DType> DTypeHint(const SymbolNode& variable);

  std::string ToJSON() const;
  // MXNet 1.x symbol JSON ("attrs", or the older "param"/"attr"); errors name the node.
  static Symbol FromJSON(const std::string& json);
  void Save(const std::string& path) const;
  static Symbol Load(const std::string& path);

  // Every node reachable from the outputs, inputs before the nodes that use them.
  std::vector<std::shared_ptr<SymbolNode>> TopoOrder() const;

  // The same computation with each set of equal op nodes (same op, attributes and inputs) made
  // one, as MXNet's MXNET_ELIMINATE_COMMON_EXPR pass does at bind (symbol/common_expr.cc): random
  // draws, ops with state and losses stay apart; outputs that became one are copied ("_copy").
  // Arguments, their order and the outputs' count are unchanged.
  Symbol EliminateCommonExpr() const;

 private:
  explicit Symbol(std::vector<NodeEntry> outputs) : outputs_(std::move(outputs)) {}
  // Variables in order, each with whether it feeds an auxiliary-state slot.
  std::vector<std::pair<std::shared_ptr<SymbolNode>, bool>> Variables() const;

  std::vector<NodeEntry> outputs_;
};

// Arithmetic as MXNet's Python Symbol: elemwise ops and their scalar forms.
Symbol operator+(const Symbol& a, const Symbol& b);
Symbol operator-(const Symbol& a, const Symbol& b);
Symbol operator*(const Symbol& a, const Symbol& b);
Symbol operator/(const Symbol& a, const Symbol& b);
Symbol operator+(const Symbol& a, double s);
Symbol operator+(double s, const Symbol& a);
Symbol operator-(const Symbol& a, double s);
Symbol operator-(double s, const Symbol& a);
Symbol operator*(const Symbol& a, double s);
Symbol operator*(double s, const Symbol& a);
Symbol operator/(const Symbol& a, double s);
Symbol operator/(double s, const Symbol& a);

}  // namespace cohort
