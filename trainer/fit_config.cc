// The configuration keys FitConfig holds, declared once (Note [Declared options]).
#include "trainer/fit_config.h"

#include <cmath>

namespace cohort {
namespace {

constexpr double kMaxEpochs = 1e9;

}  // namespace

OnNonFinite ParseOnNonFinite(const std::string& text) {
  if (text == "stop") return OnNonFinite::kStop;
  if (text == "skip_step") return OnNonFinite::kSkipStep;
  throw ConfigError("on_nonfinite: '" + text + "' is not stop or skip_step", __FILE__, __LINE__);
}

const OptionTable<FitConfig>& FitConfig::TrainingTable() {
  using F = FitConfig;
  static const OptionTable<F> table = [] {
    OptionTable<F> t("");
    t.Field("epochs", &F::epochs, "epochs to train (counted from 0, resumed ones included)", 1,
            kMaxEpochs)
        .Custom(
            "resume_epoch", "int_or_auto",
            "resume from the checkpoint after this epoch (0: from scratch); auto: the latest "
            "complete checkpoint, mid-epoch ones included (needs checkpoint.prefix)",
            [](const Options& o, const std::string& key, F* f) {
              int64_t e = 0;
              try {
                e = o.Get<int64_t>(key, 0);
              } catch (const ConfigError&) {  // not a number: the checker let only `auto` by
                f->resume_latest = o.Get<std::string>(key, "") == "auto";
                return;
              }
              f->resume_latest = false;
              if (e < 0 || e > kMaxEpochs) {
                throw ConfigError("config: key '" + o.Where(key) + "': " + std::to_string(e) +
                                      " is outside [0, 1000000000]",
                                  __FILE__, __LINE__);
              }
              f->begin_epoch = static_cast<int>(e);
            },
            [](const F& f) -> Options::Value {
              if (f.resume_latest) return std::string("auto");
              return static_cast<int64_t>(f.begin_epoch);
            })
        .Field("update_on_kvstore", &F::update_on_kvstore,
               "the kvstore updates the weights (off: each device updates its own copy)")
        .Field("seed", &F::seed, "initialization, shuffling and dropout")
        .Field("log_every", &F::log_every, "speedometer period in batches (0: never)", 0, 1 << 30)
        .Field("metrics", &F::metrics, "training and validation metrics (MXNet's names)")
        .Custom(
            "on_nonfinite", "string",
            "a step whose gradient holds a NaN or an infinity: stop, or skip_step (counted)",
            [](const Options& o, const std::string& key, F* f) {
              f->on_nonfinite = ParseOnNonFinite(o.Get<std::string>(key, "stop"));
            },
            [](const F& f) -> Options::Value {
              return std::string(f.on_nonfinite == OnNonFinite::kStop ? "stop" : "skip_step");
            })
        .Custom(
            "loss_scaling", "string",
            "dynamic loss scaling (skip a step whose gradient overflows and halve the scale, "
            "double it after loss_scale_growth_interval clean steps): dynamic, off, or auto "
            "(dynamic with precision float16)",
            [](const Options& o, const std::string& key, F* f) {
              const std::string v = o.Get<std::string>(key, f->loss_scaling);
              if (v != "auto" && v != "dynamic" && v != "off") {
                throw ConfigError(
                    "config: key '" + o.Where(key) + "': '" + v + "' is not auto, dynamic or off",
                    __FILE__, __LINE__);
              }
              f->loss_scaling = v;
            },
            [](const F& f) -> Options::Value { return f.loss_scaling; })
        .Custom(
            "loss_scale_init", "float", "the first loss scale: a power of two from 1 to 2^24",
            [](const Options& o, const std::string& key, F* f) {
              const double v = o.Get<double>(key, f->loss_scale_init);
              int exponent = 0;
              if (!(v >= 1 && v <= 16777216) || std::frexp(v, &exponent) != 0.5) {
                throw ConfigError("config: key '" + o.Where(key) + "': " + OptionText(v) +
                                      " is not a power of two from 1 to 16777216 (2^24)",
                                  __FILE__, __LINE__);
              }
              f->loss_scale_init = v;
            },
            [](const F& f) -> Options::Value { return f.loss_scale_init; })
        .Field("loss_scale_growth_interval", &F::loss_scale_growth_interval,
               "clean steps in a row after which the loss scale doubles", 1, 1e12)
        .Field("accumulate", &F::accumulate,
               "sum the gradients of this many batches before each update (gradient "
               "accumulation: an update's batch is accumulate x batch_size)",
               1, 1 << 20);
    return t;
  }();
  return table;
}

const OptionTable<FitConfig>& FitConfig::CheckpointTable() {
  using F = FitConfig;
  static const OptionTable<F> table = [] {
    OptionTable<F> t("checkpoint");
    t.Field("prefix", &F::checkpoint_prefix,
            "PREFIX-symbol.json, PREFIX-NNNN.params and .states (empty: no checkpoints)")
        .Field("period", &F::checkpoint_period, "every this many epochs", 1, kMaxEpochs)
        .Field("every_steps", &F::checkpoint_every_steps,
               "also a mid-epoch checkpoint every this many batches (0: never)", 0,
               static_cast<double>(int64_t{1} << 40));
    return t;
  }();
  return table;
}

const OptionTable<FitConfig>& FitConfig::FineTuningTable() {
  using F = FitConfig;
  static const OptionTable<F> table = [] {
    OptionTable<F> t("model");
    t.Field("reinit", &F::reinit, "fine-tuning: layers initialized afresh (e.g. a new fc)")
        .Field("allow_missing", &F::allow_missing,
               "fine-tuning: parameters model.params lacks are initialized, not refused")
        .Field("fixed_params", &F::fixed_params,
               "frozen parameters: regular expressions matched against whole names");
    return t;
  }();
  return table;
}

}  // namespace cohort
