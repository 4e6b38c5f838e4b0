// Trainer: the fit loop, scoring and prediction.
#include "trainer/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <span>
#include <sstream>
#include <tuple>

#include "base/logging.h"
#include "base/name_pattern.h"
#include "base/seed.h"
#include "base/stop_signal.h"
#include "base/timeline.h"
#include "ndarray/convert.h"
#include "trainer/agreement.h"
#include "trainer/checkpoint.h"
#include "trainer/progress.h"
#include "trainer/resume.h"

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

// The tokens of a text batch's labels: its real rows' elements (the last `pad` rows are
// padding) other than ignore_label (a bucket's padding positions).
int64_t CountTokens(const NDArray& label, int64_t pad, std::optional<int64_t> ignore) {
  if (label.dtype() != DType::kFloat32 || !label.ctx().is_host() || label.shape().ndim() == 0 ||
      label.shape()[0] == 0) {
    return 0;
  }
  const int64_t per_row = label.size() / label.shape()[0];
  const int64_t n = (label.shape()[0] - pad) * per_row;
  if (!ignore) return n;
  const float* v = label.data<float>();
  const float skip = static_cast<float>(*ignore);
  int64_t tokens = 0;
  for (int64_t i = 0; i < n; ++i) tokens += v[i] != skip;
  return tokens;
}

// The layers of these parameter names ("fc1" of "fc1_weight"), for messages.
std::string LayerNames(const std::set<std::string>& names) {
  std::set<std::string> layers;
  for (const std::string& n : names) layers.insert(n.substr(0, n.rfind('_')));
  std::string out;
  for (const std::string& l : layers) out += (out.empty() ? "" : ", ") + l;
  return out;
}

// What a fixed_params pattern that matches nothing may have meant: patterns match whole names,
// so "stage1" means "stage1_.*" when parameters begin with it; else the names.
std::string PatternHint(const std::string& pattern, const std::vector<std::string>& names) {
  const bool prefix = std::any_of(names.begin(), names.end(),
                                  [&](const std::string& n) { return n.starts_with(pattern); });
  if (prefix) return ": patterns match whole names: did you mean '" + pattern + "_.*'?";
  std::string listed;
  for (size_t i = 0; i < names.size() && i < 10; ++i) listed += (i ? ", " : "") + names[i];
  return " (its parameters: " + listed + (names.size() > 10 ? ", ..." : "") + ")";
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

}  // namespace

Trainer::Trainer(Symbol symbol, std::vector<Context> contexts, std::vector<double> work_load,
                 std::shared_ptr<KVStore> kvstore)
    : symbol_(std::move(symbol)),
      contexts_(std::move(contexts)),
      work_load_(std::move(work_load)),
      kvstore_(kvstore ? std::move(kvstore) : std::shared_ptr<KVStore>(KVStore::Create("local"))),
      inference_(symbol_, contexts_, work_load_, *kvstore_) {}

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
      throw ConfigError("fixed_params: '" + pattern + "' matches no parameter of the network" +
                            PatternHint(pattern, param_names_),
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
  // Note [Gradient accumulation]: backward adds into the gradients, zeroed after each update.
  manager_ = std::make_shared<DataParallelExecutorManager>(
      symbol_, contexts_, data, param_names_, work_load_, sym_gen, std::nullopt, fixed_names,
      /*inputs_need_grad=*/false, accumulate_ > 1 ? GradReq::kAdd : GradReq::kWrite);
  if (!fixed_names.empty()) {
    int64_t elements = 0;
    for (size_t i = 0; i < param_names_.size(); ++i) {
      if (frozen_[i]) elements += manager_->param_arrays()[i][0].size();
    }
    Log().info("Frozen: {} of {} parameter(s), {} elements (fixed_params)", fixed_names.size(),
               param_names_.size(), elements);
  }
  AttachManager(data.provide_data());
}

void Trainer::Adopt(std::shared_ptr<DataParallelExecutorManager> manager,
                    const std::vector<DataDesc>& data_shapes,
                    const std::vector<std::string>& param_names) {
  COHORT_CHECK(!manager_) << "Adopt: the trainer is bound already";
  COHORT_CHECK_EQ(manager->param_arrays().size(), param_names.size())
      << "Adopt: parameter names for the manager's parameters";
  manager_ = std::move(manager);
  param_names_ = param_names;
  frozen_.assign(param_names_.size(), false);
  AttachManager(data_shapes);
}

