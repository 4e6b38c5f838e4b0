// MXNet's optimizer update operators on the CPU (Note [Update operators], optimizer_ops.h).
#include "operator/optimizer_ops.h"

#include <cmath>

#include "operator/common/exact_math.h"
#include "operator/common/kernel_util.h"

namespace cohort::op {

namespace {

// Float32 and float64, the types MXNet's kernels take (MSHADOW_REAL_TYPE_SWITCH less float16,
// which comes with the multi-precision ops).
template <typename Fn>
void DispatchUpdate(const std::string& op, DType dtype, Fn&& fn) {
  if (dtype == DType::kFloat32) return fn(float{});
  if (dtype == DType::kFloat64) return fn(double{});
  COHORT_THROW() << op << ": no kernel for " << dtype << " weights (float32 and float64 have one)";
}

// What every training-step op shares: float32 or float64, no gradient (binding refuses one:
// Operator::HasGradient), a GPU kernel.
class TrainingStepOp : public Operator {
 public:
  bool HasGradient() const override { return false; }
  bool IsDeterministic() const override { return false; }  // updates its inputs in place
  bool HasGpuKernel() const override { return COHORT_GPU_KERNELS; }
  bool TakesDType(DType dtype) const override {
    return dtype == DType::kFloat32 || dtype == DType::kFloat64;
  }
  bool BackwardNeedsInputs() const override { return false; }
  bool BackwardNeedsOutputs() const override { return false; }
  void Backward(const OpContext&, const std::vector<NDArray>&, const std::vector<NDArray>&,
                const std::vector<NDArray>&, const std::vector<GradReq>&,
                const std::vector<NDArray>&, const std::vector<NDArray>&) const override {
    COHORT_THROW() << type() << " has no gradient";
  }
};

class UpdateOp : public TrainingStepOp {
 public:
  UpdateOp(UpdateKind kind, const std::string& name, const Attrs& attrs)
      : p_(UpdateOpParam::Parse(kind, name, attrs)), states_(p_.StateNames()) {}

  std::vector<std::string> ListArguments() const override { return {"weight", "grad"}; }
  std::vector<std::string> ListAuxiliaryStates() const override { return states_; }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>& aux) const override {
    Shape known = out[0];
    for (const Shape& s : in) known = ShapeKnown(s) ? s : known;
    for (const Shape& s : aux) known = ShapeKnown(s) ? s : known;
    if (!ShapeKnown(known)) return false;
    AssignShape(in[0], known, type(), "weight");
    AssignShape(in[1], known, type(), "grad");
    for (size_t k = 0; k < aux.size(); ++k) AssignShape(aux[k], known, type(), states_[k]);
    AssignShape(out[0], known, type(), "output");
    return true;
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>& aux) const override {
    COHORT_GPU_DISPATCH(ctx, UpdateGpu(ctx, p_, in[0], in[1], aux, out[0]));
    DispatchUpdate(type(), in[0].dtype(), [&](auto tag) {
      using T = decltype(tag);
      T* s[3] = {nullptr, nullptr, nullptr};
      for (size_t k = 0; k < aux.size(); ++k) s[k] = aux[k].data<T>();
      const T* w = in[0].data<T>();
      const T* g = in[1].data<T>();
      T* y = out[0].data<T>();
      const int64_t n = out[0].size();
      DispatchUpdateKind(p_.kind, [&](auto kind) {
        ParallelChunks(
            n, ChunksFor(ctx, n / 4096 + 1),
            [&](int64_t, int64_t begin, int64_t end) {
              for (int64_t i = begin; i < end; ++i) {
                UpdateElementOf<decltype(kind)::value, T>(p_, i, w, g, s[0], s[1], s[2], y);
              }
            },
            ctx.arena);
      });
    });
  }

 private:
  UpdateOpParam p_;
  std::vector<std::string> states_;
};

// lamb_update_phase1 (weight, grad; states mean, var -> g) and lamb_update_phase2 (weight, g,
// r1, r2 -> the new weight): Note in optimizer_ops.h.
class LambPhase : public TrainingStepOp {
 public:
  LambPhase(int phase, const Attrs& attrs) : phase_(phase), p_(LambParam::Parse(phase, attrs)) {}

  std::vector<std::string> ListArguments() const override {
    return phase_ == 1 ? std::vector<std::string>{"weight", "grad"}
                       : std::vector<std::string>{"weight", "g", "r1", "r2"};
  }
  std::vector<std::string> ListAuxiliaryStates() const override {
    return phase_ == 1 ? std::vector<std::string>{"mean", "var"} : std::vector<std::string>{};
  }

