// EvalMetric: the interface of every evaluation metric (MXNet's metric.EvalMetric), the
// composite, custom and loss metrics, and creation by name.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ndarray/ndarray.h"

namespace cohort {

// Note [Mergeable metric state]
// Every metric keeps its running value as a few sums of doubles (state()): state[0] is
// sum_metric and state[1] num_inst, as in MXNet, and some kinds add more (counts of true and
// false positives, sums of products). All of them add up: the state of a metric updated on two
// devices, or on two ranks, is the sum of the two states. So data-parallel training keeps one
// metric per device, Merges them, and reduces the raw sums across ranks with one allreduce of
// state(); Get() then reports the value over all the data.
class EvalMetric {
 public:
  using NameValue = std::pair<std::string, double>;

  virtual ~EvalMetric() = default;

  const std::string& name() const { return name_; }
  // labels[i] and preds[i] belong to the network's output i (batch-major arrays on any context).
  virtual void Update(const std::vector<NDArray>& labels, const std::vector<NDArray>& preds);
  // (name, value) pairs; the value is NaN before any update.
  virtual std::vector<NameValue> Get() const;
  virtual void Reset();

  double sum_metric() const { return State()[0]; }
  double num_inst() const { return State()[1]; }
  // The raw sums (Note [Mergeable metric state]).
  virtual std::vector<double> State() const { return state_; }
  virtual void SetState(std::span<const double> state);
  // Adds another metric's state; it must be the same kind with the same options.
  void Merge(const EvalMetric& other);

  // A fresh metric of the same kind and options (for one per device).
  virtual std::unique_ptr<EvalMetric> Clone() const = 0;

 protected:
  EvalMetric(std::string name, size_t state_size);

  // One output's labels and predictions.
  virtual void UpdateOne(const NDArray& label, const NDArray& pred) = 0;
  virtual double Value() const;
  // Metrics that look only at predictions (Loss) accept an empty label list.
  virtual bool needs_labels() const { return true; }

  // The array's values as floats on the host: its own memory when it is a float32 host array,
  // else a converted copy in a buffer reused across calls (HostFloat32).
  const float* HostFloats(const NDArray& array, int which) const;

  std::string name_;
  std::vector<double> state_;

 private:
  mutable NDArray staged_[2];  // HostFloat32's buffers
};

// `array` as float32 in host memory: itself when it is, else a copy into *buffer (pinned when
// the array is on a GPU), which is made at the size of the largest array staged and reused as a
// view: the unequal slices of a batch over devices, or a padded last batch, allocate nothing.
NDArray HostFloat32(const NDArray& array, NDArray* buffer);

// Several metrics updated together; Get() lists all their values. GPU arrays (and arrays of other
// dtypes) are copied to the host once for all of them, not once per metric.
class CompositeEvalMetric : public EvalMetric {
 public:
  CompositeEvalMetric() : EvalMetric("composite", 2) {}
  void Add(std::unique_ptr<EvalMetric> metric) { metrics_.push_back(std::move(metric)); }
  const std::vector<std::unique_ptr<EvalMetric>>& metrics() const { return metrics_; }

  void Update(const std::vector<NDArray>& labels, const std::vector<NDArray>& preds) override;
  std::vector<NameValue> Get() const override;
  void Reset() override;
  std::vector<double> State() const override;
  void SetState(std::span<const double> state) override;
  std::unique_ptr<EvalMetric> Clone() const override;

 protected:
  void UpdateOne(const NDArray&, const NDArray&) override {}

 private:
  std::vector<std::unique_ptr<EvalMetric>> metrics_;
  // The arrays that Update hands the metrics, and HostFloat32's buffers for them.
  std::vector<NDArray> host_labels_, host_preds_, label_buffers_, pred_buffers_;
};

// A metric from a function of (label, pred) returning (sum, count) to add to sum_metric and
// num_inst; the value is sum_metric / num_inst.
class CustomMetric : public EvalMetric {
 public:
  using Fn = std::function<std::pair<double, double>(const NDArray& label, const NDArray& pred)>;
  CustomMetric(std::string name, Fn fn) : EvalMetric(std::move(name), 2), fn_(std::move(fn)) {}
  std::unique_ptr<EvalMetric> Clone() const override {
    return std::make_unique<CustomMetric>(name_, fn_);
  }

 protected:
  void UpdateOne(const NDArray& label, const NDArray& pred) override;

 private:
  Fn fn_;
};

// The mean of the predictions themselves (for networks whose output is a loss).
class Loss : public EvalMetric {
 public:
  explicit Loss(std::string name = "loss") : EvalMetric(std::move(name), 2) {}
  std::unique_ptr<EvalMetric> Clone() const override { return std::make_unique<Loss>(name_); }

 protected:
  void UpdateOne(const NDArray& label, const NDArray& pred) override;
  bool needs_labels() const override { return false; }
};

// Creates a metric by name, as mx.metric.create: "acc" / "accuracy", "top_k_accuracy" /
// "top_k_acc", "f1", "mcc", "mae", "mse", "rmse", "ce" / "cross-entropy", "nll_loss", "perplexity",
// "pearsonr", "loss". Options by name as strings: axis, top_k, average (macro | micro), eps,
// ignore_label, name. An unknown name or option is an error naming it.
std::unique_ptr<EvalMetric> CreateMetric(const std::string& name,
                                         const std::map<std::string, std::string>& options = {});
// A composite of several metrics by name.
std::unique_ptr<EvalMetric> CreateMetric(const std::vector<std::string>& names);
// The same, with `ignore_label` given to the kinds that take one (acc, ce, nll_loss, perplexity):
// positions labelled with it (the padding of bucketed sequences) are left out.
std::unique_ptr<EvalMetric> CreateMetric(const std::vector<std::string>& names,
                                         std::optional<int64_t> ignore_label);

}  // namespace cohort
