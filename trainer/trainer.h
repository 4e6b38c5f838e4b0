// Trainer: the fit loop (MXNet's Module.fit) over a DataParallelExecutorManager and a KVStore:
// parameter initialisation, optimizer, epochs, validation, speedometer, checkpoints; Score and
// Predict go to Inference (trainer/inference.h), resume planning is trainer/resume.h.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "executor_manager/executor_group.h"
#include "kvstore/gradient_bucketer.h"
#include "kvstore/kvstore.h"
#include "optimizer/initializer.h"
#include "optimizer/optimizer.h"
#include "trainer/checkpoint.h"
#include "trainer/fit_config.h"
#include "trainer/inference.h"
#include "trainer/loss_scaler.h"

namespace cohort {

// Where the training steps of Fit spent their time: wall seconds per phase summed over `steps`,
// and, with FitConfig::profile, device 0's per-op times (Note [Op profile]). Forward and
// backward run on all devices at once, so their phase times are those of the slowest device.
struct StepProfile {
  int64_t steps = 0;
  double data = 0;  // next batch from the iterator, copied to the devices
  double forward = 0, backward = 0;
  double update = 0;  // kvstore push/pull and optimizer
  double metric = 0;
  std::vector<Executor::OpTiming> ops;
};

// One training step's wall seconds per phase (data: loading this batch and fetching the next).
struct StepTimes {
  double data = 0, forward = 0, backward = 0, update = 0, metric = 0;
};

struct EpochResult {
  int epoch = 0;
  std::vector<EvalMetric::NameValue> train, val;
  double samples_per_sec = 0;
  // With FitConfig::count_tokens: the tokens trained on over every worker, and their rate.
  int64_t tokens = 0;
  double tokens_per_sec = 0;
  double lr = 0;  // the learning rate of the epoch's last update (the schedule's at its count)
  // Note [Loss scaling], when on: the scale at the epoch's end, and the steps of the epoch
  // skipped because their scaled gradient overflowed.
  double loss_scale = 0;
  int64_t overflow_skips = 0;
  double seconds = 0;
};

// What a front end (Python's Module.fit) adds to Fit.
struct FitHooks {
  // After each step and its checkpoints: the epoch and the step's index in it (MXNet's nbatch).
  std::function<void(int epoch, int64_t nbatch)> on_batch_end;
  // The metrics training and validation update (null: made from FitConfig::metrics), so that
  // a callback reads (and may reset) the one the steps update.
  std::shared_ptr<EvalMetric> train_metric, val_metric;
};

class Trainer {
 public:
  // The kvstore is shared with the caller (it may be an MPI one); null means a "local" one.
  Trainer(Symbol symbol, std::vector<Context> contexts, std::vector<double> work_load = {},
          std::shared_ptr<KVStore> kvstore = nullptr);

  // Trains; on_epoch (rank 0 and others alike) sees each epoch's result. Metrics are summed
  // across workers before they are reported.
  std::vector<EpochResult> Fit(DataIter& train, DataIter* val, const FitConfig& config,
                               const std::function<void(const EpochResult&)>& on_epoch = nullptr,
                               const FitHooks& hooks = {});
  // Trains on a manager bound elsewhere (Module's) for data_shapes, whose parameters
  // (param_names, in its order) are all trained; before Fit, instead of Fit's own binding.
  void Adopt(std::shared_ptr<DataParallelExecutorManager> manager,
             const std::vector<DataDesc>& data_shapes, const std::vector<std::string>& param_names);
  // Metric over a data set with the current parameters (padding left out).
  std::vector<EvalMetric::NameValue> Score(DataIter& data, EvalMetric& metric);
  // Output 0 for every sample of the data set (padding left out), rows in order; every batch's
  // rows must have one shape (use the form below for bucketed data).
  NDArray Predict(DataIter& data);
  // The same a batch at a time: `on_rows` gets output 0 of each batch's valid samples, in order,
  // with the batch (its labels and sample indices; views valid until the next call). Batches of a
  // bucket of their own shapes run the symbol bound at them (SetSymGen's, or the trainer's),
  // sharing the parameters.
  void Predict(DataIter& data,
               const std::function<void(const NDArray& rows, const DataBatch& batch)>& on_rows);

  // Current parameters (device 0; auxiliary states averaged over the devices of every worker:
  // under MPI every worker must call it).
  void GetParams(std::map<std::string, NDArray>* arg_params,
                 std::map<std::string, NDArray>* aux_params) const;
  // Names the network lacks are ignored (a file may hold more than a network for prediction
  // needs, as with MXNet's set_params(allow_extra=True)); the caller checks what is missing.
  // `source` (the file they came from) is named when a shape differs from the network's.
  void SetParams(const std::map<std::string, NDArray>& arg_params,
                 const std::map<std::string, NDArray>& aux_params, const std::string& source = "");

