// Optimizer kinds and state handling, with MXNet 1.x's update rules (optimizer/update_rule.h).
#include "optimizer/optimizer.h"

#include <algorithm>
#include <cmath>

#include "base/thread_arena.h"
#include "ndarray/params_io.h"
#include "optimizer/update_rule.h"

namespace cohort {
namespace {

UpdateRule::Kind KindOf(const std::string& name) {
  if (name == "sgd") return UpdateRule::kSGD;
  if (name == "nag") return UpdateRule::kNAG;
  if (name == "adam") return UpdateRule::kAdam;
  if (name == "adamw") return UpdateRule::kAdamW;
  if (name == "rmsprop") return UpdateRule::kRMSProp;
  COHORT_THROW() << "unknown optimizer '" << name << "': expected sgd, nag, adam, adamw or rmsprop";
  return UpdateRule::kSGD;
}

// Weights [begin, end) of one key, the kind a constant in the loop (no dispatch per element).
template <UpdateRule::Kind kKind>
void UpdateBlock(UpdateRule rule, float* w, const float* g, float* const* states, int64_t begin,
                 int64_t end) {
  rule.kind = kKind;
  for (int64_t i = begin; i < end; ++i) ApplyUpdate(rule, w, g, states[0], states[1], i);
}

bool Decays(const std::string& name) {
  return name.ends_with("_weight") || name.ends_with("_gamma");
}

}  // namespace

std::unique_ptr<Optimizer> Optimizer::Create(const std::string& name, const OptimizerOptions& o) {
  COHORT_CHECK(o.lr >= 0) << "optimizer " << name << ": lr " << o.lr << " must be >= 0";
  COHORT_CHECK(o.wd >= 0) << "optimizer " << name << ": wd " << o.wd << " must be >= 0";
  COHORT_CHECK(o.momentum >= 0 && o.momentum < 1)
      << "optimizer " << name << ": momentum " << o.momentum << " must be in [0, 1)";
  return std::unique_ptr<Optimizer>(new Optimizer(name, KindOf(name), o));
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

void Optimizer::Update(int key, const NDArray& weight, const NDArray& grad) {
  COHORT_CHECK(weight.shape() == grad.shape())
      << "optimizer: key " << key << ": weight " << weight.shape() << " and gradient "
      << grad.shape() << " differ";
  COHORT_CHECK(weight.ctx().SameMemory(grad.ctx()))
      << "optimizer: key " << key << ": weight on " << weight.ctx() << ", gradient on "
      << grad.ctx();
  std::vector<NDArray>& state = states_[key];
  if (static_cast<int>(state.size()) != num_states_) {
    for (int i = 0; i < num_states_; ++i) {
      state.push_back(NDArray::Zeros(weight.shape(), DType::kFloat32, weight.ctx()));
    }
  }
  for (NDArray& s : state) {  // states loaded from a file live on the host: move them once
    if (!s.ctx().SameMemory(weight.ctx())) {
      s = s.CopyTo(weight.ctx());
    }
  }
  const int64_t t = ++counts_[key];
  num_update_ = std::max(num_update_, t);
  const auto lr_mult = lr_mult_.find(key);
  const float lr =
      static_cast<float>(CurrentLR() * (lr_mult != lr_mult_.end() ? lr_mult->second : 1.0));
  const auto name = names_.find(key);
  const auto wd_mult = wd_mult_.find(key);
  const double decay = wd_mult != wd_mult_.end()                      ? wd_mult->second
                       : name == names_.end() || Decays(name->second) ? 1.0
                                                                      : 0.0;
  const float wd = static_cast<float>(options_.wd * decay);
  const UpdateRule rule = RuleFor(lr, wd, t);
  float* states[2] = {nullptr, nullptr};
  for (int i = 0; i < num_states_; ++i) states[i] = static_cast<float*>(state[i].raw_data());
  float* w = static_cast<float*>(weight.raw_data());
  const float* g = static_cast<const float*>(grad.raw_data());
  if (weight.ctx().is_gpu()) {
#if COHORT_CUDA
    COHORT_CHECK(weight.ctx() == grad.ctx() && weight.dtype() == DType::kFloat32 &&
                 grad.dtype() == DType::kFloat32)
        << "optimizer: a GPU update takes float32 weight and gradient on one GPU, got "
        << weight.ctx() << " and " << grad.ctx();
    ApplyUpdateOnGpu(rule, weight.ctx().id, w, g, states[0], states[1], weight.size());
    return;
#else
    COHORT_THROW() << "optimizer: weight on " << weight.ctx() << " but this build has no CUDA";
#endif
  }
  COHORT_CHECK(weight.dtype() == DType::kFloat32 && grad.dtype() == DType::kFloat32)
      << "optimizer: key " << key << ": updates take float32 weights and gradients";
  // Updates are elementwise: blocks of a large key update on all host threads.
  HostArena().ParallelFor(0, weight.size(), int64_t{1} << 15, [&](int64_t begin, int64_t end) {
    switch (rule.kind) {
      case UpdateRule::kSGD: return UpdateBlock<UpdateRule::kSGD>(rule, w, g, states, begin, end);
      case UpdateRule::kNAG: return UpdateBlock<UpdateRule::kNAG>(rule, w, g, states, begin, end);
      case UpdateRule::kAdam: return UpdateBlock<UpdateRule::kAdam>(rule, w, g, states, begin, end);
      case UpdateRule::kAdamW:
        return UpdateBlock<UpdateRule::kAdamW>(rule, w, g, states, begin, end);
      case UpdateRule::kRMSProp:
        return UpdateBlock<UpdateRule::kRMSProp>(rule, w, g, states, begin, end);
    }
  });
}

UpdateRule Optimizer::RuleFor(float lr, float wd, int64_t t) const {
  UpdateRule r;
  r.kind = kind_;
  r.lr = lr;
  r.wd = wd;
  r.momentum = static_cast<float>(options_.momentum);
  r.rescale = static_cast<float>(options_.rescale_grad);
  r.clip = static_cast<float>(options_.clip_gradient);
  const double b1 = options_.beta1, b2 = options_.beta2;
  r.beta1 = static_cast<float>(b1);
  r.beta2 = static_cast<float>(b2);
  r.one_minus_beta1 = static_cast<float>(1 - b1);
  r.one_minus_beta2 = static_cast<float>(1 - b2);
  r.lr_t = static_cast<float>(lr * std::sqrt(1 - std::pow(b2, t)) / (1 - std::pow(b1, t)));
  r.epsilon = static_cast<float>(options_.epsilon);
  r.gamma1 = static_cast<float>(options_.gamma1);
  return r;
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

void Optimizer::LoadStates(const std::string& path) {
  std::map<std::string, NDArray> file = LoadParams(path);
  COHORT_CHECK(file.count("optimizer:" + name_))
      << "'" << path << "' does not hold " << name_ << " optimizer states";
  states_.clear();
  counts_.clear();
  for (const auto& [name, array] : file) {
    if (name.rfind("state:", 0) == 0) {
      const auto colon = name.find(':', 6);
      const int key = std::stoi(name.substr(6, colon - 6));
      const size_t index = std::stoul(name.substr(colon + 1));
      auto& arrays = states_[key];
      if (arrays.size() <= index) arrays.resize(index + 1);
      arrays[index] = array;
    } else if (name.rfind("count:", 0) == 0) {
      counts_[std::stoi(name.substr(6))] = array.ToVector<int64_t>()[0];
    } else if (name.rfind("optimizer:", 0) == 0) {
      num_update_ = array.ToVector<int64_t>()[0];
    }  // "checkpoint:..." is the checkpoint's, not the optimizer's
  }
}

}  // namespace cohort
