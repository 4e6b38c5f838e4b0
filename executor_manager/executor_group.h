// DataParallelExecutorGroup and DataParallelExecutorManager: one executor per device, each
// running its slice of every batch (MXNet's executor_manager and DataParallelExecutorGroup).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "executor/executor.h"
#include "executor_manager/device_workers.h"
#include "executor_manager/input_staging.h"
#include "io/data_iter.h"
#include "metric/eval_metric.h"

namespace cohort {

// Note [Data parallelism]
// Device d binds its own executor for rows [begin_d, end_d) of every batch; the slice sizes are
// proportional to the work load list, rounded, what rounding leaves to the last device (as MXNet's
// _split_input_slice: 7 rows over three devices are 2, 2 and 3).
// Each device has its own parameter and gradient arrays: after Backward the kvstore sums the
// gradients across devices (and workers) and the updated weights are copied back to every
// device, so all devices hold identical parameters at every step. Devices run Forward and
// Backward at once, each on its own thread (DeviceWorkers), sharing the cores between them.
class DataParallelExecutorGroup {
 public:
  // data/label descriptors give the global batch shapes (batch axis first). param_names are the
  // arguments that are learned (the rest are inputs); inputs get no gradient unless
  // inputs_need_grad. With shared_group (bucketing), parameters and memory are shared with it.
  // Parameters in fixed_param_names are frozen: no gradient (grad_arrays() has no array for them).
  // grad_req is how backward writes the gradients it computes: kWrite, or kAdd to accumulate
  // them over backward calls until the caller zeroes them (MXNet's grad_req='add').
  // group2ctxs: per device, where its executor places each ctx_group (Note [Device placement];
  // empty: everything on the device). Placed groups load inputs with plain copies, not staged.
  using Group2Ctxs = std::vector<std::map<std::string, Context>>;
  DataParallelExecutorGroup(const Symbol& symbol, const std::vector<Context>& contexts,
                            const std::vector<double>& work_load,
                            const std::vector<DataDesc>& data_shapes,
                            const std::vector<DataDesc>& label_shapes,
                            const std::vector<std::string>& param_names, bool for_training,
                            bool inputs_need_grad = false,
                            const DataParallelExecutorGroup* shared_group = nullptr,
                            const std::vector<std::string>& fixed_param_names = {},
                            GradReq grad_req = GradReq::kWrite, const Group2Ctxs& group2ctxs = {});

  // Copies each device's rows of the batch into its executor's inputs. On GPUs the copy is
  // enqueued (Note [Input staging]); a batch staged before is loaded from its staging slot.
  void LoadDataBatch(const DataBatch& batch);
  // On GPUs, starts copying the batch the next LoadDataBatch will be given, while the work
  // enqueued so far still runs; the batch's arrays may change once it returns. Elsewhere it does
  // nothing and LoadDataBatch copies.
  void StageDataBatch(const DataBatch& batch);
  // Forgets a staged batch that will not be loaded.
  void DiscardStagedBatch();
  void Forward(bool is_train);
  void Backward();
  // With head gradients of the whole batch (one per output), each device taking its rows.
  void Backward(const std::vector<NDArray>& out_grads);
  // Feeds each device's outputs and its rows of `labels` to the metric, leaving out the last
  // `pad` rows of the batch (padding added by the iterator).
  void UpdateMetric(EvalMetric& metric, const std::vector<NDArray>& labels, int64_t pad = 0);

  // Whether `data` (names and whole-batch shapes) is what its data inputs were bound for.
  bool BoundFor(const std::vector<DataDesc>& data) const;
  // [parameter][device], in param_names order.
  const std::vector<std::vector<NDArray>>& param_arrays() const { return param_arrays_; }
  const std::vector<std::vector<NDArray>>& grad_arrays() const { return grad_arrays_; }
  const std::vector<std::vector<NDArray>>& aux_arrays() const { return aux_arrays_; }
  const std::vector<std::string>& param_names() const { return param_names_; }
  const std::vector<std::string>& aux_names() const { return aux_names_; }

