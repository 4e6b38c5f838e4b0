// Executor: binding, the memory plan, forward, backward, reshape and monitoring.
#include "executor/executor.h"

#include <algorithm>
#include <chrono>
#include <sstream>
#include <tuple>
#include <type_traits>
#include <unordered_map>

#include "base/env.h"
#include "base/random_stream.h"
#include "executor/graph_plan.h"
#include "executor/place_devices.h"
#include "operator/common/gpu_resources.h"
#include "symbol/fuse_layer_norm_cast.h"
#include "symbol/fuse_masked_softmax.h"
#include "symbol/fuse_widening_add.h"

namespace cohort {

// Blocks of memory (bytes) shared by executors that never run at once (buckets, reshapes); the
// executor views them as arrays of each entry's dtype.
class MemoryPool {
 public:
  explicit MemoryPool(Context ctx) : ctx_(ctx) {}
  // One block per planned size in bytes: an unused block of the pool that fits, else a new one.
  std::vector<NDArray> Acquire(const std::vector<int64_t>& sizes) {
    std::vector<NDArray> out(sizes.size());
    std::vector<bool> taken(blocks_.size(), false);
    for (size_t i = 0; i < sizes.size(); ++i) {
      int best = -1;
      for (size_t b = 0; b < blocks_.size(); ++b) {
        if (!taken[b] && blocks_[b].size() >= sizes[i] &&
            (best < 0 || blocks_[b].size() < blocks_[best].size())) {
          best = static_cast<int>(b);
        }
      }
      if (best < 0) {
        blocks_.push_back(NDArray::Empty({std::max<int64_t>(sizes[i], 1)}, DType::kUint8, ctx_));
        taken.push_back(false);
        best = static_cast<int>(blocks_.size() - 1);
      }
      taken[best] = true;
      out[i] = blocks_[best];
    }
    return out;
  }
  size_t bytes() const {
    size_t total = 0;
    for (const NDArray& b : blocks_) total += b.nbytes();
    return total;
  }

