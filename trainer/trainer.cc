// Trainer: the fit loop, scoring and prediction.
#include "trainer/trainer.h"

#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <functional>
#include <random>
#include <set>
#include <sstream>
#include <tuple>

#include "base/logging.h"
#include "base/name_pattern.h"
#include "base/seed.h"
#include "base/stop_signal.h"
#include "base/timeline.h"
#include "trainer/agreement.h"
#include "trainer/checkpoint.h"
#include "trainer/progress.h"

namespace cohort {
namespace {

using Clock = std::chrono::steady_clock;

std::string Format(const std::vector<EvalMetric::NameValue>& values) {
  std::string out;
  for (const auto& [name, value] : values) {
    out += (out.empty() ? "" : "\t") + name + "=" + std::to_string(value);
  }
  return out;
}

// Sums a metric's state over the workers, so that Get() covers all of them.
void ReduceMetric(EvalMetric& metric, KVStore& kv) {
  if (kv.num_workers() == 1) return;
  std::vector<double> state = metric.State();
  kv.SumAcrossWorkers(state);
  metric.SetState(state);
}

// What a refused mid-epoch resume may do instead: resume from the latest epoch checkpoint at
// or before `epoch` that exists (checkpoint.period may have skipped some), or start afresh.
std::string EarlierEpochCheckpoint(const std::string& prefix, int epoch) {
  for (int e = epoch; e > 0; --e) {
    if (std::filesystem::exists(CheckpointParamsPath(prefix, e))) {
      return "resume from '" + CheckpointParamsPath(prefix, e) + "' (resume_epoch: " +
             std::to_string(e) + ")";
    }
  }
  return "start afresh (no epoch checkpoint precedes it)";
}

// Runs `copy`, which copies parameters into executors; a shape that differs from the network's
// (parameters of another network) is said naming `source`, the file they came from.
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

// Note [Naming a bad label]
// SoftmaxOutput and the metrics refuse a label that is not one of the classes, but they see a
// device's slice of the batch, not where its samples came from. The trainer does: it finds the
// first sample of the batch whose label holds the refused value and adds what its iterator
// calls it ("record 17 of 'train.rec'"), so that a .lst numbered from 1 is found at once.
[[noreturn]] void RethrowNamingTheSample(const LabelError& e, const std::vector<NDArray>& labels,
                                         const std::vector<int64_t>& index, const DataIter& data) {
  const float refused = e.label();
  for (const NDArray& l : labels) {
    if (l.dtype() != DType::kFloat32 || !l.ctx().is_host() || index.empty()) continue;
    const int64_t rows = static_cast<int64_t>(index.size());
    const int64_t per_row = l.size() / rows;
    const float* v = l.data<float>();
    for (int64_t i = 0; i < rows * per_row; ++i) {
      if (v[i] == refused || (std::isnan(v[i]) && std::isnan(refused))) {
        throw LabelError(e.message() + ": " + data.DescribeLabelOf(index[i / per_row]),
                         refused, __FILE__, __LINE__);
      }
    }
  }
  throw e;
}

// Variable `name`'s attribute `key` (from Symbol::VariableAttrs), or null when it has none.
const std::string* VariableAttr(const std::map<std::string, op::Attrs>& attrs,
                                const std::string& name, const char* key) {
  const auto node = attrs.find(name);
  if (node == attrs.end()) return nullptr;
  const auto attr = node->second.find(key);
  return attr == node->second.end() ? nullptr : &attr->second;
}

// A variable's attribute read as a multiplier (MXNet writes "0.0"); errors name the variable.
std::optional<double> Multiplier(const std::map<std::string, op::Attrs>& attrs,
                                 const std::string& name, const char* key) {
  const std::string* attr = VariableAttr(attrs, name, key);
  if (!attr) return std::nullopt;
  const std::string& text = *attr;
  double value = -1;
  size_t used = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
  }
  if (used != text.size() || !std::isfinite(value) || value < 0) {
    throw ConfigError(
        "variable '" + name + "': " + key + " '" + text + "' is not a number >= 0", __FILE__,
        __LINE__);
  }
  return value;
}

bool SameShapes(const std::vector<DataDesc>& a, const std::vector<DataDesc>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || !(a[i].shape == b[i].shape)) return false;
  }
  return true;
}

}  // namespace

Trainer::Trainer(Symbol symbol, std::vector<Context> contexts, std::vector<double> work_load,
                 std::shared_ptr<KVStore> kvstore)
    : symbol_(std::move(symbol)),
      contexts_(std::move(contexts)),
      work_load_(std::move(work_load)),
      kvstore_(kvstore ? std::move(kvstore) : std::shared_ptr<KVStore>(KVStore::Create("local"))) {}

