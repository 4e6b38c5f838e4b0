// Optimizer kinds and state handling, with MXNet 1.x's update rules.
#include "optimizer/optimizer.h"

#include <algorithm>
#include <cmath>

#include "base/thread_arena.h"
#include "ndarray/params_io.h"
#include "optimizer/optimizer_gpu.h"

namespace cohort {
namespace {

// weight -= lr * (g + wd * w), or with momentum: mom = momentum * mom - lr * (g + wd * w);
// weight += mom.
class SGD : public Optimizer {
 public:
  explicit SGD(const OptimizerOptions& o) : Optimizer("sgd", o, o.momentum > 0 ? 1 : 0) {}
  void Step(float lr, float wd, int64_t, float* w, const float* g, float* const* state,
            int64_t n) const override {
    const float momentum = static_cast<float>(options().momentum);
    for (int64_t i = 0; i < n; ++i) {
      const float grad = Prepare(g[i]) + wd * w[i];
      if (momentum > 0) {
        state[0][i] = momentum * state[0][i] - lr * grad;
        w[i] += state[0][i];
      } else {
        w[i] -= lr * grad;
      }
    }
  }
};

// Nesterov momentum as MXNet's NAG: mom = momentum * mom + g; w -= lr * (g + momentum * mom).
class NAG : public Optimizer {
 public:
  explicit NAG(const OptimizerOptions& o) : Optimizer("nag", o, 1) {}
  void Step(float lr, float wd, int64_t, float* w, const float* g, float* const* state,
            int64_t n) const override {
    const float momentum = static_cast<float>(options().momentum);
    for (int64_t i = 0; i < n; ++i) {
      const float grad = Prepare(g[i]) + wd * w[i];
      state[0][i] = momentum * state[0][i] + grad;
      w[i] -= lr * (grad + momentum * state[0][i]);
    }
  }
};

// Adam with bias correction folded into the rate: lr_t = lr * sqrt(1 - b2^t) / (1 - b1^t).
// AdamW decays the weight directly (w -= lr * wd * w) instead of adding wd * w to the gradient.
class Adam : public Optimizer {
 public:
  Adam(const OptimizerOptions& o, bool decoupled)
      : Optimizer(decoupled ? "adamw" : "adam", o, 2), decoupled_(decoupled) {}
  void Step(float lr, float wd, int64_t t, float* w, const float* g, float* const* state,
            int64_t n) const override {
    const double b1 = options().beta1, b2 = options().beta2;
    const float lr_t =
        static_cast<float>(lr * std::sqrt(1 - std::pow(b2, t)) / (1 - std::pow(b1, t)));
    const float eps = static_cast<float>(options().epsilon);
    for (int64_t i = 0; i < n; ++i) {
      const float grad = Prepare(g[i]) + (decoupled_ ? 0.0f : wd * w[i]);
      float& m = state[0][i];
      float& v = state[1][i];
      m = static_cast<float>(b1) * m + static_cast<float>(1 - b1) * grad;
      v = static_cast<float>(b2) * v + static_cast<float>(1 - b2) * grad * grad;
      if (decoupled_) w[i] -= lr * wd * w[i];
      w[i] -= lr_t * m / (std::sqrt(v) + eps);
    }
  }