// Inference, the kvstore's keys and the overlap of reduction with backward, over manager_.
void Trainer::AttachManager(const std::vector<DataDesc>& data_shapes) {
  inference_.UseTraining(manager_.get(), data_shapes, param_names_);
  half_grads_.assign(param_names_.size(), {});
  for (int i = 0; i < static_cast<int>(param_names_.size()); ++i) {
    if (frozen_[i]) continue;
    keys_.push_back(i);
    std::vector<NDArray> grads = manager_->grad_arrays()[i];
    const DType dtype = grads[0].dtype();
    if (dtype == DType::kFloat16 || dtype == DType::kBFloat16) {  // Note [Multi-precision weights]
      if (grads[0].ctx().is_gpu()) {
        throw ConfigError("parameter '" + param_names_[i] + "' is a " +
                              std::string(DTypeName(dtype)) +
                              " weight on a GPU: the training loop keeps float32 master copies "
                              "of half-precision weights on host devices only (on GPUs, "
                              "precision: float16 or bfloat16 keeps the weights in float32)",
                          __FILE__, __LINE__);
      }
      half_grads_[i].half = grads;
      for (NDArray& g : grads) g = NDArray::Zeros(g.shape(), DType::kFloat32, g.ctx());
      half_grads_[i].wide = grads;
    }
    grads_by_key_.push_back(grads);
    params_by_key_.push_back(manager_->param_arrays()[i]);
    device0_grads_.push_back(grads[0]);
  }
  if (!ReducesGradients()) return;  // Note [One device updates itself]
  bucketer_ = std::make_unique<GradientBucketer>(*kvstore_);
  if (bucketer_->overlaps()) {  // Note [Overlapped push]
    manager_->SetGradientReadyCallback([this](int p) {
      if (!reducing_) return;
      WidenGradients(p);
      bucketer_->KeyReady(p);
    });
  }
}

const Optimizer* Trainer::optimizer() const {
  if (update_on_kvstore_) return kvstore_->optimizer();
  return updaters_.empty() ? nullptr : updaters_[0].get();
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

bool Trainer::HasHalfWeights() const {
  return std::any_of(half_grads_.begin(), half_grads_.end(),
                     [](const HalfGradients& g) { return !g.half.empty(); });
}

bool Trainer::UpdatesOnKVStore(const FitConfig& config) const {
  // Note [Global norm clipping], Note [Loss scaling]: the step's rescale_grad is the trainer's.
  return config.update_on_kvstore && kvstore_->SupportsUpdateOnKVStore() && ReducesGradients() &&
         config.clip_global_norm == 0 && config.loss_scaling != "dynamic" &&
         config.accumulate == 1 &&  // Note [Gradient accumulation]: a short window's rescale
         !HasHalfWeights();  // Note [Multi-precision weights]: the store keeps float32 values
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
  } else if (config.keep_params) {  // Adopt's manager holds them (Module.init_params)
    manager_->CopyTo(&args, &aux);
  } else {
    Initializer init(config.initializer);
    // Module.init_params' order (sorted names, arguments then auxiliary states) on the stream
    // mx.random.seed(seed) starts: Module.fit after mx.random.seed(seed) starts from these.
    SeedStream draws(config.seed);
    // A variable's "__init__" attribute overrides the initializer, as in MXNet's Module.
    const std::map<std::string, op::Attrs> attrs = symbol_.VariableAttrs();
    auto fill = [&](const std::vector<std::string>& names,
                    const std::vector<std::vector<NDArray>>& arrays,
                    std::map<std::string, NDArray>* values) {
      std::map<std::string, size_t> sorted;
      for (size_t i = 0; i < names.size(); ++i) sorted.emplace(names[i], i);
      for (const auto& [name, i] : sorted) {
        NDArray value = NDArray::Empty(arrays[i][0].shape());
        const std::string* init_attr = VariableAttr(attrs, name, "__init__");
        init(name, value, draws, init_attr ? *init_attr : "");
        (*values)[name] = value;
      }
    };
    fill(param_names_, manager_->param_arrays(), &args);
    fill(manager_->aux_names(), manager_->aux_arrays(), &aux);
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
    std::vector<NDArray> weights = manager_->param_arrays()[i];
    // The store holds float32 values: half-precision weights go through float32 copies (exact).
    if (!half_grads_[i].half.empty()) {
      for (NDArray& w : weights) w = w.AsType(DType::kFloat32);
    }
    device0.push_back(weights[0]);
    devices.push_back(weights);
  }
  // With the update on the kvstore, device 0's weights are the store: updated in place, no copy.
  kvstore_->ShareStorageOnInit(UpdatesOnKVStore(config));
  kvstore_->Init(keys, device0);
  kvstore_->Pull(keys, devices);
  for (size_t k = 0; k < keys.size(); ++k) {
    if (half_grads_[keys[k]].half.empty()) continue;
    for (int d = 0; d < manager_->num_devices(); ++d) {
      devices[k][d].CopyTo(manager_->param_arrays()[keys[k]][d]);
    }
  }
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
                            layer + "' (no parameter named " + layer +
                            "_...); layers with "
                            "parameters: " +
                            LayerNames(known),
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
  if (initialized.empty()) return;
  std::string names, missing;
  int listed = 0, count = 0;
  for (const std::string& n : initialized) {
    names += (names.empty() ? "" : ", ") + n;
    if (reinit(n)) continue;
    ++count;
    if (++listed <= 10) missing += (missing.empty() ? "" : ", ") + n;
  }
  if (count > 0 && !config.allow_missing) {  // fine-tuning from the wrong file, say
    throw ConfigError("initial parameters: the network's " + missing +
                          (count > 10 ? " (and " + std::to_string(count - 10) + " more)" : "") +
                          " are not in them (" + std::to_string(count) +
                          " missing): list their layers under reinit, or set "
                          "model.allow_missing: true to initialize them",
                      __FILE__, __LINE__);
  }
  Log().info("Initialized {} parameter(s) the initial parameters did not give: {}",
             initialized.size(), names);
}

