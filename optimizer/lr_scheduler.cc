// LRScheduler kinds.
#include "optimizer/lr_scheduler.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"

namespace cohort {
namespace {

// How far update n is from the end of warm-up (0) to max_update (1): cosine and poly decay.
double Progress(const LRScheduler::Options& o, int64_t n) {
  return static_cast<double>(n - o.warmup_steps) /
         static_cast<double>(o.max_update - o.warmup_steps);
}

class Constant : public LRScheduler {
 public:
  explicit Constant(Options o) : LRScheduler(std::move(o)) {}
  double Decayed(int64_t) const override { return options_.base_lr; }
};

// lr = base * factor^floor((num_update - 1) / step), floored at stop_factor_lr: updates 1 to
// step take base_lr, as MXNet's FactorScheduler decays once num_update > count + step (its
// docstring's floor(num_update / step) decayed one update early, at the last batch of an epoch
// under step_epochs).
class Factor : public LRScheduler {
 public:
  explicit Factor(Options o) : LRScheduler(std::move(o)) {
    COHORT_CHECK_GE(options_.step, 1) << "factor lr_schedule: step";
    COHORT_CHECK(options_.factor > 0 && options_.factor <= 1)
        << "factor lr_schedule: factor " << options_.factor << " must be in (0, 1]";
  }
  double Decayed(int64_t n) const override {
    const double lr =
        options_.base_lr *
        std::pow(options_.factor, static_cast<double>(std::max<int64_t>(n - 1, 0) / options_.step));
    return std::max(lr, std::min(options_.stop_factor_lr, options_.base_lr));
  }
};

class MultiFactor : public LRScheduler {
 public:
  explicit MultiFactor(Options o) : LRScheduler(std::move(o)) {
    COHORT_CHECK(std::is_sorted(options_.steps.begin(), options_.steps.end()) &&
                 !options_.steps.empty())
        << "multifactor lr_schedule: its steps (lr_schedule.steps_epochs in a config) must be a "
        << "non-empty increasing list";
  }
  double Decayed(int64_t n) const override {
    const auto passed = std::upper_bound(options_.steps.begin(), options_.steps.end(), n - 1) -
                        options_.steps.begin();
    return options_.base_lr * std::pow(options_.factor, static_cast<double>(passed));
  }
};

// From base_lr at the end of warm-up to final_lr at max_update (MXNet's CosineScheduler).
class Cosine : public LRScheduler {
 public:
  explicit Cosine(Options o) : LRScheduler(std::move(o)) {
    COHORT_CHECK_GT(options_.max_update, options_.warmup_steps) << "cosine lr_schedule: max_update";
  }
  double Decayed(int64_t n) const override {
    if (n > options_.max_update) return options_.final_lr;
    return options_.final_lr + (options_.base_lr - options_.final_lr) *
                                   (1 + std::cos(M_PI * Progress(options_, n))) / 2;
  }
};

class Poly : public LRScheduler {
 public:
  explicit Poly(Options o) : LRScheduler(std::move(o)) {
    COHORT_CHECK_GT(options_.max_update, options_.warmup_steps) << "poly lr_schedule: max_update";
  }
  double Decayed(int64_t n) const override {
    if (n > options_.max_update) return options_.final_lr;
    return options_.final_lr + (options_.base_lr - options_.final_lr) *
                                   std::pow(1 - Progress(options_, n), options_.pwr);
  }
};

}  // namespace

double LRScheduler::operator()(int64_t num_update) const {
  if (num_update < options_.warmup_steps) {
    return options_.warmup_begin_lr + (options_.base_lr - options_.warmup_begin_lr) *
                                          static_cast<double>(num_update) /
                                          static_cast<double>(options_.warmup_steps);
  }
  return Decayed(num_update);
}

std::unique_ptr<LRScheduler> LRScheduler::Create(const std::string& kind, const Options& o) {
  if (kind == "constant" || kind.empty()) return std::make_unique<Constant>(o);
  if (kind == "factor") return std::make_unique<Factor>(o);
  if (kind == "multifactor") return std::make_unique<MultiFactor>(o);
  if (kind == "cosine") return std::make_unique<Cosine>(o);
  if (kind == "poly") return std::make_unique<Poly>(o);
  COHORT_THROW() << "unknown lr_schedule '" << kind
                 << "': expected constant, factor, multifactor, cosine or poly";
  return nullptr;
}

}  // namespace cohort