 private:
  Context ctx_;
  std::vector<NDArray> blocks_;
};

// One op node, with every array it reads and writes resolved at bind time.
struct Executor::Step {
  std::shared_ptr<const op::Operator> impl;
  std::string name;
  int node_index = 0;
  std::vector<NDArray> in, aux, out;
  std::vector<GradReq> out_req;
  std::vector<std::string> in_names, out_names;
  Context ctx;                      // where its kernels run
  op::GpuResources* gpu = nullptr;  // on a GPU: that GPU's stream and handles
  bool backward = false;
  std::vector<NDArray> out_grad, in_grad;
  std::vector<GradReq> in_req;
  std::vector<int> grads_final;  // arguments whose gradient is final once Backward ran this step
  OpTiming timing;
  std::vector<NDArray> monitor_zeros;  // what the monitor shows for arguments without a gradient
};

// Note [Op profile]
// With profiling on, each op's Forward and Backward is timed with the steady clock (two clock
// reads per op, ~50 ns) and summed in its Step; off, the hot loop only tests a flag. The times
// are wall times of the calling device thread, kernels' parallel loops included. On a GPU the
// executor waits for its stream after each op while profiling, so a time covers the op's kernels
// (and the steps lose their overlap of launch and execution).
namespace {
using ProfileClock = std::chrono::steady_clock;
double SecondsSince(ProfileClock::time_point start) {
  return std::chrono::duration<double>(ProfileClock::now() - start).count();
}

// A failed GPU library call names no operator: the node whose kernel made it is added. A
// kernel's own fault (an illegal address) surfaces at a later call; with CUDA_LAUNCH_BLOCKING=1
// every launch waits for its kernel, and the fault is named at its own op.
DeviceError NamingTheNode(const DeviceError& e, const std::string& node, const std::string& type,
                          const char* pass, const Context& ctx) {
  return DeviceError(
      "node '" + node + "' (" + type + "), " + pass + " on " + ctx.ToString() + ": " + e.message(),
      e.file(), e.line());
}
}  // namespace

// Kernels still queued may use this executor's arrays; the caching pool could hand them to
// another stream once freed. A destructor must not throw: after a sticky CUDA error (the one
// being reported, as the stack unwinds) the wait fails too.
Executor::~Executor() {
  try {
    WaitAll();
  } catch (const std::exception&) {
  }
}

std::unique_ptr<Executor> Executor::Bind(const Symbol& symbol, Context ctx,
                                         const std::vector<NDArray>& args,
                                         const std::vector<NDArray>& arg_grads,
                                         const std::vector<GradReq>& grad_reqs,
                                         const std::vector<NDArray>& aux_states,
                                         const Executor* shared_exec,
                                         const std::map<std::string, Context>& group2ctx) {
  const std::vector<std::string> arg_names = symbol.ListArguments();
  const std::vector<std::string> aux_names = symbol.ListAuxiliaryStates();
  auto list = [](const std::vector<std::string>& names) {
    std::string s;
    for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
    return s;
  };
  COHORT_CHECK_EQ(args.size(), arg_names.size())
      << "Bind: arrays for the arguments (" << list(arg_names) << ")";
  COHORT_CHECK_EQ(aux_states.size(), aux_names.size())
      << "Bind: arrays for the auxiliary states (" << list(aux_names) << ")";
  COHORT_CHECK(arg_grads.size() == args.size() && grad_reqs.size() == args.size())
      << "Bind: " << arg_grads.size() << " gradient arrays and " << grad_reqs.size()
      << " grad_reqs for " << args.size() << " arguments";
  // Variables of one name are one input bound to the last array of that name (as MXNet binds
  // them); a gradient through several such variables would be summed nowhere (MXNet returns one
  // reader's share), so it is refused.
  std::map<std::string, int> uses;
  for (const auto& n : arg_names) ++uses[n];
  for (size_t i = 0; i < args.size(); ++i) {
    COHORT_CHECK(uses[arg_names[i]] == 1 || grad_reqs[i] == GradReq::kNull)
        << "Bind: " << uses[arg_names[i]] << " variables are named '" << arg_names[i]
        << "' and its gradient is asked for (grad_req " << GradReqName(grad_reqs[i])
        << "): give each variable its own name, or use one variable twice";
  }
  std::map<std::string, Shape> known;
  // Every array must live where the kernels run (host arrays for cpu contexts); placed in
  // groups, where the nodes that read it run, which placement makes so, and a gradient where its
  // argument is.
  auto on_ctx = [&](const NDArray& a) { return !group2ctx.empty() || a.ctx().SameMemory(ctx); };
  for (size_t i = 0; i < args.size(); ++i) {
    COHORT_CHECK(!args[i].is_none()) << "Bind: argument '" << arg_names[i] << "' has no array";
    COHORT_CHECK(on_ctx(args[i]) && (arg_grads[i].is_none() || on_ctx(arg_grads[i])))
        << "Bind: argument '" << arg_names[i] << "' (or its gradient) is on " << args[i].ctx()
        << ", not on the executor's context " << ctx;
    COHORT_CHECK(arg_grads[i].is_none() || arg_grads[i].ctx().SameMemory(args[i].ctx()))
        << "Bind: the gradient of '" << arg_names[i] << "' is on " << arg_grads[i].ctx()
        << " but the argument is on " << args[i].ctx() << ": give both one context";
    known[arg_names[i]] = args[i].shape();
    if (grad_reqs[i] != GradReq::kNull) {
      COHORT_CHECK(!arg_grads[i].is_none() && arg_grads[i].shape() == args[i].shape() &&
                   arg_grads[i].dtype() == args[i].dtype())
          << "Bind: the gradient of '" << arg_names[i] << "' must be an array of shape "
          << args[i].shape() << " and dtype " << args[i].dtype() << " (grad_req "
          << GradReqName(grad_reqs[i]) << ")";
    }
  }
  for (size_t i = 0; i < aux_states.size(); ++i) {
    COHORT_CHECK(!aux_states[i].is_none())
        << "Bind: auxiliary state '" << aux_names[i] << "' has no array";
    COHORT_CHECK(on_ctx(aux_states[i])) << "Bind: auxiliary state '" << aux_names[i] << "' is on "
                                        << aux_states[i].ctx() << ", not on " << ctx;
    known[aux_names[i]] = aux_states[i].shape();
  }
  Symbol::Shapes shapes;
  try {
    shapes = symbol.InferShape(known);
  } catch (const Error& e) {
    COHORT_THROW() << "Bind: " << e.message();
  }
  auto exec = std::unique_ptr<Executor>(new Executor());
  exec->symbol_ = symbol;
  exec->ctx_ = ctx;
  exec->group2ctx_ = group2ctx;
  exec->args_ = args;
  exec->grads_ = arg_grads;
  exec->grad_reqs_ = grad_reqs;
  exec->aux_ = aux_states;
  for (size_t i = 0; i < args.size(); ++i) {
    exec->arg_dict_[arg_names[i]] = args[i];
    if (grad_reqs[i] != GradReq::kNull) exec->grad_dict_[arg_names[i]] = arg_grads[i];
  }
  for (size_t i = 0; i < aux_states.size(); ++i) exec->aux_dict_[aux_names[i]] = aux_states[i];
  exec->Build(shared_exec);
  return exec;
}

std::unique_ptr<Executor> Executor::SimpleBind(const Symbol& symbol, Context ctx,
                                               const std::map<std::string, Shape>& shapes,
                                               GradReq grad_req,
                                               const std::map<std::string, GradReq>& grad_reqs,
                                               const Executor* shared_exec,
                                               const std::map<std::string, DType>& type_dict,
                                               const std::map<std::string, Context>& group2ctx) {
  for (const auto& [name, shape] : shapes) {  // 0 means unknown (MXNet): the input would be too
    COHORT_CHECK(op::ShapeKnown(shape))
        << "SimpleBind: the shape given for '" << name << "', " << shape
        << ", has an unknown (0) dimension: give every dimension";
  }
  Symbol::Shapes inferred = symbol.InferShape(shapes);
  const std::vector<std::string> arg_names = symbol.ListArguments();
  const std::vector<std::string> aux_names = symbol.ListAuxiliaryStates();
  std::string unknown;
  for (size_t i = 0; i < arg_names.size(); ++i) {
    if (!op::ShapeKnown(inferred.arguments[i])) unknown += " " + arg_names[i];
  }
  COHORT_CHECK(unknown.empty()) << "SimpleBind: cannot infer the shapes of:" << unknown
                                << "; give them (usually the data shapes)";
  for (const auto& [name, req] : grad_reqs) {
    COHORT_CHECK(std::find(arg_names.begin(), arg_names.end(), name) != arg_names.end())
        << "SimpleBind: grad_req given for '" << name << "', which is not an argument";
  }
  // Types given, hinted (__dtype__) or inferred from those; the rest are float32 (Note [Operator
  // dtypes]), and a second inference spreads that.
  std::map<std::string, DType> types = type_dict;
  Symbol::Types typed = symbol.InferType(types);
  for (size_t i = 0; i < arg_names.size(); ++i) {
    types[arg_names[i]] = typed.arguments[i].value_or(DType::kFloat32);
  }
  for (size_t i = 0; i < aux_names.size(); ++i) {
    types[aux_names[i]] = typed.auxiliary[i].value_or(DType::kFloat32);
  }
  typed = symbol.InferType(types);
  // Each variable's context: its group's (Note [Device placement]), else ctx.
  const std::map<std::string, op::Attrs> variable_attrs = symbol.VariableAttrs();
  auto ctx_of = [&](const std::string& name) {
    auto it = variable_attrs.find(name);
    return group2ctx.empty() || it == variable_attrs.end()
               ? ctx
               : VariableContext(it->second, ctx, group2ctx);
  };
  // shared_exec's array of the same name, shape, dtype and context, if any.
  using Dict = std::map<std::string, NDArray>;
  auto shared = [&](const Dict Executor::*dict, const std::string& name,
                    const Shape& shape) -> NDArray {
    if (!shared_exec) return NDArray();
    const Dict& d = shared_exec->*dict;
    auto it = d.find(name);
    return it != d.end() && it->second.shape() == shape && it->second.dtype() == types.at(name) &&
                   it->second.ctx() == ctx_of(name)
               ? it->second
               : NDArray();
  };
  // An array that cannot be allocated is named: a huge num_hidden said only "out of host
  // memory: cannot allocate 10240000000000 bytes".
  auto zeros = [&](const char* role, const std::string& name, const Shape& s) {
    const Context on = ctx_of(name);
    try {
      return NDArray::Zeros(s, types.at(name), on);
    } catch (const DeviceError&) {  // a failing GPU is not a size to fix
      throw;
    } catch (const Error& e) {  // out of memory, or more than 2^63 elements
      throw OutOfMemoryError("SimpleBind: " + std::string(role) + " '" + name + "' of shape " +
                                 s.ToString() + " on " + on.ToString() + ": " + e.message(),
                             __FILE__, __LINE__);
    }
  };
  std::vector<NDArray> args, grads, aux;
  std::vector<GradReq> reqs;
  for (size_t i = 0; i < arg_names.size(); ++i) {
    const Shape& s = inferred.arguments[i];
    auto it = grad_reqs.find(arg_names[i]);
    const GradReq req = it != grad_reqs.end() ? it->second : grad_req;
    NDArray arg = shared(&Executor::arg_dict_, arg_names[i], s);
    args.push_back(arg.is_none() ? zeros("argument", arg_names[i], s) : arg);
    NDArray grad;
    if (req != GradReq::kNull) {
      grad = shared(&Executor::grad_dict_, arg_names[i], s);
      if (grad.is_none()) grad = zeros("gradient of", arg_names[i], s);
    }
    grads.push_back(grad);
    reqs.push_back(req);
  }
  for (size_t i = 0; i < aux_names.size(); ++i) {
    const Shape& s = inferred.auxiliary[i];
    NDArray a = shared(&Executor::aux_dict_, aux_names[i], s);
    aux.push_back(a.is_none() ? zeros("auxiliary state", aux_names[i], s) : a);
  }
  return Bind(symbol, ctx, args, grads, reqs, aux, shared_exec, group2ctx);
}

// Binding's second half (Note [Graph plan] has the first): memory for the planned entries, the
// steps over it, their gradient requests, and what Backward reports and fills.
void Executor::Build(const Executor* shared_exec) {
  GraphPlan::Bound bound;
  bound.ctx = ctx_;
  for (size_t i = 0; i < args_.size(); ++i) {
    bound.arg_shapes.push_back(args_[i].shape());
    bound.arg_dtypes.push_back(args_[i].dtype());
    bound.arg_needs_grad.push_back(grad_reqs_[i] != GradReq::kNull);
    bound.arg_ctx.push_back(args_[i].ctx());
  }
  for (const NDArray& a : aux_) {
    bound.aux_shapes.push_back(a.shape());
    bound.aux_dtypes.push_back(a.dtype());
    bound.aux_ctx.push_back(a.ctx());
  }
  optimized_symbol_ = EliminateCommonExprOn() ? symbol_.EliminateCommonExpr() : symbol_;
  if (FuseOpsOn()) {  // Notes [Masked softmax fusion], [LayerNorm cast fusion], [Widening add
                      // fusion]
    std::map<std::string, Shape> shapes;
    std::set<std::string> with_grad;
    const std::vector<std::string> arg_names = symbol_.ListArguments();
    const std::vector<std::string> aux_names = symbol_.ListAuxiliaryStates();
    for (size_t i = 0; i < args_.size(); ++i) {
      shapes[arg_names[i]] = args_[i].shape();
      if (grad_reqs_[i] != GradReq::kNull) with_grad.insert(arg_names[i]);
    }
    for (size_t i = 0; i < aux_.size(); ++i) shapes[aux_names[i]] = aux_[i].shape();
    optimized_symbol_ = FuseMaskedSoftmax(optimized_symbol_, shapes, with_grad);
    optimized_symbol_ = FuseLayerNormCast(optimized_symbol_);
    std::map<std::string, DType> dtypes;
    for (size_t i = 0; i < args_.size(); ++i) dtypes[arg_names[i]] = args_[i].dtype();
    for (size_t i = 0; i < aux_.size(); ++i) dtypes[aux_names[i]] = aux_[i].dtype();
    optimized_symbol_ = FuseWideningAdd(optimized_symbol_, dtypes);
  }
  Placement placement;
  if (!group2ctx_.empty()) {
    std::map<std::string, Context> variable_ctx;
    const std::vector<std::string> arg_names = symbol_.ListArguments();
    const std::vector<std::string> aux_names = symbol_.ListAuxiliaryStates();
    for (size_t i = 0; i < args_.size(); ++i) variable_ctx[arg_names[i]] = args_[i].ctx();
    for (size_t i = 0; i < aux_.size(); ++i) variable_ctx[aux_names[i]] = aux_[i].ctx();
    placement = PlaceDevices(optimized_symbol_, ctx_, group2ctx_, variable_ctx);
    optimized_symbol_ = placement.symbol;
    bound.placed = &placement.ctx;
  }
  const GraphPlan g = GraphPlan::Make(optimized_symbol_, bound);
  needs_backward_ = g.needs_backward;
  AttachGpu(g, shared_exec);
  std::vector<NDArray> data, grad;
  try {
    AllocateEntries(g, shared_exec, &data, &grad);
  } catch (const OutOfMemoryError& e) {  // say what the bytes were for
    // The inputs that take no gradient (data, labels) are the shapes the user chose.
    std::ostringstream inputs;
    const std::vector<std::string> names = symbol_.ListArguments();
    for (size_t i = 0; i < args_.size() && i < names.size(); ++i) {
      if (grad_reqs_[i] == GradReq::kNull) inputs << " " << names[i] << args_[i].shape();
    }
    throw OutOfMemoryError("binding the network on " + ctx_.ToString() + " with inputs" +
                               inputs.str() + ": its activations and gradients do not fit (" +
                               e.message() + "); use a smaller batch or input",
                           __FILE__, __LINE__);
  }
  MakeSteps(g, data, grad);
  SetGradReqs(g, grad);
  FindFinalGradients(g);
  BindOutputs(g, data, grad);
}

// Stream and handles for every GPU a step runs on.
void Executor::AttachGpu(const GraphPlan& g, const Executor* shared_exec) {
  for (int k = 0; k < g.num_ops; ++k) {
    const Context c = g.op_ctx[k];
    if (!c.is_gpu()) continue;
    const SymbolNode& node = *g.order[g.node_of_op[k]];
    COHORT_CHECK(node.impl->HasGpuKernel())
        << "Bind: node '" << node.name << "' (" << node.impl->type() << ") has no GPU kernel"
        << (op::BuiltWithGpuKernels() ? "" : " (this build has no CUDA)") << "; bind on cpu";
    if (gpus_.count(c.id)) continue;
    // Executors sharing memory (Reshape, buckets) must run in order: one stream for all.
    auto shared = shared_exec ? shared_exec->gpus_.find(c.id) : gpus_.end();
    gpus_[c.id] = shared_exec && shared != shared_exec->gpus_.end()
                      ? shared->second
                      : std::shared_ptr<op::GpuResources>(op::GpuResources::Create(c.id));
  }
  if (ctx_.is_gpu() && !gpus_.count(ctx_.id)) {  // a graph of variables alone
    gpus_[ctx_.id] = std::shared_ptr<op::GpuResources>(op::GpuResources::Create(ctx_.id));
  }
}

// Variables get the bound arrays; op outputs and their gradients the blocks PlanMemory packs
// them into, from the pool shared with `shared_exec`.
void Executor::AllocateEntries(const GraphPlan& g, const Executor* shared_exec,
                               std::vector<NDArray>* data, std::vector<NDArray>* grad) {
  data->assign(g.num_entries(), NDArray());
  grad->assign(g.num_entries(), NDArray());
  const MemoryPlan plan = PlanMemory(g.planned);
  // A plan larger than the host can hold would be granted and then killed while it runs.
  int64_t host_need = 0;
  for (size_t b = 0; b < plan.block_size.size(); ++b) {
    if (g.spaces[plan.block_space[b]].is_host()) host_need += plan.block_size[b];
  }
  if (const int64_t available = HostBytesAvailable(); available >= 0 && host_need > available) {
    throw OutOfMemoryError("the memory plan needs " + std::to_string(host_need) +
                               " bytes but the host has " + std::to_string(available) +
                               " available",
                           __FILE__, __LINE__);
  }
  // Each context's blocks from its pool, shared with `shared_exec`.
  std::vector<NDArray> blocks(plan.block_size.size());
  for (size_t space = 0; space < g.spaces.size(); ++space) {
    const Context c = g.spaces[space];
    std::shared_ptr<MemoryPool>& pool = pools_[c];
    if (shared_exec && shared_exec->pools_.count(c)) pool = shared_exec->pools_.at(c);
    if (!pool) pool = std::make_shared<MemoryPool>(c);
    std::vector<int> ids;
    std::vector<int64_t> sizes;
    for (size_t b = 0; b < plan.block_size.size(); ++b) {
      if (plan.block_space[b] != static_cast<int>(space)) continue;
      ids.push_back(static_cast<int>(b));
      sizes.push_back(plan.block_size[b]);
    }
    const std::vector<NDArray> got = pool->Acquire(sizes);
    for (size_t i = 0; i < ids.size(); ++i) blocks[ids[i]] = got[i];
  }
  planned_bytes_ = static_cast<size_t>(plan.total());
  for (size_t e = 0; e < g.num_entries(); ++e) {
    if (g.arg_of[e] >= 0) {
      (*data)[e] = args_[g.arg_of[e]];
      (*grad)[e] = grads_[g.arg_of[e]];
    } else if (g.aux_of[e] >= 0) {
      (*data)[e] = aux_[g.aux_of[e]];
    }
    if (g.data_plan[e] >= 0) {
      (*data)[e] = blocks[plan.block_of[g.data_plan[e]]].View(g.shape[e], g.dtype[e]);
    }
    if (g.grad_plan[e] >= 0) {
      (*grad)[e] = blocks[plan.block_of[g.grad_plan[e]]].View(g.shape[e], g.dtype[e]);
    }
  }
}

// One step per op node, its arrays resolved; gradient requests come after (SetGradReqs).
void Executor::MakeSteps(const GraphPlan& g, const std::vector<NDArray>& data,
                         const std::vector<NDArray>& grad) {
  steps_.resize(g.num_ops);
  for (int k = 0; k < g.num_ops; ++k) {
    const SymbolNode& node = *g.order[g.node_of_op[k]];
    auto step = std::make_unique<Step>();
    step->impl = node.impl;
    step->name = node.name;
    step->node_index = g.node_of_op[k];
    step->ctx = g.op_ctx[k];
    if (step->ctx.is_gpu()) step->gpu = gpus_.at(step->ctx.id).get();
    const int e0 = g.FirstEntry(node);
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const int e = g.EntryId(node.inputs[i]);
      if (static_cast<int>(i) < node.num_arguments()) {
        step->in.push_back(data[e]);
        // The name the monitor gives the array where it is made: a variable's, or its
        // producer's "<node>_<output>" (an op's output was "fc1" as an input, "fc1_output" as
        // an output).
        const SymbolNode& from = *node.inputs[i].node;
        step->in_names.push_back(
            from.is_variable() ? from.name
                               : from.name + "_" + from.impl->ListOutputs()[node.inputs[i].index]);
      } else {
        step->aux.push_back(data[e]);
      }
    }
    const auto out_names = node.impl->ListOutputs();
    for (int j = 0; j < node.num_outputs(); ++j) {
      step->out.push_back(data[e0 + j]);
      step->out_req.push_back(GradReq::kWrite);
      step->out_names.push_back(node.name + "_" + out_names[j]);
    }
    step->backward = g.runs_backward[k];
    if (step->backward) {
      for (int j = 0; j < node.impl->NumVisibleOutputs(); ++j) {
        NDArray out_grad = grad[e0 + j];
        if (out_grad.is_none() && !node.impl->IsLoss()) {  // no consumer sends a gradient
          out_grad = NDArray::Zeros(g.shape[e0 + j], g.dtype[e0 + j], g.entry_ctx[e0 + j]);
          zero_grads_.push_back(out_grad);
        }
        step->out_grad.push_back(out_grad);
      }
    }
    steps_[k] = std::move(step);
  }
}

