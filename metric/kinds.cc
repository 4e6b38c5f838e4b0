// The built-in metric kinds.
#include "metric/kinds.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace cohort {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

[[noreturn]] void ShapeMismatch(const std::string& metric, const NDArray& label,
                                const NDArray& pred, const char* expected) {
  throw Error("metric '" + metric + "': labels of shape " + label.shape().ToString() +
                  " do not match predictions of shape " + pred.shape().ToString() + ": " + expected,
              __FILE__, __LINE__);
}

// The class number a label value names; labels are stored as floats (MXNet's convention). A
// fractional or non-finite label is the data's fault (it was truncated silently before): a
// DataError, exit 2 in the CLIs. The message names the label, not its position among the
// labels given (a device's slice): the trainer adds where the sample came from (Note [Naming a
// bad label]).
int64_t ClassOf(const std::string& metric, float value) {
  if (!std::isfinite(value) || value != std::trunc(value) || std::fabs(value) > 1e15f) {
    throw LabelError("metric '" + metric + "': label " + std::to_string(value) +
                         " is not a class number (a whole number)",
                     value, __FILE__, __LINE__);
  }
  return static_cast<int64_t>(value);
}

// Predictions (batch, classes) and labels (batch,) or (batch, 1): the common case of the
// top-k and binary metrics.
void CheckClassification(const std::string& metric, const NDArray& label, const NDArray& pred) {
  if (pred.shape().ndim() != 2 || label.size() != pred.shape()[0]) {
    ShapeMismatch(metric, label, pred, "expected predictions (batch, classes) and one label each");
  }
}

// Probabilities with the classes on the last axis, (batch, classes) or a sequence's
// (batch, time, classes), and one label per row: the number of rows.
int64_t ClassRows(const std::string& metric, const NDArray& label, const NDArray& pred) {
  const Shape& s = pred.shape();
  if (s.ndim() < 2 || label.size() * s[s.ndim() - 1] != pred.size()) {
    ShapeMismatch(metric, label, pred,
                  "expected predictions (..., classes) and one label per row of classes");
  }
  return label.size();
}

void CheckLabel(const std::string& metric, int64_t label, int64_t classes) {
  if (label < 0 || label >= classes) {
    throw LabelError("metric '" + metric + "': label " + std::to_string(label) +
                         " is outside the " + std::to_string(classes) +
                         " classes of the predictions",
                     static_cast<float>(label), __FILE__, __LINE__);
  }
}

}  // namespace

// ---- Accuracy -----------------------------------------------------------------------------

void Accuracy::UpdateOne(const NDArray& label, const NDArray& pred) {
  const float* l = HostFloats(label, 0);
  const float* p = HostFloats(pred, 1);
  int64_t correct = 0, counted = 0, classes = 0;  // 0: predictions are class numbers
  auto count = [&](int64_t predicted, float value) {
    const int64_t target = ClassOf(name_, value);
    if (ignore_label_ && target == *ignore_label_) return;
    if (classes > 0) CheckLabel(name_, target, classes);
    correct += predicted == target;
    ++counted;
  };
  if (pred.shape() == label.shape()) {  // predictions are class numbers already
    for (int64_t i = 0; i < label.size(); ++i) count(static_cast<int64_t>(p[i]), l[i]);
  } else {
    const Shape& s = pred.shape();
    int axis = axis_ < 0 ? axis_ + s.ndim() : axis_;
    if (axis < 0 || axis >= s.ndim()) {
      ShapeMismatch(name_, label, pred, "the class axis is out of range");
    }
    // A sequence's (batch, time, classes) against (batch, time) labels: the classes are last.
    if (label.shape().ndim() == s.ndim() - 1 && label.size() * s[axis] != pred.size() &&
        label.size() * s[s.ndim() - 1] == pred.size()) {
      axis = s.ndim() - 1;
    }
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= s[d];
    for (int d = axis + 1; d < s.ndim(); ++d) inner *= s[d];
    classes = s[axis];
    if (label.size() != outer * inner) {
      ShapeMismatch(name_, label, pred, "expected one label per prediction along the class axis");
    }
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const float* row = p + o * classes * inner + i;
        int64_t best = 0;
        for (int64_t c = 1; c < classes; ++c) {
          if (row[c * inner] > row[best * inner]) best = c;
        }
        count(best, l[o * inner + i]);
      }
    }
  }
  state_[0] += static_cast<double>(correct);
  state_[1] += static_cast<double>(counted);
}

// ---- Top-k accuracy -----------------------------------------------------------------------

TopKAccuracy::TopKAccuracy(int top_k, std::string name)
    : EvalMetric(name.empty() ? "top_k_accuracy_" + std::to_string(top_k) : std::move(name), 2),
      top_k_(top_k) {
  COHORT_CHECK_GE(top_k_, 1) << "top_k_accuracy: top_k";
}

