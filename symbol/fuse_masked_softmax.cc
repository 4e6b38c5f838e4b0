// FuseMaskedSoftmax (Note [Masked softmax fusion]).
#include "symbol/fuse_masked_softmax.h"

#include <unordered_map>
#include <unordered_set>

#include "operator/common/operator.h"
#include "operator/masked_softmax.h"
#include "operator/softmax.h"
#include "symbol/graph_pass.h"

namespace cohort {
namespace {

using EntryKey = std::pair<const SymbolNode*, int>;

EntryKey Key(const NodeEntry& e) { return {e.node.get(), e.index}; }

// The attribute's text, or `otherwise` where the node has none.
std::string AttrOr(const SymbolNode& node, const std::string& key, const std::string& otherwise) {
  const auto it = node.attrs.find(key);
  return it == node.attrs.end() ? otherwise : it->second;
}

// A chain the pass replaces: its data and mask entries, the fused op's attributes, and the
// softmax's name.
struct Chain {
  NodeEntry data, mask;
  op::Attrs attrs;
  std::string name;
};

class Fuser {
 public:
  Fuser(const Symbol& symbol, const std::map<std::string, Shape>& shapes,
        const std::set<std::string>& with_grad)
      : symbol_(symbol), order_(symbol.TopoOrder()), uses_(symbol, order_) {
    for (const auto& node : order_) {
      bool grad = node->is_variable() && with_grad.count(node->name);
      for (const NodeEntry& in : node->inputs) {
        reader_[Key(in)] = node.get();
        grad |= takes_grad_.count(in.node.get()) != 0;
      }
      if (grad) takes_grad_.insert(node.get());
    }
    shapes_ = symbol.InferNodeShapes(shapes);
  }

  Symbol Fuse() {
    std::unordered_map<const SymbolNode*, Chain> chains;  // by the node whose output it replaces
    for (const auto& node : order_) {
      if (node->op != "softmax") continue;
      const auto [last, chain] = Match(node);
      if (last) chains.emplace(last, chain);
    }
    if (chains.empty()) return symbol_;
    return RebuildGraph(
        symbol_, order_,
        [&](const SymbolNode& node, const MovedEntry& moved) -> std::shared_ptr<SymbolNode> {
          const auto it = chains.find(&node);
          if (it == chains.end()) return nullptr;
          const Chain& c = it->second;
          auto fused = std::make_shared<SymbolNode>();
          fused->op = "_masked_softmax";
          fused->name = c.name;
          fused->attrs = c.attrs;
          fused->impl = op::OpRegistry::Get().Create(fused->op, c.attrs);
          fused->inputs = {moved(c.data), moved(c.mask)};
          return fused;
        });
  }

 private:
  bool Inner(const NodeEntry& e) const { return uses_.Inner(e); }
  const Shape& ShapeOf(const NodeEntry& e) const { return shapes_.at(e.node.get())[e.index]; }

  // The chain ending at `softmax` (its last node and the chain), or a null node.
  std::pair<const SymbolNode*, Chain> Match(const std::shared_ptr<SymbolNode>& softmax) const {
    const std::pair<const SymbolNode*, Chain> none{nullptr, {}};
    const SymbolNode& sm = *softmax;
    // The softmax's own parser (which refuses use_length): temperature 1 over the last axis.
    const op::SoftmaxParam param = op::SoftmaxParam::Parse(sm.op, sm.attrs);
    if (sm.inputs.size() != 1 || AttrOr(sm, "dtype", "None") != "None") return none;
    if (param.temperature != 1.0f) return none;
    const NodeEntry& added = sm.inputs[0];
    if (added.node->op != "broadcast_add" || !Inner(added)) return none;
    const Shape& shape = ShapeOf(added);
    if (!op::ShapeKnown(shape) || shape.ndim() == 0) return none;
    if (param.axis != -1 && param.axis != shape.ndim() - 1) return none;
    // Which side of the add is the scaled scores (the other is the mask).
    for (int side = 0; side < 2; ++side) {
      NodeEntry scaled = added.node->inputs[side];
      const NodeEntry& mask = added.node->inputs[1 - side];
      const bool widened = scaled.node->op == "amp_cast";
      if (widened) {
        if (AttrOr(*scaled.node, "dtype", "") != "float32" || !Inner(scaled)) continue;
        scaled = scaled.node->inputs[0];
      }
      if (scaled.node->op != "_mul_scalar" || !Inner(scaled)) continue;
      const NodeEntry& data = scaled.node->inputs[0];
      const Shape& mask_shape = ShapeOf(mask);
      if (ShapeOf(data) != shape || !op::ShapeKnown(mask_shape) ||
          !op::MaskedSoftmaxMaskRows(shape, mask_shape)) {
        continue;
      }
      if (takes_grad_.count(mask.node.get())) continue;
      Chain chain{data, mask, {{"scale", AttrOr(*scaled.node, "scalar", "1")}}, sm.name};
      // The cast of the probabilities back to the scores' type, when the softmax has one reader.
      const SymbolNode* last = &sm;
      std::string out_dtype = "float32";
      if (widened && Inner({softmax, 0})) {
        if (const SymbolNode* cast = reader_.at({&sm, 0}); cast->op == "amp_cast") {
          last = cast;
          out_dtype = AttrOr(*cast, "dtype", "float32");
        }
      }
      chain.attrs["out_dtype"] = out_dtype;
      return {last, chain};
    }
    return none;
  }

  const Symbol& symbol_;
  std::vector<std::shared_ptr<SymbolNode>> order_;
  EntryUses uses_;
  std::map<EntryKey, const SymbolNode*> reader_;  // the last op to read the entry
  std::unordered_set<const SymbolNode*> takes_grad_;
  Symbol::NodeShapes shapes_;
};

}  // namespace

Symbol FuseMaskedSoftmax(const Symbol& symbol, const std::map<std::string, Shape>& shapes,
                         const std::set<std::string>& with_grad) {
  std::optional<Fuser> fuser;
  try {
    fuser.emplace(symbol, shapes, with_grad);
  } catch (const Error&) {
    return symbol;  // binding infers the shapes again and says what is wrong
  }
  return fuser->Fuse();
}

}  // namespace cohort
