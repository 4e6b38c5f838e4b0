// Executor: binding, the memory plan, forward, backward, reshape and monitoring.
#include "executor/executor.h"

#include <algorithm>
#include <chrono>
#include <sstream>
#include <unordered_map>

#include "executor/memory_plan.h"
#include "operator/common/gpu_resources.h"

namespace cohort {

// Blocks of float32 memory shared by executors that never run at once (buckets, reshapes).
class MemoryPool {
 public:
  explicit MemoryPool(Context ctx) : ctx_(ctx) {}
  // One block per planned size: an unused block of the pool that fits, else a new one.
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
        blocks_.push_back(NDArray::Empty({std::max<int64_t>(sizes[i], 1)}, DType::kFloat32, ctx_));
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
  bool backward = false;
  std::vector<NDArray> out_grad, in_grad;
  std::vector<GradReq> in_req;
  std::vector<int> grads_final;  // arguments whose gradient is final once Backward ran this step
  OpTiming timing;
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
}  // namespace

// Kernels still queued may use this executor's arrays; the caching pool could hand them to
// another stream once freed.
Executor::~Executor() {
  if (gpu_) gpu_->Synchronize();
}

std::unique_ptr<Executor> Executor::Bind(const Symbol& symbol, Context ctx,
                                         const std::vector<NDArray>& args,
                                         const std::vector<NDArray>& arg_grads,
                                         const std::vector<GradReq>& grad_reqs,
                                         const std::vector<NDArray>& aux_states,
                                         const Executor* shared_exec) {
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
  std::map<std::string, Shape> known;
  // Every array must live where the kernels run (host arrays for cpu contexts).
  auto on_ctx = [&](const NDArray& a) { return a.ctx().SameMemory(ctx); };
  for (size_t i = 0; i < args.size(); ++i) {
    COHORT_CHECK(!args[i].is_none()) << "Bind: argument '" << arg_names[i] << "' has no array";
    COHORT_CHECK(on_ctx(args[i]) && (arg_grads[i].is_none() || on_ctx(arg_grads[i])))
        << "Bind: argument '" << arg_names[i] << "' (or its gradient) is on " << args[i].ctx()
        << ", not on the executor's context " << ctx;
    COHORT_CHECK(args[i].dtype() == DType::kFloat32)
        << "Bind: argument '" << arg_names[i] << "' is " << args[i].dtype()
        << "; operators take float32";
    known[arg_names[i]] = args[i].shape();
    if (grad_reqs[i] != GradReq::kNull) {
      COHORT_CHECK(!arg_grads[i].is_none() && arg_grads[i].shape() == args[i].shape())
          << "Bind: the gradient of '" << arg_names[i] << "' must be an array of shape "
          << args[i].shape() << " (grad_req " << GradReqName(grad_reqs[i]) << ")";
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
                                               const Executor* shared_exec) {
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
  // shared_exec's array of the same name and shape, if any.
  using Dict = std::map<std::string, NDArray>;
  auto shared = [&](const Dict Executor::*dict, const std::string& name,
                    const Shape& shape) -> NDArray {
    if (!shared_exec) return NDArray();
    const Dict& d = shared_exec->*dict;
    auto it = d.find(name);
    return it != d.end() && it->second.shape() == shape ? it->second : NDArray();
  };
  std::vector<NDArray> args, grads, aux;
  std::vector<GradReq> reqs;
  for (size_t i = 0; i < arg_names.size(); ++i) {
    const Shape& s = inferred.arguments[i];
    auto it = grad_reqs.find(arg_names[i]);
    const GradReq req = it != grad_reqs.end() ? it->second : grad_req;
    NDArray arg = shared(&Executor::arg_dict_, arg_names[i], s);
    args.push_back(arg.is_none() ? NDArray::Zeros(s, DType::kFloat32, ctx) : arg);
    NDArray grad;
    if (req != GradReq::kNull) {
      grad = shared(&Executor::grad_dict_, arg_names[i], s);
      if (grad.is_none()) grad = NDArray::Zeros(s, DType::kFloat32, ctx);
    }
    grads.push_back(grad);
    reqs.push_back(req);
  }
  for (size_t i = 0; i < aux_names.size(); ++i) {
    const Shape& s = inferred.auxiliary[i];
    NDArray a = shared(&Executor::aux_dict_, aux_names[i], s);
    aux.push_back(a.is_none() ? NDArray::Zeros(s, DType::kFloat32, ctx) : a);
  }
  return Bind(symbol, ctx, args, grads, reqs, aux, shared_exec);
}

void Executor::Build(const Executor* shared_exec) {
  const auto order = symbol_.TopoOrder();
  if (ctx_.is_gpu()) {
    for (const auto& node : order) {
      COHORT_CHECK(node->is_variable() || node->impl->HasGpuKernel())
          << "Bind: node '" << node->name << "' (" << node->impl->type() << ") has no GPU kernel"
          << (op::BuiltWithGpuKernels() ? "" : " (this build has no CUDA)") << "; bind on cpu";
    }
    // Executors sharing memory (Reshape, buckets) must run in order: one stream for all.
    gpu_ = shared_exec && shared_exec->gpu_
               ? shared_exec->gpu_
               : std::shared_ptr<op::GpuResources>(op::GpuResources::Create(ctx_.id));
  }
  const std::vector<std::string> arg_names = symbol_.ListArguments();
  const std::vector<std::string> aux_names = symbol_.ListAuxiliaryStates();
  std::unordered_map<std::string, int> arg_index, aux_index;
  for (size_t i = 0; i < arg_names.size(); ++i) arg_index[arg_names[i]] = static_cast<int>(i);
  for (size_t i = 0; i < aux_names.size(); ++i) aux_index[aux_names[i]] = static_cast<int>(i);

  // Entries: every output of every node, numbered node by node.
  std::unordered_map<const SymbolNode*, int> first_entry;
  std::vector<const SymbolNode*> entry_node;
  std::vector<int> op_index(order.size(), -1);  // node -> position among op nodes
  std::vector<int> node_of_op;                  // and back
  int num_ops = 0;
  for (size_t n = 0; n < order.size(); ++n) {
    first_entry[order[n].get()] = static_cast<int>(entry_node.size());
    for (int k = 0; k < order[n]->num_outputs(); ++k) entry_node.push_back(order[n].get());
    if (!order[n]->is_variable()) {
      op_index[n] = num_ops++;
      node_of_op.push_back(static_cast<int>(n));
    }
  }
  const size_t num_entries = entry_node.size();
  auto entry_id = [&](const NodeEntry& e) { return first_entry.at(e.node.get()) + e.index; };

  // Shapes of every entry: one pass suffices, since every input shape is bound.
  std::vector<Shape> shape(num_entries);
  std::vector<NDArray> data(num_entries), grad(num_entries);
  std::vector<bool> needs_grad(num_entries, false), is_variable(num_entries, false);
  std::vector<int> arg_entry(arg_names.size(), -1);  // the entry of each argument
  for (size_t n = 0; n < order.size(); ++n) {
    const SymbolNode& node = *order[n];
    const int e0 = first_entry[&node];
    if (node.is_variable()) {
      is_variable[e0] = true;
      if (auto a = arg_index.find(node.name); a != arg_index.end()) {
        arg_entry[a->second] = e0;
        data[e0] = args_[a->second];
        grad[e0] = grads_[a->second];
        needs_grad[e0] = grad_reqs_[a->second] != GradReq::kNull;
      } else {
        data[e0] = aux_[aux_index.at(node.name)];
      }
      shape[e0] = data[e0].shape();
      continue;
    }
    std::vector<Shape> in, out(node.num_outputs()), aux;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      (static_cast<int>(i) < node.num_arguments() ? in : aux)
          .push_back(shape[entry_id(node.inputs[i])]);
    }
    node.impl->InferShape(in, out, aux);
    for (int k = 0; k < node.num_outputs(); ++k) shape[e0 + k] = out[k];
    bool any = false;
    for (int i = 0; i < node.num_arguments(); ++i) any |= needs_grad[entry_id(node.inputs[i])];
    for (int k = 0; k < node.impl->NumVisibleOutputs(); ++k) needs_grad[e0 + k] = any;
  }
  needs_backward_ = std::any_of(grad_reqs_.begin(), grad_reqs_.end(),
                                [](GradReq r) { return r != GradReq::kNull; });

  // Who reads each entry: (consumer op position, argument or not).
  std::vector<std::vector<std::pair<int, bool>>> readers(num_entries);
  for (size_t n = 0; n < order.size(); ++n) {
    const SymbolNode& node = *order[n];
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      readers[entry_id(node.inputs[i])].push_back(
          {op_index[n], static_cast<int>(i) < node.num_arguments()});
    }
  }
  std::vector<bool> is_head(num_entries, false);
  for (const NodeEntry& e : symbol_.outputs()) is_head[entry_id(e)] = true;

  // Lifetimes (Note [Static memory plan]): forward step of op k is k, its backward step 2K-1-k.
  auto fwd = [](int k) { return k; };
  auto bwd = [num_ops](int k) { return 2 * num_ops - 1 - k; };
  auto runs_backward = [&](const SymbolNode& node) {
    if (!needs_backward_) return false;
    for (int i = 0; i < node.num_arguments(); ++i) {
      if (needs_grad[entry_id(node.inputs[i])]) return true;
    }
    return false;
  };
  std::vector<PlannedArray> planned;
  std::vector<int> data_plan(num_entries, -1), grad_plan(num_entries, -1);
  for (size_t n = 0; n < order.size(); ++n) {
    const SymbolNode& node = *order[n];
    if (node.is_variable()) continue;
    const int k = op_index[n], e0 = first_entry[&node];
    const bool backward = runs_backward(node);
    for (int j = 0; j < node.num_outputs(); ++j) {
      const int e = e0 + j;
      PlannedArray pa{shape[e].Size(), fwd(k), fwd(k)};
      const bool hidden = j >= node.impl->NumVisibleOutputs();
      if (backward && (node.impl->BackwardNeedsOutputs() || hidden)) pa.last_step = bwd(k);
      for (auto [consumer, is_arg] : readers[e]) {
        pa.last_step = std::max(pa.last_step, fwd(consumer));
        const SymbolNode& c = *order[node_of_op[consumer]];
        if (runs_backward(c) && (c.impl->BackwardNeedsInputs() || !is_arg)) {
          pa.last_step = std::max(pa.last_step, bwd(consumer));
        }
      }
      pa.persistent = is_head[e];
      for (auto [in, out] : node.impl->ForwardInplace()) {
        if (out != j || in >= static_cast<int>(node.inputs.size())) continue;
        const int src = entry_id(node.inputs[in]);
        if (!is_variable[src] && data_plan[src] >= 0) pa.inplace_of = data_plan[src];
      }
      data_plan[e] = static_cast<int>(planned.size());
      planned.push_back(pa);
    }
  }
  // Gradient buffers of op outputs: written by the first consumer's backward (or by the head
  // gradient), read by the producer's backward.
  for (size_t n = 0; n < order.size(); ++n) {
    const SymbolNode& node = *order[n];
    if (node.is_variable() || !runs_backward(node) || node.impl->IsLoss()) continue;
    const int k = op_index[n], e0 = first_entry[&node];
    for (int j = 0; j < node.impl->NumVisibleOutputs(); ++j) {
      const int e = e0 + j;
      int first = is_head[e] ? bwd(num_ops - 1) : bwd(k);
      bool written = is_head[e];
      for (auto [consumer, is_arg] : readers[e]) {
        if (!is_arg) continue;
        first = std::min(first, bwd(consumer));
        written = true;
      }
      if (!written) continue;  // nobody sends a gradient: a zero buffer, below
      grad_plan[e] = static_cast<int>(planned.size());
      planned.push_back({shape[e].Size(), first, bwd(k)});
    }
  }
  // An identity op (Reshape, Flatten) passes its output's gradient on unchanged: its input's
  // gradient may take over that buffer when the op is the input's first gradient writer and the
  // output's gradient dies there (PlanMemory checks both), and the backward copies nothing.
  for (size_t n = 0; n < order.size(); ++n) {
    const SymbolNode& node = *order[n];
    if (node.is_variable() || !node.impl->IsIdentity() || node.impl->IsLoss()) continue;
    const int in = entry_id(node.inputs[0]), out = first_entry[&node];
    if (grad_plan[in] >= 0 && grad_plan[out] >= 0)
      planned[grad_plan[in]].inplace_of = grad_plan[out];
  }
  const MemoryPlan plan = PlanMemory(planned);
  pool_ = shared_exec ? shared_exec->pool_ : std::make_shared<MemoryPool>(ctx_);
  const std::vector<NDArray> blocks = pool_->Acquire(plan.block_size);
  planned_bytes_ = static_cast<size_t>(plan.total()) * sizeof(float);
  for (size_t e = 0; e < num_entries; ++e) {
    if (data_plan[e] >= 0) data[e] = blocks[plan.block_of[data_plan[e]]].Reshape(shape[e]);
    if (grad_plan[e] >= 0) grad[e] = blocks[plan.block_of[grad_plan[e]]].Reshape(shape[e]);
  }

  // Steps, with gradient requests: the first contribution to a buffer writes (or follows the
  // user's grad_req), later ones add.
  std::vector<bool> contributed(num_entries, false);
  for (size_t e = 0; e < num_entries; ++e) contributed[e] = is_head[e] && grad_plan[e] >= 0;
  steps_.resize(num_ops);
  for (size_t n = 0; n < order.size(); ++n) {
    const SymbolNode& node = *order[n];
    if (node.is_variable()) continue;
    auto step = std::make_unique<Step>();
    step->impl = node.impl;
    step->name = node.name;
    step->node_index = static_cast<int>(n);
    const int e0 = first_entry[&node];
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const int e = entry_id(node.inputs[i]);
      if (static_cast<int>(i) < node.num_arguments()) {
        step->in.push_back(data[e]);
        step->in_names.push_back(node.inputs[i].node->name);
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
    step->backward = runs_backward(node);
    if (step->backward) {
      for (int j = 0; j < node.impl->NumVisibleOutputs(); ++j) {
        NDArray g = grad[e0 + j];
        if (g.is_none() && !node.impl->IsLoss()) {  // no consumer sends a gradient
          g = NDArray::Zeros(shape[e0 + j], DType::kFloat32, ctx_);
          zero_grads_.push_back(g);
        }
        step->out_grad.push_back(g);
      }
    }
    steps_[op_index[n]] = std::move(step);
  }
  for (int k = num_ops - 1; k >= 0; --k) {
    Step& step = *steps_[k];
    if (!step.backward) continue;
    const SymbolNode& node = *order[step.node_index];
    for (int i = 0; i < node.num_arguments(); ++i) {
      const int e = entry_id(node.inputs[i]);
      GradReq req = GradReq::kNull;
      if (needs_grad[e] && !grad[e].is_none()) {
        if (contributed[e]) {
          req = GradReq::kAdd;
        } else if (is_variable[e]) {
          req = grad_reqs_[arg_index.at(node.inputs[i].node->name)];
        } else {
          req = GradReq::kWrite;
        }
        contributed[e] = true;
      }
      step.in_req.push_back(req);
      step.in_grad.push_back(req == GradReq::kNull ? NDArray() : grad[e]);
    }
  }

  // Note [Gradient ready]: an argument's gradient is final after the backward of its first
  // consumer in forward order, which runs last.
  for (size_t i = 0; i < arg_names.size(); ++i) {
    if (grad_reqs_[i] == GradReq::kNull) continue;
    int last_writer = -1;
    for (auto [consumer, is_arg] : readers[arg_entry[i]]) {
      if (is_arg && steps_[consumer]->backward && (last_writer < 0 || consumer < last_writer)) {
        last_writer = consumer;
      }
    }
    if (last_writer >= 0) {
      steps_[last_writer]->grads_final.push_back(static_cast<int>(i));
    } else {
      unwritten_grads_.push_back(static_cast<int>(i));
    }
  }

  // Outputs, and the head gradients Backward must fill.
  const std::vector<std::string> output_names = symbol_.ListOutputs();
  for (size_t k = 0; k < symbol_.outputs().size(); ++k) {
    const NodeEntry& head = symbol_.outputs()[k];
    const int e = entry_id(head);
    outputs_.push_back(data[e]);
    output_dict_[output_names[k]] = data[e];
    if (grad_plan[e] >= 0) heads_.push_back({static_cast<int>(k), grad[e]});
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
  if (gpu_) gpu_->Synchronize();
}

void Executor::Forward(bool is_train) {
  ++forward_count_;
  if (gpu_) gpu_->MakeCurrent();
  for (const auto& step : steps_) {
    const op::OpContext ctx{
        .is_train = is_train,
        .ctx = ctx_,
        .arena = arena_,
        .seed = random_seed_ ^ forward_count_ * 0x9E3779B97F4A7C15ull ^
                (static_cast<uint64_t>(step->node_index) + 1) * 0xBF58476D1CE4E5B9ull,
        .gpu = gpu_.get()};
    const auto start = profiling_ ? ProfileClock::now() : ProfileClock::time_point();
    step->impl->Forward(ctx, step->in, step->out_req, step->out, step->aux);
    if (profiling_) {
      WaitAll();  // GPU kernels are asynchronous: time each op to its end
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
  COHORT_CHECK(needs_backward_) << "Backward: every grad_req is null";
  COHORT_CHECK(head_grads.empty() || head_grads.size() == outputs_.size())
      << "Backward: " << head_grads.size() << " head gradients for " << outputs_.size()
      << " outputs";
  for (auto& [k, buffer] : heads_) {
    COHORT_CHECK(!head_grads.empty() && !head_grads[k].is_none())
        << "Backward: output '" << symbol_.ListOutputs()[k]
        << "' is not a loss: pass its head gradient";
    head_grads[k].CopyTo(buffer);
  }
  if (gpu_) gpu_->MakeCurrent();
  for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) {
    Step& step = **it;
    if (!step.backward) continue;
    const op::OpContext ctx{.is_train = true, .ctx = ctx_, .arena = arena_, .gpu = gpu_.get()};
    const auto start = profiling_ ? ProfileClock::now() : ProfileClock::time_point();
    step.impl->Backward(ctx, step.out_grad, step.in, step.out, step.in_req, step.in_grad, step.aux);
    if (profiling_) {
      WaitAll();
      step.timing.backward_seconds += SecondsSince(start);
      ++step.timing.backward_calls;
    }
    if (gradient_ready_) {
      for (int arg : step.grads_final) gradient_ready_(arg);
    }
  }
  if (gradient_ready_) {
    for (int arg : unwritten_grads_) gradient_ready_(arg);
  }
}

void Executor::CopyParamsFrom(const std::map<std::string, NDArray>& arg_params,
                              const std::map<std::string, NDArray>& aux_params, bool allow_extra) {
  for (auto [params, dict, kind] : {std::tuple{&arg_params, &arg_dict_, "argument"},
                                    std::tuple{&aux_params, &aux_dict_, "auxiliary state"}}) {
    for (const auto& [name, array] : *params) {
      auto it = dict->find(name);
      if (it == dict->end()) {
        COHORT_CHECK(allow_extra) << "CopyParamsFrom: '" << name << "' is not an " << kind
                                  << " of the symbol (pass allow_extra to ignore it)";
        continue;
      }
      COHORT_CHECK(it->second.shape() == array.shape())
          << "CopyParamsFrom: " << kind << " '" << name << "' has shape " << it->second.shape()
          << " but the parameter given has shape " << array.shape();
      array.CopyTo(it->second);
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
  auto exec = Bind(symbol_, ctx_, args, grads, grad_reqs_, aux, this);
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