void Trainer::Bind(const DataIter& data, const std::vector<std::string>& fixed_params) {
  if (manager_) return;
  const std::vector<std::string> inputs = InputNames(data);
  for (const std::string& a : symbol_.ListArguments()) {
    if (std::find(inputs.begin(), inputs.end(), a) == inputs.end()) param_names_.push_back(a);
  }
  frozen_.assign(param_names_.size(), false);
  std::vector<std::string> fixed_names;
  for (const std::string& pattern : fixed_params) {
    const NamePattern re(pattern, "fixed_params");  // Note [Name patterns]
    bool matched = false;
    for (size_t i = 0; i < param_names_.size(); ++i) {
      if (!re.Matches(param_names_[i])) continue;
      matched = true;
      if (!frozen_[i]) fixed_names.push_back(param_names_[i]);
      frozen_[i] = true;
    }
    if (!matched) {
      throw ConfigError("fixed_params: '" + pattern + "' matches no parameter of the network",
                        __FILE__, __LINE__);
    }
  }
  if (!param_names_.empty() && fixed_names.size() == param_names_.size()) {
    throw ConfigError("fixed_params: every parameter of the network (" +
                          std::to_string(param_names_.size()) + ") is frozen: nothing would train",
                      __FILE__, __LINE__);
  }
  DataParallelExecutorManager::SymGen sym_gen = sym_gen_;
  if (!sym_gen) sym_gen = [symbol = symbol_](int64_t) { return symbol; };
  manager_ = std::make_unique<DataParallelExecutorManager>(
      symbol_, contexts_, data, param_names_, work_load_, sym_gen, std::nullopt, fixed_names);
  bound_data_ = data.provide_data();
  for (int i = 0; i < static_cast<int>(param_names_.size()); ++i) {
    if (frozen_[i]) continue;
    keys_.push_back(i);
    grads_by_key_.push_back(manager_->grad_arrays()[i]);
    params_by_key_.push_back(manager_->param_arrays()[i]);
    device0_grads_.push_back(manager_->grad_arrays()[i][0]);
  }
  if (!ReducesGradients()) return;  // Note [One device updates itself]
  bucketer_ = std::make_unique<GradientBucketer>(*kvstore_);
  if (bucketer_->overlaps()) {  // Note [Overlapped push]
    manager_->SetGradientReadyCallback([this](int p) { bucketer_->KeyReady(p); });
  }
}

// Note [One device updates itself]
// One device in one worker has no gradient to sum with another: as MXNet's Module (its
// _create_kvstore gives no kvstore for one device and a non-dist kind), the step then reduces
// nothing and the device updates its own weights, whatever update_on_kvstore says. On a GPU
// the update on the kvstore would copy every gradient to the host, update there and copy the
// weights back each step; on a CPU it costs the store's copies. The numbers are the same: one
// optimizer, one gradient, the same order of operations.
bool Trainer::ReducesGradients() const {
  return contexts_.size() > 1 || kvstore_->num_workers() > 1;
}

bool Trainer::UpdatesOnKVStore(const FitConfig& config) const {
  return config.update_on_kvstore && kvstore_->SupportsUpdateOnKVStore() && ReducesGradients();
}

void Trainer::InitParams(const FitConfig& config) {
  std::map<std::string, NDArray> args, aux;
  const CheckpointPosition begin{config.begin_epoch, config.begin_batch};
  const bool resuming = begin > CheckpointPosition{};
  if (resuming) {
    COHORT_CHECK(!config.checkpoint_prefix.empty())
        << "resuming from epoch " << config.begin_epoch << " needs a checkpoint prefix";
    const std::string path = CheckpointParamsPath(config.checkpoint_prefix, begin);
    LoadCheckpointParams(config.checkpoint_prefix, begin, &args, &aux);
    if (!config.arg_params.empty() || !config.aux_params.empty()) {
      Log().info("Resuming from {}: the initial parameters given are not used", path);
    }
    for (const std::string& p : param_names_) {
      COHORT_CHECK(args.count(p)) << "'" << path << "' has no parameter '" << p << "'";
    }
  } else {
    Initializer init(config.initializer);
    std::mt19937_64 rng(config.seed);
    // A variable's "__init__" attribute overrides the initializer, as in MXNet's Module.
    const std::map<std::string, op::Attrs> attrs = symbol_.VariableAttrs();
    for (size_t i = 0; i < param_names_.size(); ++i) {
      NDArray value = NDArray::Empty(manager_->param_arrays()[i][0].shape());
      const std::string* init_attr = VariableAttr(attrs, param_names_[i], "__init__");
      init(param_names_[i], value, rng, init_attr ? *init_attr : "");
      args[param_names_[i]] = value;
    }
    for (size_t i = 0; i < manager_->aux_names().size(); ++i) {
      const std::string& name = manager_->aux_names()[i];
      NDArray value = NDArray::Empty(manager_->aux_arrays()[i][0].shape());
      const std::string* init_attr = VariableAttr(attrs, name, "__init__");
      init(name, value, rng, init_attr ? *init_attr : "");
      aux[name] = value;
    }
    TakeGivenParams(config, &args, &aux);
  }
  NamingSource(resuming ? CheckpointParamsPath(config.checkpoint_prefix, begin) : "",
               [&] { manager_->SetParams(args, aux); });
  // The kvstore keeps the weights; under MPI every worker starts from rank 0's. Frozen
  // parameters never reach it: every worker loads or initializes them alike (same file, seed).
  std::vector<int> keys;
  std::vector<NDArray> device0;
  std::vector<std::vector<NDArray>> devices;
  for (size_t i = 0; i < param_names_.size(); ++i) {
    if (frozen_[i]) continue;
    keys.push_back(static_cast<int>(i));
    device0.push_back(manager_->param_arrays()[i][0]);
    devices.push_back(manager_->param_arrays()[i]);
  }
  // With the update on the kvstore, device 0's weights are the store: updated in place, no copy.
  kvstore_->ShareStorageOnInit(UpdatesOnKVStore(config));
  kvstore_->Init(keys, device0);
  kvstore_->Pull(keys, devices);
  // Frozen parameters and auxiliary states have no key: rank 0's go to every worker all the
  // same (as Horovod's broadcast_parameters), so workers that read another file or drew
  // otherwise still train alike.
  if (kvstore_->num_workers() > 1) {
    std::vector<std::vector<NDArray>> targets;
    for (size_t i = 0; i < param_names_.size(); ++i) {
      if (frozen_[i]) targets.push_back(manager_->param_arrays()[i]);
    }
    for (const auto& per_device : manager_->aux_arrays()) targets.push_back(per_device);
    std::vector<NDArray> host;
    for (const auto& per_device : targets) host.push_back(per_device[0].CopyTo(Context::CPU()));
    kvstore_->BroadcastArrays(host);
    for (size_t j = 0; j < targets.size(); ++j) {
      for (const NDArray& device : targets[j]) host[j].CopyTo(device);
    }
  }
}

