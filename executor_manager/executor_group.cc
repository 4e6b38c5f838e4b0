// DataParallelExecutorGroup and DataParallelExecutorManager (Note [Data parallelism]).
#include "executor_manager/executor_group.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "base/env.h"
#include "base/seed.h"
#include "base/timeline.h"

namespace cohort {

std::vector<std::pair<int64_t, int64_t>> SplitBatch(int64_t batch_size,
                                                    const std::vector<double>& work_load) {
  COHORT_CHECK(!work_load.empty()) << "work load list is empty";
  const double total = std::accumulate(work_load.begin(), work_load.end(), 0.0);
  COHORT_CHECK_GT(total, 0.0) << "work load list must have a positive sum";
  std::vector<int64_t> sizes;
  for (double w : work_load) {
    COHORT_CHECK_GE(w, 0.0) << "work load entries must not be negative";
    // Halves to even, as Python 3's round in MXNet's _split_input_slice (std::llround would
    // round them up): 5 samples over loads [1, 1] are 2 + 3.
    sizes.push_back(
        static_cast<int64_t>(std::nearbyint(w * static_cast<double>(batch_size) / total)));
  }
  const int64_t sum = std::accumulate(sizes.begin(), sizes.end(), int64_t{0});
  if (sum < batch_size) sizes.back() += batch_size - sum;
  std::vector<std::pair<int64_t, int64_t>> slices;
  int64_t end = 0;
  for (int64_t n : sizes) {
    const int64_t begin = std::min(end, batch_size);
    end = std::min(begin + n, batch_size);
    COHORT_CHECK_LT(begin, end) << "batch of " << batch_size << " split over " << work_load.size()
                                << " devices leaves a device without samples";
    slices.push_back({begin, end});
  }
  return slices;
}

// Note [Batch axes]: as MXNet's executor group, each input is split over the devices along
// its layout's 'N' (DataDesc::BatchAxis: 1 for "TNC") and each output along the 'N' of its
// node's "__layout__" attribute; without an 'N', axis 0. Batches of the usual layouts are
// rows, sliced as views; another axis is copied as `outer` runs of contiguous samples.
namespace {

// Samples [begin, begin + part's count) along `axis` of `whole`, copied into `part`
// (to_part), or from it into `whole`. Any devices: every run is a view copied by CopyTo.
void CopyAlongAxis(const NDArray& whole, const NDArray& part, int axis, int64_t begin,
                   bool to_part) {
  const int64_t count = part.shape()[axis];
  if (axis == 0) {
    const NDArray rows = whole.Slice(begin, begin + count);
    to_part ? rows.CopyTo(part) : part.CopyTo(rows);
    return;
  }
  const Shape& s = whole.shape();
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= s[i];
  for (int i = axis + 1; i < s.ndim(); ++i) inner *= s[i];
  const int64_t n = s[axis];
  const NDArray w = whole.Reshape(Shape{outer * n, inner});
  const NDArray p = part.Reshape(Shape{outer * count, inner});
  for (int64_t o = 0; o < outer; ++o) {
    const NDArray wv = w.Slice(o * n + begin, o * n + begin + count);
    const NDArray pv = p.Slice(o * count, (o + 1) * count);
    to_part ? wv.CopyTo(pv) : pv.CopyTo(wv);
  }
}

std::string AlongAxis(int axis) {
  return axis == 0 ? " rows" : " along axis " + std::to_string(axis);
}

Shape WithDim(Shape shape, int axis, int64_t n) {
  shape[axis] = n;
  return shape;
}

// Samples [begin, begin + count) along `axis`: a view for axis 0, else a copy.
NDArray SamplesOf(const NDArray& whole, int axis, int64_t begin, int64_t count) {
  if (axis == 0) return whole.Slice(begin, begin + count);
  NDArray part = NDArray::Empty(WithDim(whole.shape(), axis, count), whole.dtype(), whole.ctx());
  CopyAlongAxis(whole, part, axis, begin, true);
  return part;
}

}  // namespace

DataParallelExecutorGroup::DataParallelExecutorGroup(
    const Symbol& symbol, const std::vector<Context>& contexts,
    const std::vector<double>& work_load, const std::vector<DataDesc>& data_shapes,
    const std::vector<DataDesc>& label_shapes, const std::vector<std::string>& param_names,
    bool for_training, bool inputs_need_grad, const DataParallelExecutorGroup* shared_group,
    const std::vector<std::string>& fixed_param_names, GradReq grad_req,
    const Group2Ctxs& group2ctxs)
    : contexts_(contexts), param_names_(param_names) {
  COHORT_CHECK(grad_req != GradReq::kNull) << "grad_req null: bind with for_training false";
  COHORT_CHECK(!contexts.empty()) << "no devices";
  COHORT_CHECK(group2ctxs.empty() || group2ctxs.size() == contexts.size())
      << "group2ctxs: " << group2ctxs.size() << " entries for " << contexts.size() << " devices";
  COHORT_CHECK(!data_shapes.empty()) << "no data descriptors";
  // Note [Batch axes].
  for (const DataDesc& d : data_shapes) data_axes_.push_back(d.BatchAxis());
  for (const NodeEntry& e : symbol.outputs()) {
    auto layout = e.node->attrs.find("__layout__");
    output_axes_.push_back(layout == e.node->attrs.end() ? 0 : BatchAxisOf(layout->second));
  }
  batch_size_ = data_shapes[0].shape[data_axes_[0]];
  slices_ = SplitBatch(batch_size_,
                       work_load.empty() ? std::vector<double>(contexts.size(), 1.0) : work_load);
  COHORT_CHECK_EQ(slices_.size(), contexts.size()) << "work load list entries for the devices";
  const std::vector<std::string> args = symbol.ListArguments();
  auto takes = [&](const std::string& name) {
    return std::find(args.begin(), args.end(), name) != args.end();
  };
  // Inputs are bound by name. For inference a label the network does not take is left out (a
  // network without a loss layer predicts from any iterator, as MXNet's Module.predict does).
  std::vector<DataDesc> inputs = data_shapes;
  for (const DataDesc& d : data_shapes) {
    data_names_.push_back(d.name);
    data_bound_.push_back(d.shape);
  }
  for (size_t i = 0; i < label_shapes.size(); ++i) {
    const DataDesc& d = label_shapes[i];
    if (!for_training && !takes(d.name)) continue;
    label_names_.push_back(d.name);
    label_bound_.push_back(d.shape);
    label_axes_.push_back(d.BatchAxis());
    label_slots_.push_back(i);
    inputs.push_back(d);
  }
  for (const std::string& p : param_names_) {
    COHORT_CHECK(std::find(args.begin(), args.end(), p) != args.end())
        << "parameter '" << p << "' is not an argument of the symbol";
  }
  aux_names_ = symbol.ListAuxiliaryStates();
  // A data input of a floating dtype binds in it (MXNet's type_dict: float16 data runs the
  // network in float16); integer inputs and labels bind as the network infers them, their
  // values converted as they are loaded (token ids into Embedding, class indices).
  std::map<std::string, DType> types;
  for (const DataDesc& d : data_shapes) {
    if (IsFloatingPoint(d.dtype)) types[d.name] = d.dtype;
  }
  // Each device gets its share of the cores (Note [Kernel threads]).
  const std::vector<int> threads =
      SplitThreads(Env().num_threads, static_cast<int>(contexts.size()));
  for (size_t d = 0; d < contexts.size(); ++d) {
    const int64_t rows = slices_[d].second - slices_[d].first;
    std::map<std::string, Shape> shapes;
    for (const DataDesc& desc : inputs) {
      COHORT_CHECK(takes(desc.name)) << "input '" << desc.name << "' is not an argument of the symbol";
      shapes[desc.name] = WithDim(desc.shape, desc.BatchAxis(), rows);
    }
    std::map<std::string, GradReq> reqs;
    auto listed = [&](const std::vector<std::string>& names, const std::string& a) {
      return std::find(names.begin(), names.end(), a) != names.end();
    };
    for (const std::string& a : args) {
      // Parameters, and with inputs_need_grad the data inputs (not the labels); never a frozen
      // one.
      const bool learned =
          !listed(fixed_param_names, a) &&
          (listed(param_names_, a) || (inputs_need_grad && listed(data_names_, a)));
      reqs[a] = for_training && learned ? grad_req : GradReq::kNull;
    }
    executors_.push_back(Executor::SimpleBind(
        symbol, contexts[d], shapes, GradReq::kNull, reqs,
        shared_group ? shared_group->executors_[d].get() : nullptr, types,
        group2ctxs.empty() ? std::map<std::string, Context>{} : group2ctxs[d]));
    arenas_.push_back(std::make_unique<ThreadArena>(threads[d]));
    executors_.back()->set_arena(arenas_.back().get());
  }
  // A bucket shares the default bucket's parameters by name and shape: one of another shape would
  // get zeros of its own that SetParams never reaches and training never shares.
  if (shared_group) {
    for (size_t i = 0; i < param_names_.size(); ++i) {
      const NDArray& mine = executors_[0]->arg_dict().at(param_names_[i]);
      const NDArray& shared = shared_group->param_arrays_[i][0];
      COHORT_CHECK(mine.raw_data() == shared.raw_data())
          << "parameter '" << param_names_[i] << "' has shape " << mine.shape()
          << " here but " << shared.shape()
          << " in the group it shares parameters with: every bucket must give each parameter "
             "the same shape";
    }
  }
  param_arrays_.resize(param_names_.size());
  grad_arrays_.resize(param_names_.size());
  aux_arrays_.resize(aux_names_.size());
  for (const auto& exec : executors_) {
    for (size_t i = 0; i < param_names_.size(); ++i) {
      param_arrays_[i].push_back(exec->arg_dict().at(param_names_[i]));
      auto g = exec->grad_dict().find(param_names_[i]);
      if (g != exec->grad_dict().end()) grad_arrays_[i].push_back(g->second);
    }
    for (size_t i = 0; i < aux_names_.size(); ++i)
      aux_arrays_[i].push_back(exec->aux_dict().at(aux_names_[i]));
  }
  workers_ = std::make_unique<DeviceWorkers>(static_cast<int>(contexts.size()));
  // Staging copies on each device's streams into inputs there: inputs placed on another device
  // (group2ctxs) are loaded by plain copies.
  const bool all_gpus = std::all_of(contexts.begin(), contexts.end(),
                                    [](const Context& c) { return c.is_gpu(); });
  const bool placed = std::any_of(group2ctxs.begin(), group2ctxs.end(),
                                  [](const auto& groups) { return !groups.empty(); });
  // The staging copies rows: other batch axes load by plain copies (Note [Batch axes]).
  const bool rows =
      std::all_of(data_axes_.begin(), data_axes_.end(), [](int a) { return a == 0; }) &&
      std::all_of(label_axes_.begin(), label_axes_.end(), [](int a) { return a == 0; });
  if (all_gpus && !placed && rows) {
    std::vector<int> devices;
    std::vector<std::vector<NDArray>> inputs(executors_.size());
    for (size_t d = 0; d < executors_.size(); ++d) {
      devices.push_back(contexts[d].id);
      const auto& args = executors_[d]->arg_dict();
      for (const std::string& name : data_names_) inputs[d].push_back(args.at(name));
      for (const std::string& name : label_names_) inputs[d].push_back(args.at(name));
    }
    streams_ = CreateCudaStreamOps();
    staging_ = std::make_unique<InputStaging>(*streams_, std::move(devices), std::move(inputs),
                                              slices_, Context::CPUPinned());
  }
}

void DataParallelExecutorGroup::CheckBatch(const DataBatch& batch, const char* caller) const {
  COHORT_CHECK_EQ(batch.data.size(), data_names_.size())
      << caller << ": the batch's data arrays against the inputs bound";
  COHORT_CHECK(label_slots_.empty() || batch.label.size() > label_slots_.back())
      << caller << ": the batch has " << batch.label.size() << " label array(s), "
      << label_slots_.size() << " bound";
  auto check = [&](const NDArray& given, const std::string& name, const Shape& bound) {
    COHORT_CHECK(given.shape() == bound)
        << caller << ": input '" << name << "' has shape " << given.shape()
        << ", the executors are bound for " << bound
        << (batch.bucket_key ? " (bucket " + std::to_string(*batch.bucket_key) + ")" : "");
  };
  for (size_t i = 0; i < data_names_.size(); ++i) {
    check(batch.data[i], data_names_[i], data_bound_[i]);
  }
  for (size_t i = 0; i < label_names_.size(); ++i) {
    check(batch.label[label_slots_[i]], label_names_[i], label_bound_[i]);
  }
}

void DataParallelExecutorGroup::StageDataBatch(const DataBatch& batch) {
  if (!staging_) return;
  CheckBatch(batch, "StageDataBatch");
  stage_arrays_.clear();  // reused: no allocation per step
  stage_arrays_.insert(stage_arrays_.end(), batch.data.begin(), batch.data.end());
  for (size_t slot : label_slots_) stage_arrays_.push_back(batch.label[slot]);
  staging_->Stage(stage_arrays_);
  staged_batch_ = batch.data.empty() ? nullptr : batch.data[0].raw_data();
}

void DataParallelExecutorGroup::DiscardStagedBatch() {
  if (staging_) staging_->Discard();
}

void DataParallelExecutorGroup::LoadDataBatch(const DataBatch& batch) {
  CheckBatch(batch, "LoadDataBatch");
  if (staging_) {
    if (!staging_->staged()) StageDataBatch(batch);
    // A partial check (an iterator reusing its arrays passes it with any batch): the caller
    // loads what it staged, as the fit loop does.
    COHORT_CHECK(batch.data.empty() || batch.data[0].raw_data() == staged_batch_)
        << "LoadDataBatch: the batch given is not the one staged by StageDataBatch";
    staging_->Load();
    return;
  }
  for (size_t d = 0; d < executors_.size(); ++d) {
    const auto [begin, end] = slices_[d];
    const auto& args = executors_[d]->arg_dict();
    for (size_t i = 0; i < data_names_.size(); ++i) {
      CopyAlongAxis(batch.data[i], args.at(data_names_[i]), data_axes_[i], begin, true);
    }
    for (size_t i = 0; i < label_names_.size(); ++i) {
      CopyAlongAxis(batch.label[label_slots_[i]], args.at(label_names_[i]), label_axes_[i], begin,
                    true);
    }
  }
}

void DataParallelExecutorGroup::Forward(bool is_train) {
  is_train_ = is_train;
  auto run = [this](int d) {
    timeline::Span span(timeline::Span::OnDevice{d}, "forward");
    executors_[d]->Forward(is_train_);
  };
  workers_->Run(run);
}

void DataParallelExecutorGroup::SetRandomSeed(uint64_t seed, int64_t first_sample) {
  for (size_t d = 0; d < executors_.size(); ++d) {
    const auto [begin, end] = slices_[d];
    executors_[d]->set_random_seed(seed, first_sample + begin, end - begin);
  }
}

void DataParallelExecutorGroup::SetGradientReadyCallback(std::function<void(int)> ready) {
  gradient_ready_ = std::move(ready);
  if (!gradient_ready_) {
    for (auto& exec : executors_) exec->SetGradientReadyCallback(nullptr);
    return;
  }
  const std::vector<std::string> args = executors_[0]->symbol().ListArguments();
  param_of_arg_.assign(args.size(), -1);
  for (size_t p = 0; p < param_names_.size(); ++p) {
    param_of_arg_[std::find(args.begin(), args.end(), param_names_[p]) - args.begin()] =
        static_cast<int>(p);
  }
  devices_pending_ = std::make_unique<std::atomic<int>[]>(param_names_.size());
  for (auto& exec : executors_) {
    exec->SetGradientReadyCallback([this](int arg) {
      const int p = param_of_arg_[arg];
      if (p >= 0 && devices_pending_[p].fetch_sub(1) == 1) gradient_ready_(p);
    });
  }
}

void DataParallelExecutorGroup::Backward() {
  if (gradient_ready_) {
    for (size_t p = 0; p < param_names_.size(); ++p) devices_pending_[p] = num_devices();
  }
  auto run = [this](int d) {
    timeline::Span span(timeline::Span::OnDevice{d}, "backward");
    executors_[d]->Backward();
  };
  workers_->Run(run);
}

void DataParallelExecutorGroup::Backward(const std::vector<NDArray>& out_grads) {
  if (out_grads.empty()) return Backward();
  for (size_t k = 0; k < out_grads.size(); ++k) {
    const int axis = k < output_axes_.size() ? output_axes_[k] : 0;
    COHORT_CHECK(out_grads[k].shape().ndim() > axis && out_grads[k].shape()[axis] == batch_size_)
        << "Backward: head gradient " << k << " has shape " << out_grads[k].shape()
        << "; expected the whole batch of " << batch_size_ << AlongAxis(axis);
  }
  if (gradient_ready_) {
    for (size_t p = 0; p < param_names_.size(); ++p) devices_pending_[p] = num_devices();
  }
  auto run = [this, &out_grads](int d) {
    timeline::Span span(timeline::Span::OnDevice{d}, "backward");
    std::vector<NDArray> rows;
    const auto [begin, end] = slices_[d];
    for (size_t k = 0; k < out_grads.size(); ++k) {
      rows.push_back(SamplesOf(out_grads[k], k < output_axes_.size() ? output_axes_[k] : 0, begin,
                               end - begin));
    }
    executors_[d]->Backward(rows);
  };
  workers_->Run(run);
}

bool DataParallelExecutorGroup::BoundFor(const std::vector<DataDesc>& data) const {
  if (data.size() != data_names_.size()) return false;
  for (size_t i = 0; i < data.size(); ++i) {
    if (data[i].name != data_names_[i] || !(data[i].shape == data_bound_[i])) return false;
  }
  return true;
}

void DataParallelExecutorGroup::UpdateMetric(EvalMetric& metric, const std::vector<NDArray>& labels,
                                             int64_t pad) {
  const int64_t valid = batch_size_ - pad;
  COHORT_CHECK(pad >= 0 && pad <= batch_size_)
      << "UpdateMetric: pad " << pad << " for a batch of " << batch_size_;
  auto label_axis = [&](size_t k) { return k < label_axes_.size() ? label_axes_[k] : 0; };
  for (size_t k = 0; k < labels.size(); ++k) {
    COHORT_CHECK(labels[k].shape().ndim() > label_axis(k) &&
                 labels[k].shape()[label_axis(k)] == batch_size_)
        << "UpdateMetric: labels of shape " << labels[k].shape() << " for a batch of "
        << batch_size_ << AlongAxis(label_axis(k));
  }
  thread_local std::vector<NDArray> label_slices, output_slices;  // reused: no allocation per step
  for (size_t d = 0; d < executors_.size(); ++d) {
    const auto [begin, end] = slices_[d];
    const int64_t rows = std::min(end, valid) - begin;
    if (rows <= 0) continue;
    const auto& outputs = executors_[d]->outputs();
    const size_t n = std::min(outputs.size(), labels.size());
    label_slices.resize(n);
    output_slices.resize(n);
    for (size_t k = 0; k < n; ++k) {
      label_slices[k] = SamplesOf(labels[k], label_axis(k), begin, rows);
      // An output with a row a sample loses its padding's rows; one whose rows are not the
      // samples (an unrolled RNN's (batch x time, classes)) is given whole, as MXNet does.
      const NDArray& out = outputs[k];
      const int axis = output_axes_[k];
      const bool per_sample = out.shape().ndim() > axis && out.shape()[axis] == end - begin;
      output_slices[k] = per_sample ? SamplesOf(out, axis, 0, rows) : out;
    }
    metric.Update(label_slices, output_slices);
  }
}

void DataParallelExecutorGroup::SetParams(const std::map<std::string, NDArray>& arg_params,
                                          const std::map<std::string, NDArray>& aux_params,
                                          bool allow_extra) {
  for (const auto& exec : executors_) exec->CopyParamsFrom(arg_params, aux_params, allow_extra);
}

namespace {

// Note [Parameters over devices]: GetParams gives each parameter's mean over the devices, as
// MXNet's copy_to does. Devices updated alike hold the same bytes, and then the first device's
// values are copied as they are: a mean of three equal floats may round in its last bit, and a
// checkpoint must resume bit for bit.
void MeanOverDevices(const std::vector<NDArray>& per_device, NDArray& out) {
  const NDArray& first = per_device[0];
  if (out.is_none() || out.shape() != first.shape() || out.dtype() != first.dtype()) {
    out = NDArray::Empty(first.shape(), first.dtype());
  }
  first.CopyTo(out);
  std::vector<NDArray> others;
  bool equal = true;
  for (size_t d = 1; d < per_device.size(); ++d) {
    others.push_back(per_device[d].CopyTo(Context::CPU()));
    equal = equal && std::memcmp(others.back().raw_data(), out.raw_data(), out.nbytes()) == 0;
  }
  if (equal) return;
  // The mean in float32 (half-precision weights included), in the weights' own type.
  NDArray sum = out.AsType(DType::kFloat32);
  float* v = sum.data<float>();
  for (const NDArray& host : others) {
    const NDArray wide = host.AsType(DType::kFloat32);
    const float* a = wide.data<float>();
    for (int64_t j = 0; j < sum.size(); ++j) v[j] += a[j];
  }
  for (int64_t j = 0; j < sum.size(); ++j) v[j] /= static_cast<float>(per_device.size());
  sum.CopyTo(out);
}

}  // namespace

void DataParallelExecutorGroup::GetParams(std::map<std::string, NDArray>* arg_params,
                                          std::map<std::string, NDArray>* aux_params) const {
  for (size_t i = 0; i < param_names_.size(); ++i) {
    MeanOverDevices(param_arrays_[i], (*arg_params)[param_names_[i]]);
  }
  // Moving statistics differ by the samples each device saw: their mean.
  for (size_t i = 0; i < aux_names_.size(); ++i) {
    MeanOverDevices(aux_arrays_[i], (*aux_params)[aux_names_[i]]);
  }
}

void DataParallelExecutorGroup::CopyOutput(int index, const NDArray& out) const {
  for (size_t d = 0; d < executors_.size(); ++d) {
    const NDArray& part = executors_[d]->outputs().at(index);
    const int axis = output_axes_[index];
    COHORT_CHECK(part.shape().ndim() > axis &&
                 part.shape()[axis] == slices_[d].second - slices_[d].first)
        << "CopyOutput: output " << index << " of device " << d << " has shape " << part.shape()
        << ", not its " << slices_[d].second - slices_[d].first << " samples along axis " << axis;
    CopyAlongAxis(out, executors_[d]->outputs().at(index), output_axes_[index], slices_[d].first,
                  false);
  }
}

void DataParallelExecutorGroup::InstallMonitor(Executor::Monitor monitor, bool monitor_all) {
  for (auto& exec : executors_) exec->SetMonitorCallback(monitor, monitor_all);
}

// ---- Manager ------------------------------------------------------------------------------

DataParallelExecutorManager::DataParallelExecutorManager(
    const Symbol& symbol, const std::vector<Context>& contexts, const DataIter& train_data,
    const std::vector<std::string>& param_names, const std::vector<double>& work_load,
    SymGen sym_gen, std::optional<int64_t> default_bucket_key,
    const std::vector<std::string>& fixed_param_names, bool inputs_need_grad, GradReq grad_req)
    : DataParallelExecutorManager(symbol, contexts, train_data.provide_data(),
                                  train_data.provide_label(), param_names, work_load,
                                  std::move(sym_gen), default_bucket_key, fixed_param_names,
                                  inputs_need_grad, grad_req) {}

DataParallelExecutorManager::DataParallelExecutorManager(
    const Symbol& symbol, const std::vector<Context>& contexts,
    const std::vector<DataDesc>& data_shapes, const std::vector<DataDesc>& label_shapes,
    const std::vector<std::string>& param_names, const std::vector<double>& work_load,
    SymGen sym_gen, std::optional<int64_t> default_bucket_key,
    const std::vector<std::string>& fixed_param_names, bool inputs_need_grad, GradReq grad_req,
    const DataParallelExecutorGroup::Group2Ctxs& group2ctxs)
    : contexts_(contexts),
      work_load_(work_load),
      param_names_(param_names),
      fixed_param_names_(fixed_param_names),
      inputs_need_grad_(inputs_need_grad),
      default_bucket_key_(default_bucket_key),
      grad_req_(grad_req),
      group2ctxs_(group2ctxs),
      data_shapes_(data_shapes),
      label_shapes_(label_shapes),
      sym_gen_(std::move(sym_gen)) {
  const Symbol sym = sym_gen_ && default_bucket_key ? sym_gen_(*default_bucket_key) : symbol;
  default_ = std::make_unique<DataParallelExecutorGroup>(
      sym, contexts_, work_load_, data_shapes_, label_shapes_, param_names_, true,
      inputs_need_grad_, nullptr, fixed_param_names_, grad_req_, group2ctxs_);
  current_ = default_.get();
  if (default_bucket_key) buckets_[*default_bucket_key] = nullptr;  // served by default_
}

namespace {
bool SameDescs(const std::vector<DataDesc>& a, const std::vector<DataDesc>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].shape != b[i].shape) return false;
  }
  return true;
}
}  // namespace

