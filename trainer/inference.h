// Inference: scoring and prediction over a data set, on the training manager's executors when
// the shapes match, else on groups of their own that share its parameters (MXNet's
// Module.score / predict).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "executor_manager/executor_group.h"
#include "kvstore/kvstore.h"

namespace cohort {

class Inference {
 public:
  Inference(Symbol symbol, std::vector<Context> contexts, std::vector<double> work_load,
            KVStore& kvstore);

  // The trainer's manager, bound for `bound_data` with these parameters: inference at its
  // shapes runs on it, and other groups share its parameters. Set once training is bound.
  void UseTraining(DataParallelExecutorManager* manager, std::vector<DataDesc> bound_data,
                   std::vector<std::string> param_names);
  // The symbol for a bucket key (see Trainer::SetSymGen).
  void SetSymGen(DataParallelExecutorManager::SymGen sym_gen) { sym_gen_ = std::move(sym_gen); }

  // The metric over the data set, summed across workers. With should_stop, asked before every
  // batch (every worker alike), a true answer ends it early with no result.
  std::vector<EvalMetric::NameValue> Score(DataIter& data, EvalMetric& metric,
                                           const std::function<bool()>& should_stop = nullptr);
  // Output 0 of each batch's valid samples, in order, with the batch they came from (its
  // labels and sample indices; views valid until the next call).
  void Predict(DataIter& data,
               const std::function<void(const NDArray& rows, const DataBatch& batch)>& on_rows);
  // Every batch's rows together (one row shape).
  NDArray Predict(DataIter& data);

  // Copies the parameters into the groups inference owns; without training they are kept for
  // groups bound later. `source` is named when a shape differs from the network's.
  void SetParams(const std::map<std::string, NDArray>& arg_params,
                 const std::map<std::string, NDArray>& aux_params, const std::string& source);

 private:
  DataParallelExecutorGroup& GroupFor(const DataIter& data);
  // Runs one batch forward on `group`, or on its bucket's group (the manager's when training,
  // else one of buckets_); returns the group that ran it.
  DataParallelExecutorGroup& Forward(DataParallelExecutorGroup& group, const DataBatch& batch);

  Symbol symbol_;
  std::vector<Context> contexts_;
  std::vector<double> work_load_;
  KVStore& kvstore_;
  DataParallelExecutorManager::SymGen sym_gen_;
  DataParallelExecutorManager* training_ = nullptr;
  std::vector<DataDesc> bound_data_;  // the training group's data shapes
  std::vector<std::string> param_names_;
  std::unique_ptr<DataParallelExecutorGroup> group_;  // at shapes other than training's
  // Without training: the buckets' groups, sharing group_'s parameters.
  std::map<int64_t, std::unique_ptr<DataParallelExecutorGroup>> buckets_;
  // Parameters given before any group exists (prediction only), applied when one is bound.
  std::map<std::string, NDArray> given_args_, given_aux_;
  std::string given_source_;
};

// Sums a metric's state over the workers, so that Get() covers all of them.
void ReduceMetric(EvalMetric& metric, KVStore& kv);

// Note [Naming a bad label]: rethrows e with the sample's name, found among `labels` (rows
// numbered by `index` in `data`).
[[noreturn]] void RethrowNamingTheSample(const LabelError& e, const std::vector<NDArray>& labels,
                                         const std::vector<int64_t>& index, const DataIter& data);

// Runs `copy`, which copies parameters into executors; a shape that differs from the network's
// (parameters of another network) is said naming `source`, the file they came from.
void NamingSource(const std::string& source, const std::function<void()>& copy);

// The names of the data's inputs: its data, then its labels.
std::vector<std::string> InputNames(const DataIter& data);

}  // namespace cohort
