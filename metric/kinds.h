// The built-in metric kinds: classification (accuracy, top-k, F1, MCC), regression (MAE, MSE,
// RMSE, Pearson correlation) and probabilistic (cross-entropy, negative log-likelihood,
// perplexity).
#pragma once

#include <optional>

#include "metric/eval_metric.h"

namespace cohort {

// Fraction of samples whose predicted class (argmax of pred along `axis`, or pred itself when it
// has the label's shape) equals the label.
class Accuracy : public EvalMetric {
 public:
  // The classes lie along `axis`, or along the last axis for a sequence's (batch, time,
  // classes) predictions with (batch, time) labels; labels equal to ignore_label do not count.
  explicit Accuracy(int axis = 1, std::string name = "accuracy",
                    std::optional<int64_t> ignore_label = std::nullopt)
      : EvalMetric(std::move(name), 2), axis_(axis), ignore_label_(ignore_label) {}
  std::unique_ptr<EvalMetric> Clone() const override {
    return std::make_unique<Accuracy>(axis_, name_, ignore_label_);
  }

 protected:
  void UpdateOne(const NDArray& label, const NDArray& pred) override;

 private:
  int axis_;
  std::optional<int64_t> ignore_label_;
};

// Fraction of samples whose label is among the top_k scores of pred (batch, classes).
class TopKAccuracy : public EvalMetric {
 public:
  explicit TopKAccuracy(int top_k = 1, std::string name = "");
  std::unique_ptr<EvalMetric> Clone() const override {
    return std::make_unique<TopKAccuracy>(top_k_, name_);
  }

 protected:
  void UpdateOne(const NDArray& label, const NDArray& pred) override;

 private:
  int top_k_;
};

// "macro": the mean of each update's score; "micro": the score of all counts together.
enum class Average { kMacro, kMicro };

// Binary classification scores from pred (batch, 2) and labels 0/1: F1 and Matthews correlation.
// State: sum, num, then true positives, false positives, false negatives, true negatives.
class BinaryClassificationMetric : public EvalMetric {
 public:
  // "macro" scores each Update call (all its outputs' counts together) and averages the calls,
  // as MXNet 1.9.1: num_inst counts calls; "micro" scores the counts of every update.
  void Update(const std::vector<NDArray>& labels, const std::vector<NDArray>& preds) override;

 protected:
  BinaryClassificationMetric(std::string name, Average average)
      : EvalMetric(std::move(name), 6), average_(average) {}
  void UpdateOne(const NDArray& label, const NDArray& pred) override;
  double Value() const override;
  // The score of counts tp, fp, fn, tn.
  virtual double Score(double tp, double fp, double fn, double tn) const = 0;

  Average average_;
  double call_[4] = {};  // tp, fp, fn, tn of the current Update call
};

class F1 : public BinaryClassificationMetric {
 public:
  explicit F1(Average average = Average::kMacro, std::string name = "f1")
      : BinaryClassificationMetric(std::move(name), average) {}
  std::unique_ptr<EvalMetric> Clone() const override {
    return std::make_unique<F1>(average_, name_);
  }

 protected:
  double Score(double tp, double fp, double fn, double tn) const override;
};

class MCC : public BinaryClassificationMetric {
 public:
  explicit MCC(Average average = Average::kMacro, std::string name = "mcc")
      : BinaryClassificationMetric(std::move(name), average) {}
  std::unique_ptr<EvalMetric> Clone() const override {
    return std::make_unique<MCC>(average_, name_);
  }

 protected:
  double Score(double tp, double fp, double fn, double tn) const override;
};

// Mean absolute error, mean squared error and its root, over all elements of all updates.
// MXNet 1.x averages the values of its updates instead (one per device slice of each batch):
// for MAE and MSE the two agree when the slices are equal; RMSE differs even then (MXNet
// averages square roots; 0.6918 against 0.6998 on three equal batches), so MXNet's figure moves
// with the number of devices and Cohort's, the root of the mean, does not.
class RegressionMetric : public EvalMetric {
 public:
  enum class Kind { kMAE, kMSE, kRMSE };
  explicit RegressionMetric(Kind kind, std::string name = "");
  std::unique_ptr<EvalMetric> Clone() const override {
    return std::make_unique<RegressionMetric>(kind_, name_);
  }

 protected:
  void UpdateOne(const NDArray& label, const NDArray& pred) override;
  double Value() const override;

 private:
  Kind kind_;
};

// Pearson correlation of predictions and labels. State: sum, num, n, Σx, Σy, Σx², Σy², Σxy.
class PearsonCorrelation : public EvalMetric {
 public:
  explicit PearsonCorrelation(Average average = Average::kMacro, std::string name = "pearsonr")
      : EvalMetric(std::move(name), 8), average_(average) {}
  std::unique_ptr<EvalMetric> Clone() const override {
    return std::make_unique<PearsonCorrelation>(average_, name_);
  }

 protected:
  void UpdateOne(const NDArray& label, const NDArray& pred) override;
  double Value() const override;

 private:
  Average average_;
};

// -log(p[label] + eps) averaged over samples, from pred (batch, classes) probabilities:
// cross-entropy ("cross-entropy") and negative log-likelihood ("nll-loss") are the same sum.
// Each output's sum is float32 summed as numpy sums (Note [Metric sums as MXNet's]).
class CrossEntropy : public EvalMetric {
 public:
  // Predictions (..., classes): every row of classes, e.g. each position of a sequence.
  explicit CrossEntropy(double eps = 1e-12, std::string name = "cross-entropy",
                        std::optional<int64_t> ignore_label = std::nullopt)
      : EvalMetric(std::move(name), 2), eps_(eps), ignore_label_(ignore_label) {}
  std::unique_ptr<EvalMetric> Clone() const override {
    return std::make_unique<CrossEntropy>(eps_, name_, ignore_label_);
  }

 protected:
  void UpdateOne(const NDArray& label, const NDArray& pred) override;

 private:
  double eps_;
  std::optional<int64_t> ignore_label_;
};

// exp of the mean of -log(max(1e-10, p[label])) over labels other than ignore_label; each
// output's sum in float32, in order, as MXNet's NDArray sum (Note [Metric sums as MXNet's]).
class Perplexity : public EvalMetric {
 public:
  explicit Perplexity(std::optional<int64_t> ignore_label = std::nullopt,
                      std::string name = "perplexity")
      : EvalMetric(std::move(name), 2), ignore_label_(ignore_label) {}
  std::unique_ptr<EvalMetric> Clone() const override {
    return std::make_unique<Perplexity>(ignore_label_, name_);
  }

 protected:
  void UpdateOne(const NDArray& label, const NDArray& pred) override;
  double Value() const override;

 private:
  std::optional<int64_t> ignore_label_;
};

}  // namespace cohort