void DataParallelExecutorManager::LoadDataBatch(const DataBatch& batch) {
  current_ = GroupFor(batch);
  current_->LoadDataBatch(batch);
}

void DataParallelExecutorManager::StageDataBatch(const DataBatch& batch) {
  GroupFor(batch)->StageDataBatch(batch);
}

void DataParallelExecutorManager::DiscardStagedBatches() {
  default_->DiscardStagedBatch();
  for (auto& [key, group] : buckets_) {
    if (group) group->DiscardStagedBatch();  // null: the default bucket's key
  }
}

// A batch's bucket is its key's, as MXNet's BucketingModule switches (a key's symbol may differ
// even where its shapes do not). Without the default bucket's key, a batch of the default shapes
// is the default bucket's.
DataParallelExecutorGroup* DataParallelExecutorManager::GroupFor(const DataBatch& batch) {
  if (!sym_gen_ || !batch.bucket_key) return default_.get();
  auto it = buckets_.find(*batch.bucket_key);
  if (it == buckets_.end()) {
    const bool default_shapes =
        batch.provide_data.empty() || SameDescs(batch.provide_data, data_shapes_);
    if (default_shapes && !default_bucket_key_) return default_.get();
    const std::vector<DataDesc>& data =
        batch.provide_data.empty() ? data_shapes_ : batch.provide_data;
    const std::vector<DataDesc>& label =
        batch.provide_data.empty() ? label_shapes_ : batch.provide_label;
    it = buckets_
             .emplace(*batch.bucket_key,
                      std::make_unique<DataParallelExecutorGroup>(
                          sym_gen_(*batch.bucket_key), contexts_, work_load_, data, label,
                          param_names_, true, inputs_need_grad_, default_.get(), fixed_param_names_,
                          grad_req_, group2ctxs_))
             .first;
    if (gradient_ready_) it->second->SetGradientReadyCallback(gradient_ready_);
  }
  return it->second ? it->second.get() : default_.get();
}