// Fine-tuning: the given parameters replace the initializer's where the network has them,
// except in the layers to re-initialize.
void Trainer::TakeGivenParams(const FitConfig& config, std::map<std::string, NDArray>* args,
                              std::map<std::string, NDArray>* aux) const {
  if (config.arg_params.empty() && config.aux_params.empty()) return;
  auto reinit = [&](const std::string& name) {
    for (const std::string& layer : config.reinit) {
      if (name.starts_with(layer + "_")) return true;
    }
    return false;
  };
  std::set<std::string> initialized;
  for (const auto& [name, value] : *args) initialized.insert(name);
  for (const auto& [name, value] : *aux) initialized.insert(name);
  // As fixed_params, a typo is not ignored: a layer to reinit is one of the network's (a new
  // head) or one of the file's that the network lacks (left out).
  std::set<std::string> known = initialized;
  for (const auto* given : {&config.arg_params, &config.aux_params}) {
    for (const auto& [name, value] : *given) known.insert(name);
  }
  for (const std::string& layer : config.reinit) {
    if (std::none_of(known.begin(), known.end(), [&](const std::string& name) {
          return name.starts_with(layer + "_");
        })) {
      throw ConfigError("reinit: neither the network nor the initial parameters have a layer '" +
                            layer + "' (no parameter named " + layer + "_...)",
                        __FILE__, __LINE__);
    }
  }
  for (auto [given, into, kind] : {std::tuple{&config.arg_params, args, "parameter"},
                                   std::tuple{&config.aux_params, aux, "auxiliary state"}}) {
    for (const auto& [name, value] : *given) {
      if (reinit(name)) continue;
      // A file that does not fit the network is a setting to change: ConfigError (exit 2).
      auto it = into->find(name);
      if (it == into->end()) {
        throw ConfigError("initial parameters: the network has no " + std::string(kind) + " '" +
                              name + "' (list its layer under reinit to leave it out)",
                          __FILE__, __LINE__);
      }
      if (it->second.shape() != value.shape()) {
        std::ostringstream m;
        m << "initial parameters: '" << name << "' has shape " << value.shape()
          << " but the network's is " << it->second.shape()
          << " (list its layer under reinit to initialize it afresh)";
        throw ConfigError(m.str(), __FILE__, __LINE__);
      }
      it->second = value;
      initialized.erase(name);
    }
  }
  if (!initialized.empty()) {
    std::string names;
    for (const std::string& n : initialized) names += (names.empty() ? "" : ", ") + n;
    Log().info("Initialized {} parameter(s) the initial parameters did not give: {}",
               initialized.size(), names);
  }
}

void Trainer::InitOptimizer(const FitConfig& config, int64_t global_batch) {
  OptimizerOptions options = config.optimizer_options;
  options.rescale_grad = config.rescale_grad.value_or(1.0 / static_cast<double>(global_batch));
  options.seed = config.seed;  // (SGLD's noise)
  auto optimizer = Optimizer::Create(config.optimizer, options);
  LRScheduler::Options schedule = config.schedule;
  schedule.base_lr = options.lr;
  optimizer->set_scheduler(LRScheduler::Create(config.lr_schedule, schedule));
  std::map<int, std::string> names;
  std::map<int, double> lr_mult, wd_mult;  // the variables' __lr_mult__ and __wd_mult__
  const std::map<std::string, op::Attrs> attrs = symbol_.VariableAttrs();
  for (size_t i = 0; i < param_names_.size(); ++i) {
    const int key = static_cast<int>(i);
    names[key] = param_names_[i];
    if (auto m = Multiplier(attrs, param_names_[i], "__lr_mult__")) lr_mult[key] = *m;
    if (auto m = Multiplier(attrs, param_names_[i], "__wd_mult__")) wd_mult[key] = *m;
  }
  optimizer->set_param_names(names);
  optimizer->set_lr_mult(lr_mult);
  optimizer->set_wd_mult(wd_mult);
  const CheckpointPosition begin{config.begin_epoch, config.begin_batch};
  const std::string states =
      begin > CheckpointPosition{} ? CheckpointStatesPath(config.checkpoint_prefix, begin) : "";
  update_on_kvstore_ = UpdatesOnKVStore(config);
  if (config.update_on_kvstore && !ReducesGradients()) {
    Log().debug("One device: it updates its own weights (Note [One device updates itself])");
  } else if (config.update_on_kvstore && !update_on_kvstore_) {
    Log().info("kvstore {} keeps no weights (Note [NCCL kvstore]): every device updates its own",
               kvstore_->type());
  }
  updaters_.clear();
  on_nonfinite_ = config.on_nonfinite;
  kvstore_->SetNonFiniteCheck(update_on_kvstore_, config.on_nonfinite == OnNonFinite::kSkipStep);
  // The states file is checked against the network before any of it is used (Optimizer::
  // LoadStates): a corrupt or foreign file is exit 2 naming the entry, not a crash mid-step.
  ParamsFile states_file;
  std::map<int, Shape> shapes;
  if (!states.empty()) {
    states_file = LoadParamsFile(states);
    for (size_t i = 0; i < params_by_key_.size(); ++i) {
      shapes[static_cast<int>(i)] = params_by_key_[i][0].shape();
    }
  }
  if (update_on_kvstore_) {
    if (!states.empty()) optimizer->LoadStates(states_file, states, shapes);
    kvstore_->SetOptimizer(std::move(optimizer));
  } else {
    for (int d = 0; d < manager_->num_devices(); ++d) {
      updaters_.push_back(optimizer->Clone());
      if (!states.empty()) updaters_.back()->LoadStates(states_file, states, shapes);
    }
  }
}