void TopKAccuracy::UpdateOne(const NDArray& label, const NDArray& pred) {
  CheckClassification(name_, label, pred);
  const float* l = HostFloats(label, 0);
  const float* p = HostFloats(pred, 1);
  const int64_t n = pred.shape()[0], classes = pred.shape()[1];
  int64_t correct = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t target = ClassOf(name_, l[i]);
    CheckLabel(name_, target, classes);
    const float* row = p + i * classes;
    int64_t higher = 0;  // classes that outrank the label; ties count in the label's favour
    for (int64_t c = 0; c < classes; ++c) higher += row[c] > row[target];
    correct += higher < top_k_;
  }
  state_[0] += static_cast<double>(correct);
  state_[1] += static_cast<double>(n);
}

// ---- F1 and MCC ---------------------------------------------------------------------------

void BinaryClassificationMetric::UpdateOne(const NDArray& label, const NDArray& pred) {
  CheckClassification(name_, label, pred);
  if (pred.shape()[1] != 2)
    ShapeMismatch(name_, label, pred, "binary classification needs 2 classes");
  const float* l = HostFloats(label, 0);
  const float* p = HostFloats(pred, 1);
  double tp = 0, fp = 0, fn = 0, tn = 0;
  for (int64_t i = 0; i < pred.shape()[0]; ++i) {
    const int64_t truth = ClassOf(name_, l[i]);
    CheckLabel(name_, truth, 2);  // binary: labels 0 and 1
    const bool positive = p[2 * i + 1] > p[2 * i];
    if (positive)
      (truth ? tp : fp) += 1;
    else
      (truth ? fn : tn) += 1;
  }
  const double counts[4] = {tp, fp, fn, tn};
  for (int k = 0; k < 4; ++k) {
    state_[2 + k] += counts[k];
    call_[k] += counts[k];
  }
  if (average_ == Average::kMicro) state_[1] += static_cast<double>(pred.shape()[0]);
}

void BinaryClassificationMetric::Update(const std::vector<NDArray>& labels,
                                        const std::vector<NDArray>& preds) {
  std::fill(std::begin(call_), std::end(call_), 0.0);
  EvalMetric::Update(labels, preds);
  if (average_ == Average::kMacro) {
    state_[0] += Score(call_[0], call_[1], call_[2], call_[3]);
    state_[1] += 1;
  }
}

double BinaryClassificationMetric::Value() const {
  if (state_[1] == 0) return kNaN;
  if (average_ == Average::kMacro) return state_[0] / state_[1];
  return Score(state_[2], state_[3], state_[4], state_[5]);
}

double F1::Score(double tp, double fp, double fn, double) const {
  const double precision = tp + fp > 0 ? tp / (tp + fp) : 0;
  const double recall = tp + fn > 0 ? tp / (tp + fn) : 0;
  return precision + recall > 0 ? 2 * precision * recall / (precision + recall) : 0;
}

double MCC::Score(double tp, double fp, double fn, double tn) const {
  const double denominator = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn);
  return denominator > 0 ? (tp * tn - fp * fn) / std::sqrt(denominator) : 0;
}

// ---- Regression ---------------------------------------------------------------------------

RegressionMetric::RegressionMetric(Kind kind, std::string name)
    : EvalMetric(!name.empty()        ? std::move(name)
                 : kind == Kind::kMAE ? "mae"
                 : kind == Kind::kMSE ? "mse"
                                      : "rmse",
                 2),
      kind_(kind) {}

void RegressionMetric::UpdateOne(const NDArray& label, const NDArray& pred) {
  // (batch,) labels against (batch, 1) predictions, as MXNet reshapes them.
  if (label.size() != pred.size() || label.shape()[0] != pred.shape()[0]) {
    ShapeMismatch(name_, label, pred, "expected one label per prediction");
  }
  const float* l = HostFloats(label, 0);
  const float* p = HostFloats(pred, 1);
  double sum = 0;
  for (int64_t i = 0; i < pred.size(); ++i) {
    const double d = static_cast<double>(l[i]) - p[i];
    sum += kind_ == Kind::kMAE ? std::fabs(d) : d * d;
  }
  state_[0] += sum;
  state_[1] += static_cast<double>(pred.size());
}

double RegressionMetric::Value() const {
  const double mean = EvalMetric::Value();
  return kind_ == Kind::kRMSE ? std::sqrt(mean) : mean;
}

// ---- Pearson correlation ------------------------------------------------------------------

namespace {

double Correlation(double n, double sx, double sy, double sxx, double syy, double sxy) {
  const double cov = sxy - sx * sy / n;
  const double vx = sxx - sx * sx / n, vy = syy - sy * sy / n;
  return vx > 0 && vy > 0 ? cov / std::sqrt(vx * vy) : kNaN;
}

}  // namespace

