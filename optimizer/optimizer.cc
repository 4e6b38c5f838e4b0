// Optimizer kinds and state handling, with MXNet 1.x's update rules (optimizer/update_rule.h).
#include "optimizer/optimizer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <set>
#include <string_view>

#include "base/random_stream.h"
#include "base/seed.h"
#include "base/thread_arena.h"
#include "ndarray/convert.h"
#include "ndarray/params_io.h"
#include "optimizer/update_rule.h"

namespace cohort {

// optimizer_gpu.cu: n weights of GPU `device` updated on the default stream, which orders it
// after the executors' kernels (Note [GPU streams]); LAMB's step whole (phases and norms).
void ApplyUpdateOnGpu(const UpdateParams& p, int device, float* w, const float* g, float* s0,
                      float* s1, float* s2, int64_t n);
void LambStepOnGpu(const LambRule& rule, int device, float* w, const float* g, float* mean,
                   float* var, float* direction, double* sums, int64_t n);
// dst = src converted (float32 <-> float16 or bfloat16), n elements of GPU `device`, on the
// default stream (Note [Multi-precision weights]).
void CastOnGpu(int device, const void* src, DType from, void* dst, DType to, int64_t n);

namespace {

constexpr const char* kNames =
    "sgd, nag, adam, adamw, rmsprop, signum, ftml, ftrl, adagrad, adadelta, adamax, sgld or lamb";

// The rule of `name` with these options; LAMB is not an UpdateKind (*lamb is set instead).
UpdateKind KindOf(const std::string& name, const OptimizerOptions& o, bool* lamb) {
  *lamb = name == "lamb";
  if (name == "sgd") return UpdateKind::kSGDMom;  // (without momentum: on no state, update_rule.h)
  if (name == "nag") return UpdateKind::kNAGMom;
  if (name == "adam") return UpdateKind::kAdam;
  if (name == "adamw") return UpdateKind::kAdamW;
  if (name == "rmsprop") return o.centered ? UpdateKind::kRMSPropAlex : UpdateKind::kRMSProp;
  if (name == "signum") return o.momentum > 0 ? UpdateKind::kSignum : UpdateKind::kSignSGD;
  if (name == "ftml") return UpdateKind::kFtml;
  if (name == "ftrl") return UpdateKind::kFtrl;
  if (name == "adagrad") return UpdateKind::kAdaGrad;
  if (name == "adadelta") return UpdateKind::kAdaDelta;
  if (name == "adamax") return UpdateKind::kAdamax;
  if (name == "sgld") return UpdateKind::kSGLD;
  if (name == "lamb") return UpdateKind::kAdam;  // (unused)
  COHORT_THROW() << "unknown optimizer '" << name << "': expected " << kNames;
  return UpdateKind::kSGD;
}

bool Decays(const std::string& name) {
  return name.ends_with("_weight") || name.ends_with("_gamma");
}

// dst = src in dst's type, one of them float32 and the other float16 or bfloat16, on one device.
void CastInto(const NDArray& src, const NDArray& dst) {
  const int64_t n = src.size();
  if (src.ctx().is_gpu()) {
#if COHORT_CUDA
    CastOnGpu(src.ctx().id, src.raw_data(), src.dtype(), dst.raw_data(), dst.dtype(), n);
    return;
#else
    COHORT_THROW() << "optimizer: an array on " << src.ctx() << " but this build has no CUDA";
#endif
  }
  const size_t in = DTypeSize(src.dtype()), out = DTypeSize(dst.dtype());
  const char* s = static_cast<const char*>(src.raw_data());
  char* d = static_cast<char*>(dst.raw_data());
  HostArena().ParallelFor(0, n, int64_t{1} << 15, [&](int64_t begin, int64_t end) {
    if (src.dtype() == DType::kFloat32) {
      NarrowFromFloat(reinterpret_cast<const float*>(s) + begin, end - begin, dst.dtype(),
                      d + begin * out);
    } else {
      WidenToFloat(src.dtype(), s + begin * in, end - begin, reinterpret_cast<float*>(d) + begin);
    }
  });
}

}  // namespace

OptimizerOptions OptimizerOptions::DefaultsFor(const std::string& optimizer) {
  OptimizerOptions o;
  bool lamb = false;
  KindOf(optimizer, o, &lamb);  // names an unknown optimizer
  if (optimizer == "signum") o.momentum = 0.9;
  if (optimizer == "ftml") o.beta1 = 0.6;
  if (optimizer == "adagrad") o.epsilon = 1e-7;
  if (optimizer == "adadelta") o.epsilon = 1e-5;
  if (optimizer == "lamb") o.epsilon = 1e-6;
  return o;
}

const OptionTable<OptimizerOptions>& OptimizerOptions::Table() {
  using O = OptimizerOptions;
  // Ranges are Create's checks, which every front end meets.
  static const OptionTable<O> table = [] {
    OptionTable<O> t("optimizer");
    t.Field("lr", &O::lr, "learning rate (the schedule's base rate)")
        .Field("wd", &O::wd, "weight decay, on *_weight and *_gamma only (as MXNet)")
        .Field("rescale_grad", &O::rescale_grad,
               "gradient scale; unset: 1 / the global batch size (as MXNet's Module)")
        .DefaultInDoc()
        .Field("clip_gradient", &O::clip_gradient,
               "clip each gradient element to +-this (<= 0: off)")
        .Field("momentum", &O::momentum, "sgd, nag, signum (signum's default 0.9)")
        .Field("beta1", &O::beta1, "adam, adamw, adamax, ftml (0.6), lamb")
        .Field("beta2", &O::beta2, "adam, adamw, adamax, ftml, lamb")
        .Field("epsilon", &O::epsilon,
               "adam, adamw, rmsprop, ftml, adagrad (1e-7), adadelta (1e-5), lamb (1e-6)")
        .Field("gamma1", &O::gamma1, "rmsprop: decay of the squared-gradient average")
        .Field("gamma2", &O::gamma2, "centered rmsprop: momentum")
        .Field("centered", &O::centered, "rmsprop: Graves' centered form")
        .Field("clip_weights", &O::clip_weights, "rmsprop: clip each weight to +-this (<= 0: off)")
        .Field("wd_lh", &O::wd_lh, "signum: decoupled weight decay")
        .Field("lamda1", &O::lamda1, "ftrl: L1 strength")
        .Field("beta", &O::beta, "ftrl: beta")
        .Field("rho", &O::rho, "adadelta: decay")
        .Field("lower_bound", &O::lower_bound, "lamb: lower bound of |w| (<= 0: none)")
        .Field("upper_bound", &O::upper_bound, "lamb: upper bound of |w| (<= 0: none)")
        .Field("bias_correction", &O::bias_correction, "lamb: bias-corrected moments")
        .Field("multi_precision", &O::multi_precision,
               "float16/bfloat16 weights update float32 master copies, saved with the states");
    return t;
  }();
  return table;
}

std::unique_ptr<Optimizer> Optimizer::Create(const std::string& name, const OptimizerOptions& o) {
  COHORT_CHECK(o.lr >= 0) << "optimizer " << name << ": lr " << o.lr << " must be >= 0";
  COHORT_CHECK(o.wd >= 0) << "optimizer " << name << ": wd " << o.wd << " must be >= 0";
  COHORT_CHECK(o.momentum >= 0 && o.momentum < 1)
      << "optimizer " << name << ": momentum " << o.momentum << " must be in [0, 1)";
  for (auto [key, value] :
       {std::pair{"beta1", o.beta1}, std::pair{"beta2", o.beta2}, std::pair{"gamma1", o.gamma1},
        std::pair{"gamma2", o.gamma2}, std::pair{"rho", o.rho}}) {
    COHORT_CHECK(value >= 0 && value < 1)
        << "optimizer " << name << ": " << key << " " << value << " must be in [0, 1)";
  }
  COHORT_CHECK(o.epsilon >= 0) << "optimizer " << name << ": epsilon " << o.epsilon
                               << " must be >= 0";
  bool lamb = false;
  const UpdateKind kind = KindOf(name, o, &lamb);
  COHORT_CHECK(name != "ftrl" || o.lr > 0)
      << "optimizer ftrl: lr must be > 0 (it divides by the rate)";
  return std::unique_ptr<Optimizer>(new Optimizer(name, kind, lamb, o));
}

std::unique_ptr<Optimizer> Optimizer::Clone() const {
  auto copy = Create(name_, options_);
  copy->scheduler_ = scheduler_;
  copy->names_ = names_;
  copy->lr_mult_ = lr_mult_;
  copy->wd_mult_ = wd_mult_;
  return copy;
}

double Optimizer::CurrentLR() const {
  return scheduler_ ? (*scheduler_)(num_update_) : options_.lr;
}

bool Optimizer::KeepsMaster(int key, DType dtype) const {
  if (dtype == DType::kFloat32) return false;
  if (!IsHalf(dtype)) {
    COHORT_THROW() << "optimizer: " << KeyName(key) << " is a " << dtype
                   << " weight; updates take float32 weights (float16 and bfloat16 ones with "
                      "multi_precision)";
  }
  if (!options_.multi_precision) {
    throw ConfigError("optimizer: " + KeyName(key) + " is a " + std::string(DTypeName(dtype)) +
                          " weight: set multi_precision, which updates a float32 master copy "
                          "of it (updates in " +
                          std::string(DTypeName(dtype)) + " lose their small steps)",
                      __FILE__, __LINE__);
  }
  return true;
}

void Optimizer::Update(int key, const NDArray& weight, const NDArray& grad) {
  COHORT_CHECK(weight.shape() == grad.shape())
      << "optimizer: key " << key << ": weight " << weight.shape() << " and gradient "
      << grad.shape() << " differ";
  COHORT_CHECK(weight.ctx().SameMemory(grad.ctx()))
      << "optimizer: key " << key << ": weight on " << weight.ctx() << ", gradient on "
      << grad.ctx();
  const bool keeps_master = KeepsMaster(key, weight.dtype());  // Note [Multi-precision weights]
  std::vector<NDArray>& state = states_[key];
  if (static_cast<int>(state.size()) != StateCount(weight.dtype())) {
    COHORT_CHECK(state.empty()) << "optimizer: " << KeyName(key) << " has " << state.size()
                                << " states, not the " << StateCount(weight.dtype()) << " a "
                                << weight.dtype() << " weight takes";
    for (int i = 0; i < num_states_; ++i) {
      state.push_back(NDArray::Zeros(weight.shape(), DType::kFloat32, weight.ctx()));
    }
    if (keeps_master) {
      state.push_back(NDArray::Empty(weight.shape(), DType::kFloat32, weight.ctx()));
      CastInto(weight, state.back());
    }
  }
  for (NDArray& s : state) {  // states loaded from a file live on the host: move them once
    COHORT_CHECK(s.shape() == weight.shape() && s.dtype() == DType::kFloat32)
        << "optimizer: " << KeyName(key) << ": a state of shape " << s.shape()
        << " for a weight of shape " << weight.shape();
    if (!s.ctx().SameMemory(weight.ctx())) {
      s = s.CopyTo(weight.ctx());
    }
  }
  const int64_t t = ++counts_[key];
  num_update_ = std::max(num_update_, t);
  const auto lr_mult = lr_mult_.find(key);
  // In double until the rule's parameters are made: Adam's bias correction multiplies the
  // rate as MXNet's Python does, before it becomes a float.
  const double lr = CurrentLR() * (lr_mult != lr_mult_.end() ? lr_mult->second : 1.0);
  const auto name = names_.find(key);
  const auto wd_mult = wd_mult_.find(key);
  const double decay = wd_mult != wd_mult_.end()                      ? wd_mult->second
                       : name == names_.end() || Decays(name->second) ? 1.0
                                                                      : 0.0;
  const double wd = options_.wd * decay;
  float* states[3] = {nullptr, nullptr, nullptr};
  for (int i = 0; i < num_states_; ++i) states[i] = static_cast<float*>(state[i].raw_data());
  // The rule runs on float32: the master copy, and the gradient widened where it is not float32.
  const NDArray& target = keeps_master ? state.back() : weight;
  const NDArray* wide_grad = &grad;
  if (grad.dtype() != DType::kFloat32) {
    COHORT_CHECK(IsHalf(grad.dtype()))
        << "optimizer: " << KeyName(key) << ": a " << grad.dtype()
        << " gradient; updates take float32, float16 or bfloat16 gradients";
    NDArray& wide = wide_grads_[key];
    if (wide.is_none() || wide.shape() != grad.shape() || !wide.ctx().SameMemory(grad.ctx())) {
      wide = NDArray::Empty(grad.shape(), DType::kFloat32, grad.ctx());
    }
    CastInto(grad, wide);
    wide_grad = &wide;
  }
  UpdateFloat32(key, target, *wide_grad, lr, wd, t, states);
  if (keeps_master) CastInto(target, weight);
}

void Optimizer::UpdateFloat32(int key, const NDArray& weight, const NDArray& grad, double lr,
                              double wd, int64_t t, float* const* states) {
  float* w = static_cast<float*>(weight.raw_data());
  const float* g = static_cast<const float*>(grad.raw_data());
  float* direction = nullptr;  // LAMB's phase-1 output and (on a GPU) the two squared norms
  double* sums = nullptr;
  if (lamb_) {
    LambBuffers& b = lamb_buffers_[key];
    if (b.direction.is_none() || b.direction.shape() != weight.shape() ||
        !b.direction.ctx().SameMemory(weight.ctx())) {
      b.direction = NDArray::Zeros(weight.shape(), DType::kFloat32, weight.ctx());
      b.sums = NDArray::Zeros(Shape{2}, DType::kFloat64, weight.ctx());
    }
    direction = static_cast<float*>(b.direction.raw_data());
    sums = static_cast<double*>(b.sums.raw_data());
  }
  if (weight.ctx().is_gpu()) {
#if COHORT_CUDA
    COHORT_CHECK(weight.ctx() == grad.ctx() && weight.dtype() == DType::kFloat32 &&
                 grad.dtype() == DType::kFloat32)
        << "optimizer: a GPU update takes float32 weight and gradient on one GPU, got "
        << weight.ctx() << " and " << grad.ctx();
    if (lamb_) {
      LambStepOnGpu(LambFor(lr, wd, t), weight.ctx().id, w, g, states[0], states[1], direction,
                    sums, weight.size());
    } else {
      ApplyUpdateOnGpu(ParamsFor(key, lr, wd, t), weight.ctx().id, w, g, states[0], states[1],
                       states[2], weight.size());
    }
    return;
#else
    COHORT_THROW() << "optimizer: weight on " << weight.ctx() << " but this build has no CUDA";
#endif
  }
  COHORT_CHECK(weight.dtype() == DType::kFloat32 && grad.dtype() == DType::kFloat32)
      << "optimizer: key " << key << ": updates take float32 weights and gradients";
  if (lamb_)
    return LambStep(LambFor(lr, wd, t), w, g, states[0], states[1], direction, weight.size());
  const UpdateParams p = ParamsFor(key, lr, wd, t);
  // Updates are elementwise: blocks of a large key update on all host threads, the kind a
  // constant in the loop (no dispatch per element). In place: out is the weight.
  DispatchUpdateKind(p.kind, [&](auto kind) {
    constexpr UpdateKind K = decltype(kind)::value;
    HostArena().ParallelFor(0, weight.size(), int64_t{1} << 15, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        UpdateElementOf<K, float>(p, i, w, g, states[0], states[1], states[2], w);
      }
    });
  });
}

