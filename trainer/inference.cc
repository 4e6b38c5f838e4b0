// Inference: Score and Predict (trainer/inference.h).
#include "trainer/inference.h"

#include <cmath>

namespace cohort {
namespace {

bool SameShapes(const std::vector<DataDesc>& a, const std::vector<DataDesc>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || !(a[i].shape == b[i].shape)) return false;
  }
  return true;
}

}  // namespace

void ReduceMetric(EvalMetric& metric, KVStore& kv) {
  if (kv.num_workers() == 1) return;
  std::vector<double> state = metric.State();
  kv.SumAcrossWorkers(state);
  metric.SetState(state);
}

// Note [Naming a bad label]
// SoftmaxOutput and the metrics refuse a label that is not one of the classes, but they see a
// device's slice of the batch, not where its samples came from. The trainer does: it finds the
// first sample of the batch whose label holds the refused value and adds what its iterator
// calls it ("record 17 of 'train.rec'"), so that a .lst numbered from 1 is found at once.
void RethrowNamingTheSample(const LabelError& e, const std::vector<NDArray>& labels,
                            const std::vector<int64_t>& index, const DataIter& data) {
  const float refused = e.label();
  for (const NDArray& l : labels) {
    if (l.dtype() != DType::kFloat32 || !l.ctx().is_host() || index.empty()) continue;
    const int64_t rows = static_cast<int64_t>(index.size());
    const int64_t per_row = l.size() / rows;
    const float* v = l.data<float>();
    for (int64_t i = 0; i < rows * per_row; ++i) {
      if (v[i] == refused || (std::isnan(v[i]) && std::isnan(refused))) {
        throw LabelError(e.message() + ": " + data.DescribeLabelOf(index[i / per_row]), refused,
                         __FILE__, __LINE__);
      }
    }
  }
  throw e;
}

void NamingSource(const std::string& source, const std::function<void()>& copy) {
  try {
    copy();
  } catch (const ConfigError& e) {
    if (source.empty()) throw;
    throw ConfigError("'" + source + "': " + e.message(), e.file(), e.line());
  }
}

std::vector<std::string> InputNames(const DataIter& data) {
  std::vector<std::string> names;
  for (const auto* descs : {&data.provide_data(), &data.provide_label()}) {
    for (const DataDesc& d : *descs) names.push_back(d.name);
  }
  return names;
}

Inference::Inference(Symbol symbol, std::vector<Context> contexts, std::vector<double> work_load,
                     KVStore& kvstore)
    : symbol_(std::move(symbol)),
      contexts_(std::move(contexts)),
      work_load_(std::move(work_load)),
      kvstore_(kvstore) {}

void Inference::UseTraining(DataParallelExecutorManager* manager, std::vector<DataDesc> bound_data,
                            std::vector<std::string> param_names) {
  training_ = manager;
  bound_data_ = std::move(bound_data);
  param_names_ = std::move(param_names);
  group_.reset();  // groups bound before share no parameters with training
  buckets_.clear();
}

DataParallelExecutorGroup& Inference::GroupFor(const DataIter& data) {
  if (training_ && SameShapes(bound_data_, data.provide_data())) return training_->default_group();
  if (!group_ || group_->batch_size() != data.batch_size()) {
    if (param_names_.empty()) {
      const std::vector<std::string> inputs = InputNames(data);
      for (const std::string& a : symbol_.ListArguments()) {
        if (std::find(inputs.begin(), inputs.end(), a) == inputs.end()) param_names_.push_back(a);
      }
    }
    buckets_.clear();  // they share the group replaced here
    group_ = std::make_unique<DataParallelExecutorGroup>(
        symbol_, contexts_, work_load_, data.provide_data(), data.provide_label(), param_names_,
        false, false, training_ ? &training_->default_group() : nullptr);
    if (!training_) {
      NamingSource(given_source_,
                   [&] { group_->SetParams(given_args_, given_aux_, /*allow_extra=*/true); });
    }
  }
  return *group_;
}