  bool InferShape(std::vector<Shape>& in, std::vector<Shape>& out,
                  std::vector<Shape>& aux) const override {
    Shape known = ShapeKnown(in[0]) ? in[0] : (ShapeKnown(in[1]) ? in[1] : out[0]);
    if (!ShapeKnown(known)) return false;
    AssignShape(in[0], known, type(), "weight");
    AssignShape(in[1], known, type(), phase_ == 1 ? "grad" : "g");
    for (size_t k = 0; k < aux.size(); ++k) AssignShape(aux[k], known, type(), k ? "var" : "mean");
    if (phase_ == 2) {
      AssignShape(in[2], Shape({1}), type(), "r1");
      AssignShape(in[3], Shape({1}), type(), "r2");
    }
    AssignShape(out[0], known, type(), "output");
    return true;
  }

  void Forward(const OpContext& ctx, const std::vector<NDArray>& in, const std::vector<GradReq>&,
               const std::vector<NDArray>& out, const std::vector<NDArray>& aux) const override {
    COHORT_GPU_DISPATCH(ctx, LambGpu(ctx, phase_, p_, in, aux, out[0]));
    DispatchUpdate(type(), in[0].dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* w = in[0].data<T>();
      const T* g = in[1].data<T>();
      T* y = out[0].data<T>();
      if (phase_ == 1) {
        T* mean = aux[0].data<T>();
        T* var = aux[1].data<T>();
        for (int64_t i = 0; i < out[0].size(); ++i) LambPhase1Element<T>(p_, i, w, g, mean, var, y);
      } else {
        const T* r1 = in[2].data<T>();
        const T* r2 = in[3].data<T>();
        for (int64_t i = 0; i < out[0].size(); ++i) LambPhase2Element<T>(p_, i, w, g, r1, r2, y);
      }
    });
  }

 private:
  int phase_;
  LambParam p_;
};

}  // namespace

LambParam LambParam::Parse(int phase, const Attrs& attrs) {
  ParamReader r(phase == 1 ? "lamb_update_phase1" : "lamb_update_phase2", attrs);
  LambParam p;
  if (phase == 1) {
    p.beta1 = static_cast<float>(r.Float("beta1"));
    p.beta2 = static_cast<float>(r.Float("beta2"));
    p.epsilon = static_cast<float>(r.Float("epsilon"));
    p.t = r.Int("t");
    p.bias_correction = r.Bool("bias_correction");
    p.wd = static_cast<float>(r.Float("wd"));  // required, as in MXNet
    p.rescale_grad = static_cast<float>(r.Float("rescale_grad"));
    p.clip_gradient = static_cast<float>(r.Float("clip_gradient"));
    // std::pow(float, int) is a double in C++11, as MXNet's host code computes it.
    p.beta1_t = std::pow(p.beta1, static_cast<int>(p.t));
    p.beta2_t = std::pow(p.beta2, static_cast<int>(p.t));
  } else {
    p.lr = static_cast<float>(r.Float("lr"));
    p.lower_bound = static_cast<float>(r.Float("lower_bound"));
    p.upper_bound = static_cast<float>(r.Float("upper_bound"));
  }
  r.Finish();
  return p;
}

UpdateOpParam UpdateOpParam::Parse(UpdateKind k, const std::string& op, const Attrs& attrs) {
  ParamReader r(op, attrs);
  UpdateOpParam p;
  p.kind = k;
  p.lr = static_cast<float>(r.Float("lr"));
  p.wd = static_cast<float>(r.Float("wd"));
  p.rescale_grad = static_cast<float>(r.Float("rescale_grad"));
  // ftml names its clipping bound clip_grad.
  p.clip_gradient =
      static_cast<float>(r.Float(k == UpdateKind::kFtml ? "clip_grad" : "clip_gradient"));
  if (k == UpdateKind::kSGD || k == UpdateKind::kSGDMom || k == UpdateKind::kAdam) {
    r.Bool("lazy_update");  // row_sparse gradients only; Cohort's are dense
  }
  if (k == UpdateKind::kSGDMom || k == UpdateKind::kNAGMom || k == UpdateKind::kSignum) {
    p.momentum = static_cast<float>(r.Float("momentum"));
  }
  if (k == UpdateKind::kSignum) p.wd_lh = static_cast<float>(r.Float("wd_lh"));
  if (k == UpdateKind::kAdam || k == UpdateKind::kFtml) {
    p.beta1 = static_cast<float>(r.Float("beta1"));
    p.beta2 = static_cast<float>(r.Float("beta2"));
  }
  if (k == UpdateKind::kAdam || k == UpdateKind::kRMSProp || k == UpdateKind::kRMSPropAlex) {
    p.epsilon = static_cast<float>(r.Float("epsilon"));  // a float parameter in MXNet
  }
  if (k == UpdateKind::kFtml) {
    p.epsilon = r.Float("epsilon");  // a double one here
    p.t = r.Int("t");
  }
  if (k == UpdateKind::kRMSProp || k == UpdateKind::kRMSPropAlex) {
    p.gamma1 = static_cast<float>(r.Float("gamma1"));
    p.clip_weights = static_cast<float>(r.Float("clip_weights"));
  }
  if (k == UpdateKind::kRMSPropAlex) p.gamma2 = static_cast<float>(r.Float("gamma2"));
  if (k == UpdateKind::kFtrl) {
    p.lamda1 = static_cast<float>(r.Float("lamda1"));
    p.beta = static_cast<float>(r.Float("beta"));
  }
  r.Finish();
  return p;
}

