// Symbol construction, listing and shape inference.
#include "symbol/symbol.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <mutex>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace cohort {

SymbolNode::~SymbolNode() {
  std::vector<std::shared_ptr<SymbolNode>> pending;
  auto take_inputs = [&pending](std::vector<NodeEntry>& inputs) {
    for (NodeEntry& e : inputs) {
      if (e.node && e.node.use_count() == 1) pending.push_back(std::move(e.node));
    }
    inputs.clear();
  };
  take_inputs(inputs);
  while (!pending.empty()) {
    std::shared_ptr<SymbolNode> node = std::move(pending.back());
    pending.pop_back();
    take_inputs(node->inputs);  // then `node` dies here with no inputs left to recurse into
  }
}
namespace {

// MXNet's NameManager: "<hint><count>" with a counter per hint, for nodes made without a name.
std::string NextName(const std::string& hint) {
  static std::mutex mutex;
  static std::map<std::string, int> counters;
  std::lock_guard<std::mutex> lock(mutex);
  return hint + std::to_string(counters[hint]++);
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string FormatScalar(double s) {
  std::ostringstream out;
  out.precision(17);
  out << s;
  return out.str();
}

Symbol ScalarOp(const std::string& op, const std::string& hint, const Symbol& a, double s) {
  return Symbol::Create(op, std::vector<Symbol>{a}, {{"scalar", FormatScalar(s)}}, NextName(hint));
}

Symbol BinaryOp(const std::string& op, const std::string& hint, const Symbol& a, const Symbol& b) {
  return Symbol::Create(op, std::vector<Symbol>{a, b}, {}, NextName(hint));
}

}  // namespace

Symbol Symbol::Variable(const std::string& name, const op::Attrs& attrs) {
  COHORT_CHECK(!name.empty()) << "a variable needs a name";
  auto node = std::make_shared<SymbolNode>();
  node->name = name;
  node->attrs = attrs;
  return Symbol({{node, 0}});
}

Symbol Symbol::Create(const std::string& op, const std::vector<Symbol>& inputs,
                      const op::Attrs& attrs, const std::string& name) {
  auto impl = std::shared_ptr<const op::Operator>(op::OpRegistry::Get().Create(op, attrs));
  const std::vector<std::string> args = impl->ListArguments();
  COHORT_CHECK_LE(inputs.size(), args.size())
      << op << (name.empty() ? "" : " '" + name + "'") << " takes " << args.size() << " arguments";
  std::map<std::string, Symbol> named;
  for (size_t i = 0; i < inputs.size(); ++i) named[args[i]] = inputs[i];
  return Create(op, named, attrs, name);
}

Symbol Symbol::Create(const std::string& op, const std::map<std::string, Symbol>& inputs,
                      const op::Attrs& attrs, const std::string& name) {
  auto node = std::make_shared<SymbolNode>();
  node->impl = std::shared_ptr<const op::Operator>(op::OpRegistry::Get().Create(op, attrs));
  node->op = node->impl->type();
  node->name = name.empty() ? NextName(Lower(node->op)) : name;
  node->attrs = attrs;
  std::vector<std::string> slots = node->impl->ListArguments();
  for (const std::string& aux : node->impl->ListAuxiliaryStates()) slots.push_back(aux);
  for (const auto& [key, value] : inputs) {
    COHORT_CHECK(std::find(slots.begin(), slots.end(), key) != slots.end())
        << op << " '" << node->name << "' has no argument '" << key << "'";
  }
  for (const std::string& slot : slots) {
    auto it = inputs.find(slot);
    if (it == inputs.end()) {
      // The parameters it makes carry the node's __attributes__ (__lr_mult__, __wd_mult__,
      // __ctx_group__), as MXNet's do: the optimizer and group2ctx read them there.
      op::Attrs inherited;
      for (const auto& [key, value] : attrs) {
        if (key.size() > 4 && key.starts_with("__") && key.ends_with("__")) inherited[key] = value;
      }
      if (std::string init = node->impl->InputInit(slot); !init.empty()) {
        inherited["__init__"] = std::move(init);
      }
      node->inputs.push_back(Variable(node->name + "_" + slot, inherited).outputs_[0]);
      continue;
    }
    COHORT_CHECK_EQ(it->second.outputs_.size(), size_t{1})
        << op << " '" << node->name << "': argument '" << slot
        << "' must be a symbol with one output";
    node->inputs.push_back(it->second.outputs_[0]);
  }
  std::vector<NodeEntry> outs;
  for (int i = 0; i < node->impl->NumVisibleOutputs(); ++i) outs.push_back({node, i});
  return Symbol(std::move(outs));
}

Symbol Symbol::Group(const std::vector<Symbol>& symbols) {
  std::vector<NodeEntry> outs;
  for (const Symbol& s : symbols) outs.insert(outs.end(), s.outputs_.begin(), s.outputs_.end());
  return Symbol(std::move(outs));
}

Symbol Symbol::operator[](size_t index) const {
  COHORT_CHECK_LT(index, outputs_.size()) << "output index of a symbol";
  return Symbol({outputs_[index]});
}

const std::string& Symbol::name() const {
  COHORT_CHECK_EQ(outputs_.size(), size_t{1}) << "name() of a symbol with several outputs";
  return outputs_[0].node->name;
}

std::vector<std::shared_ptr<SymbolNode>> Symbol::TopoOrder() const {
  std::vector<std::shared_ptr<SymbolNode>> order;
  std::unordered_set<const SymbolNode*> visited;
  // Iterative depth-first post-order (graphs can be deep: no recursion).
  std::vector<std::pair<std::shared_ptr<SymbolNode>, size_t>> stack;
  for (const NodeEntry& head : outputs_) {
    if (visited.count(head.node.get())) continue;
    stack.push_back({head.node, 0});
    visited.insert(head.node.get());
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->inputs.size()) {
        const auto& child = node->inputs[next++].node;
        if (visited.insert(child.get()).second) stack.push_back({child, 0});
        continue;
      }
      order.push_back(node);
      stack.pop_back();
    }
  }
  return order;
}