// Note [Overlapped push]: the kvstore reduces buckets as Backward reports gradients ready.
void Trainer::Backward() {
  // Without update_on_kvstore every device gets the sum in its gradients.
  if (bucketer_) {
    bucketer_->Start(keys_, grads_by_key_, update_on_kvstore_ ? params_by_key_ : grads_by_key_,
                     /*priorities=*/keys_);
  }
  manager_->Backward();
}

// Note [Non-finite gradients]: every worker holds the same sums, so all decide alike.
void Trainer::Update(CheckpointPosition step) {
  if (bucketer_) bucketer_->Finish();
  if (const std::vector<int> bad = NonFiniteParams(); !bad.empty()) {
    // Counted as the progress lines and checkpoint names count: the n-th batch is batch n.
    const std::string where = "epoch " + std::to_string(step.epoch) + ", batch " +
                              std::to_string(step.batch + 1);
    const std::string what = "the summed gradient of '" + param_names_[bad[0]] +
                             "' holds NaN or infinity" +
                             (bad.size() > 1 ? " (and of " + std::to_string(bad.size() - 1) +
                                                   " other parameter(s))"
                                             : "");
    if (on_nonfinite_ == OnNonFinite::kStop) {
      throw AgreedError(where + ": " + what +
                            "; training stopped (on_nonfinite: skip_step skips such steps)",
                        __FILE__, __LINE__);
    }
    ++skipped_steps_;
    Log().warn("{}: {}; the step's update is skipped ({} so far)", where, what, skipped_steps_);
    return;
  }
  if (update_on_kvstore_) return;
  for (size_t d = 0; d < updaters_.size(); ++d) {
    for (size_t i = 0; i < param_names_.size(); ++i) {
      if (frozen_[i]) continue;
      updaters_[d]->Update(static_cast<int>(i), manager_->param_arrays()[i][d],
                           manager_->grad_arrays()[i][d]);
    }
  }
}

std::vector<int> Trainer::NonFiniteParams() {
  if (update_on_kvstore_) {
    std::vector<int> bad = kvstore_->nonfinite_keys();
    std::sort(bad.begin(), bad.end());
    return bad;
  }
  // The sums are in every device's gradients: device 0's tell, checked where they are (on a
  // GPU only flags come back).
  FindNonFinite(device0_grads_, &finite_check_bad_, &finite_check_scratch_);
  std::vector<int> bad;
  for (int k : finite_check_bad_) bad.push_back(keys_[k]);
  return bad;
}

OnNonFinite ParseOnNonFinite(const std::string& text) {
  if (text == "stop") return OnNonFinite::kStop;
  if (text == "skip_step") return OnNonFinite::kSkipStep;
  throw ConfigError("on_nonfinite: '" + text + "' is not stop or skip_step", __FILE__, __LINE__);
}

// resume_latest: the latest complete checkpoint beside the prefix, or a fresh start.
void Trainer::ResolveResume(FitConfig* config) const {
  if (!config->resume_latest) return;
  COHORT_CHECK(!config->checkpoint_prefix.empty()) << "resuming the latest checkpoint needs a prefix";
  const std::optional<CheckpointPosition> latest = LatestCheckpoint(config->checkpoint_prefix);
  if (!latest) {
    Log().info("No checkpoint beside \"{}\": starting fresh", config->checkpoint_prefix);
    return;
  }
  config->begin_epoch = latest->epoch;
  config->begin_batch = latest->batch;
  Log().info("Resuming from \"{}\"", CheckpointParamsPath(config->checkpoint_prefix, *latest));
}

// Workers may get a signal steps apart, or alone: they stop at the first step after which any
// of them has one, exiting with SIGINT's code if any got SIGINT. One allreduce of two doubles
// per step (a few microseconds over shared memory).
int Trainer::AgreeOnStop() const {
  const int mine = StopSignal();
  if (kvstore_->num_workers() == 1) return mine;
  double got[2] = {mine == SIGINT ? 1.0 : 0.0, mine != 0 && mine != SIGINT ? 1.0 : 0.0};
  kvstore_->SumAcrossWorkers(got);
  return got[0] > 0 ? SIGINT : got[1] > 0 ? SIGTERM : 0;
}

void Trainer::SaveAt(const FitConfig& config, CheckpointPosition at, int64_t global_batch) {
  if (config.checkpoint_prefix.empty()) return;
  std::map<std::string, NDArray> args, aux;
  GetParams(&args, &aux);  // every worker: the auxiliary states are averaged over them
  // Every device goes on from the averaged statistics it wrote, as a run resumed from this
  // checkpoint does: so resuming is bit for bit, BatchNorm's moving statistics included.
  if (!aux.empty() && (contexts_.size() > 1 || kvstore_->num_workers() > 1)) {
    manager_->SetParams({}, aux);
  }
  if (kvstore_->rank() != 0) return;
  const Optimizer* optimizer = update_on_kvstore_ ? kvstore_->optimizer() : updaters_[0].get();
  SaveCheckpoint(config.checkpoint_prefix, at, symbol_, args, aux, optimizer, global_batch);
  Log().info("Saved checkpoint to \"{}\"", CheckpointParamsPath(config.checkpoint_prefix, at));
}