std::vector<EvalMetric::NameValue> Inference::Score(DataIter& data, EvalMetric& metric,
                                                    const std::function<bool()>& should_stop) {
  DataParallelExecutorGroup& group = GroupFor(data);
  data.Reset();
  metric.Reset();
  while (data.Next()) {
    if (should_stop && should_stop()) return {};
    const DataBatch& batch = data.Value();
    try {
      Forward(group, batch).UpdateMetric(metric, batch.label, batch.pad);
    } catch (const LabelError& e) {  // Note [Naming a bad label]
      RethrowNamingTheSample(e, batch.label, batch.index, data);
    }
  }
  ReduceMetric(metric, kvstore_);
  return metric.Get();
}

DataParallelExecutorGroup& Inference::Forward(DataParallelExecutorGroup& group,
                                              const DataBatch& batch) {
  const bool own_shapes =
      batch.bucket_key && !batch.provide_data.empty() && !group.BoundFor(batch.provide_data);
  if (own_shapes && training_) {  // the manager binds its buckets and shares their parameters
    training_->LoadDataBatch(batch);
    training_->Forward(false);
    return training_->current();
  }
  DataParallelExecutorGroup* run = &group;
  if (own_shapes) {
    std::unique_ptr<DataParallelExecutorGroup>& bucket = buckets_[*batch.bucket_key];
    if (!bucket) {
      bucket = std::make_unique<DataParallelExecutorGroup>(
          sym_gen_ ? sym_gen_(*batch.bucket_key) : symbol_, contexts_, work_load_,
          batch.provide_data, batch.provide_label, param_names_, false, false, &group);
    }
    run = bucket.get();
  }
  run->LoadDataBatch(batch);
  run->Forward(false);
  return *run;
}

void Inference::Predict(
    DataIter& data,
    const std::function<void(const NDArray& rows, const DataBatch& batch)>& on_rows) {
  DataParallelExecutorGroup& group = GroupFor(data);
  data.Reset();
  bool any = false;
  std::map<const DataParallelExecutorGroup*, NDArray> outputs;  // one per group (bucket), reused
  while (data.Next()) {
    const DataBatch& batch = data.Value();
    DataParallelExecutorGroup& ran = Forward(group, batch);
    NDArray& out = outputs[&ran];
    if (out.is_none()) {
      out = NDArray::Empty(ran.executor(0).outputs()[0].shape().WithDim0(ran.batch_size()));
    }
    ran.CopyOutput(0, out);
    on_rows(out.Slice(0, ran.batch_size() - batch.pad), batch);
    any = true;
  }
  COHORT_CHECK(any) << "Predict: the data iterator yielded no batch";
}

NDArray Inference::Predict(DataIter& data) {
  std::vector<float> rows;
  Shape row_shape;
  bool first = true;
  Predict(data, [&](const NDArray& batch_rows, const DataBatch&) {
    const Shape shape = batch_rows.shape().WithDim0(1);
    COHORT_CHECK(first || shape == row_shape)
        << "Predict: batches give rows of shapes " << row_shape << " and " << shape
        << " (buckets): take them a batch at a time";
    first = false;
    row_shape = shape;
    const float* p = batch_rows.data<float>();
    rows.insert(rows.end(), p, p + batch_rows.size());
  });
  const int64_t per_row = row_shape.Size();
  return NDArray::FromVector<float>(row_shape.WithDim0(static_cast<int64_t>(rows.size()) / per_row),
                                    rows);
}

void Inference::SetParams(const std::map<std::string, NDArray>& arg_params,
                          const std::map<std::string, NDArray>& aux_params,
                          const std::string& source) {
  NamingSource(source, [&] {
    if (group_) group_->SetParams(arg_params, aux_params, /*allow_extra=*/true);
  });
  if (!training_) {
    given_args_ = arg_params;
    given_aux_ = aux_params;
    given_source_ = source;
  }
}

}  // namespace cohort