Symbol Symbol::Compose(const std::map<std::string, Symbol>& inputs) const {
  const auto order = TopoOrder();
  std::set<std::string> variables;
  for (const auto& node : order) {
    if (node->is_variable()) variables.insert(node->name);
  }
  for (const auto& [name, symbol] : inputs) {
    COHORT_CHECK(variables.count(name))
        << "compose: the symbol has no variable '" << name << "' to replace";
    COHORT_CHECK_EQ(symbol.outputs_.size(), size_t{1})
        << "compose: '" << name << "' must be replaced by a symbol with one output";
  }
  // Each node's replacement, in topological order: inputs are mapped before their users.
  std::unordered_map<const SymbolNode*, std::shared_ptr<SymbolNode>> made;
  std::unordered_map<const SymbolNode*, NodeEntry> replaced;  // variables -> their replacement
  auto map_entry = [&](const NodeEntry& e) -> NodeEntry {
    if (auto r = replaced.find(e.node.get()); r != replaced.end()) return r->second;
    if (auto m = made.find(e.node.get()); m != made.end()) return {m->second, e.index};
    return e;
  };
  for (const auto& node : order) {
    if (node->is_variable()) {
      if (auto it = inputs.find(node->name); it != inputs.end()) {
        replaced[node.get()] = it->second.outputs_[0];
      }
      continue;
    }
    std::vector<NodeEntry> new_inputs;
    bool changed = false;
    for (const NodeEntry& e : node->inputs) {
      new_inputs.push_back(map_entry(e));
      changed = changed || new_inputs.back().node != e.node;
    }
    if (!changed) continue;
    auto copy = std::make_shared<SymbolNode>();
    copy->op = node->op;
    copy->name = node->name;
    copy->attrs = node->attrs;
    copy->impl = node->impl;
    copy->inputs = std::move(new_inputs);
    made[node.get()] = std::move(copy);
  }
  std::vector<NodeEntry> outs;
  for (const NodeEntry& e : outputs_) outs.push_back(map_entry(e));
  return Symbol(std::move(outs));
}

std::vector<std::pair<std::shared_ptr<SymbolNode>, bool>> Symbol::Variables() const {
  std::unordered_set<const SymbolNode*> aux;
  const auto order = TopoOrder();
  for (const auto& node : order) {
    for (size_t i = node->num_arguments(); i < node->inputs.size(); ++i) {
      aux.insert(node->inputs[i].node.get());
    }
  }
  std::vector<std::pair<std::shared_ptr<SymbolNode>, bool>> out;
  for (const auto& node : order) {
    if (node->is_variable()) out.push_back({node, aux.count(node.get()) > 0});
  }
  return out;
}

std::vector<std::string> Symbol::ListArguments() const {
  std::vector<std::string> out;
  for (const auto& [node, is_aux] : Variables()) {
    if (!is_aux) out.push_back(node->name);
  }
  return out;
}

std::map<std::string, op::Attrs> Symbol::VariableAttrs() const {
  std::map<std::string, op::Attrs> out;
  for (const auto& [node, is_aux] : Variables()) {
    if (!node->attrs.empty()) out[node->name] = node->attrs;
  }
  return out;
}

std::vector<std::string> Symbol::ListAuxiliaryStates() const {
  std::vector<std::string> out;
  for (const auto& [node, is_aux] : Variables()) {
    if (is_aux) out.push_back(node->name);
  }
  return out;
}

