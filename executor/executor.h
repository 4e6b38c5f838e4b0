// Executor: a symbol bound to arrays on one device, run forward and backward (MXNet's Executor).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/thread_arena.h"
#include "symbol/symbol.h"

namespace cohort {

class MemoryPool;
struct GraphPlan;  // executor/graph_plan.h
namespace op {
class GpuResources;
}

// Binds a symbol's arguments, gradients and auxiliary states to arrays and runs the graph.
// Bind plans all intermediate memory once (Note [Static memory plan]); Forward and Backward
// allocate nothing. An executor is used from one thread at a time. On a gpu context the kernels
// run on the executor's stream and Forward/Backward return once they are enqueued (Note [GPU
// streams]); reading an array (CopyTo, ToVector) waits for them.
class Executor {
 public:
  using Monitor = std::function<void(const std::string& name, const NDArray& array)>;

  // The caller's arrays, in ListArguments / ListAuxiliaryStates order. arg_grads[i] may be a
  // none array where grad_reqs[i] is null. Shapes are checked against shape inference; an error
  // names the argument and the shape expected. With shared_exec, memory comes from its pool.
  //
  // group2ctx (Note [Device placement], executor/place_devices.h) places the nodes of each
  // "__ctx_group__" on a context of its own, with copies between contexts: the arrays may then
  // live on any context (a gradient where its argument is), and each variable's nodes read it
  // there. Without it, every array must be in ctx's memory and every node runs on ctx.
  static std::unique_ptr<Executor> Bind(const Symbol& symbol, Context ctx,
                                        const std::vector<NDArray>& args,
                                        const std::vector<NDArray>& arg_grads,
                                        const std::vector<GradReq>& grad_reqs,
                                        const std::vector<NDArray>& aux_states,
                                        const Executor* shared_exec = nullptr,
                                        const std::map<std::string, Context>& group2ctx = {});

  // Allocates every array from the given input shapes (the rest are inferred). Gradients use
  // grad_req for every argument (as MXNet's simple_bind), or grad_reqs[name] where given. With
  // shared_exec, arrays of the same name, shape and dtype are shared with it (parameters across
  // buckets) and so is its memory pool. Dtypes: type_dict's, else "__dtype__" hints, else
  // inferred from those, else float32. With group2ctx, a variable's arrays are allocated on its
  // group's context (else on ctx), as MXNet's simple_bind does.
  static std::unique_ptr<Executor> SimpleBind(const Symbol& symbol, Context ctx,
                                              const std::map<std::string, Shape>& shapes,
                                              GradReq grad_req = GradReq::kWrite,
                                              const std::map<std::string, GradReq>& grad_reqs = {},
                                              const Executor* shared_exec = nullptr,
                                              const std::map<std::string, DType>& type_dict = {},
                                              const std::map<std::string, Context>& group2ctx = {});

  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  void Forward(bool is_train);
  // Copies the named arrays into the matching arguments first.
  void Forward(bool is_train, const std::map<std::string, NDArray>& inputs);
  // head_grads: one per output that is not a loss (loss layers need none).
  void Backward(const std::vector<NDArray>& head_grads = {});

  const std::vector<NDArray>& outputs() const { return outputs_; }
  const std::vector<NDArray>& arg_arrays() const { return args_; }
  const std::vector<NDArray>& grad_arrays() const { return grads_; }
  const std::vector<NDArray>& aux_arrays() const { return aux_; }
  const std::vector<GradReq>& grad_reqs() const { return grad_reqs_; }
  const std::map<std::string, NDArray>& arg_dict() const { return arg_dict_; }
  const std::map<std::string, NDArray>& grad_dict() const { return grad_dict_; }
  const std::map<std::string, NDArray>& aux_dict() const { return aux_dict_; }
  const std::map<std::string, NDArray>& output_dict() const { return output_dict_; }
  const Symbol& symbol() const { return symbol_; }
  // The graph the executor runs: symbol() after the bind's passes (MXNet's get_optimized_symbol).
  const Symbol& optimized_symbol() const { return optimized_symbol_; }
  // The default context (group2ctx places groups elsewhere).
  Context ctx() const { return ctx_; }
  const std::map<std::string, Context>& group2ctx() const { return group2ctx_; }

  // Copies parameters in by name; a name the executor does not have is an error unless
  // allow_extra, and a shape that differs is an error naming both shapes.
  void CopyParamsFrom(const std::map<std::string, NDArray>& arg_params,
                      const std::map<std::string, NDArray>& aux_params, bool allow_extra = false);

  // An executor for new input shapes that shares this one's parameters and memory pool. Arrays
  // that shrink become views; growing one needs allow_up_sizing; an argument not named in
  // new_shapes whose shape would change needs partial_shaping (as MXNet's reshape).
  std::unique_ptr<Executor> Reshape(const std::map<std::string, Shape>& new_shapes,
                                    bool partial_shaping = false,
                                    bool allow_up_sizing = false) const;