void Trainer::InitOptimizer(const FitConfig& config, int64_t global_batch) {
  OptimizerOptions options = config.optimizer_options;
  options.rescale_grad = config.rescale_grad.value_or(
      1.0 / static_cast<double>(global_batch * config.accumulate));  // an update's samples
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
  } else if (config.update_on_kvstore && !update_on_kvstore_ && config.clip_global_norm > 0) {
    Log().info(
        "optimizer.clip_global_norm: every device updates its own weights (the norm "
        "needs every gradient before any update)");
  } else if (config.update_on_kvstore && !update_on_kvstore_ && config.loss_scaling == "dynamic") {
    Log().info(
        "loss_scaling: every device updates its own weights (each step divides its own loss "
        "scale out)");
  } else if (config.update_on_kvstore && !update_on_kvstore_ && HasHalfWeights()) {
    Log().info(
        "half-precision weights: every device updates its own float32 master copies (Note "
        "[Multi-precision weights])");
  } else if (config.update_on_kvstore && !update_on_kvstore_) {
    Log().info("kvstore {} keeps no weights (Note [NCCL kvstore]): every device updates its own",
               kvstore_->type());
  }
  clip_global_norm_ = config.clip_global_norm;
  int init_log2 = 0;
  std::frexp(config.loss_scale_init, &init_log2);  // 2^k is 0.5 · 2^(k+1)
  loss_scaler_ = LossScaler({.enabled = config.loss_scaling == "dynamic",
                             .init_log2 = init_log2 - 1,
                             .growth_interval = config.loss_scale_growth_interval});
  if (!states.empty()) {
    loss_scaler_.Restore(CheckpointEntries(config.checkpoint_prefix, begin), states);
  }
  updaters_.clear();
  on_nonfinite_ = config.on_nonfinite;
  kvstore_->SetNonFiniteCheck(update_on_kvstore_, config.on_nonfinite == OnNonFinite::kSkipStep);
  // The states file is checked against the network before any of it is used (Optimizer::
  // LoadStates): a corrupt or foreign file is exit 2 naming the entry, not a crash mid-step.
  ParamsFile states_file;
  std::map<int, StateTarget> weights;
  if (!states.empty()) {
    states_file = LoadParamsFile(states);
    for (size_t k = 0; k < keys_.size(); ++k) {
      const NDArray& w = params_by_key_[k][0];
      weights.emplace(keys_[k], StateTarget(w.shape(), w.dtype()));
    }
  }
  if (update_on_kvstore_) {
    if (!states.empty()) optimizer->LoadStates(states_file, states, weights);
    kvstore_->SetOptimizer(std::move(optimizer));
  } else {
    for (int d = 0; d < manager_->num_devices(); ++d) {
      updaters_.push_back(optimizer->Clone());
      if (!states.empty()) updaters_.back()->LoadStates(states_file, states, weights);
    }
  }
}

// Note [Overlapped push]: the kvstore reduces buckets as Backward reports gradients ready.
void Trainer::Backward(bool reduce) {
  if (reduce) StartReducing(/*after_backward=*/false);
  manager_->SetLossScale(loss_scaler_.scale());  // Note [Loss scaling]
  manager_->Backward();
  // A bucketer that does not overlap sums every key in Finish: widen them for it here.
  if (reducing_ && !bucketer_->overlaps()) {
    for (int key : keys_) WidenGradients(key);
  }
  reducing_ = false;
}

void Trainer::StartReducing(bool after_backward) {
  if (!bucketer_) return;
  // Without update_on_kvstore every device gets the sum in its gradients.
  bucketer_->Start(keys_, grads_by_key_, update_on_kvstore_ ? params_by_key_ : grads_by_key_,
                   /*priorities=*/keys_);
  if (!after_backward) {
    reducing_ = true;
    return;
  }
  for (int key : keys_) {  // every gradient is final already
    WidenGradients(key);
    bucketer_->KeyReady(key);
  }
}

