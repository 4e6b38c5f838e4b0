// Early stopping on a validation metric (Note [Early stopping]).
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "base/options.h"
#include "metric/eval_metric.h"

namespace cohort {

// Note [Early stopping]
// The `early_stopping` section: after each epoch's validation, the named metric (the first one
// when unnamed) is compared with its best so far, higher better (accuracy, f1, mcc, top-k) or
// lower better (losses, perplexity, errors) as `mode` says or the metric's kind implies. An
// epoch that improves it is kept as PREFIX-best.params (with a checkpoint prefix); `patience`
// epochs in a row without improvement end the run. The validation metrics are summed over the
// workers, so every worker decides alike. A resumed run starts its count afresh.
struct EarlyStoppingConfig {
  std::string metric;         // a validation metric's name; "": the first
  int patience = 0;           // epochs without improvement before stopping; 0: off
  std::string mode = "auto";  // max, min, or auto (by the metric)

  static const OptionTable<EarlyStoppingConfig>& Table();
};

class EarlyStopping {
 public:
  enum class Verdict { kImproved, kNotImproved, kStop };

  // Throws a ConfigError naming the section when the metric is not among `metrics` (the
  // validation metrics' names) or the mode is unknown.
  EarlyStopping(const EarlyStoppingConfig& config, const std::vector<std::string>& metrics);

  Verdict Observe(int epoch, const std::vector<EvalMetric::NameValue>& val);
  const std::string& metric() const { return metric_; }
  double best() const { return best_; }
  int best_epoch() const { return best_epoch_; }
  int patience() const { return patience_; }

 private:
  std::string metric_;
  bool higher_better_ = true;
  int patience_ = 0, stale_ = 0, best_epoch_ = -1;
  double best_ = std::numeric_limits<double>::quiet_NaN();
};

}  // namespace cohort