void Trainer::CheckResumedBatching(const FitConfig& config, int64_t global_batch) const {
  const CheckpointPosition at{config.begin_epoch, config.begin_batch};
  if (at == CheckpointPosition{}) return;  // a fresh start
  const std::optional<int64_t> saved = CheckpointGlobalBatch(config.checkpoint_prefix, at);
  if (config.begin_batch == 0) return;  // an epoch checkpoint: any batch size goes on from it
  if (!saved || *saved == global_batch) return;
  throw ConfigError("'" + CheckpointStatesPath(config.checkpoint_prefix, at) +
                        "' is a mid-epoch checkpoint after " + std::to_string(config.begin_batch) +
                        " batches of " + std::to_string(*saved) +
                        " samples (over every worker); this run's batches hold " +
                        std::to_string(global_batch) + " (batch_size " +
                        std::to_string(global_batch / kvstore_->num_workers()) + " x " +
                        std::to_string(kvstore_->num_workers()) +
                        " worker(s)): set them back, or " +
                        EarlierEpochCheckpoint(config.checkpoint_prefix, config.begin_epoch),
                    __FILE__, __LINE__);
}

// What every worker of a job must hold alike (Note [Agreement]).
std::vector<std::pair<std::string, std::string>> Trainer::AgreementItems(
    const DataIter& train, const FitConfig& config) const {
  std::ostringstream shapes, optimizer, epochs;
  for (size_t i = 0; i < param_names_.size(); ++i) {
    shapes << param_names_[i] << manager_->param_arrays()[i][0].shape() << (frozen_[i] ? "F " : " ");
  }
  const OptimizerOptions& o = config.optimizer_options;
  optimizer << config.optimizer << " lr " << o.lr << " momentum " << o.momentum << " wd " << o.wd
            << " clip " << o.clip_gradient << " rescale " << config.rescale_grad.value_or(0)
            << " betas " << o.beta1 << "," << o.beta2 << " epsilon " << o.epsilon << " gammas "
            << o.gamma1 << "," << o.gamma2 << " centered " << o.centered << " clip_weights "
            << o.clip_weights << " wd_lh " << o.wd_lh << " ftrl " << o.lamda1 << "," << o.beta
            << " rho " << o.rho << " bounds " << o.lower_bound << "," << o.upper_bound
            << " bias_correction " << o.bias_correction << " schedule " << config.lr_schedule
            << " on kvstore " << config.update_on_kvstore;
  epochs << config.begin_epoch << "+" << config.begin_batch << " to " << config.epochs
         << " on non-finite " << static_cast<int>(config.on_nonfinite);
  // Checkpoints gather the parameters (a collective: BatchNorm statistics are averaged over
  // the workers), and the metrics are summed across workers: both must be alike everywhere.
  std::ostringstream checkpoints, metrics;
  if (config.checkpoint_prefix.empty()) {
    checkpoints << "none";
  } else {
    checkpoints << "every " << config.checkpoint_period << " epoch(s), "
                << config.checkpoint_every_steps << " step(s)";
  }
  for (const std::string& m : config.metrics) metrics << m << " ";
  std::vector<std::pair<std::string, std::string>> items = {
      {"symbol", symbol_.ToJSON()},
      {"checkpoints", checkpoints.str()},
      {"metrics", metrics.str()},
      {"parameter shapes", shapes.str()},
      {"batch per worker", std::to_string(train.batch_size())},
      {"optimizer", optimizer.str()},
      {"epochs", epochs.str()},
      {"seed", std::to_string(config.seed)}};
  items.insert(items.end(), config.must_agree.begin(), config.must_agree.end());
  return items;
}

