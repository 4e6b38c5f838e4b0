// EvalMetric, CompositeEvalMetric, CustomMetric, Loss and CreateMetric.
#include "metric/eval_metric.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <typeinfo>

#include "metric/kinds.h"

namespace cohort {

EvalMetric::EvalMetric(std::string name, size_t state_size)
    : name_(std::move(name)), state_(state_size, 0.0) {}

void EvalMetric::Update(const std::vector<NDArray>& labels, const std::vector<NDArray>& preds) {
  if (!needs_labels() && labels.empty()) {
    for (const NDArray& pred : preds) UpdateOne(NDArray(), pred);
    return;
  }
  COHORT_CHECK_EQ(labels.size(), preds.size())
      << "metric '" << name_ << "': " << labels.size() << " label arrays for " << preds.size()
      << " outputs";
  for (size_t i = 0; i < preds.size(); ++i) {
    COHORT_CHECK(!preds[i].is_none() && (!needs_labels() || !labels[i].is_none()))
        << "metric '" << name_ << "': output " << i << " has a none array";
    UpdateOne(labels[i], preds[i]);
  }
}

double EvalMetric::Value() const {
  return state_[1] == 0 ? std::numeric_limits<double>::quiet_NaN() : state_[0] / state_[1];
}

std::vector<EvalMetric::NameValue> EvalMetric::Get() const { return {{name_, Value()}}; }

void EvalMetric::Reset() { std::fill(state_.begin(), state_.end(), 0.0); }

void EvalMetric::SetState(std::span<const double> state) {
  COHORT_CHECK_EQ(state.size(), state_.size()) << "metric '" << name_ << "': state size";
  std::copy(state.begin(), state.end(), state_.begin());
}

void EvalMetric::Merge(const EvalMetric& other) {
  std::vector<double> mine = State();
  const std::vector<double> theirs = other.State();
  COHORT_CHECK(typeid(*this) == typeid(other) && mine.size() == theirs.size())
      << "cannot merge metric '" << other.name() << "' into '" << name_
      << "': they are of different kinds";
  for (size_t i = 0; i < mine.size(); ++i) mine[i] += theirs[i];
  SetState(mine);
}

const float* EvalMetric::HostFloats(const NDArray& array, int which) const {
  return static_cast<const float*>(HostFloat32(array, &staged_[which]).raw_data());
}

NDArray HostFloat32(const NDArray& array, NDArray* buffer) {
  if (array.dtype() == DType::kFloat32 && array.ctx().is_host()) return array;
  const Context host = array.ctx().is_gpu() ? Context::CPUPinned() : Context::CPU();
  if (buffer->is_none() || buffer->size() < array.size() || buffer->ctx() != host) {
    *buffer = NDArray::Empty(Shape({std::max<int64_t>(array.size(), 1)}), DType::kFloat32, host);
  }
  NDArray view = buffer->Reshape(array.shape());
  array.CopyTo(view);
  return view;
}

// ---- Composite ---------------------------------------------------------------------------

void CompositeEvalMetric::Update(const std::vector<NDArray>& labels,
                                 const std::vector<NDArray>& preds) {
  if (metrics_.size() < 2) {  // one metric stages for itself
    for (auto& metric : metrics_) metric->Update(labels, preds);
    return;
  }
  auto stage = [](const std::vector<NDArray>& arrays, std::vector<NDArray>* host,
                  std::vector<NDArray>* buffers) {
    host->resize(arrays.size());
    if (buffers->size() < arrays.size()) buffers->resize(arrays.size());
    for (size_t i = 0; i < arrays.size(); ++i) {
      (*host)[i] = arrays[i].is_none() ? NDArray() : HostFloat32(arrays[i], &(*buffers)[i]);
    }
  };
  stage(labels, &host_labels_, &label_buffers_);
  stage(preds, &host_preds_, &pred_buffers_);
  for (auto& metric : metrics_) metric->Update(host_labels_, host_preds_);
}

std::vector<EvalMetric::NameValue> CompositeEvalMetric::Get() const {
  std::vector<NameValue> out;
  for (const auto& metric : metrics_) {
    for (auto& value : metric->Get()) out.push_back(std::move(value));
  }
  return out;
}

void CompositeEvalMetric::Reset() {
  for (auto& metric : metrics_) metric->Reset();
}

std::vector<double> CompositeEvalMetric::State() const {
  std::vector<double> out;
  for (const auto& metric : metrics_) {
    std::vector<double> s = metric->State();
    out.insert(out.end(), s.begin(), s.end());
  }
  return out;
}

void CompositeEvalMetric::SetState(std::span<const double> state) {
  size_t offset = 0;
  for (auto& metric : metrics_) {
    const size_t n = metric->State().size();
    COHORT_CHECK_LE(offset + n, state.size()) << "composite metric: state size";
    metric->SetState(state.subspan(offset, n));
    offset += n;
  }
  COHORT_CHECK_EQ(offset, state.size()) << "composite metric: state size";
}

std::unique_ptr<EvalMetric> CompositeEvalMetric::Clone() const {
  auto out = std::make_unique<CompositeEvalMetric>();
  for (const auto& metric : metrics_) out->Add(metric->Clone());
  return out;
}

// ---- Custom and Loss ----------------------------------------------------------------------

void CustomMetric::UpdateOne(const NDArray& label, const NDArray& pred) {
  auto [sum, count] = fn_(label, pred);
  state_[0] += sum;
  state_[1] += count;
}

void Loss::UpdateOne(const NDArray&, const NDArray& pred) {
  const float* p = HostFloats(pred, 0);
  double sum = 0;
  for (int64_t i = 0; i < pred.size(); ++i) sum += p[i];
  state_[0] += sum;
  state_[1] += static_cast<double>(pred.size());
}

// ---- Creation by name ---------------------------------------------------------------------

namespace {

class Options {
 public:
  Options(const std::string& metric, const std::map<std::string, std::string>& options)
      : metric_(metric), options_(options) {}

