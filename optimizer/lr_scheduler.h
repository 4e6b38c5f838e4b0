// Learning-rate schedules (MXNet's lr_scheduler): factor, multifactor, cosine and poly, each with
// an optional linear warm-up in front.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/options.h"

namespace cohort {

// The learning rate as a function of the number of updates done so far.
class LRScheduler {
 public:
  struct Options {
    double base_lr = 0.01;
    int64_t warmup_steps = 0;  // linear from warmup_begin_lr to base_lr over these updates
    double warmup_begin_lr = 0.0;
    // factor: lr *= factor every `step` updates, never below stop_factor_lr.
    int64_t step = 1;
    double factor = 1.0;
    double stop_factor_lr = 1e-8;
    std::vector<int64_t> steps = {};  // multifactor: lr *= factor at each of these updates
    int64_t max_update = 0;           // cosine / poly: reach final_lr at max_update
    double final_lr = 0.0;
    double pwr = 2.0;  // poly's power
  };
  virtual ~LRScheduler() = default;
  double operator()(int64_t num_update) const;
  const Options& options() const { return options_; }

  // "constant", "factor", "multifactor", "cosine" or "poly"; throws naming the kind otherwise.
  static std::unique_ptr<LRScheduler> Create(const std::string& kind, const Options& options);

 protected:
  explicit LRScheduler(Options options) : options_(std::move(options)) {}
  // The rate after warm-up, for update `num_update` (counted from the start of training).
  virtual double Decayed(int64_t num_update) const = 0;
  Options options_;
};

// The `lr_schedule` section of a configuration (Note [Declared options]): a schedule whose spans
// are in epochs, made a scheduler's Options in updates once an epoch's batches are known.
struct LRScheduleConfig {
  std::string name = "constant";  // LRScheduler::Create's kinds
  double step_epochs = 1;
  double factor = LRScheduler::Options{}.factor;
  std::vector<double> steps_epochs;
  double warmup_epochs = 0;
  double warmup_begin_lr = LRScheduler::Options{}.warmup_begin_lr;
  double final_lr = LRScheduler::Options{}.final_lr;
  double pwr = LRScheduler::Options{}.pwr;
  double stop_factor_lr = LRScheduler::Options{}.stop_factor_lr;
  double max_epochs = 0;  // 0: the run's epochs

  static const OptionTable<LRScheduleConfig>& Table();
  // The spans in updates (rounded); throws a ConfigError naming a span that is not > 0 (warm-up:
  // >= 0).
  LRScheduler::Options InUpdates(int64_t batches_per_epoch, int epochs) const;
};

}  // namespace cohort