std::vector<EpochResult> Trainer::Fit(DataIter& train, DataIter* val, const FitConfig& given,
                                      const std::function<void(const EpochResult&)>& on_epoch) {
  FitConfig config = given;
  training_started_ = false;
  ResolveResume(&config);
  if (config.resume_latest && config.begin_epoch >= config.epochs) {
    // A finished run started again (a requeued job) has nothing to do: that is not an error.
    Log().info("The latest checkpoint beside \"{}\" is epoch {} of {}: the run is complete, "
               "nothing left to train",
               config.checkpoint_prefix, config.begin_epoch, config.epochs);
    return {};
  }
  if (config.begin_epoch >= config.epochs) {
    throw ConfigError("resume_epoch: training would begin at epoch " +
                          std::to_string(config.begin_epoch) + " of " +
                          std::to_string(config.epochs) + ": nothing to train (raise 'epochs')",
                      __FILE__, __LINE__);
  }
  stopped_by_signal_ = 0;
  skipped_steps_ = 0;
  Bind(train, config.fixed_params);
  CheckWorkersAgree(*kvstore_, AgreementItems(train, config));  // Note [Agreement]
  InitParams(config);
  const int64_t global_batch = train.batch_size() * kvstore_->num_workers();
  CheckResumedBatching(config, global_batch);
  InitOptimizer(config, global_batch);
  CheckMetricsAndLabels(train, val, config);
  const bool lead = kvstore_->rank() == 0;
  // Each epoch reshuffles, and may roll samples over into the next: replay the epochs before a
  // resumed one so that the data order matches an uninterrupted run.
  for (int e = 0; e < config.begin_epoch; ++e) train.SkipEpoch();
  std::unique_ptr<EvalMetric> metric = CreateMetric(config.metrics, config.ignore_label);
  std::unique_ptr<EvalMetric> val_metric = CreateMetric(config.metrics, config.ignore_label);
  std::vector<EpochResult> results;
  // This step's labels and samples' positions (the iterator moves on before its metric).
  std::vector<NDArray> step_labels;
  std::vector<int64_t> step_index;
  // However Fit ends (a stop, an error), no batch stays staged for a later Fit or Predict.
  struct DiscardStaged {
    DataParallelExecutorManager& manager;
    ~DiscardStaged() { manager.DiscardStagedBatches(); }
  } discard_staged{*manager_};
  profile_ = StepProfile();
  manager_->default_group().executor(0).ClearProfile();
  manager_->default_group().executor(0).SetProfiling(config.profile);
  ProgressLine progress(stderr, lead && config.progress);
  if (lead && !config.checkpoint_prefix.empty()) {
    if (const int n = RemoveStaleCheckpointTemporaries(config.checkpoint_prefix); n > 0) {
      Log().info("Removed {} temporary file(s) a killed run left beside {}", n,
                 config.checkpoint_prefix);
    }
  }
  int64_t batches_per_epoch = 0;  // known after the first epoch
  training_started_ = true;
  for (int epoch = config.begin_epoch; epoch < config.epochs; ++epoch) {
    metric->Reset();
    int64_t batches = 0;
    // A mid-epoch resume skips the batches done (Note [Checkpoint positions]); the epoch's
    // training metric covers the batches after them.
    if (epoch == config.begin_epoch) {
      while (batches < config.begin_batch && train.Next()) ++batches;
      if (batches < config.begin_batch) {
        throw ConfigError(
            "'" + CheckpointParamsPath(config.checkpoint_prefix, {epoch, config.begin_batch}) +
                "' is a checkpoint after " + std::to_string(config.begin_batch) +
                " batches of epoch " + std::to_string(epoch) + ", which now has only " +
                std::to_string(batches) + ": the data or its batching changed since; " +
                EarlierEpochCheckpoint(config.checkpoint_prefix, epoch),
            __FILE__, __LINE__);
      }
    }
    const int64_t first_batch = batches;
    const auto start = Clock::now();
    auto window = start;
    timeline::LabelThread("main");
    // Note [Input staging]: the next batch is fetched and staged once backward is enqueued, as
    // MXNet's fit loop prepares it: on GPUs the host's copy overlaps backward, before the
    // update's non-finite check waits for the gradients (and with overlap on CPU devices, the
    // buckets still being reduced). So the step keeps its own copy of the labels, which the
    // iterator may reuse.
    bool have_batch = false;
    {
      timeline::Span span("data");
      have_batch = train.Next();
      if (have_batch) manager_->StageDataBatch(train.Value());
    }
    while (have_batch) {
      timeline::Span step_span("step");
      const auto t0 = Clock::now();
      {
        timeline::Span span("load");
        manager_->LoadDataBatch(train.Value());
      }
      const DataBatch& batch = train.Value();
      // Note [Random streams]: keyed by the step and the global batch position alone.
      manager_->SetRandomSeed(MixSeed(MixSeed(config.seed, epoch), batches),
                              kvstore_->rank() * train.batch_size());
      const auto t1 = Clock::now();
      {
        timeline::Span span("forward");
        manager_->Forward(true);
      }
      const auto t2 = Clock::now();
      {
        timeline::Span span("backward");
        try {
          Backward();
        } catch (const LabelError& e) {  // Note [Naming a bad label]
          RethrowNamingTheSample(e, batch.label, batch.index, train);
        }
      }
      const auto t3 = Clock::now();
      const int64_t pad = batch.pad;
      {
        timeline::Span span("data");
        CopyArraysInto(batch.label, &step_labels);
        step_index.assign(batch.index.begin(), batch.index.end());
        have_batch = train.Next();
        if (have_batch) manager_->StageDataBatch(train.Value());
      }
      const auto t4 = Clock::now();
      {
        timeline::Span span("update");
        Update({epoch, batches});
      }
      const auto t5 = Clock::now();
      {
        timeline::Span span("metric");
        try {
          manager_->UpdateMetric(*metric, step_labels, pad);
        } catch (const LabelError& e) {
          RethrowNamingTheSample(e, step_labels, step_index, train);
        }
      }
      const auto t6 = Clock::now();
      for (auto [phase, begin, end] : {std::tuple{&profile_.data, t0, t1},
                                       {&profile_.forward, t1, t2},
                                       {&profile_.backward, t2, t3},
                                       {&profile_.data, t3, t4},
                                       {&profile_.update, t4, t5},
                                       {&profile_.metric, t5, t6}}) {
        *phase += std::chrono::duration<double>(end - begin).count();
      }
      ++profile_.steps;
      ++batches;
      if (config.stop_on_signal) {
        if (const int signo = AgreeOnStop(); signo != 0) {  // Note [Stop on a signal]
          progress.Clear();
          if (lead) Log().warn("Stopping on signal {} after epoch {}, batch {}", signo, epoch, batches);
          SaveAt(config, {epoch, batches}, global_batch);
          stopped_by_signal_ = signo;
          break;
        }
      }
      if (config.checkpoint_every_steps > 0 && batches % config.checkpoint_every_steps == 0) {
        SaveAt(config, {epoch, batches}, global_batch);
      }
      if (progress.Due()) {
        const double seconds = std::chrono::duration<double>(t6 - start).count();
        progress.Update(epoch, batches, batches_per_epoch,
                        (batches - first_batch) * global_batch / seconds,
                        metric->Get());
      }
      if (lead && config.log_every > 0 && batches % config.log_every == 0) {
        const auto now = Clock::now();
        const double seconds = std::chrono::duration<double>(now - window).count();
        progress.Clear();
        Log().info("Epoch[{}] Batch [{}]\tSpeed: {:.2f} samples/sec\t{}", epoch, batches,
                   config.log_every * global_batch / seconds, Format(metric->Get()));
        window = now;
      }
    }
    progress.Clear();
    manager_->DiscardStagedBatches();  // a stop leaves the next batch staged
    if (stopped_by_signal_ != 0) break;  // no epoch end: the checkpoint is mid-epoch
    if (batches == 0) {  // every worker alike: the parts have the same number of batches
      throw ConfigError("epoch " + std::to_string(epoch) + ": the training data gave no batch of " +
                            std::to_string(train.batch_size()) +
                            " (fewer samples than one batch, and the last_batch_handle drops "
                            "them?): nothing would train",
                        __FILE__, __LINE__);
    }
    batches_per_epoch = batches;
    EpochResult r;
    r.epoch = epoch;
    r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    r.samples_per_sec = static_cast<double>((batches - first_batch) * global_batch) / r.seconds;
    ReduceMetric(*metric, *kvstore_);
    // A run resumed at an epoch's last batch trains none of it: no figure rather than NaN.
    if (batches > first_batch) r.train = metric->Get();
    manager_->default_group().executor(0).SetProfiling(false);  // validation may run on the training group
    // A signal during validation stops it (the epoch's training is complete); one that came
    // after the epoch's last step stops the run before another epoch begins.
    int stop = 0;
    if (val) r.val = Evaluate(*val, *val_metric, config.stop_on_signal, &stop);
    if (config.stop_on_signal && stop == 0) stop = AgreeOnStop();
    manager_->default_group().executor(0).SetProfiling(config.profile);
    if (lead) {
      for (const auto& [name, value] : r.train)
        Log().info("Epoch[{}] Train-{}={:.6f}", epoch, name, value);
      Log().info("Epoch[{}] Time cost={:.3f} ({:.0f} samples/sec)", epoch, r.seconds,
                 r.samples_per_sec);
      for (const auto& [name, value] : r.val)
        Log().info("Epoch[{}] Validation-{}={:.6f}", epoch, name, value);
    }
    // Every period's epoch, and the last: a run whose period does not divide its epochs keeps
    // its result (and `resume_epoch: auto` finds the run complete).
    if ((epoch + 1) % config.checkpoint_period == 0 || epoch + 1 == config.epochs || stop != 0) {
      SaveAt(config, {epoch + 1, 0}, global_batch);
    }
    if (on_epoch) on_epoch(r);
    results.push_back(r);
    if (stop != 0) {
      if (lead) Log().warn("Stopping on signal {} after epoch {}", stop, epoch);
      stopped_by_signal_ = stop;
      break;
    }
    train.Reset();
  }
  manager_->default_group().executor(0).SetProfiling(false);
  if (config.profile) profile_.ops = manager_->default_group().executor(0).Profile();
  return results;
}

