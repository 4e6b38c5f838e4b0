// Mixed precision as a graph pass (Note [AMP pass]).
#include "symbol/amp_convert.h"

#include <map>
#include <tuple>
#include <unordered_map>

#include "symbol/graph_pass.h"

namespace cohort {
namespace {

using EntryKey = std::pair<const SymbolNode*, int>;

EntryKey Key(const NodeEntry& e) { return {e.node.get(), e.index}; }

class AmpConverter {
 public:
  explicit AmpConverter(const AmpOptions& options) : o_(options) {
    if (o_.target_ops.empty()) o_.target_ops = DefaultAmpTargetOps();
    if (o_.float32_ops.empty()) o_.float32_ops = DefaultAmpFloat32Ops();
    data_typed_ops_ = DataTypedAmpOps();
    COHORT_CHECK(o_.target == DType::kBFloat16 || o_.target == DType::kFloat16)
        << "mixed precision: the target type is bfloat16 or float16, not " << o_.target;
  }

  Symbol Convert(const Symbol& symbol) {
    for (const auto& node : symbol.TopoOrder()) now_[node.get()] = Visit(*node, node);
    std::vector<NodeEntry> outputs;
    for (const NodeEntry& out : symbol.outputs()) {
      NodeEntry entry = Moved(out);
      if (low_.count(Key(entry))) entry = Cast(entry, DType::kFloat32);
      outputs.push_back(entry);
    }
    return Symbol::FromEntries(std::move(outputs));
  }

 private:
  NodeEntry Moved(const NodeEntry& e) const { return {now_.at(e.node.get()), e.index}; }

  // `entry` converted to `dtype` by one amp_cast, made once for every reader.
  NodeEntry Cast(const NodeEntry& entry, DType dtype) {
    const auto key = std::make_tuple(entry.node.get(), entry.index, dtype);
    if (auto it = casts_.find(key); it != casts_.end()) return it->second;
    const SymbolNode& from = *entry.node;
    const std::string output = from.is_variable()        ? ""
                               : from.num_outputs() == 1 ? "_output"
                                                         : "_output" + std::to_string(entry.index);
    const std::string name = from.name + output + "_amp_cast_" + std::string(DTypeName(dtype));
    const Symbol cast = Symbol::Create("amp_cast", {Symbol::FromEntries({entry})},
                                       {{"dtype", std::string(DTypeName(dtype))}}, name);
    NodeEntry made = cast.outputs()[0];
    if (dtype == o_.target) low_.insert(Key(made));
    return casts_.emplace(key, made).first->second;
  }

  std::shared_ptr<SymbolNode> Visit(const SymbolNode& node,
                                    const std::shared_ptr<SymbolNode>& self) {
    if (node.is_variable()) return self;
    const int arguments = node.num_arguments();
    std::vector<NodeEntry> inputs;
    bool any_low = false, all_low = arguments > 0;
    for (int i = 0; i < static_cast<int>(node.inputs.size()); ++i) {
      inputs.push_back(Moved(node.inputs[i]));
      if (i >= arguments) continue;  // auxiliary states stay as bound
      const bool low = low_.count(Key(inputs.back())) != 0;
      any_low |= low;
      all_low &= low;
    }
    const bool excluded = o_.excluded_names.count(node.name) != 0;
    bool outputs_low = false, data_typed = false;
    // A target op whose kernels do not take the type here (a grouped Convolution) stays float32.
    if (o_.target_ops.count(node.op) && !excluded && node.impl->TakesDType(o_.target)) {
      for (int i = 0; i < arguments; ++i) {
        if (!low_.count(Key(inputs[i]))) inputs[i] = Cast(inputs[i], o_.target);
      }
      outputs_low = true;
    } else if (any_low) {
      // An op whose parameters stay float32 follows its data alone (BatchNorm).
      const bool by_data = data_typed_ops_.count(node.op) && low_.count(Key(inputs[0]));
      const bool keeps_low = (all_low || by_data) && !excluded && !o_.float32_ops.count(node.op) &&
                             node.impl->TakesDType(o_.target);
      for (int i = keeps_low ? (by_data ? 1 : arguments) : 0; i < arguments; ++i) {
        if (low_.count(Key(inputs[i]))) inputs[i] = Cast(inputs[i], DType::kFloat32);
      }
      outputs_low = keeps_low;
      data_typed = keeps_low && by_data;
    }
    bool moved = false;
    for (size_t i = 0; i < inputs.size(); ++i) moved |= inputs[i].node != node.inputs[i].node;
    std::shared_ptr<SymbolNode> made = moved ? WithInputs(node, std::move(inputs)) : self;
    if (outputs_low) {  // a data-typed op's statistics stay float32
      for (int k = 0; k < (data_typed ? 1 : node.num_outputs()); ++k) low_.insert({made.get(), k});
    }
    return made;
  }

  AmpOptions o_;
  std::set<std::string> data_typed_ops_;
  std::unordered_map<const SymbolNode*, std::shared_ptr<SymbolNode>> now_;  // old -> new
  std::set<EntryKey> low_;  // entries in the target type
  std::map<std::tuple<const SymbolNode*, int, DType>, NodeEntry> casts_;
};

}  // namespace

std::set<std::string> DefaultAmpTargetOps() {
  return {"FullyConnected", "Convolution", "batch_dot", "dot"};
}

std::set<std::string> DataTypedAmpOps() { return {"BatchNorm"}; }

std::set<std::string> DefaultAmpFloat32Ops() {
  return {"softmax",
          "log_softmax",
          "SoftmaxOutput",
          "SoftmaxActivation",
          "LinearRegressionOutput",
          "LogisticRegressionOutput",
          "MAERegressionOutput",
          "MakeLoss",
          "LayerNorm",
          "exp",
          "log",
          "sum",
          "mean",
          "norm",
          "softmax_cross_entropy",
          "SVMOutput",
          "expm1",
          "log1p",
          "pow",
          "sqrt"};
}

Symbol ConvertToMixedPrecision(const Symbol& symbol, const AmpOptions& options) {
  return AmpConverter(options).Convert(symbol);
}

Symbol RemoveAmpCasts(const Symbol& symbol) {
  std::map<EntryKey, NodeEntry> now;  // an old entry -> the entry that replaces it
  auto moved = [&](const NodeEntry& e) {
    const auto it = now.find(Key(e));
    return it == now.end() ? e : it->second;
  };
  for (const auto& node : symbol.TopoOrder()) {
    if (node->op == "amp_cast" || node->op == "amp_multicast") {
      for (int k = 0; k < node->num_outputs(); ++k) {
        now[{node.get(), k}] = moved(node->inputs.at(k));
      }
      continue;
    }
    std::vector<NodeEntry> inputs;
    bool changed = false;
    for (const NodeEntry& in : node->inputs) {
      inputs.push_back(moved(in));
      changed |= inputs.back().node != in.node || inputs.back().index != in.index;
    }
    if (!changed) continue;
    const std::shared_ptr<SymbolNode> made = WithInputs(*node, std::move(inputs));
    for (int k = 0; k < node->num_outputs(); ++k) now[{node.get(), k}] = {made, k};
  }
  std::vector<NodeEntry> outputs;
  for (const NodeEntry& out : symbol.outputs()) outputs.push_back(moved(out));
  return Symbol::FromEntries(std::move(outputs));
}

}  // namespace cohort