UpdateParams Optimizer::ParamsFor(int key, double lr, double wd, int64_t t) const {
  const OptimizerOptions& o = options_;
  UpdateParams p;
  p.kind = kind_;
  // SGLD's noise: one stream per (seed, key, update), alike on every device updating the key.
  p.noise_key =
      Mix64(MixSeed(MixSeed(options_.seed, static_cast<uint64_t>(key)), static_cast<uint64_t>(t)));
  p.lr = static_cast<float>(lr);
  p.wd = static_cast<float>(wd);
  p.rescale_grad = static_cast<float>(o.rescale_grad);
  // MXNet's optimizers pass clip_gradient only when it is set (not 0 or None).
  p.clip_gradient = o.clip_gradient > 0 ? static_cast<float>(o.clip_gradient) : -1.0f;
  p.momentum = static_cast<float>(o.momentum);
  p.wd_lh = static_cast<float>(o.wd_lh);
  p.beta1 = static_cast<float>(o.beta1);
  p.beta2 = static_cast<float>(o.beta2);
  p.epsilon = o.epsilon;
  p.gamma1 = static_cast<float>(o.gamma1);
  p.gamma2 = static_cast<float>(o.gamma2);
  p.clip_weights = o.clip_weights > 0 ? static_cast<float>(o.clip_weights) : -1.0f;
  p.lamda1 = static_cast<float>(o.lamda1);
  p.beta = static_cast<float>(o.beta);
  p.t = t;
  p.rho = static_cast<float>(o.rho);
  p.one_minus_rho = static_cast<float>(1.0 - o.rho);
  p.one_minus_beta1 = static_cast<float>(1.0 - o.beta1);
  const double b1 = o.beta1, b2 = o.beta2;
  const double step = static_cast<double>(t);
  switch (kind_) {
    case UpdateKind::kAdamW:  // Adam's step, with the decoupled decay lr · wd
      p.wd = static_cast<float>(lr * wd);
      [[fallthrough]];
    case UpdateKind::kAdam:  // MXNet's Adam folds the bias correction into the rate
      p.lr = static_cast<float>(lr * std::sqrt(1 - std::pow(b2, step)) / (1 - std::pow(b1, step)));
      break;
    case UpdateKind::kAdamax:  // MXNet's Adamax: lr / (1 - beta1^t)
      p.lr = static_cast<float>(lr / (1 - std::pow(b1, step)));
      break;
    case UpdateKind::kSGLD:  // MXNet's SGLD: -lr / 2 down the gradient, noise of variance lr
      p.sgld_step = static_cast<float>(-lr / 2);
      p.noise_stddev = std::sqrt(lr);
      break;
    default: break;
  }
  return p;
}