std::vector<std::string> UpdateOpParam::StateNames() const {
  switch (kind) {
    case UpdateKind::kSGD:
    case UpdateKind::kSignSGD: return {};
    case UpdateKind::kSGDMom:
    case UpdateKind::kNAGMom:
    case UpdateKind::kSignum: return {"mom"};
    case UpdateKind::kAdam: return {"mean", "var"};
    case UpdateKind::kRMSProp: return {"n"};
    case UpdateKind::kRMSPropAlex: return {"n", "g", "delta"};
    case UpdateKind::kFtrl: return {"z", "n"};
    case UpdateKind::kFtml: return {"d", "v", "z"};
    default: return {};  // (kinds of cohort-train's optimizers without an MXNet update op)
  }
}

namespace {

// What this file's operators take (Note [Operator specs], operator/common/operator.cc).
std::vector<OpSpec> Specs() {
  const ParamSpec lr{"lr", "float", kRequired, "Learning rate"};
  const ParamSpec wd{"wd", "float", "0",
                     "Weight decay augments the objective function with a regularization term "
                     "that penalizes large weights. The penalty scales with the square of the "
                     "magnitude of each weight."};
  const ParamSpec rescale_grad{"rescale_grad", "float", "1",
                               "Rescale gradient to grad = rescale_grad*grad."};
  const ParamSpec clip_gradient{
      "clip_gradient", "float", "-1",
      "Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient <= 0, "
      "gradient clipping is turned off. grad = max(min(grad, clip_gradient), -clip_gradient)."};
  const ParamSpec beta1{"beta1", "float", "0.899999976",
                        "The decay rate for the 1st moment estimates."};
  const ParamSpec beta2{"beta2", "float", "0.999000013",
                        "The decay rate for the 2nd moment estimates."};
  const ParamSpec epsilon{"epsilon", "float", "9.99999994e-09",
                          "A small constant for numerical stability."};
  const ParamSpec momentum{"momentum", "float", "0",
                           "The decay rate of momentum estimates at each epoch."};
  const ParamSpec clip_weights{
      "clip_weights", "float", "-1",
      "Clip weights to the range of [-clip_weights, clip_weights] If clip_weights <= 0, weight "
      "clipping is turned off. weights = max(min(weights, clip_weights), -clip_weights)."};
  return {
      {"adam_update",
       "Update function for Adam optimizer. Adam is seen as a generalization of AdaGrad.",
       {"weight", "grad", "mean", "var"},
       "",
       {lr,
        beta1,
        beta2,
        epsilon,
        wd,
        rescale_grad,
        clip_gradient,
        {"lazy_update", "boolean", "1",
         "If true, lazy updates are applied if gradient's stype is row_sparse and all of w, m and "
         "v have the same stype"}}},
      {"ftml_update",
       "The FTML optimizer described in *FTML - Follow the Moving Leader in Deep Learning*, "
       "available at http://proceedings.mlr.press/v70/zheng17a/zheng17a.pdf.",
       {"weight", "grad", "d", "v", "z"},
       "",
       {{"lr", "float", kRequired, "Learning rate."},
        {"beta1", "float", "0.600000024", "Generally close to 0.5."},
        {"beta2", "float", "0.999000013", "Generally close to 1."},
        {"epsilon", "double", "9.9999999392252903e-09", "Epsilon to prevent div 0."},
        {"t", "int", kRequired, "Number of update."},
        wd,
        rescale_grad,
        {"clip_grad", "float", "-1",
         "Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient <= 0, "
         "gradient clipping is turned off. grad = max(min(grad, clip_gradient), "
         "-clip_gradient)."}}},
      {"ftrl_update",
       "Update function for Ftrl optimizer. Referenced from *Ad Click Prediction: a View from the "
       "Trenches*, available at http://dl.acm.org/citation.cfm?id=2488200.",
       {"weight", "grad", "z", "n"},
       "",
       {lr,
        {"lamda1", "float", "0.00999999978", "The L1 regularization coefficient."},
        {"beta", "float", "1", "Per-Coordinate Learning Rate beta."},
        wd,
        rescale_grad,
        clip_gradient}},
      {"lamb_update_phase1",
       "Phase I of lamb update it performs the following operations and returns g:.",
       {"weight", "grad", "mean", "var"},
       "",
       {beta1,
        beta2,
        {"epsilon", "float", "9.99999997e-07", "A small constant for numerical stability."},
        {"t", "int", kRequired, "Index update count."},
        {"bias_correction", "boolean", "1", "Whether to use bias correction."},
        {"wd", "float", kRequired,
         "Weight decay augments the objective function with a regularization term that penalizes "
         "large weights. The penalty scales with the square of the magnitude of each weight."},
        rescale_grad,
        clip_gradient}},
      {"lamb_update_phase2",
       "Phase II of lamb update it performs the following operations and updates grad.",
       {"weight", "g", "r1", "r2"},
       "",
       {lr,
        {"lower_bound", "float", "-1",
         "Lower limit of norm of weight. If lower_bound <= 0, Lower limit is not set"},
        {"upper_bound", "float", "-1",
         "Upper limit of norm of weight. If upper_bound <= 0, Upper limit is not set"}}},
      {"nag_mom_update",
       "Update function for Nesterov Accelerated Gradient( NAG) optimizer. It updates the weights "
       "using the following formula,",
       {"weight", "grad", "mom"},
       "",
       {lr, momentum, wd, rescale_grad, clip_gradient}},
      {"rmsprop_update",
       "Update function for `RMSProp` optimizer.",
       {"weight", "grad", "n"},
       "",
       {lr,
        {"gamma1", "float", "0.949999988", "The decay rate of momentum estimates."},
        epsilon,
        wd,
        rescale_grad,
        clip_gradient,
        clip_weights}},
      {"rmspropalex_update",
       "Update function for RMSPropAlex optimizer.",
       {"weight", "grad", "n", "g", "delta"},
       "",
       {lr,
        {"gamma1", "float", "0.949999988", "Decay rate."},
        {"gamma2", "float", "0.899999976", "Decay rate."},
        epsilon,
        wd,
        rescale_grad,
        clip_gradient,
        clip_weights}},
      {"sgd_mom_update",
       "Momentum update function for Stochastic Gradient Descent (SGD) optimizer.",
       {"weight", "grad", "mom"},
       "",
       {lr,
        momentum,
        wd,
        rescale_grad,
        clip_gradient,
        {"lazy_update", "boolean", "1",
         "If true, lazy updates are applied if gradient's stype is row_sparse and both weight and "
         "momentum have the same stype"}}},
      {"sgd_update",
       "Update function for Stochastic Gradient Descent (SGD) optimizer.",
       {"weight", "grad"},
       "",
       {lr,
        wd,
        rescale_grad,
        clip_gradient,
        {"lazy_update", "boolean", "1",
         "If true, lazy updates are applied if gradient's stype is row_sparse."}}},
      {"signsgd_update",
       "Update function for SignSGD optimizer.",
       {"weight", "grad"},
       "",
       {lr, wd, rescale_grad, clip_gradient}},
      {"signum_update",
       "SIGN momentUM (Signum) optimizer.",
       {"weight", "grad", "mom"},
       "",
       {lr,
        momentum,
        wd,
        rescale_grad,
        clip_gradient,
        {"wd_lh", "float", "0",
         "The amount of weight decay that does not go into gradient/momentum calculationsotherwise "
         "do weight decay algorithmically only."}}},
  };
}

}  // namespace

