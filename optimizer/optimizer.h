// Optimizers (MXNet's optimizer module): SGD with momentum, NAG, Adam, AdamW, RMSProp (plain and
// centered), Signum, FTML, Ftrl, AdaGrad, AdaDelta, Adamax, SGLD and LAMB, with per-key state
// that can be saved and loaded. Their rules are update_rule.h's, which MXNet's update operators run
// too.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/options.h"
#include "ndarray/ndarray.h"
#include "ndarray/params_io.h"
#include "optimizer/lr_scheduler.h"
#include "optimizer/update_rule.h"

namespace cohort {

struct OptimizerOptions {
  double lr = 0.01;
  double wd = 0.0;                    // applied to "*_weight" and "*_gamma" only, as MXNet does
  double rescale_grad = 1.0;          // e.g. 1 / global batch size
  double clip_gradient = -1;          // clip each gradient element to ±clip when > 0
  double momentum = 0.0;              // sgd, nag, signum (without: signSGD)
  double beta1 = 0.9, beta2 = 0.999;  // adam, adamw, adamax, ftml, lamb
  double epsilon = 1e-8;              // adam, adamw, rmsprop, ftml, adagrad, adadelta, lamb
  double gamma1 = 0.9;                // rmsprop's decay of the squared-gradient average
  double gamma2 = 0.9;                // centered rmsprop's momentum
  bool centered = false;              // rmsprop: Graves' centered form (3 states)
  double clip_weights = -1;           // rmsprop: clip each weight to ±clip_weights when > 0
  double wd_lh = 0;                   // signum's decoupled weight decay
  double lamda1 = 0.01, beta = 1;     // ftrl
  double rho = 0.9;                   // adadelta's decay
  double lower_bound = -1, upper_bound = -1;  // lamb's bounds of |w| (none when <= 0)
  bool bias_correction = true;                // lamb
  uint64_t seed = 0;                          // sgld's noise: one stream per (seed, key, update)
  bool multi_precision = false;  // float16/bfloat16 weights: Note [Multi-precision weights]

  // MXNet 1.9.1's defaults of an optimizer's own settings (signum's momentum 0.9, ftml's beta1
  // 0.6, the epsilons of adagrad, adadelta and lamb, ...); lr and the rest as above. Throws
  // naming an unknown optimizer.
  static OptimizerOptions DefaultsFor(const std::string& optimizer);
  // The `optimizer` section's settings (Note [Declared options]); `name` is the section's
  // other key, FitConfig's.
  static const OptionTable<OptimizerOptions>& Table();
};

// Note [Multi-precision weights]
// A float16 or bfloat16 weight loses the small steps of an update made in its own type, so with
// multi_precision (MXNet's option of that name) the optimizer keeps a float32 master copy of it,
// made from the weight at its first update and kept as the key's last state (saved and loaded
// with the others, as MXNet's SGD keeps it): each update runs the rule on the master copy, with
// the gradient widened to float32 when it is half-precision (into a buffer made once a key), and
// writes the master copy back rounded to the weight's type. MXNet also covers only float16 with
// it; Cohort takes bfloat16 alike. Without multi_precision a half-precision weight is refused
// (ConfigError naming the key): Cohort has no update rule in half precision.

// What the states of a key are checked against when loaded: its weight's shape and dtype.
struct StateTarget {
  StateTarget(Shape s, DType d = DType::kFloat32) : shape(std::move(s)), dtype(d) {}
  Shape shape;
  DType dtype;
};

// Updates weights from gradients. Update(key, ...) keeps the state of each key (momentum,
// moments) and counts its updates; the learning rate comes from the scheduler when there is
// one. Weights and gradients are float32 arrays (or half-precision ones, Note [Multi-precision
// weights]), both on the host or both on one GPU; the CPU loop and the GPU kernel apply the same
// UpdateRule (update_rule.h).
class Optimizer {
 public:
  // "sgd", "nag", "adam", "adamw", "rmsprop", "signum", "ftml", "ftrl", "adagrad",
  // "adadelta", "adamax", "sgld", "lamb"; throws naming the name otherwise.
  static std::unique_ptr<Optimizer> Create(const std::string& name,
                                           const OptimizerOptions& options);
  // A fresh optimizer with the same settings and no state (one per device).
  std::unique_ptr<Optimizer> Clone() const;