DataParallelExecutorGroup& Trainer::InferenceGroup(const DataIter& data) {
  if (manager_ && SameShapes(bound_data_, data.provide_data())) return manager_->default_group();
  if (!inference_group_ || inference_group_->batch_size() != data.batch_size()) {
    if (param_names_.empty()) {
      const std::vector<std::string> inputs = InputNames(data);
      for (const std::string& a : symbol_.ListArguments()) {
        if (std::find(inputs.begin(), inputs.end(), a) == inputs.end()) param_names_.push_back(a);
      }
    }
    inference_buckets_.clear();  // they share the group replaced here
    inference_group_ = std::make_unique<DataParallelExecutorGroup>(
        symbol_, contexts_, work_load_, data.provide_data(), data.provide_label(), param_names_,
        false, false, manager_ ? &manager_->default_group() : nullptr);
    if (!manager_) {
      NamingSource(given_source_, [&] {
        inference_group_->SetParams(given_args_, given_aux_, /*allow_extra=*/true);
      });
    }
  }
  return *inference_group_;
}

std::vector<EvalMetric::NameValue> Trainer::Score(DataIter& data, EvalMetric& metric) {
  return Evaluate(data, metric, /*stop_on_signal=*/false, nullptr);
}

std::vector<EvalMetric::NameValue> Trainer::Evaluate(DataIter& data, EvalMetric& metric,
                                                     bool stop_on_signal, int* stop) {
  DataParallelExecutorGroup& group = InferenceGroup(data);
  data.Reset();
  metric.Reset();
  while (data.Next()) {
    if (stop_on_signal && (*stop = AgreeOnStop()) != 0) return {};  // every worker alike
    const DataBatch& batch = data.Value();
    try {
      InferBatch(group, batch).UpdateMetric(metric, batch.label, batch.pad);
    } catch (const LabelError& e) {  // Note [Naming a bad label]
      RethrowNamingTheSample(e, batch.label, batch.index, data);
    }
  }
  ReduceMetric(metric, *kvstore_);
  return metric.Get();
}