// Backward runs the steps in reverse: the first contribution to a gradient buffer writes (or
// follows the user's grad_req for an argument), later ones add.
void Executor::SetGradReqs(const GraphPlan& g, const std::vector<NDArray>& grad) {
  std::vector<bool> contributed(g.num_entries(), false);
  for (size_t e = 0; e < g.num_entries(); ++e) contributed[e] = g.is_head[e] && g.grad_plan[e] >= 0;
  for (int k = g.num_ops - 1; k >= 0; --k) {
    Step& step = *steps_[k];
    if (!step.backward) continue;
    const SymbolNode& node = *g.order[step.node_index];
    for (int i = 0; i < node.num_arguments(); ++i) {
      const int e = g.EntryId(node.inputs[i]);
      GradReq req = GradReq::kNull;
      if (g.needs_grad[e] && !grad[e].is_none()) {
        if (contributed[e]) {
          req = GradReq::kAdd;
        } else if (g.arg_of[e] >= 0) {
          req = grad_reqs_[g.arg_of[e]];
        } else {
          req = GradReq::kWrite;
        }
        contributed[e] = true;
      }
      step.in_req.push_back(req);
      step.in_grad.push_back(req == GradReq::kNull ? NDArray() : grad[e]);
    }
  }
}

// Note [Gradient ready]: an argument's gradient is final after the backward of its first
// consumer in forward order, which runs last.
void Executor::FindFinalGradients(const GraphPlan& g) {
  for (size_t i = 0; i < args_.size(); ++i) {
    if (grad_reqs_[i] == GradReq::kNull) continue;
    int last_writer = -1;
    // Variables of one name are one input, bound to the last array given under that name (as
    // MXNet binds them): an earlier position of the name reads nothing, its gradient is zero.
    static const std::remove_cvref_t<decltype(g.readers[0])> kNoReaders;
    const int entry = g.arg_entry[i];
    for (auto [consumer, is_arg] : entry < 0 ? kNoReaders : g.readers[entry]) {
      if (is_arg && steps_[consumer]->backward && (last_writer < 0 || consumer < last_writer)) {
        last_writer = consumer;
      }
    }
    if (last_writer >= 0) {
      steps_[last_writer]->grads_final.push_back(static_cast<int>(i));
    } else {
      unwritten_grads_.push_back(static_cast<int>(i));
      // Note [Zero gradients]: no gradient reaches it, so a written gradient is zero (once,
      // here: nothing else writes the buffer).
      if (grad_reqs_[i] == GradReq::kWrite) grads_[i].Fill(0);
    }
  }
}