// Note [Gradient accumulation]
// With accumulate K > 1 the executors add each backward's gradients into their buffers (grad_req
// add): K batches run forward and backward, and the K-th's backward starts the reduction over
// devices and workers (overlapped as usual), then one update divides the sums by K global
// batches (rescale_grad) and the buffers are zeroed. An epoch whose batches do not fill its last
// window updates with the batches there are (reduced after its last backward). Checkpoints and
// stops on a signal wait for the end of a window, so a resumed run starts windows where the
// uninterrupted one did; the learning-rate schedule counts updates.
void Trainer::ZeroGradients() {
  for (int key : keys_) {
    for (const NDArray& grad : manager_->grad_arrays()[key]) grad.Fill(0);
  }
}

void Trainer::WidenGradients(int p) {
  const HalfGradients& g = half_grads_[p];
  for (size_t d = 0; d < g.half.size(); ++d) {
    WidenToFloat(g.half[d].dtype(), g.half[d].raw_data(), g.half[d].size(),
                 static_cast<float*>(g.wide[d].raw_data()));
  }
}

// Note [Non-finite gradients]: every worker holds the same sums, so all decide alike.
void Trainer::Update(CheckpointPosition step, int64_t batches) {
  if (bucketer_) {
    bucketer_->Finish();
  } else {  // Note [One device updates itself]: its gradients were not reduced, nor widened
    for (int key : keys_) WidenGradients(key);
  }
  const std::vector<int> bad = NonFiniteParams();
  const float scale = loss_scaler_.scale();
  const LossScaler::Verdict verdict = loss_scaler_.AfterStep(bad.empty());
  if (verdict == LossScaler::Verdict::kSkip) {  // Note [Loss scaling]
    Log().debug(
        "epoch {}, batch {}: the gradient overflowed at loss scale {}: step skipped, "
        "scale {} from now",
        step.epoch, step.batch + 1, scale, loss_scaler_.scale());
    return;
  }
  if (verdict == LossScaler::Verdict::kNotFiniteUnscaled) {
    StopOrSkipNonFinite(step, bad);
    return;
  }
  if (update_on_kvstore_) return;
  // The gradients the optimizer sees: the sums divided by the loss scale (exact: a power of
  // two), times rescale_grad, then clipped to the global norm.
  const double base = updaters_.empty() ? 1.0 : updaters_[0]->options().rescale_grad;
  // A window of fewer batches than accumulate_ (an epoch's last) averages over those.
  const double rescale =
      base / scale * static_cast<double>(accumulate_) / static_cast<double>(batches);
  const double step_rescale = rescale * GlobalNormFactor(rescale);
  for (size_t d = 0; d < updaters_.size(); ++d) {
    if (step_rescale != base) updaters_[d]->set_rescale_grad(step_rescale);
    for (size_t k = 0; k < keys_.size(); ++k) {  // (float32 gradients: Note [Multi-precision
      updaters_[d]->Update(keys_[k], params_by_key_[k][d], grads_by_key_[k][d]);  // weights])
    }
    if (step_rescale != base) updaters_[d]->set_rescale_grad(base);
  }
}

// A step whose summed gradient holds a NaN or an infinity (unscaled): on_nonfinite decides.
void Trainer::StopOrSkipNonFinite(CheckpointPosition step, const std::vector<int>& bad) {
  // Counted as the progress lines and checkpoint names count: the n-th batch is batch n.
  const std::string where =
      "epoch " + std::to_string(step.epoch) + ", batch " + std::to_string(step.batch + 1);
  const std::string what =
      "the summed gradient of '" + param_names_[bad[0]] + "' holds NaN or infinity" +
      (bad.size() > 1 ? " (and of " + std::to_string(bad.size() - 1) + " other parameter(s))" : "");
  if (on_nonfinite_ == OnNonFinite::kStop) {
    throw AgreedError(
        where + ": " + what + "; training stopped (on_nonfinite: skip_step skips such steps)",
        __FILE__, __LINE__);
  }
  ++skipped_steps_;
  Log().warn("{}: {}; the step's update is skipped ({} so far)", where, what, skipped_steps_);
}

// Note [Global norm clipping]: after the sums, every device (and every worker) holds the same
// gradients, so device 0's give the norm and all scale alike: the factor PyTorch's
// clip_grad_norm_ takes, max_norm / (norm + 1e-6) when the norm is above max_norm, folded into
// this step's rescale_grad. The norm of the gradients as the optimizer sees them: the sums times
// rescale_grad, before clip_gradient's elementwise clip. Summed in double over the parameters in
// key order (GPU gradients are read through a host copy kept between steps).
double Trainer::GlobalNormFactor(double rescale) {
  if (clip_global_norm_ <= 0) return 1.0;
  if (norm_staging_.size() != device0_grads_.size()) norm_staging_.resize(device0_grads_.size());
  double squares = 0;
  for (size_t k = 0; k < device0_grads_.size(); ++k) {
    const NDArray& grad = device0_grads_[k].OnHost(&norm_staging_[k]);
    const float* g = grad.data<float>();
    for (int64_t j = 0; j < grad.size(); ++j) squares += static_cast<double>(g[j]) * g[j];
  }
  const double norm = std::sqrt(squares) * std::abs(rescale);
  return norm > clip_global_norm_ ? clip_global_norm_ / (norm + 1e-6) : 1.0;
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
  std::map<std::string, int64_t> entries = loss_scaler_.CheckpointEntries();
  if (global_batch > 0) entries["checkpoint:global_batch"] = global_batch;
  SaveCheckpoint(config.checkpoint_prefix, at, symbol_, args, aux, optimizer(), entries);
  Log().info("Saved checkpoint to \"{}\"", CheckpointParamsPath(config.checkpoint_prefix, at));
}