void PearsonCorrelation::UpdateOne(const NDArray& label, const NDArray& pred) {
  if (label.size() != pred.size()) {
    ShapeMismatch(name_, label, pred, "expected one label per prediction");
  }
  const float* l = HostFloats(label, 0);
  const float* p = HostFloats(pred, 1);
  double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
  for (int64_t i = 0; i < pred.size(); ++i) {
    const double x = p[i], y = l[i];
    sx += x;
    sy += y;
    sxx += x * x;
    syy += y * y;
    sxy += x * y;
  }
  const double n = static_cast<double>(pred.size());
  const double sums[6] = {n, sx, sy, sxx, syy, sxy};
  for (int i = 0; i < 6; ++i) state_[2 + i] += sums[i];
  // num_inst counts outputs, as MXNet 1.9.1's (the micro value reads the sums alone).
  if (average_ == Average::kMacro) state_[0] += Correlation(n, sx, sy, sxx, syy, sxy);
  state_[1] += 1;
}

double PearsonCorrelation::Value() const {
  if (state_[1] == 0) return kNaN;
  if (average_ == Average::kMacro) return state_[0] / state_[1];
  return Correlation(state_[2], state_[3], state_[4], state_[5], state_[6], state_[7]);
}

// ---- Cross-entropy and perplexity ---------------------------------------------------------

// Note [Metric sums as MXNet's]
// MXNet 1.9.1 sums an output's log terms in float32 before adding them to its float64 sums:
// cross-entropy and nll_loss with numpy (`(-numpy.log(prob + eps)).sum()`, numpy's pairwise
// summation), perplexity with NDArray ops (log, then sum in order). Its tests compare values
// with ==, so these sums follow the same float32 steps; the logs are the C library's logf
// (numpy's vectorized float32 log differs from it in the last bit for some inputs).

namespace {

// numpy's pairwise summation of float32 (PW_BLOCKSIZE 128, eight accumulators) of term(0..n).
template <typename Term>
float NumpyPairwiseSum(int64_t first, int64_t n, const Term& term) {
  if (n < 8) {
    float sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += term(first + i);
    return sum;
  }
  if (n <= 128) {
    float r[8];
    for (int j = 0; j < 8; ++j) r[j] = term(first + j);
    int64_t i = 8;
    for (; i < n - (n % 8); i += 8) {
      for (int j = 0; j < 8; ++j) r[j] += term(first + i + j);
    }
    float sum = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) sum += term(first + i);
    return sum;
  }
  int64_t half = n / 2;
  half -= half % 8;
  return NumpyPairwiseSum(first, half, term) + NumpyPairwiseSum(first + half, n - half, term);
}

}  // namespace

void CrossEntropy::UpdateOne(const NDArray& label, const NDArray& pred) {
  const int64_t n = ClassRows(name_, label, pred), classes = pred.size() / std::max<int64_t>(n, 1);
  const float* l = HostFloats(label, 0);
  const float* p = HostFloats(pred, 1);
  const float eps = static_cast<float>(eps_);
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) {  // labels checked before any sum
    const int64_t target = ClassOf(name_, l[i]);
    if (ignore_label_ && target == *ignore_label_) continue;
    CheckLabel(name_, target, classes);
    ++count;
  }
  const auto term = [&](int64_t i) {
    return -std::log(p[i * classes + ClassOf(name_, l[i])] + eps);
  };
  float sum = 0;
  if (!ignore_label_) {
    sum = NumpyPairwiseSum(0, n, term);
  } else {  // MXNet's cross-entropy has no ignore_label: in order
    for (int64_t i = 0; i < n; ++i) {
      if (ClassOf(name_, l[i]) != *ignore_label_) sum += term(i);
    }
  }
  state_[0] += static_cast<double>(sum);
  state_[1] += static_cast<double>(count);
}

void Perplexity::UpdateOne(const NDArray& label, const NDArray& pred) {
  const int64_t n = ClassRows(name_, label, pred), classes = pred.size() / std::max<int64_t>(n, 1);
  const float* l = HostFloats(label, 0);
  const float* p = HostFloats(pred, 1);
  float sum = 0;
  double count = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t target = ClassOf(name_, l[i]);
    if (ignore_label_ && target == *ignore_label_) continue;
    CheckLabel(name_, target, classes);
    sum += std::log(std::max(1e-10f, p[i * classes + target]));
    count += 1;
  }
  state_[0] -= static_cast<double>(sum);
  state_[1] += count;
}

double Perplexity::Value() const { return state_[1] == 0 ? kNaN : std::exp(state_[0] / state_[1]); }

}  // namespace cohort