// Outputs, and the head gradients Backward must fill.
void Executor::BindOutputs(const GraphPlan& g, const std::vector<NDArray>& data,
                           const std::vector<NDArray>& grad) {
  const std::vector<std::string> output_names = symbol_.ListOutputs();
  for (size_t k = 0; k < optimized_symbol_.outputs().size(); ++k) {
    const int e = g.EntryId(optimized_symbol_.outputs()[k]);
    outputs_.push_back(data[e]);
    output_dict_[output_names[k]] = data[e];
    if (g.grad_plan[e] >= 0) heads_.push_back({static_cast<int>(k), grad[e]});
  }
}

void Executor::Forward(bool is_train, const std::map<std::string, NDArray>& inputs) {
  for (const auto& [name, array] : inputs) {
    auto it = arg_dict_.find(name);
    COHORT_CHECK(it != arg_dict_.end()) << "Forward: '" << name << "' is not an argument";
    COHORT_CHECK(it->second.shape() == array.shape())
        << "Forward: '" << name << "' has shape " << it->second.shape() << ", got "
        << array.shape();
    array.CopyTo(it->second);
  }
  Forward(is_train);
}

void Executor::WaitAll() const {
  for (const auto& [device, gpu] : gpus_) gpu->Synchronize();
}

void Executor::Forward(bool is_train) {
  ++forward_count_;
  ran_forward_ = true;
  const op::GpuResources* current = nullptr;
  for (const auto& step : steps_) {
    if (step->gpu && step->gpu != current) (current = step->gpu)->MakeCurrent();
    const op::OpContext ctx{
        .is_train = is_train,
        .ctx = step->ctx,
        .arena = arena_,
        .seed = ForwardSeed(random_seed_, forward_count_, static_cast<uint64_t>(step->node_index)),
        .first_sample = first_sample_,
        .batch_rows = batch_rows_,
        .gpu = step->gpu};
    const auto start = profiling_ ? ProfileClock::now() : ProfileClock::time_point();
    try {
      step->impl->Forward(ctx, step->in, step->out_req, step->out, step->aux);
      if (profiling_) WaitAll();  // GPU kernels are asynchronous: time each op to its end
    } catch (const DeviceError& e) {
      throw NamingTheNode(e, step->name, step->impl->type(), "forward", step->ctx);
    }
    if (profiling_) {
      step->timing.forward_seconds += SecondsSince(start);
      ++step->timing.forward_calls;
    }
    if (monitor_) {
      if (monitor_all_) {
        for (size_t i = 0; i < step->in.size(); ++i) monitor_(step->in_names[i], step->in[i]);
      }
      for (int j = 0; j < step->impl->NumVisibleOutputs(); ++j) {
        monitor_(step->out_names[j], step->out[j]);
      }
    }
  }
}