void DataParallelExecutorManager::Forward(bool is_train) { current_->Forward(is_train); }
void DataParallelExecutorManager::Backward() { current_->Backward(); }
void DataParallelExecutorManager::Backward(const std::vector<NDArray>& out_grads) {
  current_->Backward(out_grads);
}
void DataParallelExecutorManager::UpdateMetric(EvalMetric& metric,
                                               const std::vector<NDArray>& labels, int64_t pad) {
  current_->UpdateMetric(metric, labels, pad);
}
const std::vector<std::vector<NDArray>>& DataParallelExecutorManager::param_arrays() const {
  return default_->param_arrays();
}
const std::vector<std::vector<NDArray>>& DataParallelExecutorManager::grad_arrays() const {
  return current_->grad_arrays();
}
const std::vector<std::vector<NDArray>>& DataParallelExecutorManager::aux_arrays() const {
  return default_->aux_arrays();
}
void DataParallelExecutorManager::SetParams(const std::map<std::string, NDArray>& arg_params,
                                            const std::map<std::string, NDArray>& aux_params,
                                            bool allow_extra) {
  default_->SetParams(arg_params, aux_params, allow_extra);
}
void DataParallelExecutorManager::CopyTo(std::map<std::string, NDArray>* arg_params,
                                         std::map<std::string, NDArray>* aux_params) const {
  default_->GetParams(arg_params, aux_params);
}
void DataParallelExecutorManager::SetGradientReadyCallback(std::function<void(int)> ready) {
  gradient_ready_ = std::move(ready);
  default_->SetGradientReadyCallback(gradient_ready_);
  for (auto& [key, group] : buckets_) {
    if (group) group->SetGradientReadyCallback(gradient_ready_);
  }
}

void DataParallelExecutorManager::InstallMonitor(Executor::Monitor monitor, bool monitor_all) {
  default_->InstallMonitor(monitor, monitor_all);
  for (auto& [key, group] : buckets_) {
    if (group) group->InstallMonitor(monitor, monitor_all);
  }
}

}  // namespace cohort