  std::string Text(const std::string& key, const std::string& fallback) {
    used_.push_back(key);
    auto it = options_.find(key);
    return it == options_.end() ? fallback : it->second;
  }
  template <typename T>
  T Number(const std::string& key, T fallback) {
    used_.push_back(key);
    auto it = options_.find(key);
    if (it == options_.end()) return fallback;
    T value{};
    const std::string& s = it->second;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    COHORT_CHECK(ec == std::errc() && ptr == s.data() + s.size())
        << "metric '" << metric_ << "': option " << key << "='" << s << "' is not a number";
    return value;
  }
  bool Has(const std::string& key) const { return options_.count(key) > 0; }
  Average ParseAverage() {
    const std::string a = Text("average", "macro");
    COHORT_CHECK(a == "macro" || a == "micro")
        << "metric '" << metric_ << "': average='" << a << "': expected macro or micro";
    return a == "macro" ? Average::kMacro : Average::kMicro;
  }
  // Every option given must have been asked for by the metric.
  void CheckAllUsed() const {
    for (const auto& [key, value] : options_) {
      COHORT_CHECK(std::find(used_.begin(), used_.end(), key) != used_.end())
          << "metric '" << metric_ << "' has no option '" << key << "'";
    }
  }

 private:
  std::string metric_;
  const std::map<std::string, std::string>& options_;
  std::vector<std::string> used_;
};

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::unique_ptr<EvalMetric> CreateMetric(const std::string& name,
                                         const std::map<std::string, std::string>& options) {
  Options opt(name, options);
  const std::string kind = Lower(name);
  std::unique_ptr<EvalMetric> metric;
  // Read only by the kinds that take it, so that other kinds refuse it as an unknown option.
  auto ignore_label = [&]() -> std::optional<int64_t> {
    if (!opt.Has("ignore_label")) return std::nullopt;
    return opt.Number<int64_t>("ignore_label", 0);
  };
  if (kind == "acc" || kind == "accuracy") {
    const int axis = opt.Number("axis", 1);
    metric = std::make_unique<Accuracy>(axis, opt.Text("name", "accuracy"), ignore_label());
  } else if (kind == "top_k_accuracy" || kind == "top_k_acc") {
    const int k = opt.Number("top_k", 1);
    metric = std::make_unique<TopKAccuracy>(k, opt.Text("name", ""));
  } else if (kind == "f1") {
    const Average average = opt.ParseAverage();
    metric = std::make_unique<F1>(average, opt.Text("name", "f1"));
  } else if (kind == "mcc") {
    const Average average = opt.ParseAverage();
    metric = std::make_unique<MCC>(average, opt.Text("name", "mcc"));
  } else if (kind == "mae" || kind == "mse" || kind == "rmse") {
    const auto k = kind == "mae"   ? RegressionMetric::Kind::kMAE
                   : kind == "mse" ? RegressionMetric::Kind::kMSE
                                   : RegressionMetric::Kind::kRMSE;
    metric = std::make_unique<RegressionMetric>(k, opt.Text("name", ""));
  } else if (kind == "ce" || kind == "cross-entropy" || kind == "crossentropy") {
    const double eps = opt.Number("eps", 1e-12);
    metric = std::make_unique<CrossEntropy>(eps, opt.Text("name", "cross-entropy"), ignore_label());
  } else if (kind == "nll_loss" || kind == "nll-loss" || kind == "negativeloglikelihood") {
    const double eps = opt.Number("eps", 1e-12);
    metric = std::make_unique<CrossEntropy>(eps, opt.Text("name", "nll-loss"), ignore_label());
  } else if (kind == "perplexity") {
    metric = std::make_unique<Perplexity>(ignore_label(), opt.Text("name", "perplexity"));
  } else if (kind == "pearsonr" || kind == "pearsoncorrelation") {
    const Average average = opt.ParseAverage();
    metric = std::make_unique<PearsonCorrelation>(average, opt.Text("name", "pearsonr"));
  } else if (kind == "loss") {
    metric = std::make_unique<Loss>(opt.Text("name", "loss"));
  } else {
    COHORT_THROW() << "unknown metric '" << name
                   << "': expected acc, top_k_accuracy, f1, mcc, mae, mse, rmse, ce, nll_loss, "
                      "perplexity, pearsonr or loss";
  }
  opt.CheckAllUsed();
  return metric;
}

std::unique_ptr<EvalMetric> CreateMetric(const std::vector<std::string>& names) {
  return CreateMetric(names, std::nullopt);
}

std::unique_ptr<EvalMetric> CreateMetric(const std::vector<std::string>& names,
                                         std::optional<int64_t> ignore_label) {
  auto composite = std::make_unique<CompositeEvalMetric>();
  for (const std::string& name : names) {
    const std::string kind = Lower(name);
    const bool takes = kind == "acc" || kind == "accuracy" || kind == "ce" ||
                       kind == "cross-entropy" || kind == "crossentropy" || kind == "nll_loss" ||
                       kind == "nll-loss" || kind == "negativeloglikelihood" ||
                       kind == "perplexity";
    std::map<std::string, std::string> options;
    if (ignore_label && takes) options["ignore_label"] = std::to_string(*ignore_label);
    composite->Add(CreateMetric(name, options));
  }
  return composite;
}

}  // namespace cohort