// Note [Labels checked up front]
// A metric that cannot read this network's outputs (f1 of a sequence model's) fails in the
// setup, not after the first step: a throwaway metric is updated once on zero labels. A label
// the metrics refuse (outside the classes, fractional) in a data set held in memory (the file
// iterators: IDX, CSV, arrays) is refused in the setup too, naming its sample as in training
// (Note [Naming a bad label]), rather than at its batch or, in validation data, after a whole
// epoch of training: throwaway metrics read every label beside zero predictions of the
// outputs' shapes, as UpdateMetric hands them (a row a sample), at most kBudget bytes at once.
// Where every worker holds the same labels (the default sharding), each checks its share, so
// that one worker reports a bad label, once. Every label counts, also those of samples an epoch
// leaves out (discard, a shorter epoch): a bad one is the data's error either way. Skipped where
// it would cost visibly: over kMostElements prediction elements in a worker's share (large
// per-sample outputs: about 0.1 s a metric), or labels not float32; data read as it goes (image
// records, text) is checked as it is read.
void Trainer::CheckMetricsAndLabels(DataIter& train, DataIter* val, const FitConfig& config) {
  std::unique_ptr<EvalMetric> probe = CreateMetric(config.metrics, config.ignore_label);
  std::vector<NDArray> zero_labels;
  for (const DataDesc& d : train.provide_label()) zero_labels.push_back(NDArray::Zeros(d.shape));
  manager_->UpdateMetric(*probe, zero_labels, 0);

  constexpr int64_t kBudget = 64 << 20;                // bytes of zero predictions
  constexpr int64_t kMostElements = int64_t{1} << 24;
  const std::vector<NDArray>& outputs = manager_->default_group().executor(0).outputs();
  for (DataIter* data : {&train, val}) {
    const std::optional<HeldLabels> held = data ? data->AllLabels() : std::nullopt;
    if (!held || held->labels.empty()) continue;
    const size_t n = std::min(outputs.size(), held->labels.size());
    int64_t first = 0, samples = static_cast<int64_t>(held->index.size());
    if (held->every_worker_alike) {  // this worker's share: [first, first + samples)
      const int64_t workers = kvstore_->num_workers(), rank = kvstore_->rank();
      first = samples * rank / workers;
      samples = samples * (rank + 1) / workers - first;
    }
    int64_t row_elements = 0;  // prediction elements a sample
    for (size_t k = 0; k < n; ++k) {
      const Shape& s = outputs[k].shape();
      row_elements += s[0] > 0 ? s.Size() / s[0] : 0;
    }
    if (samples <= 0 || row_elements == 0 || samples * row_elements > kMostElements) continue;
    const int64_t chunk = std::clamp<int64_t>(kBudget / (4 * row_elements), 1, samples);
    std::vector<NDArray> preds, labels(n), pred_rows(n);
    for (size_t k = 0; k < n; ++k)
      preds.push_back(NDArray::Zeros(outputs[k].shape().WithDim0(chunk)));
    std::unique_ptr<EvalMetric> metric = CreateMetric(config.metrics, config.ignore_label);
    for (int64_t begin = first; begin < first + samples; begin += chunk) {
      const int64_t rows = std::min(chunk, first + samples - begin);
      for (size_t k = 0; k < n; ++k) {
        labels[k] = held->labels[k].Slice(begin, begin + rows);
        pred_rows[k] = preds[k].Slice(0, rows);
      }
      const std::vector<int64_t> rows_index(held->index.begin() + begin,
                                            held->index.begin() + begin + rows);
      try {
        metric->Update(labels, pred_rows);
      } catch (const LabelError& e) {
        RethrowNamingTheSample(e, labels, rows_index, *data);
      } catch (const Error& e) {  // shapes this check cannot make: the batches' check stands
        Log().debug("labels not checked up front: {}", e.what());
        break;
      }
    }
  }
}

DataParallelExecutorGroup& Trainer::InferBatch(DataParallelExecutorGroup& group,
                                                const DataBatch& batch) {
  const bool own_shapes = batch.bucket_key && !batch.provide_data.empty() &&
                          !group.BoundFor(batch.provide_data);
  if (own_shapes && manager_) {  // the manager binds its buckets and shares their parameters
    manager_->LoadDataBatch(batch);
    manager_->Forward(false);
    return manager_->current();
  }
  DataParallelExecutorGroup* run = &group;
  if (own_shapes) {
    std::unique_ptr<DataParallelExecutorGroup>& bucket = inference_buckets_[*batch.bucket_key];
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

void Trainer::Predict(DataIter& data, const std::function<void(const NDArray& rows)>& on_rows) {
  DataParallelExecutorGroup& group = InferenceGroup(data);
  data.Reset();
  bool any = false;
  std::map<const DataParallelExecutorGroup*, NDArray> outputs;  // one per group (bucket), reused
  while (data.Next()) {
    const DataBatch& batch = data.Value();
    DataParallelExecutorGroup& ran = InferBatch(group, batch);
    NDArray& out = outputs[&ran];
    if (out.is_none()) {
      out = NDArray::Empty(ran.executor(0).outputs()[0].shape().WithDim0(ran.batch_size()));
    }
    ran.CopyOutput(0, out);
    on_rows(out.Slice(0, ran.batch_size() - batch.pad));
    any = true;
  }
  COHORT_CHECK(any) << "Predict: the data iterator yielded no batch";
}

NDArray Trainer::Predict(DataIter& data) {
  std::vector<float> rows;
  Shape row_shape;
  bool first = true;
  Predict(data, [&](const NDArray& batch_rows) {
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

void Trainer::GetParams(std::map<std::string, NDArray>* arg_params,
                        std::map<std::string, NDArray>* aux_params) const {
  COHORT_CHECK(manager_ != nullptr) << "GetParams before the trainer was bound";
  manager_->CopyTo(arg_params, aux_params);
  // Auxiliary states (BatchNorm's running statistics) are averaged over every device of every
  // worker, as the manager averages them over its devices: the same whatever the split.
  if (kvstore_->num_workers() > 1) {
    std::vector<double> sums;
    for (const auto& [name, value] : *aux_params) {
      const std::vector<float> v = value.ToVector<float>();
      sums.insert(sums.end(), v.begin(), v.end());
    }
    kvstore_->SumAcrossWorkers(sums);
    size_t at = 0;
    for (auto& [name, value] : *aux_params) {
      std::vector<float> mean(value.size());
      for (float& m : mean) m = static_cast<float>(sums[at++] / kvstore_->num_workers());
      value = NDArray::FromVector<float>(value.shape(), mean);
    }
  }
}

void Trainer::SetParams(const std::map<std::string, NDArray>& arg_params,
                        const std::map<std::string, NDArray>& aux_params,
                        const std::string& source) {
  NamingSource(source, [&] {
    if (manager_) manager_->SetParams(arg_params, aux_params, /*allow_extra=*/true);
    if (inference_group_) inference_group_->SetParams(arg_params, aux_params, /*allow_extra=*/true);
  });
  if (!manager_) {
    given_args_ = arg_params;
    given_aux_ = aux_params;
    given_source_ = source;
  }
}

}  // namespace cohort