  // Copies the given values to every device (names missing from the maps are left as they are).
  // A name the network lacks is an error unless allow_extra, as in MXNet's Module.set_params.
  void SetParams(const std::map<std::string, NDArray>& arg_params,
                 const std::map<std::string, NDArray>& aux_params, bool allow_extra = false);
  // Each parameter's and auxiliary state's mean over the devices, into host arrays (Note
  // [Parameters over devices]: equal on every device, copied as they are).
  void GetParams(std::map<std::string, NDArray>* arg_params,
                 std::map<std::string, NDArray>* aux_params) const;
  // Output `index` of the whole batch, gathered from the devices into `out` (batch rows).
  void CopyOutput(int index, const NDArray& out) const;

  // Calls ready(p) once per Backward for each parameter p (param_names order) when its gradient
  // is final on every device, from the device thread that finished it last (Note [Gradient
  // ready]). An empty function switches it off.
  void SetGradientReadyCallback(std::function<void(int param)> ready);
  // Seeds the random ops of the next Forward on every device: one stream, each device drawing
  // at its rows' global positions, this group's batch being rows [first_sample, first_sample +
  // batch_size) of the global batch (Note [Random streams]).
  void SetRandomSeed(uint64_t seed, int64_t first_sample = 0);
  // Note [Loss scaling]: the loss layers' gradient factor of the next Backward on every device.
  void SetLossScale(float scale) {
    for (auto& exec : executors_) exec->set_loss_scale(scale);
  }
  void InstallMonitor(Executor::Monitor monitor, bool monitor_all = false);
  int num_devices() const { return static_cast<int>(executors_.size()); }
  Executor& executor(int device) { return *executors_[device]; }
  int64_t batch_size() const { return batch_size_; }
  // Throws naming the input when `batch` does not have the arrays and shapes bound (a larger
  // batch was cut silently; another bucket's batch failed inside a copy).
  void CheckBatch(const DataBatch& batch, const char* caller) const;
  // Samples [begin, end) of the batch on each device (along each array's batch axis).
  const std::vector<std::pair<int64_t, int64_t>>& slices() const { return slices_; }
  // The axis output `index` is split along: its node's "__layout__" 'N' (0 without one).
  int output_axis(int index) const { return output_axes_[index]; }

 private:
  std::vector<Context> contexts_;
  std::vector<std::pair<int64_t, int64_t>> slices_;
  int64_t batch_size_ = 0;
  std::vector<std::string> data_names_, label_names_, param_names_, aux_names_;
  std::vector<size_t> label_slots_;  // batch.label index of each label_names_ entry
  std::vector<Shape> data_bound_, label_bound_;  // the whole batch's shapes each is bound for
  // The axis each input and output is split along (its layout's 'N'; Note [Batch axes]).
  std::vector<int> data_axes_, label_axes_, output_axes_;
  std::vector<std::unique_ptr<Executor>> executors_;
  std::vector<std::vector<NDArray>> param_arrays_, grad_arrays_, aux_arrays_;
  std::unique_ptr<DeviceWorkers> workers_;
  std::vector<std::unique_ptr<ThreadArena>> arenas_;
  bool is_train_ = false;
  std::function<void(int)> gradient_ready_;
  std::vector<int> param_of_arg_;                        // -1 for inputs
  std::unique_ptr<std::atomic<int>[]> devices_pending_;  // per parameter, during Backward
  // On GPUs only: the staged copies of the next batch (Note [Input staging]).
  std::unique_ptr<StreamOps> streams_;
  std::unique_ptr<InputStaging> staging_;
  const void* staged_batch_ = nullptr;  // the staged batch's first array
  std::vector<NDArray> stage_arrays_;   // its inputs in binding order
};

// Rows of a batch for each device, proportional to work_load (MXNet's _split_input_slice).
std::vector<std::pair<int64_t, int64_t>> SplitBatch(int64_t batch_size,
                                                    const std::vector<double>& work_load);

// The group for the default bucket, plus one group per other bucket key made by sym_gen and
// sharing the default group's parameters and memory (MXNet's DataParallelExecutorManager).
class DataParallelExecutorManager {
 public:
  using SymGen = std::function<Symbol(int64_t bucket_key)>;