void RegisterOptimizerOps(OpRegistry& r) {
  for (OpSpec& spec : Specs()) r.Declare(std::move(spec));
  const std::pair<const char*, UpdateKind> ops[] = {
      {"sgd_update", UpdateKind::kSGD},         {"sgd_mom_update", UpdateKind::kSGDMom},
      {"nag_mom_update", UpdateKind::kNAGMom},  {"signsgd_update", UpdateKind::kSignSGD},
      {"signum_update", UpdateKind::kSignum},   {"adam_update", UpdateKind::kAdam},
      {"rmsprop_update", UpdateKind::kRMSProp}, {"rmspropalex_update", UpdateKind::kRMSPropAlex},
      {"ftrl_update", UpdateKind::kFtrl},       {"ftml_update", UpdateKind::kFtml}};
  for (auto [name, kind] : ops) {
    const std::string n = name;
    r.Register(n, [k = kind, n](const Attrs& a) { return std::make_unique<UpdateOp>(k, n, a); });
  }
  r.Register("lamb_update_phase1",
             [](const Attrs& a) { return std::make_unique<LambPhase>(1, a); });
  r.Register("lamb_update_phase2",
             [](const Attrs& a) { return std::make_unique<LambPhase>(2, a); });
}

}  // namespace cohort::op