  // Note [Gradient ready]: called during Backward, on the thread running it, with the index
  // (ListArguments order) of each argument whose gradient is final: right after the last op that
  // writes it has run, so in roughly reverse layer order. Arguments no op sends a gradient to
  // are reported at the end. Lets reduction start while backward still runs.
  using GradientReady = std::function<void(int arg_index)>;
  void SetGradientReadyCallback(GradientReady callback) { gradient_ready_ = std::move(callback); }

  // Called after each op with "<node>_<output>" and the array (monitor_all: its inputs first,
  // each named where it is made: a variable's name, or "<node>_<output>"), and after each op's
  // backward with its arguments' gradients, "<node>_backward_output<i>" (MXNet's names).
  void SetMonitorCallback(Monitor callback, bool monitor_all = false);

  // Per-op wall time (Note [Op profile]): while profiling is on, each op's time is added to its
  // sums; Profile() lists the ops in forward order with their sums and call counts.
  struct OpTiming {
    std::string name, type;
    double forward_seconds = 0, backward_seconds = 0;
    int64_t forward_calls = 0, backward_calls = 0;
  };
  void SetProfiling(bool on) { profiling_ = on; }
  void ClearProfile();
  std::vector<OpTiming> Profile() const;

  // Ops with their inputs and attributes, then "Total N MB allocated".
  std::string DebugStr() const;
  // Bytes of the intermediate memory this executor planned (its share of the pool).
  size_t planned_bytes() const { return planned_bytes_; }

  // Note [Random streams]: random ops (Dropout) draw from a stream keyed by (seed, forwards
  // since the seed was set, node) at each element's global position: this executor's rows are
  // rows [first_sample, first_sample + batch_rows) of the global batch. Setting the seed before
  // each step makes the masks a function of the step alone, so a resumed run replays them; the
  // same seed on every device and worker, with each one's rows, makes them a function of the
  // global batch alone, so any split over devices and workers draws the same masks.
  void set_random_seed(uint64_t seed, int64_t first_sample = 0, int64_t batch_rows = 0) {
    random_seed_ = seed;
    forward_count_ = 0;
    first_sample_ = first_sample;
    batch_rows_ = batch_rows;
  }

  // Note [Loss scaling]: the factor loss layers multiply their gradients by in the next
  // Backward (a power of two; 1 unless the trainer scales the loss).
  void set_loss_scale(float scale) { loss_scale_ = scale; }

  // Waits until every kernel enqueued on a GPU executor's streams has run (no-op on the CPU).
  void WaitAll() const;

  // Threads for this executor's CPU kernels (default: all cores).
  void set_arena(ThreadArena* arena) { arena_ = arena; }

 private:
  struct Step;
  Executor() = default;
  // Binding's phases, in the order Build runs them.
  void Build(const Executor* shared_exec);
  void AttachGpu(const GraphPlan& g, const Executor* shared_exec);
  void AllocateEntries(const GraphPlan& g, const Executor* shared_exec, std::vector<NDArray>* data,
                       std::vector<NDArray>* grad);
  void MakeSteps(const GraphPlan& g, const std::vector<NDArray>& data,
                 const std::vector<NDArray>& grad);
  void SetGradReqs(const GraphPlan& g, const std::vector<NDArray>& grad);
  void FindFinalGradients(const GraphPlan& g);
  void BindOutputs(const GraphPlan& g, const std::vector<NDArray>& data,
                   const std::vector<NDArray>& grad);
  void MonitorBackward(Step& step);

  Symbol symbol_, optimized_symbol_;
  Context ctx_;
  std::map<std::string, Context> group2ctx_;
  std::vector<NDArray> args_, grads_, aux_, outputs_;
  std::vector<GradReq> grad_reqs_;
  std::map<std::string, NDArray> arg_dict_, grad_dict_, aux_dict_, output_dict_;
  std::vector<std::unique_ptr<Step>> steps_;    // op nodes in topological order
  std::vector<std::pair<int, NDArray>> heads_;  // (output index, its gradient buffer) to fill
  std::vector<NDArray> zero_grads_;             // gradient buffers nobody writes: zeros
  std::map<Context, std::shared_ptr<MemoryPool>> pools_;  // per context the plan uses
  // Per GPU the steps run on: stream and handles, shared on Reshape and with buckets.
  std::map<int, std::shared_ptr<op::GpuResources>> gpus_;
  size_t planned_bytes_ = 0;
  Monitor monitor_;
  bool monitor_all_ = false;
  GradientReady gradient_ready_;
  std::vector<int> unwritten_grads_;  // arguments with a gradient that no op writes
  ThreadArena* arena_ = nullptr;
  uint64_t random_seed_ = 0, forward_count_ = 0;
  float loss_scale_ = 1;
  bool ran_forward_ = false;  // Backward needs a Forward's outputs
  int64_t first_sample_ = 0, batch_rows_ = 0;
  bool needs_backward_ = false;
  bool profiling_ = false;
};

}  // namespace cohort
