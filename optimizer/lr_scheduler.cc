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

const OptionTable<LRScheduleConfig>& LRScheduleConfig::Table() {
  using L = LRScheduleConfig;
  static const OptionTable<L> table = [] {
    OptionTable<L> t("lr_schedule");
    t.Field("name", &L::name, "constant, factor, multifactor, cosine or poly")
        .Field("step_epochs", &L::step_epochs, "factor: epochs between decays")
        .Field("factor", &L::factor, "factor, multifactor: lr *= factor at each decay")
        .Field("steps_epochs", &L::steps_epochs, "multifactor: the epochs at which lr decays")
        .Field("warmup_epochs", &L::warmup_epochs, "linear warm-up from warmup_begin_lr, in epochs")
        .Field("warmup_begin_lr", &L::warmup_begin_lr, "the rate the warm-up starts from")
        .Field("final_lr", &L::final_lr, "cosine, poly: the rate at max_epochs")
        .Field("pwr", &L::pwr, "poly: the power")
        .Field("stop_factor_lr", &L::stop_factor_lr, "factor: the rate never goes below this")
        .Field("max_epochs", &L::max_epochs,
               "cosine, poly: epochs to final_lr (0: the run's epochs)");
    return t;
  }();
  return table;
}

LRScheduler::Options LRScheduleConfig::InUpdates(int64_t batches_per_epoch, int epochs) const {
  auto updates = [&](double e) {
    return static_cast<int64_t>(std::llround(e * static_cast<double>(batches_per_epoch)));
  };
  // Spans of epochs: step_epochs 0 or below decayed the rate at every update.
  auto checked = [](const char* key, double e, bool zero_allowed) {
    if (!std::isfinite(e) || e < 0 || (e == 0 && !zero_allowed)) {
      throw ConfigError("config: key 'lr_schedule." + std::string(key) + "': " + std::to_string(e) +
                            " epochs: expected a number " + (zero_allowed ? ">= 0" : "> 0"),
                        __FILE__, __LINE__);
    }
    return e;
  };
  LRScheduler::Options s;
  s.step = std::max<int64_t>(1, updates(checked("step_epochs", step_epochs, false)));
  s.factor = factor;
  for (double e : steps_epochs) s.steps.push_back(updates(checked("steps_epochs", e, false)));
  s.warmup_steps = updates(checked("warmup_epochs", warmup_epochs, true));
  s.warmup_begin_lr = warmup_begin_lr;
  s.final_lr = final_lr;
  s.pwr = pwr;
  s.stop_factor_lr = stop_factor_lr;
  s.max_update = updates(checked("max_epochs", max_epochs == 0 ? epochs : max_epochs, false));
  return s;
}

}  // namespace cohort