  const std::string& name() const { return name_; }
  const OptimizerOptions& options() const { return options_; }
  void set_scheduler(std::shared_ptr<const LRScheduler> s) { scheduler_ = std::move(s); }
  void set_rescale_grad(double r) { options_.rescale_grad = r; }
  // Parameter names by key: decide where weight decay applies.
  void set_param_names(std::map<int, std::string> names) { names_ = std::move(names); }
  // Per-key multipliers of the learning rate and of weight decay (MXNet's set_lr_mult and
  // set_wd_mult, which Module fills from the variables' __lr_mult__ and __wd_mult__): a key
  // without one has lr_mult 1 and wd_mult 1 for "*_weight" and "*_gamma", 0 otherwise.
  void set_lr_mult(std::map<int, double> mult) { lr_mult_ = std::move(mult); }
  void set_wd_mult(std::map<int, double> mult) { wd_mult_ = std::move(mult); }

  void Update(int key, const NDArray& weight, const NDArray& grad);
  // The learning rate the next update of any key will use.
  double CurrentLR() const;
  int64_t num_update() const { return num_update_; }

  // State of every key (and update counts) in the .params format, written atomically, with
  // `extra` whole numbers beside them (named "checkpoint:...", which LoadStates leaves alone: what
  // a checkpoint records of its position, Note [Checkpoint positions]). The prefix sorts before
  // "optimizer:", so a Cohort that predates it, which took any other name for the update count,
  // reads the true count last.
  void SaveStates(const std::string& path, const std::map<std::string, int64_t>& extra = {}) const;
  // Replaces every key's state and count with a states file's, checked first against the weights
  // they will update (`weights`: each key's weight shape and dtype; names from set_param_names name
  // keys in errors): every entry is state:KEY:INDEX (a float32 array of the weight's shape, INDEX
  // below the states this kind keeps, one more for a master copy), count:KEY (one int64 >= 0) or
  // optimizer:NAME (this optimizer's name, one int64 at least every count), of a key the network
  // has; a key with states has all of them and a count. A file that breaks any of these throws
  // DataError naming the file and the entry, and nothing of it is kept. "checkpoint:..." entries
  // are the checkpoint's to check.
  void LoadStates(const std::string& path, const std::map<int, StateTarget>& weights);
  void LoadStates(const ParamsFile& file, const std::string& source,
                  const std::map<int, StateTarget>& weights);

 private:
  Optimizer(std::string name, UpdateKind kind, bool lamb, const OptimizerOptions& options)
      : name_(std::move(name)),
        kind_(kind),
        lamb_(lamb),
        options_(options),
        // sgd without momentum runs sgd_mom's rule on no state, as MXNet's SGD (update_rule.h)
        num_states_(lamb ? 2
                    : kind == UpdateKind::kSGDMom && options.momentum <= 0
                        ? 0
                        : UpdateStateCount(kind)) {}
  // The rule's parameters for update t (the key's count, from 1) of `key`.
  UpdateParams ParamsFor(int key, double lr, double wd, int64_t t) const;
  LambRule LambFor(double lr, double wd, int64_t t) const;
  // The rule on float32 arrays of one device (weight, gradient, the kind's states) for update t.
  void UpdateFloat32(int key, const NDArray& weight, const NDArray& grad, double lr, double wd,
                     int64_t t, float* const* states);
  // LAMB's step on the host: phase 1 into `direction`, the norms, phase 2.
  void LambStep(const LambRule& rule, float* w, const float* g, float* mean, float* var,
                float* direction, int64_t n) const;
  // "key 3 (fc1_weight)", or "key 3" when no name was set.
  std::string KeyName(int key) const;
  // Whether a weight of `dtype` keeps a master copy (Note [Multi-precision weights]); throws
  // naming the key for a half-precision weight without multi_precision or a non-float weight.
  bool KeepsMaster(int key, DType dtype) const;
  // The states a weight of `dtype` has: the kind's, and a master copy where it keeps one.
  int StateCount(DType dtype) const {
    return num_states_ + (options_.multi_precision && IsHalf(dtype) ? 1 : 0);
  }
  static bool IsHalf(DType dtype) { return dtype == DType::kFloat16 || dtype == DType::kBFloat16; }

  std::string name_;
  UpdateKind kind_;
  bool lamb_;  // LAMB's two phases (update_rule.h's LambRule), not an UpdateKind
  OptimizerOptions options_;
  int num_states_;
  std::shared_ptr<const LRScheduler> scheduler_;
  std::map<int, std::string> names_;
  std::map<int, double> lr_mult_, wd_mult_;
  std::map<int, std::vector<NDArray>> states_;
  struct LambBuffers {
    NDArray direction, sums;  // phase 1's output; the squared norms (GPU)
  };
  std::map<int, LambBuffers> lamb_buffers_;  // per key, made once (not saved)
  std::map<int, NDArray> wide_grads_;        // half-precision gradients widened (not saved)
  std::map<int, int64_t> counts_;
  int64_t num_update_ = 0;
};

}  // namespace cohort