void Executor::Backward(const std::vector<NDArray>& head_grads) {
  if (!needs_backward_) return;  // no argument takes a gradient: nothing to do, as in MXNet
  // Without a forward the outputs and the saved intermediates are whatever the memory held.
  COHORT_CHECK(ran_forward_) << "Backward before any Forward: run Forward first";
  COHORT_CHECK(head_grads.empty() || head_grads.size() == outputs_.size())
      << "Backward: " << head_grads.size() << " head gradients for " << outputs_.size()
      << " outputs";
  for (auto& [k, buffer] : heads_) {
    COHORT_CHECK(!head_grads.empty() && !head_grads[k].is_none())
        << "Backward: output '" << symbol_.ListOutputs()[k]
        << "' is not a loss: pass its head gradient";
    head_grads[k].CopyTo(buffer);
  }
  const op::GpuResources* current = nullptr;
  for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) {
    Step& step = **it;
    if (!step.backward) continue;
    if (step.gpu && step.gpu != current) (current = step.gpu)->MakeCurrent();
    const op::OpContext ctx{.is_train = true,
                            .ctx = step.ctx,
                            .arena = arena_,
                            .gpu = step.gpu,
                            .loss_scale = loss_scale_};
    const auto start = profiling_ ? ProfileClock::now() : ProfileClock::time_point();
    try {
      step.impl->Backward(ctx, step.out_grad, step.in, step.out, step.in_req, step.in_grad,
                          step.aux);
      if (profiling_) WaitAll();
    } catch (const DeviceError& e) {
      throw NamingTheNode(e, step.name, step.impl->type(), "backward", step.ctx);
    }
    if (profiling_) {
      step.timing.backward_seconds += SecondsSince(start);
      ++step.timing.backward_calls;
    }
    if (gradient_ready_) {
      for (int arg : step.grads_final) gradient_ready_(arg);
    }
    if (monitor_) MonitorBackward(step);
  }
  if (gradient_ready_) {
    for (int arg : unwritten_grads_) gradient_ready_(arg);
  }
}