  // Binds the default bucket for train_data's shapes (sym_gen(default_bucket_key)'s symbol when
  // both are given). Parameters in fixed_param_names are frozen in every bucket; with
  // inputs_need_grad the data inputs get gradients (Module's get_input_grads).
  DataParallelExecutorManager(const Symbol& symbol, const std::vector<Context>& contexts,
                              const DataIter& train_data,
                              const std::vector<std::string>& param_names,
                              const std::vector<double>& work_load = {}, SymGen sym_gen = nullptr,
                              std::optional<int64_t> default_bucket_key = std::nullopt,
                              const std::vector<std::string>& fixed_param_names = {},
                              bool inputs_need_grad = false, GradReq grad_req = GradReq::kWrite);
  // The same from the shapes an iterator provides (a Python DataIter has no C++ iterator), with
  // the groups' placement per device (Module's group2ctxs).
  DataParallelExecutorManager(const Symbol& symbol, const std::vector<Context>& contexts,
                              const std::vector<DataDesc>& data_shapes,
                              const std::vector<DataDesc>& label_shapes,
                              const std::vector<std::string>& param_names,
                              const std::vector<double>& work_load = {}, SymGen sym_gen = nullptr,
                              std::optional<int64_t> default_bucket_key = std::nullopt,
                              const std::vector<std::string>& fixed_param_names = {},
                              bool inputs_need_grad = false, GradReq grad_req = GradReq::kWrite,
                              const DataParallelExecutorGroup::Group2Ctxs& group2ctxs = {});

  // Switches to the batch's bucket (binding it on first use) and loads the batch.
  void LoadDataBatch(const DataBatch& batch);
  // Stages the batch the next LoadDataBatch will be given in its bucket's group (Note [Input
  // staging]): call it once the current step's work is enqueued.
  void StageDataBatch(const DataBatch& batch);
  // Forgets staged batches that will not be loaded (a loop that stops early).
  void DiscardStagedBatches();
  void Forward(bool is_train);
  void Backward();
  // With head gradients of the whole batch (one per output), each device taking its rows.
  void Backward(const std::vector<NDArray>& out_grads);
  void UpdateMetric(EvalMetric& metric, const std::vector<NDArray>& labels, int64_t pad = 0);
  const std::vector<std::vector<NDArray>>& param_arrays() const;
  const std::vector<std::vector<NDArray>>& grad_arrays() const;
  const std::vector<std::vector<NDArray>>& aux_arrays() const;
  void SetParams(const std::map<std::string, NDArray>& arg_params,
                 const std::map<std::string, NDArray>& aux_params, bool allow_extra = false);
  void CopyTo(std::map<std::string, NDArray>* arg_params,
              std::map<std::string, NDArray>* aux_params) const;
  void InstallMonitor(Executor::Monitor monitor, bool monitor_all = false);
  // As the group's, for every bucket's group (those bound later too).
  void SetGradientReadyCallback(std::function<void(int param)> ready);
  // Seeds the random ops of the next Forward (the current bucket's group).
  void SetRandomSeed(uint64_t seed, int64_t first_sample = 0) {
    current_->SetRandomSeed(seed, first_sample);
  }
  // The loss layers' gradient factor of the next Backward (the current bucket's group).
  void SetLossScale(float scale) { current_->SetLossScale(scale); }
  int num_devices() const { return default_->num_devices(); }
  const std::vector<std::string>& aux_names() const { return default_->aux_names(); }
  // The group of the last batch loaded (the default bucket's before any).
  DataParallelExecutorGroup& current() { return *current_; }
  DataParallelExecutorGroup& default_group() { return *default_; }
  const DataParallelExecutorGroup& default_group() const { return *default_; }

 private:
  // The group for the batch's bucket, bound on first use.
  DataParallelExecutorGroup* GroupFor(const DataBatch& batch);

  std::vector<Context> contexts_;
  std::vector<double> work_load_;
  std::vector<std::string> param_names_, fixed_param_names_;
  bool inputs_need_grad_ = false;
  std::optional<int64_t> default_bucket_key_;
  GradReq grad_req_ = GradReq::kWrite;
  DataParallelExecutorGroup::Group2Ctxs group2ctxs_;
  std::vector<DataDesc> data_shapes_, label_shapes_;
  SymGen sym_gen_;
  std::function<void(int)> gradient_ready_;
  std::unique_ptr<DataParallelExecutorGroup> default_;
  std::map<int64_t, std::unique_ptr<DataParallelExecutorGroup>> buckets_;
  DataParallelExecutorGroup* current_ = nullptr;
};

}  // namespace cohort