// The best epoch's parameters as PREFIX-best.params (Note [Early stopping]): gathered by every
// worker (a collective), written by rank 0, atomically.
void Trainer::SaveBest(const FitConfig& config) {
  if (config.checkpoint_prefix.empty()) return;
  std::map<std::string, NDArray> args, aux;
  GetParams(&args, &aux);
  if (kvstore_->rank() == 0) SaveArgAuxParams(config.checkpoint_prefix + "-best.params", args, aux);
}

// What every worker of a job must hold alike (Note [Agreement]).
std::vector<std::pair<std::string, std::string>> Trainer::AgreementItems(
    const DataIter& train, const FitConfig& config) const {
  std::ostringstream shapes, optimizer, epochs;
  for (size_t i = 0; i < param_names_.size(); ++i) {
    shapes << param_names_[i] << manager_->param_arrays()[i][0].shape() << (frozen_[i] ? "F " : " ");
  }
  const OptimizerOptions& o = config.optimizer_options;
  // Every declared setting (Note [Declared options]): a key added to the optimizer is agreed on.
  optimizer << config.optimizer << " " << OptimizerOptions::Table().Show(o) << " rescale "
            << config.rescale_grad.value_or(0) << " schedule " << config.lr_schedule
            << " on kvstore " << config.update_on_kvstore << " clip_global_norm "
            << config.clip_global_norm << " accumulate " << config.accumulate << " loss scaling "
            << config.loss_scaling << " from " << config.loss_scale_init << " growing every "
            << config.loss_scale_growth_interval;
  epochs << config.begin_epoch << "+" << config.begin_batch << " to " << config.epochs
         << " on non-finite " << static_cast<int>(config.on_nonfinite) << " early stopping "
         << EarlyStoppingConfig::Table().Show(config.early_stopping);
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

// One Fit's state, from its setup to its last epoch.
struct Trainer::Run {
  Run(const FitConfig& c, const FitHooks& h, bool leads)
      : config(c), hooks(h), lead(leads), progress(stderr, leads && c.progress) {}
  FitConfig config;
  const FitHooks& hooks;
  bool lead;
  ProgressLine progress;
  int64_t global_batch = 0;
  std::shared_ptr<EvalMetric> metric, val_metric;
  int epoch = 0;
  int64_t batches = 0;              // of this epoch, done
  int64_t first_batch = 0;          // this epoch's first trained (after a mid-epoch resume)
  int64_t batches_per_epoch = 0;    // from the data, else known after the first epoch
  Clock::time_point start, window;  // of the epoch, of the speedometer's window
  bool have_batch = false;          // the iterator holds the next step's batch
  int64_t epoch_tokens = 0, window_tokens = 0;  // this worker's (FitConfig::count_tokens)
  int64_t overflow_skips_before = 0;            // the loss scaler's count as the epoch began
  int64_t accumulated = 0;  // batches in the accumulation window (Note [Gradient accumulation])
  // This step's labels and samples' positions (the iterator moves on before its metric).
  std::vector<NDArray> step_labels;
  std::vector<int64_t> step_index;
};

std::vector<EpochResult> Trainer::Fit(DataIter& train, DataIter* val, const FitConfig& given,
                                      const std::function<void(const EpochResult&)>& on_epoch,
                                      const FitHooks& hooks) {
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
  CheckEpochsLeft(config);
  Run run(config, hooks, kvstore_->rank() == 0);
  Prepare(train, val, run);
  // However Fit ends (a stop, an error), no batch stays staged for a later Fit or Predict.
  struct DiscardStaged {
    DataParallelExecutorManager& manager;
    ~DiscardStaged() { manager.DiscardStagedBatches(); }
  } discard_staged{*manager_};
  std::optional<EarlyStopping> early;  // Note [Early stopping]
  if (config.early_stopping.patience > 0) {
    std::vector<std::string> names;
    if (val) {
      for (const auto& [name, value] : run.val_metric->Get()) names.push_back(name);
    }
    early.emplace(config.early_stopping, names);
  }
  std::vector<EpochResult> results;
  training_started_ = true;
  for (run.epoch = config.begin_epoch; run.epoch < config.epochs; ++run.epoch) {
    TrainEpoch(train, run);
    if (stopped_by_signal_ != 0) break;  // no epoch end: the checkpoint is mid-epoch
    int stop = 0;
    const EpochResult r = EndEpoch(val, run, &stop);
    if (on_epoch) on_epoch(r);
    results.push_back(r);
    if (stop != 0) {
      if (run.lead) Log().warn("Stopping on signal {} after epoch {}", stop, run.epoch);
      stopped_by_signal_ = stop;
      break;
    }
    if (early) {
      const EarlyStopping::Verdict verdict = early->Observe(run.epoch, r.val);
      if (verdict == EarlyStopping::Verdict::kImproved) SaveBest(config);
      if (verdict == EarlyStopping::Verdict::kStop) {
        if (run.lead) {
          Log().info(
              "Early stopping after epoch {}: Validation-{} has not improved for {} "
              "epoch(s) (best {:.6f} at epoch {})",
              run.epoch, early->metric(), early->patience(), early->best(), early->best_epoch());
        }
        break;
      }
    }
    train.Reset();
  }
  Executor& profiled = manager_->default_group().executor(0);
  profiled.SetProfiling(false);
  if (config.profile) profile_.ops = profiled.Profile();
  return results;
}

// Binding, agreement, parameters, optimizer and the checks that can fail before any step.
void Trainer::Prepare(DataIter& train, DataIter* val, Run& run) {
  const FitConfig& config = run.config;
  stopped_by_signal_ = 0;
  skipped_steps_ = 0;
  if (manager_ && config.accumulate != accumulate_) {  // the executors' grad_req says which
    throw ConfigError("accumulate " + std::to_string(config.accumulate) +
                          ": this trainer's executors were bound for " +
                          std::to_string(accumulate_) + " (set it before the first Fit)",
                      __FILE__, __LINE__);
  }
  accumulate_ = config.accumulate;
  Bind(train, config.fixed_params);
  CheckWorkersAgree(*kvstore_, AgreementItems(train, config));  // Note [Agreement]
  InitParams(config);
  run.global_batch = train.batch_size() * kvstore_->num_workers();
  CheckResumedBatching(config, run.global_batch, kvstore_->num_workers());
  InitOptimizer(config, run.global_batch);
  CheckMetricsAndLabels(train, val, config);
  // Each epoch reshuffles, and may roll samples over into the next: replay the epochs before a
  // resumed one so that the data order matches an uninterrupted run.
  for (int e = 0; e < config.begin_epoch; ++e) train.SkipEpoch();
  run.metric = run.hooks.train_metric
                   ? run.hooks.train_metric
                   : std::shared_ptr<EvalMetric>(CreateMetric(config.metrics, config.ignore_label));
  run.val_metric =
      run.hooks.val_metric
          ? run.hooks.val_metric
          : std::shared_ptr<EvalMetric>(CreateMetric(config.metrics, config.ignore_label));
  profile_ = StepProfile();
  manager_->default_group().executor(0).ClearProfile();
  manager_->default_group().executor(0).SetProfiling(config.profile);
  if (run.lead && !config.checkpoint_prefix.empty()) {
    if (const int n = RemoveStaleCheckpointTemporaries(config.checkpoint_prefix); n > 0) {
      Log().info("Removed {} temporary file(s) a killed run left beside {}", n,
                 config.checkpoint_prefix);
    }
  }
}

// The epoch's steps, until the data ends or the workers agree on a signal.
void Trainer::TrainEpoch(DataIter& train, Run& run) {
  run.metric->Reset();
  if (const std::optional<int64_t> n = train.BatchesThisEpoch()) run.batches_per_epoch = *n;
  // A mid-epoch resume skips the batches done (Note [Checkpoint positions]); the epoch's
  // training metric covers the batches after them.
  run.batches = run.first_batch = SkipDoneBatches(train, run.config, run.epoch);
  run.epoch_tokens = run.window_tokens = 0;
  run.start = run.window = Clock::now();
  run.overflow_skips_before = loss_scaler_.skipped_steps();
  run.accumulated = 0;
  timeline::LabelThread("main");
  {
    timeline::Span span("data");
    run.have_batch = train.Next();
    if (run.have_batch) manager_->StageDataBatch(train.Value());
  }
  while (run.have_batch) {
    const StepTimes times = Step(train, run);
    for (auto [sum, t] : {std::pair{&profile_.data, times.data},
                          {&profile_.forward, times.forward},
                          {&profile_.backward, times.backward},
                          {&profile_.update, times.update},
                          {&profile_.metric, times.metric}}) {
      *sum += t;
    }
    ++profile_.steps;
    ++run.batches;
    if (AfterStep(run)) break;
    if (run.hooks.on_batch_end) run.hooks.on_batch_end(run.epoch, run.batches - 1);
  }
  run.progress.Clear();
  manager_->DiscardStagedBatches();                   // a stop leaves the next batch staged
  if (stopped_by_signal_ == 0 && run.batches == 0) {  // every worker alike
    throw ConfigError("epoch " + std::to_string(run.epoch) +
                          ": the training data gave no batch of " +
                          std::to_string(train.batch_size()) +
                          " (fewer samples than one batch, and the last_batch_handle drops "
                          "them?): nothing would train",
                      __FILE__, __LINE__);
  }
  run.batches_per_epoch = run.batches;
}

// Note [Input staging]: the next batch is fetched and staged once backward is enqueued, as
// MXNet's fit loop prepares it: on GPUs the host's copy overlaps backward, before the update's
// non-finite check waits for the gradients (and with overlap on CPU devices, the buckets still
// being reduced). So the step keeps its own copy of the labels, which the iterator may reuse.
StepTimes Trainer::Step(DataIter& train, Run& run) {
  timeline::Span step_span("step");
  const auto t0 = Clock::now();
  {
    timeline::Span span("load");
    manager_->LoadDataBatch(train.Value());
  }
  const DataBatch& batch = train.Value();
  // Note [Random streams]: keyed by the step and the global batch position alone.
  manager_->SetRandomSeed(MixSeed(MixSeed(run.config.seed, run.epoch), run.batches),
                          kvstore_->rank() * train.batch_size());
  const auto t1 = Clock::now();
  {
    timeline::Span span("forward");
    manager_->Forward(true);
  }
  const auto t2 = Clock::now();
  // Note [Gradient accumulation]: the window's last batch reduces and updates.
  const bool closes_window = run.accumulated + 1 == accumulate_;
  {
    timeline::Span span("backward");
    try {
      Backward(closes_window);
    } catch (const LabelError& e) {  // Note [Naming a bad label]
      RethrowNamingTheSample(e, batch.label, batch.index, train);
    }
  }
  const auto t3 = Clock::now();
  const int64_t pad = batch.pad;
  {
    timeline::Span span("data");
    CopyArraysInto(batch.label, &run.step_labels);
    run.step_index.assign(batch.index.begin(), batch.index.end());
    if (run.config.count_tokens && !run.step_labels.empty()) {
      const int64_t tokens = CountTokens(run.step_labels[0], pad, run.config.ignore_label);
      run.epoch_tokens += tokens;
      run.window_tokens += tokens;
    }
    run.have_batch = train.Next();
    if (run.have_batch) manager_->StageDataBatch(train.Value());
  }
  const auto t4 = Clock::now();
  ++run.accumulated;
  if (closes_window || !run.have_batch) {
    timeline::Span span("update");
    if (!closes_window) StartReducing(/*after_backward=*/true);  // the epoch's last, short
    Update({run.epoch, run.batches}, run.accumulated);
    if (accumulate_ > 1) ZeroGradients();
    run.accumulated = 0;
  }
  const auto t5 = Clock::now();
  {
    timeline::Span span("metric");
    try {
      manager_->UpdateMetric(*run.metric, run.step_labels, pad);
    } catch (const LabelError& e) {
      RethrowNamingTheSample(e, run.step_labels, run.step_index, train);
    }
  }
  const auto t6 = Clock::now();
  auto seconds = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  return {.data = seconds(t0, t1) + seconds(t3, t4),
          .forward = seconds(t1, t2),
          .backward = seconds(t2, t3),
          .update = seconds(t4, t5),
          .metric = seconds(t5, t6)};
}

// After a step: a stop on a signal (returns true), checkpoints, the progress line and the log.
bool Trainer::AfterStep(Run& run) {
  const FitConfig& config = run.config;
  const CheckpointPosition at{run.epoch, run.batches};
  // Mid-window the summed gradients are in no checkpoint: stops and checkpoints wait for its end.
  const bool between_windows = run.accumulated == 0;
  if (config.stop_on_signal && between_windows) {
    if (const int signo = AgreeOnStop(); signo != 0) {  // Note [Stop on a signal]
      run.progress.Clear();
      if (run.lead) {
        Log().warn("Stopping on signal {} after epoch {}, batch {}", signo, run.epoch, run.batches);
      }
      SaveAt(config, at, run.global_batch);
      stopped_by_signal_ = signo;
      return true;
    }
  }
  if (config.checkpoint_every_steps > 0 && between_windows &&
      run.batches % config.checkpoint_every_steps == 0) {
    SaveAt(config, at, run.global_batch);
  }
  if (run.progress.Due()) {
    const double seconds = std::chrono::duration<double>(Clock::now() - run.start).count();
    // Tokens as this worker's times the workers (the exact sum is the epoch's).
    const double tokens = static_cast<double>(run.epoch_tokens * kvstore_->num_workers());
    const double per_batch = seconds / static_cast<double>(run.batches - run.first_batch);
    const double eta = run.batches_per_epoch > run.batches
                           ? per_batch * static_cast<double>(run.batches_per_epoch - run.batches)
                           : -1;
    run.progress.Update(run.epoch, run.batches, run.batches_per_epoch,
                        (run.batches - run.first_batch) * run.global_batch / seconds,
                        run.metric->Get(), config.count_tokens ? tokens / seconds : -1, eta);
  }
  if (run.lead && config.log_every > 0 && run.batches % config.log_every == 0) {
    const auto now = Clock::now();
    const double seconds = std::chrono::duration<double>(now - run.window).count();
    run.progress.Clear();
    const std::string tokens =
        config.count_tokens ? fmt::format(", {:.0f} tokens/sec",
                                          run.window_tokens * kvstore_->num_workers() / seconds)
                            : "";
    Log().info("Epoch[{}] Batch [{}]\tSpeed: {:.2f} samples/sec{}\t{}", run.epoch, run.batches,
               config.log_every * run.global_batch / seconds, tokens, Format(run.metric->Get()));
    run.window = now;
    run.window_tokens = 0;
  }
  return false;
}

// The epoch's result: training metric over the workers, validation, the log and the epoch's
// checkpoint. *stop: the signal the workers agreed on during or after validation, or 0.
EpochResult Trainer::EndEpoch(DataIter* val, Run& run, int* stop) {
  const FitConfig& config = run.config;
  EpochResult r;
  r.epoch = run.epoch;
  r.seconds = std::chrono::duration<double>(Clock::now() - run.start).count();
  r.samples_per_sec =
      static_cast<double>((run.batches - run.first_batch) * run.global_batch) / r.seconds;
  ReduceMetric(*run.metric, *kvstore_);
  if (const Optimizer* o = optimizer()) r.lr = o->CurrentLR();
  if (loss_scaler_.enabled()) {
    r.loss_scale = loss_scaler_.scale();
    r.overflow_skips = loss_scaler_.skipped_steps() - run.overflow_skips_before;
  }
  if (config.count_tokens) {
    double tokens = static_cast<double>(run.epoch_tokens);
    if (kvstore_->num_workers() > 1) kvstore_->SumAcrossWorkers(std::span<double>(&tokens, 1));
    r.tokens = static_cast<int64_t>(tokens);
    r.tokens_per_sec = tokens / r.seconds;
  }
  // A run resumed at an epoch's last batch trains none of it: no figure rather than NaN.
  if (run.batches > run.first_batch) r.train = run.metric->Get();
  Executor& profiled = manager_->default_group().executor(0);
  profiled.SetProfiling(false);  // validation may run on the training group
  // A signal during validation stops it (the epoch's training is complete); one that came
  // after the epoch's last step stops the run before another epoch begins.
  *stop = 0;
  if (val) {
    // Asked before every batch: the progress line says where validation is (a terminal only).
    const int64_t total = val->BatchesThisEpoch().value_or(0);
    int64_t done = 0;
    auto before_batch = [&] {
      if (run.progress.Due()) run.progress.UpdateValidation(run.epoch, done, total);
      ++done;
      return config.stop_on_signal && (*stop = AgreeOnStop()) != 0;
    };
    r.val = inference_.Score(*val, *run.val_metric, before_batch);
    run.progress.Clear();
  }
  if (config.stop_on_signal && *stop == 0) *stop = AgreeOnStop();
  profiled.SetProfiling(config.profile);
  if (run.lead && config.log_epochs) {
    for (const auto& [name, value] : r.train)
      Log().info("Epoch[{}] Train-{}={:.6f}", run.epoch, name, value);
    Log().info(
        "Epoch[{}] Time cost={:.3f} ({:.0f} samples/sec{}), lr={:.6g}{}", run.epoch, r.seconds,
        r.samples_per_sec,
        config.count_tokens ? fmt::format(", {:.0f} tokens/sec", r.tokens_per_sec) : "", r.lr,
        loss_scaler_.enabled() ? fmt::format(", loss scale {:g} ({} overflow step(s) skipped)",
                                             r.loss_scale, r.overflow_skips)
                               : "");
    for (const auto& [name, value] : r.val)
      Log().info("Epoch[{}] Validation-{}={:.6f}", run.epoch, name, value);
  }
  // Every period's epoch, and the last: a run whose period does not divide its epochs keeps
  // its result (and `resume_epoch: auto` finds the run complete).
  if ((run.epoch + 1) % config.checkpoint_period == 0 || run.epoch + 1 == config.epochs ||
      *stop != 0) {
    SaveAt(config, {run.epoch + 1, 0}, run.global_batch);
  }
  return r;
}

std::vector<EvalMetric::NameValue> Trainer::Score(DataIter& data, EvalMetric& metric) {
  return inference_.Score(data, metric);
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

void Trainer::Predict(
    DataIter& data,
    const std::function<void(const NDArray& rows, const DataBatch& batch)>& on_rows) {
  inference_.Predict(data, on_rows);
}

NDArray Trainer::Predict(DataIter& data) { return inference_.Predict(data); }

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
  if (manager_) {
    NamingSource(source,
                 [&] { manager_->SetParams(arg_params, aux_params, /*allow_extra=*/true); });
  }
  inference_.SetParams(arg_params, aux_params, source);
}

}  // namespace cohort
