// Operator: one node's computation (forward, backward, shape inference) and the registry that
// makes operators from MXNet op names and string attributes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/thread_arena.h"
#include "ndarray/ndarray.h"
#include "operator/common/op_spec.h"

namespace cohort {

// What to do with a gradient buffer (MXNet's OpReqType): leave it, overwrite it, add to it.
enum class GradReq { kNull, kWrite, kAdd };
GradReq ParseGradReq(std::string_view text);  // "null", "write", "add" (also "inplace" = write)
const char* GradReqName(GradReq req);

namespace op {

class GpuResources;  // operator/common/gpu_resources.h

// String attributes, as in MXNet's symbol JSON ("num_hidden": "128").
using Attrs = std::map<std::string, std::string>;

// Element types of an op's slots, as InferShape's shapes: nullopt is unknown.
using TypeSlots = std::vector<std::optional<DType>>;

// What an operator's kernels may use while they run.
struct OpContext {
  bool is_train = false;
  Context ctx = Context::CPU();
  ThreadArena* arena = nullptr;  // CPU kernels run their loops here (nullptr: serial)
  uint64_t seed = 0;             // for random ops (Dropout): changes every forward
  // Note [Random streams]: the executor's batch rows are rows [first_sample, first_sample +
  // batch_rows) of the global batch (0, 0: unknown), so that a random op keys its draws by
  // global position and any split over devices and workers draws alike.
  int64_t first_sample = 0, batch_rows = 0;
  GpuResources* gpu = nullptr;   // on a gpu context: the executor's stream and library handles
  // Note [Loss scaling]: loss layers (IsLoss) multiply the gradient they start backward with by
  // this (a power of two, so the product is exact); the trainer divides it out of the update.
  float loss_scale = 1;
};

// One operator node. Made from attributes by the registry and immutable afterwards, so one
// instance serves every executor bound from the same symbol.
//
// Inputs are the arguments (ListArguments) followed by the auxiliary states
// (ListAuxiliaryStates); outputs are NumOutputs() arrays of which the first NumVisibleOutputs()
// are seen by users (the rest are saved for backward, e.g. BatchNorm's batch mean).
class Operator {
 public:
  virtual ~Operator() = default;

  const std::string& type() const { return type_; }
  const Attrs& attrs() const { return attrs_; }
  // No other operator of the process has this number; an address may be reused by a later one
  // (the GPU's cached cuDNN plans are keyed by it).
  uint64_t id() const { return id_; }

  virtual std::vector<std::string> ListArguments() const { return {"data"}; }
  virtual std::vector<std::string> ListAuxiliaryStates() const { return {}; }
  // The "__init__" attribute (an initializer's dumps() text) of the variable that composing the
  // op makes for an input the caller did not give, or "": MXNet's FSetInputVarAttrOnCompose
  // (BatchNorm's moving mean zero and variance one, PReLU's slopes 0.25), which Module's and
  // the trainer's initializers read before any rule by name.
  virtual std::string InputInit(const std::string& slot) const {
    (void)slot;
    return "";
  }
  virtual std::vector<std::string> ListOutputs() const { return {"output"}; }
  virtual int NumVisibleOutputs() const { return static_cast<int>(ListOutputs().size()); }
  int NumOutputs() const { return static_cast<int>(ListOutputs().size()); }

  // Fills unknown shapes (ndim 0 or unknown dims) of arguments, outputs and aux states from the
  // known ones. Returns false when it cannot finish yet; throws on shapes that conflict.
  virtual bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                          std::vector<Shape>& aux) const = 0;

  // Fills unknown element types of arguments, outputs and aux states from the known ones (Note
  // [Operator dtypes], operator.cc). The default gives every slot one type, as MXNet's
  // ElemwiseType; an op without arguments outputs float32. Returns false when it cannot finish
  // yet; throws on types that conflict.
  virtual bool InferType(TypeSlots& in, TypeSlots& out, TypeSlots& aux) const;
  // Whether the kernels compute in `dtype`; binding checks every input and output of the node.
  virtual bool TakesDType(DType dtype) const { return dtype == DType::kFloat32; }