 private:
  bool decoupled_;
};

// MXNet's (non-centered) RMSProp: n = (1 - gamma1) * g² + gamma1 * n; w -= lr * g / sqrt(n + eps).
class RMSProp : public Optimizer {
 public:
  explicit RMSProp(const OptimizerOptions& o) : Optimizer("rmsprop", o, 1) {}
  void Step(float lr, float wd, int64_t, float* w, const float* g, float* const* state,
            int64_t n) const override {
    const float gamma1 = static_cast<float>(options().gamma1);
    const float eps = static_cast<float>(options().epsilon);
    for (int64_t i = 0; i < n; ++i) {
      const float grad = Prepare(g[i]) + wd * w[i];
      state[0][i] = (1 - gamma1) * grad * grad + gamma1 * state[0][i];
      w[i] -= lr * grad / std::sqrt(state[0][i] + eps);
    }
  }
};

bool Decays(const std::string& name) {
  return name.ends_with("_weight") || name.ends_with("_gamma");
}

}  // namespace

std::unique_ptr<Optimizer> Optimizer::Create(const std::string& name, const OptimizerOptions& o) {
  COHORT_CHECK(o.lr >= 0 && o.wd >= 0 && o.momentum >= 0 && o.momentum < 1)
      << "optimizer " << name << ": lr, wd must be >= 0 and momentum in [0, 1)";
  if (name == "sgd") return std::make_unique<SGD>(o);
  if (name == "nag") return std::make_unique<NAG>(o);
  if (name == "adam") return std::make_unique<Adam>(o, false);
  if (name == "adamw") return std::make_unique<Adam>(o, true);
  if (name == "rmsprop") return std::make_unique<RMSProp>(o);
  COHORT_THROW() << "unknown optimizer '" << name << "': expected sgd, nag, adam, adamw or rmsprop";
  return nullptr;
}

std::unique_ptr<Optimizer> Optimizer::Clone() const {
  auto copy = Create(name_, options_);
  copy->scheduler_ = scheduler_;
  copy->names_ = names_;
  return copy;
}

float Optimizer::Prepare(float g) const {
  g *= static_cast<float>(options_.rescale_grad);
  if (options_.clip_gradient > 0) {
    const float c = static_cast<float>(options_.clip_gradient);
    g = std::clamp(g, -c, c);
  }
  return g;
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
  const float lr = static_cast<float>(CurrentLR());
  auto name = names_.find(key);
  const float wd =
      name == names_.end() || Decays(name->second) ? static_cast<float>(options_.wd) : 0.0f;
  if (weight.ctx().is_gpu()) {
    UpdateOnGpu(lr, wd, t, weight, grad, state);
    return;
  }
  float* states[2] = {nullptr, nullptr};
  for (int i = 0; i < num_states_; ++i) states[i] = state[i].data<float>();
  float* w = weight.data<float>();
  const float* g = grad.data<float>();
  // Steps are elementwise: blocks of a large key update on all host threads.
  HostArena().ParallelFor(0, weight.size(), int64_t{1} << 15, [&](int64_t begin, int64_t end) {
    float* block_states[2] = {states[0] ? states[0] + begin : nullptr,
                              states[1] ? states[1] + begin : nullptr};
    Step(lr, wd, t, w + begin, g + begin, block_states, end - begin);
  });
}

void Optimizer::UpdateOnGpu(float lr, float wd, int64_t t, const NDArray& weight,
                            const NDArray& grad, const std::vector<NDArray>& state) const {
#if COHORT_CUDA
  COHORT_CHECK(weight.ctx() == grad.ctx() && weight.dtype() == DType::kFloat32 &&
               grad.dtype() == DType::kFloat32)
      << "optimizer: a GPU update takes float32 weight and gradient on one GPU, got "
      << weight.ctx() << " and " << grad.ctx();
  GpuStepRule r;
  r.kind = name_ == "nag"       ? GpuStepRule::kNAG
           : name_ == "adam"    ? GpuStepRule::kAdam
           : name_ == "adamw"   ? GpuStepRule::kAdamW
           : name_ == "rmsprop" ? GpuStepRule::kRMSProp
                                : GpuStepRule::kSGD;
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
  auto ptr = [](const NDArray& a) { return static_cast<float*>(a.raw_data()); };
  StepOnGpu(r, weight.ctx().id, ptr(weight), ptr(grad), state.size() > 0 ? ptr(state[0]) : nullptr,
            state.size() > 1 ? ptr(state[1]) : nullptr, weight.size());
#else
  (void)lr, (void)wd, (void)t, (void)grad, (void)state;
  COHORT_THROW() << "optimizer: weight on " << weight.ctx() << " but this build has no CUDA";
#endif
}

void Optimizer::SaveStates(const std::string& path) const {
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
    } else {
      num_update_ = array.ToVector<int64_t>()[0];
    }
  }
}

}  // namespace cohort