std::vector<std::string> Symbol::ListInputs() const {
  std::vector<std::string> out;
  for (const auto& [node, is_aux] : Variables()) out.push_back(node->name);
  return out;
}

std::vector<std::string> Symbol::ListOutputs() const {
  std::vector<std::string> out;
  for (const NodeEntry& e : outputs_) {
    if (e.node->is_variable()) {
      out.push_back(e.node->name);
    } else {
      out.push_back(e.node->name + "_" + e.node->impl->ListOutputs()[e.index]);
    }
  }
  return out;
}

Symbol Symbol::GetInternals() const {
  std::vector<NodeEntry> outs;
  for (const auto& node : TopoOrder()) {
    const int visible = node->impl ? node->impl->NumVisibleOutputs() : 1;
    for (int i = 0; i < visible; ++i) outs.push_back({node, i});
  }
  return Symbol(std::move(outs));
}

Symbol::NodeShapes Symbol::InferNodeShapes(const std::map<std::string, Shape>& known) const {
  const auto order = TopoOrder();
  NodeShapes shapes;  // per node, per output
  std::set<std::string> used;
  for (const auto& node : order) {
    shapes[node.get()].resize(node->num_outputs());
    if (!node->is_variable()) continue;
    if (auto it = known.find(node->name); it != known.end()) {
      shapes[node.get()][0] = it->second;
      used.insert(node->name);
    } else if (auto hint = node->attrs.find("__shape__"); hint != node->attrs.end()) {
      shapes[node.get()][0] = Shape::Parse(hint->second);
    }
  }
  for (const auto& [name, shape] : known) {
    COHORT_CHECK(used.count(name)) << "InferShape: '" << name << "' is not an input of the symbol";
  }
  // Passes forward until nothing changes: an op may learn an input's shape from another input
  // (a weight from the data) and later ops from earlier ones.
  bool changed = true;
  for (int pass = 0; changed && pass < 100; ++pass) {
    changed = false;
    for (const auto& node : order) {
      if (node->is_variable()) continue;
      const int num_args = node->num_arguments();
      std::vector<Shape> in, aux;
      for (size_t i = 0; i < node->inputs.size(); ++i) {
        const NodeEntry& e = node->inputs[i];
        (static_cast<int>(i) < num_args ? in : aux).push_back(shapes[e.node.get()][e.index]);
      }
      std::vector<Shape>& out = shapes[node.get()];
      const std::vector<Shape> before_out = out;
      try {
        node->impl->InferShape(in, out, aux);
        for (size_t i = 0; i < node->inputs.size(); ++i) {
          const NodeEntry& e = node->inputs[i];
          const Shape& inferred = static_cast<int>(i) < num_args ? in[i] : aux[i - num_args];
          Shape& slot = shapes[e.node.get()][e.index];
          const Shape was = slot;
          op::AssignShape(slot, inferred, node->op, "input '" + e.node->name + "'");
          changed |= !(slot == was);
        }
      } catch (const Error& err) {
        // The op names its own slots ("weight"); say which variables feed them.
        std::string feeds;
        std::vector<std::string> slots = node->impl->ListArguments();
        for (const auto& a : node->impl->ListAuxiliaryStates()) slots.push_back(a);
        for (size_t i = 0; i < slots.size() && i < node->inputs.size(); ++i) {
          feeds +=
              (feeds.empty() ? "" : ", ") + slots[i] + " = '" + node->inputs[i].node->name + "'";
        }
        COHORT_THROW() << "InferShape: node '" << node->name << "' (" << node->op
                       << "): " << err.message() << " (inputs: " << feeds << ")";
      }
      for (size_t i = 0; i < out.size(); ++i) changed |= !(before_out[i] == out[i]);
    }
  }
  return shapes;
}

Symbol::Shapes Symbol::InferShape(const std::map<std::string, Shape>& known) const {
  NodeShapes shapes = InferNodeShapes(known);
  Shapes result;
  result.complete = true;
  for (const auto& [node, is_aux] : Variables()) {
    const Shape& s = shapes[node.get()][0];
    result.complete &= op::ShapeKnown(s);
    (is_aux ? result.auxiliary : result.arguments).push_back(s);
  }
  for (const NodeEntry& e : outputs_) {
    const Shape& s = shapes[e.node.get()][e.index];
    result.complete &= op::ShapeKnown(s);
    result.outputs.push_back(s);
  }
  return result;
}

