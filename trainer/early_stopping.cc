// Early stopping on a validation metric (Note [Early stopping]).
#include "trainer/early_stopping.h"

#include <cmath>

namespace cohort {

const OptionTable<EarlyStoppingConfig>& EarlyStoppingConfig::Table() {
  using E = EarlyStoppingConfig;
  static const OptionTable<E> table = [] {
    OptionTable<E> t("early_stopping");
    t.Field("metric", &E::metric, "the validation metric watched (\"\": the first)")
        .Field("patience", &E::patience, "epochs without improvement before stopping (0: off)", 0,
               1e9)
        .Field("mode", &E::mode, "max, min, or auto (max for accuracy-like metrics)");
    return t;
  }();
  return table;
}

EarlyStopping::EarlyStopping(const EarlyStoppingConfig& config,
                             const std::vector<std::string>& metrics)
    : patience_(config.patience) {
  std::string names;
  for (const std::string& m : metrics) names += (names.empty() ? "" : ", ") + m;
  if (metrics.empty()) {
    throw ConfigError("config: early_stopping needs validation data and a metric", __FILE__,
                      __LINE__);
  }
  metric_ = config.metric.empty() ? metrics[0] : config.metric;
  bool found = false;
  for (const std::string& m : metrics) found |= m == metric_;
  if (!found) {
    throw ConfigError("config: key 'early_stopping.metric': '" + metric_ +
                          "' is not a validation metric of this run (" + names + ")",
                      __FILE__, __LINE__);
  }
  if (config.mode == "max" || config.mode == "min") {
    higher_better_ = config.mode == "max";
  } else if (config.mode == "auto") {
    // The metrics where more is better; every other one is a loss or an error.
    higher_better_ = metric_.rfind("acc", 0) == 0 || metric_.rfind("top_k", 0) == 0 ||
                     metric_ == "f1" || metric_ == "mcc";
  } else {
    throw ConfigError(
        "config: key 'early_stopping.mode': '" + config.mode + "' is not max, min or auto",
        __FILE__, __LINE__);
  }
}

EarlyStopping::Verdict EarlyStopping::Observe(int epoch,
                                              const std::vector<EvalMetric::NameValue>& val) {
  double value = std::numeric_limits<double>::quiet_NaN();
  for (const auto& [name, v] : val) {
    if (name == metric_) value = v;
  }
  const bool improved =
      !std::isnan(value) && (best_epoch_ < 0 || (higher_better_ ? value > best_ : value < best_));
  if (improved) {
    best_ = value;
    best_epoch_ = epoch;
    stale_ = 0;
    return Verdict::kImproved;
  }
  return ++stale_ >= patience_ ? Verdict::kStop : Verdict::kNotImproved;
}

}  // namespace cohort