// MXNet's monitor sees each backward node's outputs, the gradients of the op's arguments, as
// "<node>_backward_output" (numbered when there are several); an argument that takes no
// gradient (the data, a label) shows zeros, allocated the first time.
void Executor::MonitorBackward(Step& step) {
  const size_t n = step.in_grad.size();
  for (size_t i = 0; i < n; ++i) {
    NDArray grad = step.in_req[i] == GradReq::kNull ? NDArray() : step.in_grad[i];
    if (grad.is_none()) {
      step.monitor_zeros.resize(n);
      if (step.monitor_zeros[i].is_none()) {
        step.monitor_zeros[i] =
            NDArray::Zeros(step.in[i].shape(), step.in[i].dtype(), step.in[i].ctx());
      }
      grad = step.monitor_zeros[i];
    }
    monitor_(step.name + "_backward_output" + (n > 1 ? std::to_string(i) : ""), grad);
  }
}

void Executor::CopyParamsFrom(const std::map<std::string, NDArray>& arg_params,
                              const std::map<std::string, NDArray>& aux_params, bool allow_extra) {
  const std::tuple<const std::map<std::string, NDArray>*, std::map<std::string, NDArray>*,
                   const char*>
      sets[] = {{&arg_params, &arg_dict_, "argument"}, {&aux_params, &aux_dict_, "auxiliary state"}};
  // Every name and shape first: a refusal leaves the executor's parameters as they were.
  for (auto [params, dict, kind] : sets) {
    for (const auto& [name, array] : *params) {
      auto it = dict->find(name);
      if (it == dict->end()) {
        COHORT_CHECK(allow_extra) << "CopyParamsFrom: '" << name << "' is not an " << kind
                                  << " of the symbol (pass allow_extra to ignore it)";
        continue;
      }
      if (it->second.shape() != array.shape()) {  // parameters of another network: bad input
        std::ostringstream message;
        message << "the network's " << kind << " '" << name << "' has shape " << it->second.shape()
                << " but the parameter given has shape " << array.shape();
        throw ConfigError(message.str(), __FILE__, __LINE__);
      }
    }
  }
  for (auto [params, dict, kind] : sets) {
    for (const auto& [name, array] : *params) {
      if (auto it = dict->find(name); it != dict->end()) array.CopyTo(it->second);
    }
  }
}