LambRule Optimizer::LambFor(double lr, double wd, int64_t t) const {
  const OptimizerOptions& o = options_;
  LambRule r;
  r.beta1 = static_cast<float>(o.beta1);
  r.beta2 = static_cast<float>(o.beta2);
  r.epsilon = static_cast<float>(o.epsilon);
  r.wd = static_cast<float>(wd);
  r.rescale_grad = static_cast<float>(o.rescale_grad);
  r.clip_gradient = o.clip_gradient > 0 ? static_cast<float>(o.clip_gradient) : -1.0f;
  r.t = t;
  r.bias_correction = o.bias_correction;
  r.lr = static_cast<float>(lr);
  r.lower_bound = o.lower_bound > 0 ? static_cast<float>(o.lower_bound) : -1.0f;
  r.upper_bound = o.upper_bound > 0 ? static_cast<float>(o.upper_bound) : -1.0f;
  // std::pow(float, int) is a double, as MXNet's host code computes it.
  r.beta1_t = std::pow(r.beta1, static_cast<int>(t));
  r.beta2_t = std::pow(r.beta2, static_cast<int>(t));
  return r;
}

void Optimizer::LambStep(const LambRule& rule, float* w, const float* g, float* mean, float* var,
                         float* direction, int64_t n) const {
  HostArena().ParallelFor(0, n, int64_t{1} << 15, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) LambPhase1Element(rule, i, w, g, mean, var, direction);
  });
  // The norms of the weight and of the step direction, summed in double.
  double ww = 0, dd = 0;
  for (int64_t i = 0; i < n; ++i) {
    ww += static_cast<double>(w[i]) * w[i];
    dd += static_cast<double>(direction[i]) * direction[i];
  }
  const float r1 = static_cast<float>(std::sqrt(ww)), r2 = static_cast<float>(std::sqrt(dd));
  HostArena().ParallelFor(0, n, int64_t{1} << 15, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) LambPhase2Element(rule, i, w, direction, &r1, &r2, w);
  });
}