std::optional<DType> Symbol::DTypeHint(const SymbolNode& variable) {
  auto hint = variable.attrs.find("__dtype__");
  if (hint == variable.attrs.end()) return std::nullopt;
  const std::string& text = hint->second;
  int32_t flag = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), flag);
  std::optional<DType> dtype;
  if (ec == std::errc() && end == text.data() + text.size()) dtype = DTypeFromFlag(flag);
  // -1 is MXNet's "unknown"
  if (!dtype && flag == -1 && ec == std::errc()) return std::nullopt;
  COHORT_CHECK(dtype) << "variable '" << variable.name << "': __dtype__ '" << text
                      << "' is no MXNet type flag (0 float32, 1 float64, 2 float16, 3 uint8, "
                         "4 int32, 5 int8, 6 int64, 7 bool, 12 bfloat16)";
  return dtype;
}

Symbol::NodeTypes Symbol::InferNodeTypes(const std::map<std::string, DType>& known) const {
  const auto order = TopoOrder();
  NodeTypes types;  // per node, per output
  std::set<std::string> used;
  for (const auto& node : order) {
    types[node.get()].resize(node->num_outputs());
    if (!node->is_variable()) continue;
    if (auto it = known.find(node->name); it != known.end()) {
      types[node.get()][0] = it->second;
      used.insert(node->name);
    } else {
      types[node.get()][0] = DTypeHint(*node);
    }
  }
  for (const auto& [name, dtype] : known) {
    COHORT_CHECK(used.count(name)) << "InferType: '" << name << "' is not an input of the symbol";
  }
  bool changed = true;
  for (int pass = 0; changed && pass < 100; ++pass) {
    changed = false;
    for (const auto& node : order) {
      if (node->is_variable()) continue;
      const int num_args = node->num_arguments();
      op::TypeSlots in, aux;
      for (size_t i = 0; i < node->inputs.size(); ++i) {
        const NodeEntry& e = node->inputs[i];
        (static_cast<int>(i) < num_args ? in : aux).push_back(types[e.node.get()][e.index]);
      }
      op::TypeSlots& out = types[node.get()];
      const op::TypeSlots before_out = out;
      try {
        node->impl->InferType(in, out, aux);
        for (size_t i = 0; i < node->inputs.size(); ++i) {
          const NodeEntry& e = node->inputs[i];
          const auto& inferred = static_cast<int>(i) < num_args ? in[i] : aux[i - num_args];
          auto& slot = types[e.node.get()][e.index];
          const bool was_known = slot.has_value();
          op::AssignType(slot, inferred, node->op, "input '" + e.node->name + "'");
          changed |= !was_known && slot.has_value();
        }
      } catch (const Error& err) {
        COHORT_THROW() << "InferType: node '" << node->name << "' (" << node->op
                       << "): " << err.message();
      }
      for (size_t i = 0; i < out.size(); ++i) changed |= !before_out[i] && out[i];
    }
  }
  return types;
}

Symbol::Types Symbol::InferType(const std::map<std::string, DType>& known) const {
  NodeTypes types = InferNodeTypes(known);
  Types result;
  result.complete = true;
  for (const auto& [node, is_aux] : Variables()) {
    const auto& t = types[node.get()][0];
    result.complete &= t.has_value();
    (is_aux ? result.auxiliary : result.arguments).push_back(t);
  }
  for (const NodeEntry& e : outputs_) {
    const auto& t = types[e.node.get()][e.index];
    result.complete &= t.has_value();
    result.outputs.push_back(t);
  }
  return result;
}

Symbol operator+(const Symbol& a, const Symbol& b) {
  return BinaryOp("elemwise_add", "_plus", a, b);
}
Symbol operator-(const Symbol& a, const Symbol& b) {
  return BinaryOp("elemwise_sub", "_minus", a, b);
}
Symbol operator*(const Symbol& a, const Symbol& b) {
  return BinaryOp("elemwise_mul", "_mul", a, b);
}
Symbol operator/(const Symbol& a, const Symbol& b) {
  return BinaryOp("elemwise_div", "_div", a, b);
}
Symbol operator+(const Symbol& a, double s) {
  return ScalarOp("_plus_scalar", "_plusscalar", a, s);
}
Symbol operator+(double s, const Symbol& a) { return a + s; }
Symbol operator-(const Symbol& a, double s) {
  return ScalarOp("_minus_scalar", "_minusscalar", a, s);
}
Symbol operator-(double s, const Symbol& a) {
  return ScalarOp("_rminus_scalar", "_rminusscalar", a, s);
}
Symbol operator*(const Symbol& a, double s) { return ScalarOp("_mul_scalar", "_mulscalar", a, s); }
Symbol operator*(double s, const Symbol& a) { return a * s; }
Symbol operator/(const Symbol& a, double s) { return ScalarOp("_div_scalar", "_divscalar", a, s); }
Symbol operator/(double s, const Symbol& a) {
  return ScalarOp("_rdiv_scalar", "_rdivscalar", a, s);
}

}  // namespace cohort