  // out_req says how to write each output (kWrite, or kNull for outputs nobody needs).
  virtual void Forward(const OpContext& ctx, const std::vector<NDArray>& in,
                       const std::vector<GradReq>& out_req, const std::vector<NDArray>& out,
                       const std::vector<NDArray>& aux) const = 0;
  // Gradients of the arguments given the gradients of the visible outputs. in_grad[i] follows
  // in_req[i]: kWrite overwrites, kAdd accumulates, kNull must leave it untouched.
  virtual void Backward(const OpContext& ctx, const std::vector<NDArray>& out_grad,
                        const std::vector<NDArray>& in, const std::vector<NDArray>& out,
                        const std::vector<GradReq>& in_req, const std::vector<NDArray>& in_grad,
                        const std::vector<NDArray>& aux) const = 0;

  // A loss layer (SoftmaxOutput, MakeLoss, ...) starts backward itself and needs no head gradient.
  virtual bool IsLoss() const { return false; }
  // Whether Backward can send its arguments a nonzero gradient: false for BlockGrad and for
  // functions whose derivative is zero (sign, rounding). The executor then skips its backward
  // and whatever before it only it would feed (Note [Zero gradients], executor/graph_plan.cc).
  virtual bool PassesGradient() const { return true; }
  // Whether two nodes of the op with equal attributes and inputs compute equal outputs: false for
  // random draws and ops that update their inputs in place (the common-expression pass merges
  // only deterministic nodes, symbol/common_expr.cc).
  virtual bool IsDeterministic() const { return true; }
  // Whether the op has a gradient at all: binding refuses one without (MXNet's ops with no
  // FGradient, such as batch_take) where a gradient would have to flow through it.
  virtual bool HasGradient() const { return true; }
  // Whether Backward reads the forward inputs / outputs (for memory planning; conservative).
  virtual bool BackwardNeedsInputs() const { return true; }
  virtual bool BackwardNeedsOutputs() const { return true; }
  // (input, output) pairs whose memory may be shared when the input is not used afterwards.
  virtual std::vector<std::pair<int, int>> ForwardInplace() const { return {}; }
  // Whether an output is a view of its input (Flatten, Reshape): forward copies only when the
  // planner did not place both in one buffer.
  virtual bool IsIdentity() const { return false; }
  // Whether Forward and Backward run on gpu contexts (Note [GPU kernels]); the executor refuses
  // to bind an op without them on a GPU.
  virtual bool HasGpuKernel() const { return false; }

 protected:
  std::string type_;
  Attrs attrs_;

 private:
  static uint64_t NextId();
  const uint64_t id_ = NextId();

  friend class OpRegistry;
};

// Makes operators by MXNet name ("FullyConnected", "_mul_scalar", ...) or alias.
class OpRegistry {
 public:
  using Factory = std::function<std::unique_ptr<Operator>(const Attrs&)>;

  static OpRegistry& Get();
  // Throws naming the op for an unknown name, an unknown attribute or a malformed value.
  std::unique_ptr<Operator> Create(const std::string& name, const Attrs& attrs) const;
  bool Has(const std::string& name) const { return factories_.count(name) > 0; }
  void Register(const std::string& name, Factory factory);
  void Alias(const std::string& alias, const std::string& name);
  // What an op takes (Note [Operator specs]); every registered op declares one.
  void Declare(OpSpec spec);
  // The spec of an op or alias; throws naming an unknown op.
  const OpSpec& Spec(const std::string& name) const;
  std::vector<std::string> Names() const;
  // Each alias with the canonical name it stands for.
  const std::map<std::string, std::string>& aliases() const { return aliases_; }
  // The canonical name of an op or alias.
  const std::string& Canonical(const std::string& name) const;

 private:
  OpRegistry();
  std::map<std::string, Factory> factories_;
  std::map<std::string, std::string> aliases_;
  std::map<std::string, OpSpec> specs_;
};

// Reads typed parameters from string attributes, as MXNet's dmlc::Parameter does, by the op's
// OpSpec: an absent attribute takes the declared default (a required one is an error naming
// it), an enum is checked against the declared choices, and Finish() refuses an attribute the
// spec does not declare (attributes named "__...__" are not parameters). Reading a parameter
// the spec does not declare, or declaring one the parser never reads, is a bug in the op that
// the registry's tests catch.
class ParamReader {
 public:
  // `op`: a registered name or alias.
  ParamReader(const std::string& op, const Attrs& attrs);