std::unique_ptr<Executor> Executor::Reshape(const std::map<std::string, Shape>& new_shapes,
                                            bool partial_shaping, bool allow_up_sizing) const {
  Symbol::Shapes inferred = symbol_.InferShape(new_shapes);
  const std::vector<std::string> arg_names = symbol_.ListArguments();
  const std::vector<std::string> aux_names = symbol_.ListAuxiliaryStates();
  // An array for a new shape: a view when it fits, a new array when allowed to grow.
  auto resize = [&](const std::string& kind, const std::string& name, const NDArray& old,
                    const Shape& s) -> NDArray {
    if (old.is_none()) return old;
    COHORT_CHECK(op::ShapeKnown(s))
        << "Reshape: cannot infer the shape of " << kind << " '" << name << "'";
    const bool named = new_shapes.count(name) > 0;
    COHORT_CHECK(partial_shaping || named || s == old.shape())
        << "Reshape: the shape of " << kind << " '" << name << "' would change from " << old.shape()
        << " to " << s << " though it was not given; pass partial_shaping";
    if (s.Size() > old.size()) {
      COHORT_CHECK(allow_up_sizing) << "Reshape: " << kind << " '" << name << "' grows from "
                                    << old.shape() << " to " << s << "; pass allow_up_sizing";
      return NDArray::Empty(s, old.dtype(), old.ctx());
    }
    return old.Reshape(s);
  };
  std::vector<NDArray> args, grads, aux;
  for (size_t i = 0; i < arg_names.size(); ++i) {
    args.push_back(resize("argument", arg_names[i], args_[i], inferred.arguments[i]));
    grads.push_back(resize("gradient", arg_names[i], grads_[i], inferred.arguments[i]));
  }
  for (size_t i = 0; i < aux_names.size(); ++i) {
    aux.push_back(resize("auxiliary state", aux_names[i], aux_[i], inferred.auxiliary[i]));
  }
  auto exec = Bind(symbol_, ctx_, args, grads, grad_reqs_, aux, this, group2ctx_);
  exec->arena_ = arena_;
  return exec;
}