void Optimizer::SaveStates(const std::string& path,
                           const std::map<std::string, int64_t>& extra) const {
  ParamsFile file;
  for (const auto& [key, arrays] : states_) {
    for (size_t i = 0; i < arrays.size(); ++i) {
      file.names.push_back("state:" + std::to_string(key) + ":" + std::to_string(i));
      file.arrays.push_back(arrays[i]);
    }
  }
  for (const auto& [key, count] : counts_) {
    file.names.push_back("count:" + std::to_string(key));
    file.arrays.push_back(NDArray::FromVector<int64_t>({1}, std::vector<int64_t>{count}));
  }
  file.names.push_back("optimizer:" + name_);
  file.arrays.push_back(NDArray::FromVector<int64_t>({1}, std::vector<int64_t>{num_update_}));
  for (const auto& [name, value] : extra) {
    COHORT_CHECK(name.rfind("checkpoint:", 0) == 0) << "'" << name << "' is not a checkpoint: name";
    file.names.push_back(name);
    file.arrays.push_back(NDArray::FromVector<int64_t>({1}, std::vector<int64_t>{value}));
  }
  SaveParamsFile(path, file);
}

void Optimizer::LoadStates(const std::string& path, const std::map<int, StateTarget>& weights) {
  LoadStates(LoadParamsFile(path), path, weights);
}