  int64_t Int(const std::string& key);
  std::optional<int64_t> OptionalInt(const std::string& key);  // "int or None"
  double Float(const std::string& key);
  std::optional<double> OptionalFloat(const std::string& key);  // "float or None"
  bool Bool(const std::string& key);
  std::optional<bool> OptionalBool(const std::string& key);  // "boolean or None"
  std::string String(const std::string& key);
  // One of the choices the spec's type lists ("{'max', 'avg'}").
  std::string Enum(const std::string& key);
  // An enum attribute whose names are listed in the enum's order (kPoolTypeNames, ...).
  template <typename E, size_t N>
  E EnumValue(const std::string& key, const char* const (&names)[N]) {
    const std::string t = Enum(key);
    const auto* it = std::find_if(names, names + N, [&](const char* n) { return t == n; });
    if (it == names + N) Undeclared(key, "an enum name the op does not know: " + t);
    return static_cast<E>(it - names);
  }
  // "(5, 5)", "[5,5]" or "5".
  Shape Tuple(const std::string& key);
  std::optional<Shape> OptionalTuple(const std::string& key);  // "Shape or None"
  // Throws naming any attribute the spec does not declare; and any declared one never read.
  void Finish() const;

 private:
  // The attribute's text, else the declared default; throws when a required one is missing.
  std::string Text(const std::string& key);
  [[noreturn]] void Bad(const std::string& key, const std::string& value,
                        const std::string& expected) const;
  [[noreturn]] void Undeclared(const std::string& key, const std::string& what) const;

  const OpSpec& spec_;
  const Attrs& attrs_;
  std::vector<std::string> used_;
};

// The inverse of ParamReader: a parameter as MXNet writes it in symbol JSON ("(3, 3)", "True",
// "0.001"). The params structs' ToAttrs use these, so the builders of symbol/ops.h write what
// Parse reads.
std::string AttrText(const Shape& s);
std::string AttrText(bool b);
std::string AttrText(double d);
std::string AttrText(int64_t i);

// Each operator file defines one of these; the registry calls them all once.
void RegisterFullyConnected(OpRegistry& r);
void RegisterActivations(OpRegistry& r);
void RegisterElemwise(OpRegistry& r);
void RegisterLossOutputs(OpRegistry& r);
void RegisterShapeOps(OpRegistry& r);
void RegisterConvolution(OpRegistry& r);
void RegisterPooling(OpRegistry& r);
void RegisterBatchNorm(OpRegistry& r);
void RegisterDropout(OpRegistry& r);
void RegisterEmbedding(OpRegistry& r);
void RegisterMaskedSoftmax(OpRegistry& r);
void RegisterSoftmax(OpRegistry& r);
void RegisterUnaryMath(OpRegistry& r);
void RegisterBroadcast(OpRegistry& r);
void RegisterLayerNorm(OpRegistry& r);
void RegisterMatmul(OpRegistry& r);
void RegisterReduce(OpRegistry& r);
void RegisterTranspose(OpRegistry& r);
void RegisterSlice(OpRegistry& r);
void RegisterArange(OpRegistry& r);
void RegisterRandom(OpRegistry& r);
void RegisterIndexOps(OpRegistry& r);
void RegisterCast(OpRegistry& r);

// Shape helpers for InferShape: a shape is "unknown" when ndim is 0, partly known when some dims
// are 0 or below (MXNet 1.x's unknown dimension) and others not.
bool ShapeKnown(const Shape& s);
// The dimension is known (above 0).
inline bool DimKnown(int64_t d) { return d > 0; }
// Output 0 has input 0's shape: fills whichever is unknown from the other.
bool InferSameShape(std::vector<Shape>& in, std::vector<Shape>& out, const std::string& op);
// `axis` counted from the end when negative (MXNet's convention); throws naming `op` when it is
// not an axis of `s`.
int NormalizeAxis(int axis, const Shape& s, const std::string& op);
// Fills what `slot` does not know from `value`: all of it when slot's ndim is 0, else each unknown
// dim (partial shapes, MXNet's infer_shape_partial). Throws naming `what` when a known dim, or
// the number of dims, differs.
void AssignShape(Shape& slot, const Shape& value, const std::string& op, const std::string& what);
// The same for element types; an unknown `value` changes nothing.
void AssignType(std::optional<DType>& slot, std::optional<DType> value, const std::string& op,
                const std::string& what);
// Every slot of one type, taken from any known one (the default InferType).
bool InferSameType(const Operator& op, TypeSlots& in, TypeSlots& out, TypeSlots& aux);
// The dtypes `op` takes, as "float32, float64" (for errors).
std::string TakenDTypes(const Operator& op);

}  // namespace op
}  // namespace cohort