  const StepProfile& profile() const { return profile_; }
  // The signal Fit stopped for (Note [Stop on a signal]), or 0 when it ran to its last epoch.
  int stopped_by_signal() const { return stopped_by_signal_; }
  // Whether Fit got past its setup (binding, parameters, resume, agreement) to its first step.
  bool training_started() const { return training_started_; }
  // Steps whose update was skipped for a non-finite gradient (OnNonFinite::kSkipStep).
  int64_t skipped_steps() const { return skipped_steps_; }
  // Note [Loss scaling]: the scaler of the last Fit (its scale, its overflow skips).
  const LossScaler& loss_scaler() const { return loss_scaler_; }
  KVStore& kvstore() { return *kvstore_; }
  // The optimizer Fit updates with (the kvstore's, or device 0's), or null before Fit.
  const Optimizer* optimizer() const;
  DataParallelExecutorManager* manager() { return manager_.get(); }
  // The symbol for a bucket key (MXNet's sym_gen). Without one, batches that carry a bucket key
  // run the trainer's symbol bound at their own shapes, sharing the default bucket's parameters
  // and memory. Set before Fit.
  void SetSymGen(DataParallelExecutorManager::SymGen sym_gen) {
    sym_gen_ = sym_gen;
    inference_.SetSymGen(std::move(sym_gen));
  }

 private:
  void Bind(const DataIter& data, const std::vector<std::string>& fixed_params);
  void AttachManager(const std::vector<DataDesc>& data_shapes);
  void InitParams(const FitConfig& config);
  std::vector<std::pair<std::string, std::string>> AgreementItems(const DataIter& train,
                                                                  const FitConfig& config) const;
  void TakeGivenParams(const FitConfig& config, std::map<std::string, NDArray>* args,
                       std::map<std::string, NDArray>* aux) const;
  void InitOptimizer(const FitConfig& config, int64_t global_batch);
  bool ReducesGradients() const;  // several devices or workers (Note [One device updates itself])
  bool UpdatesOnKVStore(const FitConfig& config) const;
  // Backward, and with `reduce` start reducing the gradients (Note [Overlapped push]).
  void Backward(bool reduce);
  // With after_backward every gradient is final already (an epoch's last, short window).
  void StartReducing(bool after_backward);
  // Finish reducing, check the sums, then update with the sums of `batches` batches' gradients
  // (Note [Gradient accumulation]).
  void Update(CheckpointPosition step, int64_t batches);
  void ZeroGradients();
  // Widens parameter p's half-precision gradients into its float32 ones (Note [Multi-precision
  // weights]); nothing for a float32 weight.
  void WidenGradients(int p);
  bool HasHalfWeights() const;
  std::vector<int> NonFiniteParams();    // of this step's summed gradients, by index
  void StopOrSkipNonFinite(CheckpointPosition step, const std::vector<int>& bad);
  // This step's factor on rescale_grad for optimizer.clip_global_norm (1: no clipping).
  double GlobalNormFactor(double rescale);
  int AgreeOnStop() const;  // the signal any worker got, 0 for none (Note [Stop on a signal])
  void SaveAt(const FitConfig& config, CheckpointPosition at, int64_t global_batch);
  // Note [Labels checked up front]
  void CheckMetricsAndLabels(DataIter& train, DataIter* val, const FitConfig& config);
  // Fit's phases, over one Run's state: setup, an epoch's steps, one step, what follows a
  // step (true: the workers agreed to stop on a signal), and the epoch's end.
  struct Run;
  void Prepare(DataIter& train, DataIter* val, Run& run);
  void TrainEpoch(DataIter& train, Run& run);
  StepTimes Step(DataIter& train, Run& run);
  bool AfterStep(Run& run);
  EpochResult EndEpoch(DataIter* val, Run& run, int* stop);
  void SaveBest(const FitConfig& config);

  Symbol symbol_;
  std::vector<Context> contexts_;
  std::vector<double> work_load_;
  std::shared_ptr<KVStore> kvstore_;
  std::vector<std::string> param_names_;
  std::vector<bool> frozen_;  // per parameter
  std::shared_ptr<DataParallelExecutorManager> manager_;  // the training engine
  DataParallelExecutorManager::SymGen sym_gen_;
  Inference inference_;                               // Score and Predict
  std::vector<std::unique_ptr<Optimizer>> updaters_;  // one per device without update_on_kvstore
  bool update_on_kvstore_ = true;
  OnNonFinite on_nonfinite_ = OnNonFinite::kStop;
  int stopped_by_signal_ = 0;
  bool training_started_ = false;
  int64_t skipped_steps_ = 0;
  LossScaler loss_scaler_;  // Note [Loss scaling]
  StepProfile profile_;
  // Arguments of every step's PushPull, built once: the key of parameter i is i, and so is its
  // priority (the keys are passed as the priorities), so the later layers, whose gradients
  // backward makes first, are reduced first (frozen parameters have no key).
  std::vector<int> keys_;
  std::vector<std::vector<NDArray>> grads_by_key_, params_by_key_;
  std::vector<NDArray> device0_grads_;  // by key: where the sums are checked for NaN
  // Note [Multi-precision weights]: by parameter, the executors' gradients of a float16 or
  // bfloat16 weight (`half`, one a device), widened before they are summed into float32 arrays
  // (`wide`, which grads_by_key_ holds); both empty for a float32 weight.
  struct HalfGradients {
    std::vector<NDArray> half, wide;
  };
  std::vector<HalfGradients> half_grads_;
  double clip_global_norm_ = 0;         // Note [Global norm clipping]; 0: off
  std::vector<NDArray> norm_staging_;   // host copies of GPU gradients for the norm
  std::unique_ptr<GradientBucketer> bucketer_;  // Note [Overlapped push]; none for one device
  bool reducing_ = false;   // the bucketer takes this backward's gradients as they are ready
  int64_t accumulate_ = 1;  // Note [Gradient accumulation]
  // NonFiniteParams' buffers, kept from step to step.
  std::vector<int> finite_check_bad_;  // positions in keys_
  NonFiniteScratch finite_check_scratch_;
};

}  // namespace cohort
