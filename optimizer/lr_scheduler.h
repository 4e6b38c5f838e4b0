// Learning-rate schedules (MXNet's lr_scheduler): factor, multifactor, cosine and poly, each with
// an optional linear warm-up in front.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

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

}  // namespace cohort