void Executor::SetMonitorCallback(Monitor callback, bool monitor_all) {
  monitor_ = std::move(callback);
  monitor_all_ = monitor_all;
}

void Executor::ClearProfile() {
  for (const auto& step : steps_) step->timing = OpTiming();
}

std::vector<Executor::OpTiming> Executor::Profile() const {
  std::vector<OpTiming> out;
  for (const auto& step : steps_) {
    out.push_back(step->timing);
    out.back().name = step->name;
    out.back().type = step->impl->type();
  }
  return out;
}

std::string Executor::DebugStr() const {
  std::ostringstream s;
  s << "Symbol Outputs:\n";
  const std::vector<std::string> names = symbol_.ListOutputs();
  for (size_t k = 0; k < names.size(); ++k) s << "\toutput[" << k << "]=" << names[k] << "\n";
  for (const std::string& v : symbol_.ListInputs()) s << "Variable:" << v << "\n";
  for (const auto& step : steps_) {
    s << "--------------------\n";
    s << "Op:" << step->impl->type() << ", Name=" << step->name << "\n";
    s << "Inputs:\n";
    for (size_t i = 0; i < step->in_names.size(); ++i) {
      s << "\targ[" << i << "]=" << step->in_names[i] << " " << step->in[i].shape() << "\n";
    }
    if (!step->impl->attrs().empty()) {
      s << "Attrs:\n";
      for (const auto& [k, v] : step->impl->attrs()) s << "\t" << k << "=" << v << "\n";
    }
    s << "Outputs:\n";
    for (size_t j = 0; j < step->out.size(); ++j) {
      s << "\t" << step->out_names[j] << " " << step->out[j].shape() << "\n";
    }
  }
  s << "Total " << (planned_bytes_ + (1 << 20) - 1) / (1 << 20) << " MB allocated\n";
  return s.str();
}

}  // namespace cohort
