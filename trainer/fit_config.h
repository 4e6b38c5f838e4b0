// FitConfig: what a training run is given (the YAML's training sections, Module.fit's
// keywords), and how it meets a non-finite gradient.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ndarray/ndarray.h"
#include "optimizer/initializer.h"
#include "optimizer/optimizer.h"
#include "trainer/early_stopping.h"

namespace cohort {

// What a step whose summed gradient holds a NaN or an infinity does (Note [Non-finite gradients]).
enum class OnNonFinite {
  kStop,      // throw an AgreedError naming the step and the first parameter affected
  kSkipStep,  // leave every weight as it was for this step, count it, go on
};

// "stop" or "skip_step"; throws a ConfigError naming the text otherwise.
OnNonFinite ParseOnNonFinite(const std::string& text);

struct FitConfig {
  int epochs = 10;
  // Where to begin (Note [Checkpoint positions]): > 0 resumes from the checkpoint after
  // begin_epoch epochs and begin_batch batches of the next.
  int begin_epoch = 0;
  int64_t begin_batch = 0;
  bool resume_latest = false;  // begin at the latest complete checkpoint (none: from scratch)
  bool update_on_kvstore = true;
  std::string optimizer = "sgd";
  // Its rescale_grad is replaced by 1 / the global batch size unless `rescale_grad` is set, as
  // MXNet's Module does (an explicit value is used as given, not divided again).
  OptimizerOptions optimizer_options;
  std::optional<double> rescale_grad;
  // optimizer.clip_global_norm (PyTorch's clip_grad_norm_, MXNet's gluon clip_global_norm): each
  // step's gradients, as the optimizer sees them (after rescale_grad), are scaled down so that
  // their L2 norm over every parameter is at most this; 0: off. Needs the whole gradient before
  // any update, so the devices update themselves (not the kvstore; Note [Global norm clipping]).
  double clip_global_norm = 0;
  std::string lr_schedule = "constant";
  LRScheduler::Options schedule;  // in updates; base_lr is taken from optimizer_options.lr
  InitializerOptions initializer;
  // Initial parameters (MXNet's arg_params / aux_params: fine-tuning): used instead of the
  // initializer for the names they hold. A name the network lacks, or a shape that differs, is
  // an error unless its layer is listed in `reinit` (those layers are initialized afresh, the
  // usual recipe for a new number of classes). A resumed run (begin_epoch > 0) ignores them.
  std::map<std::string, NDArray> arg_params, aux_params;
  std::vector<std::string> reinit;  // layer names: parameters "<layer>_..."
  // A parameter the network needs that arg_params lacks (outside the reinit layers) is an
  // error unless this is set (MXNet's allow_missing): then the initializer makes it.
  bool allow_missing = false;
  // Start from the parameters the adopted manager holds (Trainer::Adopt; Module.init_params):
  // no initializer, no initial parameters.
  bool keep_params = false;
  // Frozen parameters (MXNet's fixed_param_names), as regular expressions matched against the
  // whole name: no gradient memory, no kvstore key, no update. Each must match some parameter.
  std::vector<std::string> fixed_params;
  std::vector<std::string> metrics = {"acc"};
  // Labels the metrics leave out (acc, ce, nll_loss, perplexity): the padding of bucketed data.
  std::optional<int64_t> ignore_label;
  // Text data: each step counts its tokens (the label elements of its real samples other than
  // ignore_label), reported as tokens/s beside samples/s.
  bool count_tokens = false;
  uint64_t seed = 0;
  std::string checkpoint_prefix;  // empty: no checkpoints
  int checkpoint_period = 1;
  int64_t checkpoint_every_steps = 0;  // also a mid-epoch checkpoint every N batches (0: never)
  OnNonFinite on_nonfinite = OnNonFinite::kStop;
  // Note [Gradient accumulation]: the gradients of this many batches are summed before each
  // update (an update's batch is accumulate x the global batch).
  int64_t accumulate = 1;
  // Note [Loss scaling]: "dynamic" scales the loss (float16 training), "off" does not; "auto"
  // (the key's default) is resolved by the app: dynamic with precision float16, else off.
  std::string loss_scaling = "auto";
  double loss_scale_init = 65536;  // a power of two from 1 to 2^24
  int64_t loss_scale_growth_interval = 2000;
  EarlyStoppingConfig early_stopping;  // Note [Early stopping]
  // Stop after the step in which this process (or any worker) got SIGINT/SIGTERM, with a
  // checkpoint when a prefix is set (Note [Stop on a signal]; the handlers are the caller's).
  bool stop_on_signal = true;
  // More that the workers of a job must hold alike (Note [Agreement]), as (name, value): the
  // apps add the data sizes.
  std::vector<std::pair<std::string, std::string>> must_agree;
  int log_every = 100;     // speedometer period, in batches (0: never)
  bool log_epochs = true;  // each epoch's metrics and time (Module.fit logs its own)
  bool profile = false;  // time every op of device 0 (Trainer::profile())
  bool progress = true;  // a progress line on stderr when it is a terminal (rank 0)

  // The configuration keys FitConfig holds (Note [Declared options]): the top level's training
  // keys, the `checkpoint` section, and the fine-tuning keys of the `model` section.
  static const OptionTable<FitConfig>& TrainingTable();
  static const OptionTable<FitConfig>& CheckpointTable();
  static const OptionTable<FitConfig>& FineTuningTable();
};

}  // namespace cohort