std::string Optimizer::KeyName(int key) const {
  const auto name = names_.find(key);
  return "key " + std::to_string(key) + (name != names_.end() ? " (" + name->second + ")" : "");
}

void Optimizer::LoadStates(const ParamsFile& file, const std::string& source,
                           const std::map<int, StateTarget>& weights) {
  auto fail = [&](const std::string& what) {
    throw DataError("optimizer states '" + source + "': " + what, __FILE__, __LINE__);
  };
  if (file.names.size() != file.arrays.size()) fail("the arrays have no names");
  // An int64 entry's one value: count:KEY, optimizer:NAME.
  auto one_int64 = [&](const std::string& name, const NDArray& array) {
    if (array.is_none() || array.dtype() != DType::kInt64 || array.shape() != Shape{1}) {
      fail("'" + name + "' must hold one int64, not " +
           (array.is_none()
                ? std::string("a none array")
                : std::string(DTypeName(array.dtype())) + " of shape " + array.shape().ToString()));
    }
    return array.ToVector<int64_t>()[0];
  };
  auto key_of = [&](const std::string& name, std::string_view text) {
    int key = -1;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), key);
    if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
      fail("'" + name + "': '" + std::string(text) + "' is not a key number");
    }
    if (!weights.count(key)) {
      fail("'" + name + "' is the state of key " + std::to_string(key) + ", but the network's " +
           std::to_string(weights.size()) + " parameters have keys 0 to " +
           std::to_string(static_cast<int64_t>(weights.size()) - 1));
    }
    return key;
  };
  std::map<int, std::vector<NDArray>> states;
  std::map<int, int64_t> counts;
  std::optional<int64_t> num_update;
  std::set<std::string> seen;
  for (size_t i = 0; i < file.names.size(); ++i) {
    const std::string& name = file.names[i];
    const NDArray& array = file.arrays[i];
    if (!seen.insert(name).second) fail("'" + name + "' appears twice");
    const std::string_view view(name);
    if (view.starts_with("state:")) {
      const size_t colon = name.find(':', 6);
      if (colon == std::string::npos) fail("'" + name + "' is not state:KEY:INDEX");
      const int key = key_of(name, view.substr(6, colon - 6));
      const std::string_view index_text = view.substr(colon + 1);
      int index = -1;
      const auto [end, error] =
          std::from_chars(index_text.data(), index_text.data() + index_text.size(), index);
      const StateTarget& weight = weights.at(key);
      const int count = StateCount(weight.dtype);
      if (index_text.empty() || error != std::errc() ||
          end != index_text.data() + index_text.size() || index < 0 || index >= count) {
        fail("'" + name + "': " + name_ + " keeps " + std::to_string(count) + " state(s) a " +
             (count > num_states_
                  ? std::string(DTypeName(weight.dtype)) + " weight (its master copy last)"
                  : std::string("weight")) +
             (count > 0 ? ", indexed 0 to " + std::to_string(count - 1) : "") +
             " (were the states saved with other optimizer settings?)");
      }
      const Shape& want = weight.shape;
      if (array.is_none() || array.dtype() != DType::kFloat32 || array.shape() != want) {
        fail("'" + name + "', a state of " + KeyName(key) + ", must be float32 of shape " +
             want.ToString() + ", not " +
             (array.is_none() ? std::string("a none array")
                              : std::string(DTypeName(array.dtype())) + " of shape " +
                                    array.shape().ToString()));
      }
      std::vector<NDArray>& arrays = states[key];
      arrays.resize(static_cast<size_t>(count));
      if (!arrays[index].is_none()) fail("'" + name + "' repeats a state already given");
      arrays[index] = array.CopyTo(Context::CPU());  // its own: a file may serve several
    } else if (view.starts_with("count:")) {
      const int key = key_of(name, view.substr(6));
      const int64_t count = one_int64(name, array);
      if (count < 0) fail("'" + name + "' counts " + std::to_string(count) + " updates");
      if (!counts.emplace(key, count).second) fail("'" + name + "' repeats a count already given");
    } else if (view.starts_with("optimizer:")) {
      if (num_update) fail("'" + name + "': a second optimizer entry");
      if (name != "optimizer:" + name_) {
        fail("holds " + name.substr(10) + " optimizer states, not " + name_ + "'s");
      }
      num_update = one_int64(name, array);
    } else if (!view.starts_with("checkpoint:")) {
      fail("'" + name + "' is not state:KEY:INDEX, count:KEY, optimizer:NAME or checkpoint:...");
    }
  }
  if (!num_update) fail("holds no optimizer:" + name_ + " entry (not " + name_ + " states)");
  for (const auto& [key, arrays] : states) {
    for (int i = 0; i < static_cast<int>(arrays.size()); ++i) {
      if (arrays[i].is_none()) {
        fail(KeyName(key) + " has no 'state:" + std::to_string(key) + ":" + std::to_string(i) +
             "' beside its other states");
      }
    }
    if (!counts.count(key))
      fail(KeyName(key) + " has states but no 'count:" + std::to_string(key) + "'");
  }
  for (const auto& [key, count] : counts) {
    const int kept = StateCount(weights.at(key).dtype);
    if (kept > 0 && count > 0 && !states.count(key)) {
      fail(KeyName(key) + " was updated " + std::to_string(count) + " times but has none of the " +
           std::to_string(kept) + " state(s) " + name_ +
           " keeps (were the states saved with other optimizer settings?)");
    }
    if (count > *num_update) {
      fail("'count:" + std::to_string(key) + "' is " + std::to_string(count) +
           ", more than the optimizer's " + std::to_string(*num_update) + " updates");
    }
  }
  states_ = std::move(states);
  counts_ = std::move(counts);
  num_update_ = *num_update;
}

}  // namespace cohort
