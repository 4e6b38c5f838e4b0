// Optimizer kinds and state handling, with MXNet 1.x's update rules (optimizer/update_rule.h).
#include "optimizer/optimizer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <set>
#include <string_view>

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

void Optimizer::LoadStates(const std::string& path, const std::map<int, Shape>& shapes) {
  LoadStates(LoadParamsFile(path), path, shapes);
}

std::string Optimizer::KeyName(int key) const {
  const auto name = names_.find(key);
  return "key " + std::to_string(key) + (name != names_.end() ? " (" + name->second + ")" : "");
}

void Optimizer::LoadStates(const ParamsFile& file, const std::string& source,
                           const std::map<int, Shape>& shapes) {
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
    if (!shapes.count(key)) {
      fail("'" + name + "' is the state of key " + std::to_string(key) + ", but the network's " +
           std::to_string(shapes.size()) + " parameters have keys 0 to " +
           std::to_string(static_cast<int64_t>(shapes.size()) - 1));
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
      if (index_text.empty() || error != std::errc() ||
          end != index_text.data() + index_text.size() || index < 0 || index >= num_states_) {
        fail("'" + name + "': " + name_ + " keeps " + std::to_string(num_states_) +
             " state(s) a weight" +
             (num_states_ > 0 ? ", indexed 0 to " + std::to_string(num_states_ - 1) : "") +
             " (were the states saved with other optimizer settings?)");
      }
      const Shape& want = shapes.at(key);
      if (array.is_none() || array.dtype() != DType::kFloat32 || array.shape() != want) {
        fail("'" + name + "', a state of " + KeyName(key) + ", must be float32 of shape " +
             want.ToString() + ", not " +
             (array.is_none() ? std::string("a none array")
                              : std::string(DTypeName(array.dtype())) + " of shape " +
                                    array.shape().ToString()));
      }
      std::vector<NDArray>& arrays = states[key];
      arrays.resize(static_cast<size_t>(num_states_));
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
    for (int i = 0; i < num_states_; ++i) {
      if (arrays[i].is_none()) {
        fail(KeyName(key) + " has no 'state:" + std::to_string(key) + ":" + std::to_string(i) +
             "' beside its other states");
      }
    }
    if (!counts.count(key))
      fail(KeyName(key) + " has states but no 'count:" + std::to_string(key) + "'");
  }
  for (const auto& [key, count] : counts) {
    if (num_states_ > 0 && count > 0 && !states.count(key)) {
      fail(KeyName(key) + " was updated " + std::to_string(count) + " times but has none of the " +
           std::to_string(num_states_) + " state(s) " + name_ +
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
