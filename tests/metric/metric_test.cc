// Every metric against values computed by hand, merging, and errors.
#include <gtest/gtest.h>

#include <cmath>

#include "metric/eval_metric.h"
#include "metric/kinds.h"
#include "ndarray/device_api.h"
#include "tests/test_util.h"

namespace cohort {
namespace {

using testing::ErrorOf;

NDArray A(const Shape& shape, std::vector<float> v) { return NDArray::FromVector<float>(shape, v); }

double Value(const EvalMetric& m) { return m.Get().at(0).second; }

// Three samples, three classes: predicted classes 1, 0, 2; labels 1, 2, 2.
const NDArray kPred = A({3, 3}, {0.1f, 0.7f, 0.2f, 0.5f, 0.3f, 0.2f, 0.2f, 0.3f, 0.5f});
const NDArray kLabel = A({3}, {1, 2, 2});

TEST(Accuracy, ArgmaxAlongTheClassAxis) {
  auto m = CreateMetric("acc");
  EXPECT_TRUE(std::isnan(Value(*m)));
  m->Update({kLabel}, {kPred});
  EXPECT_EQ(m->Get()[0].first, "accuracy");
  EXPECT_DOUBLE_EQ(Value(*m), 2.0 / 3);
  EXPECT_EQ(m->num_inst(), 3);
  EXPECT_EQ(m->sum_metric(), 2);
  m->Reset();
  EXPECT_EQ(m->num_inst(), 0);
}

TEST(Accuracy, ClassNumbersAndOtherAxes) {
  Accuracy m;
  m.Update({A({4}, {1, 2, 3, 4})}, {A({4}, {1, 2, 0, 4})});  // predictions already classes
  EXPECT_DOUBLE_EQ(Value(m), 0.75);
  // (batch=1, classes=2, positions=3): class axis 1.
  Accuracy per_position(1);
  per_position.Update({A({1, 3}, {0, 1, 1})}, {A({1, 2, 3}, {0.9f, 0.2f, 0.6f, 0.1f, 0.8f, 0.4f})});
  EXPECT_DOUBLE_EQ(Value(per_position), 2.0 / 3);  // argmax per position: 0, 1, 0
  Accuracy last_axis(-1);
  last_axis.Update({kLabel}, {kPred});
  EXPECT_DOUBLE_EQ(Value(last_axis), 2.0 / 3);
}

TEST(TopKAccuracy, LabelAmongTheBestK) {
  auto m = CreateMetric("top_k_accuracy", {{"top_k", "2"}});
  m->Update({kLabel}, {kPred});
  // sample 0: label 1 is best; sample 1: label 2 is third; sample 2: label 2 is best.
  EXPECT_EQ(m->Get()[0].first, "top_k_accuracy_2");
  EXPECT_DOUBLE_EQ(Value(*m), 2.0 / 3);
  auto top3 = CreateMetric("top_k_acc", {{"top_k", "3"}});
  top3->Update({kLabel}, {kPred});
  EXPECT_DOUBLE_EQ(Value(*top3), 1.0);
}

// Binary predictions: positive when column 1 > column 0.
// preds: +, +, -, -, +   labels: 1, 0, 1, 0, 1  -> tp 2, fp 1, fn 1, tn 1
const NDArray kBinPred = A({5, 2}, {0.2f, 0.8f, 0.3f, 0.7f, 0.9f, 0.1f, 0.6f, 0.4f, 0.1f, 0.9f});
const NDArray kBinLabel = A({5}, {1, 0, 1, 0, 1});

TEST(F1, MicroAndMacro) {
  auto micro = CreateMetric("f1", {{"average", "micro"}});
  micro->Update({kBinLabel}, {kBinPred});
  // precision 2/3, recall 2/3 -> F1 2/3
  EXPECT_DOUBLE_EQ(Value(*micro), 2.0 / 3);
  // A second batch: one true positive. Counts tp 3, fp 1, fn 1 -> F1 = 0.75.
  micro->Update({A({1}, {1})}, {A({1, 2}, {0, 1})});
  EXPECT_DOUBLE_EQ(Value(*micro), 0.75);
  auto macro = CreateMetric("f1");
  macro->Update({kBinLabel}, {kBinPred});
  macro->Update({A({1}, {1})}, {A({1, 2}, {0, 1})});
  EXPECT_DOUBLE_EQ(Value(*macro), (2.0 / 3 + 1.0) / 2);  // mean of the two batches' scores
}

TEST(MCC, MatchesTheFormula) {
  auto m = CreateMetric("mcc", {{"average", "micro"}});
  m->Update({kBinLabel}, {kBinPred});
  // (tp*tn - fp*fn) / sqrt((tp+fp)(tp+fn)(tn+fp)(tn+fn)) = (2 - 1) / sqrt(3*3*2*2) = 1/6
  EXPECT_DOUBLE_EQ(Value(*m), 1.0 / 6);
}

TEST(BinaryMetrics, RejectNonBinaryLabels) {
  F1 m;
  // A label the data got wrong: a LabelError, which the trainer names the sample of.
  EXPECT_THROW(m.Update({A({1}, {2})}, {A({1, 2}, {0, 1})}), LabelError);
  EXPECT_THROW(m.Update({kLabel}, {kPred}), Error);  // three classes
}

TEST(Regression, MaeMseRmse) {
  NDArray label = A({4}, {1, 2, 3, 4});
  NDArray pred = A({4, 1}, {2, 2, 1, 4});  // errors 1, 0, -2, 0 (labels reshaped as in MXNet)
  auto mae = CreateMetric("mae"), mse = CreateMetric("mse"), rmse = CreateMetric("rmse");
  for (auto* m : {mae.get(), mse.get(), rmse.get()}) m->Update({label}, {pred});
  EXPECT_DOUBLE_EQ(Value(*mae), 3.0 / 4);
  EXPECT_DOUBLE_EQ(Value(*mse), 5.0 / 4);
  EXPECT_DOUBLE_EQ(Value(*rmse), std::sqrt(5.0 / 4));
  EXPECT_EQ(rmse->Get()[0].first, "rmse");
}

TEST(PearsonCorrelation, PerfectAndAnti) {
  auto m = CreateMetric("pearsonr", {{"average", "micro"}});
  m->Update({A({3}, {1, 2, 3})}, {A({3}, {2, 4, 6})});
  EXPECT_NEAR(Value(*m), 1.0, 1e-12);
  auto anti = CreateMetric("pearsonr");
  anti->Update({A({4}, {1, 2, 3, 4})}, {A({4}, {4, 3, 2, 1})});
  EXPECT_NEAR(Value(*anti), -1.0, 1e-12);
  // x = 1,2,3 ; y = 1,3,2 : r = 0.5
  auto half = CreateMetric("pearsonr", {{"average", "micro"}});
  half->Update({A({3}, {1, 3, 2})}, {A({3}, {1, 2, 3})});
  EXPECT_NEAR(Value(*half), 0.5, 1e-12);
}

// MXNet 1.9.1's macro average scores each update call, all its outputs' counts together, and
// counts calls (its num_inst is 1 after one update of two outputs); micro counts samples.
TEST(F1, MacroScoresEachUpdateCall) {
  const NDArray label11 = A({2}, {1, 0}), pred11 = A({2, 2}, {0.1f, 0.9f, 0.5f, 0.5f});
  const NDArray label12 = A({2}, {1, 0}), pred12 = A({2, 2}, {0.85f, 0.15f, 1.0f, 0.0f});
  const NDArray label21 = A({1}, {0}), pred21 = A({1, 2}, {0.6f, 0.4f});
  const NDArray label22 = A({1}, {1}), pred22 = A({1, 2}, {0.2f, 0.8f});
  auto macro = CreateMetric("f1", {{"average", "macro"}});
  auto micro = CreateMetric("f1", {{"average", "micro"}});
  for (auto* m : {macro.get(), micro.get()}) m->Update({label11, label12}, {pred11, pred12});
  EXPECT_EQ(macro->num_inst(), 1);
  EXPECT_EQ(micro->num_inst(), 4);
  const double fscore1 = 2.0 / (2 + 1 + 0);  // tp 1, fp 0, fn 1 over both outputs
  EXPECT_DOUBLE_EQ(Value(*macro), fscore1);
  EXPECT_DOUBLE_EQ(Value(*micro), fscore1);
  for (auto* m : {macro.get(), micro.get()}) m->Update({label21, label22}, {pred21, pred22});
  EXPECT_EQ(macro->num_inst(), 2);
  EXPECT_EQ(micro->num_inst(), 6);
  EXPECT_DOUBLE_EQ(Value(*macro), (fscore1 + 1.0) / 2);
  EXPECT_DOUBLE_EQ(Value(*micro), 2.0 * 2 / (2 * 2 + 1 + 0));
}

// Note [Metric sums as MXNet's]: MXNet's test values, compared with == as its tests do.
TEST(CrossEntropy, SumsInFloat32AsMXNet) {
  auto nll = CreateMetric("nll_loss");
  nll->Update({A({2}, {2, 1})}, {A({2, 3}, {0.2f, 0.3f, 0.5f, 0.6f, 0.1f, 0.3f})});
  const float sum = -std::log(0.5f) + -std::log(0.1f);  // float32, as numpy
  EXPECT_EQ(Value(*nll), static_cast<double>(sum) / 2);
  auto perplexity = CreateMetric("perplexity");
  perplexity->Update({A({3}, {0, 1, 1})}, {A({3, 2}, {0.8f, 0.2f, 0.2f, 0.8f, 0.0f, 1.0f})});
  const float logs = std::log(0.8f) + std::log(0.8f) + std::log(1.0f);
  EXPECT_EQ(Value(*perplexity), std::exp(-static_cast<double>(logs) / 3));
}

TEST(CrossEntropy, MeanNegativeLogOfTheLabelsProbability) {
  auto ce = CreateMetric("ce");
  ce->Update({kLabel}, {kPred});
  const double expected =
      -(std::log(0.7f + 1e-12) + std::log(0.2f + 1e-12) + std::log(0.5f + 1e-12)) / 3;
  EXPECT_NEAR(Value(*ce), expected, 1e-7);
  auto nll = CreateMetric("nll_loss");
  nll->Update({kLabel}, {kPred});
  EXPECT_EQ(nll->Get()[0].first, "nll-loss");
  EXPECT_NEAR(Value(*nll), expected, 1e-7);
}

TEST(Perplexity, IgnoresTheIgnoredLabel) {
  auto p = CreateMetric("perplexity", {{"ignore_label", "2"}});
  p->Update({kLabel}, {kPred});  // only sample 0 counts: p = 0.7
  EXPECT_NEAR(Value(*p), 1.0 / 0.7, 1e-6);
  auto all = CreateMetric("perplexity");
  all->Update({kLabel}, {kPred});
  EXPECT_NEAR(Value(*all), std::exp(-(std::log(0.7) + std::log(0.2) + std::log(0.5)) / 3), 1e-6);
}

// A language model's (batch, time, vocab) output against (batch, time) labels: every position
// counts once, ignored labels not at all, for acc, ce and perplexity alike.
TEST(SequenceOutputs, EveryPositionCountsExceptTheIgnored) {
  // batch 2, time 2, vocab 3; labels 0 (p 0.6, argmax), 1 (p 0.3, not), 2 (p 0.5, argmax), 9.
  const NDArray pred = A({2, 2, 3}, {0.6f, 0.3f, 0.1f, 0.5f, 0.3f, 0.2f,  //
                                     0.2f, 0.3f, 0.5f, 0.1f, 0.1f, 0.8f});
  const NDArray label = A({2, 2}, {0, 1, 2, 0});
  auto acc = CreateMetric("acc");
  acc->Update({label}, {pred});
  EXPECT_DOUBLE_EQ(Value(*acc), 2.0 / 4);  // last position: argmax 2, label 0
  auto ce = CreateMetric("ce");
  ce->Update({label}, {pred});
  const double all = -(std::log(0.6) + std::log(0.3) + std::log(0.5) + std::log(0.1));
  EXPECT_NEAR(Value(*ce), all / 4, 1e-6);
  auto ppl = CreateMetric("perplexity");
  ppl->Update({label}, {pred});
  EXPECT_NEAR(Value(*ppl), std::exp(all / 4), 1e-5);
  // Position 1 has label 1: ignoring it leaves three positions.
  const double kept = -(std::log(0.6) + std::log(0.5) + std::log(0.1));
  auto acc_ignore = CreateMetric("acc", {{"ignore_label", "1"}});
  acc_ignore->Update({label}, {pred});
  EXPECT_DOUBLE_EQ(Value(*acc_ignore), 2.0 / 3);
  auto ce_ignore = CreateMetric("ce", {{"ignore_label", "1"}});
  ce_ignore->Update({label}, {pred});
  EXPECT_NEAR(Value(*ce_ignore), kept / 3, 1e-6);
  auto ppl_ignore = CreateMetric("perplexity", {{"ignore_label", "1"}});
  ppl_ignore->Update({label}, {pred});
  EXPECT_NEAR(Value(*ppl_ignore), std::exp(kept / 3), 1e-5);
  // The same rows flattened to (batch·time, vocab) give the same values.
  auto flat = CreateMetric("perplexity");
  flat->Update({label}, {pred.Reshape({4, 3})});
  EXPECT_NEAR(Value(*flat), Value(*ppl), 1e-9);
  // Other kinds do not take ignore_label.
  EXPECT_THROW(CreateMetric("f1", {{"ignore_label", "1"}}), Error);
}

TEST(Loss, MeanOfThePredictions) {
  auto m = CreateMetric("loss");
  m->Update({}, {A({2}, {1, 2}), A({2, 1}, {3, 6})});
  EXPECT_DOUBLE_EQ(Value(*m), 3.0);
}

TEST(CustomMetric, AddsWhatTheFunctionReturns) {
  CustomMetric m("first_pred", [](const NDArray&, const NDArray& pred) {
    return std::pair<double, double>(pred.ToVector<float>()[0], 1.0);
  });
  m.Update({kLabel}, {kPred});
  m.Update({kLabel}, {A({1}, {0.3f})});
  EXPECT_NEAR(Value(m), (0.1 + 0.3) / 2, 1e-7);
}

TEST(Composite, ListsEveryValue) {
  auto m = CreateMetric(std::vector<std::string>{"acc", "ce"});
  m->Update({kLabel}, {kPred});
  auto values = m->Get();
  ASSERT_EQ(values.size(), 2u);
  EXPECT_EQ(values[0].first, "accuracy");
  EXPECT_EQ(values[1].first, "cross-entropy");
}

// Note [Mergeable metric state]: two devices' partial metrics equal one metric over all data.
TEST(Merge, TwoPartialsEqualOneOverAllData) {
  const NDArray pred_a = kBinPred.Slice(0, 2), pred_b = kBinPred.Slice(2, 5);
  const NDArray label_a = kBinLabel.Slice(0, 2), label_b = kBinLabel.Slice(2, 5);
  for (const char* name : {"acc", "ce", "f1", "mcc", "mae", "mse", "rmse", "perplexity", "loss"}) {
    std::map<std::string, std::string> options;
    if (std::string(name) == "f1" || std::string(name) == "mcc") options["average"] = "micro";
    const bool regression =
        std::string(name) == "mae" || std::string(name) == "mse" || std::string(name) == "rmse";
    auto slice_pred = [&](const NDArray& p) { return regression ? p.Reshape({p.size()}) : p; };
    auto whole = CreateMetric(name, options);
    auto a = whole->Clone(), b = whole->Clone();
    const NDArray whole_pred = regression ? A({10}, kBinPred.ToVector<float>()) : kBinPred;
    const NDArray whole_label = regression ? A({10}, {1, 0, 1, 0, 1, 1, 0, 1, 0, 1}) : kBinLabel;
    whole->Update({whole_label}, {whole_pred});
    a->Update({regression ? whole_label.Slice(0, 4) : label_a},
              {regression ? whole_pred.Slice(0, 4) : slice_pred(pred_a)});
    b->Update({regression ? whole_label.Slice(4, 10) : label_b},
              {regression ? whole_pred.Slice(4, 10) : slice_pred(pred_b)});
    a->Merge(*b);
    EXPECT_NEAR(Value(*a), Value(*whole), 1e-12) << name;
    // The same through raw sums, as an allreduce would carry them.
    auto c = whole->Clone();
    std::vector<double> sa = a->State();
    c->SetState(sa);
    EXPECT_NEAR(Value(*c), Value(*whole), 1e-12) << name;
  }
  auto acc = CreateMetric("acc");
  auto ce = CreateMetric("ce");
  EXPECT_THROW(acc->Merge(*ce), Error);
}

TEST(Merge, CompositeStatesConcatenate) {
  auto whole = CreateMetric(std::vector<std::string>{"acc", "ce"});
  auto a = whole->Clone(), b = whole->Clone();
  whole->Update({kLabel}, {kPred});
  a->Update({kLabel.Slice(0, 1)}, {kPred.Slice(0, 1)});
  b->Update({kLabel.Slice(1, 3)}, {kPred.Slice(1, 3)});
  a->Merge(*b);
  EXPECT_EQ(a->State().size(), 4u);
  EXPECT_NEAR(a->Get()[0].second, whole->Get()[0].second, 1e-12);
  // ce sums each output in float32 (Note [Metric sums as MXNet's]): a split sums otherwise.
  EXPECT_NEAR(a->Get()[1].second, whole->Get()[1].second, 1e-6);
}


TEST(Errors, ShapesAndNamesAreReported) {
  std::string what = ErrorOf([] { CreateMetric("ce")->Update({A({2}, {0, 1})}, {kPred}); });
  EXPECT_NE(what.find("labels of shape (2,) do not match predictions of shape (3,3)"),
            std::string::npos)
      << what;
  what = ErrorOf([] { CreateMetric("acc")->Update({kLabel, kLabel}, {kPred}); });
  EXPECT_NE(what.find("2 label arrays for 1 outputs"), std::string::npos) << what;
  what = ErrorOf([] { CreateMetric("ce")->Update({A({3}, {0, 1, 7})}, {kPred}); });
  EXPECT_NE(what.find("label 7 is outside the 3 classes"), std::string::npos) << what;
  // Labels the data got wrong are DataErrors (exit 2): accuracy counted an out-of-range label
  // as a miss and truncated a fractional one.
  EXPECT_THROW(CreateMetric("acc")->Update({A({3}, {0, 1, 7})}, {kPred}), DataError);
  what = ErrorOf([] { CreateMetric("acc")->Update({A({3}, {0, 1, 7})}, {kPred}); });
  EXPECT_NE(what.find("label 7 is outside the 3 classes"), std::string::npos) << what;
  what = ErrorOf([] { CreateMetric("acc")->Update({A({3}, {0, 1.5, 2})}, {kPred}); });
  EXPECT_NE(what.find("label 1.500000 is not a class number"),
            std::string::npos)
      << what;
  EXPECT_THROW(CreateMetric("ce")->Update({A({3}, {0, 1, -2})}, {kPred}), DataError);
  what = ErrorOf([] { CreateMetric("bleu"); });
  EXPECT_NE(what.find("unknown metric 'bleu'"), std::string::npos) << what;
  what = ErrorOf([] { CreateMetric("acc", {{"top_k", "3"}}); });
  EXPECT_NE(what.find("metric 'acc' has no option 'top_k'"), std::string::npos) << what;
  what = ErrorOf([] { CreateMetric("top_k_accuracy", {{"top_k", "three"}}); });
  EXPECT_NE(what.find("top_k='three' is not a number"), std::string::npos) << what;
  what = ErrorOf([] { CreateMetric("f1", {{"average", "weighted"}}); });
  EXPECT_NE(what.find("expected macro or micro"), std::string::npos) << what;
}

TEST(Inputs, OtherDTypesAreConverted) {
  Accuracy m;
  m.Update({NDArray::FromVector<int32_t>({3}, std::vector<int32_t>{1, 2, 2})},
           {kPred.AsType(DType::kFloat64)});
  EXPECT_DOUBLE_EQ(Value(m), 2.0 / 3);
}

// What is not float32 on the host (GPU outputs, other dtypes) is staged once into a buffer that
// the next, smaller or larger, arrays reuse: a batch's unequal slices allocate nothing.
TEST(Inputs, StagingReusesOneBufferAcrossShapes) {
  NDArray buffer;
  const NDArray big = kPred.AsType(DType::kFloat64);
  const NDArray small = big.Slice(0, 2);
  const NDArray first = HostFloat32(big, &buffer);
  EXPECT_EQ(first.dtype(), DType::kFloat32);
  EXPECT_EQ(first.ToVector<float>(), kPred.ToVector<float>());
  const NDArray second = HostFloat32(small, &buffer);
  EXPECT_EQ(second.shape(), Shape({2, 3}));
  EXPECT_EQ(second.ToVector<float>(), kPred.Slice(0, 2).ToVector<float>());
  EXPECT_EQ(HostFloat32(big, &buffer).raw_data(), first.raw_data());
  EXPECT_EQ(second.raw_data(), first.raw_data());
  EXPECT_EQ(HostFloat32(kPred, &buffer).raw_data(), kPred.raw_data());  // float32: no copy
}

// A composite hands every metric the same staged float32 arrays instead of each metric copying
// the outputs again; the values are those of each metric alone.
TEST(Composite, StagesTheArraysOnceForEveryMetric) {
  auto composite = std::make_unique<CompositeEvalMetric>();
  std::vector<const void*> seen;
  for (int i = 0; i < 2; ++i) {
    composite->Add(std::make_unique<CustomMetric>(
        "probe" + std::to_string(i), [&seen](const NDArray& label, const NDArray& pred) {
          EXPECT_EQ(pred.dtype(), DType::kFloat32);
          EXPECT_EQ(label.dtype(), DType::kFloat32);
          seen.push_back(pred.raw_data());
          return std::pair<double, double>(pred.ToVector<float>()[0] + label.ToVector<float>()[0],
                                           1.0);
        }));
  }
  composite->Add(CreateMetric("acc"));
  const NDArray labels = NDArray::FromVector<int32_t>({3}, std::vector<int32_t>{1, 2, 2});
  const NDArray preds = kPred.AsType(DType::kFloat64);
  composite->Update({labels}, {preds});
  composite->Update({labels.Slice(0, 2)}, {preds.Slice(0, 2)});
  ASSERT_EQ(seen.size(), 4u);
  for (const void* p : seen) EXPECT_EQ(p, seen[0]);
  const auto values = composite->Get();
  EXPECT_NEAR(values[0].second, 0.1 + 1, 1e-7);   // first pred + first label, twice
  EXPECT_DOUBLE_EQ(values[2].second, 3.0 / 5);    // as Accuracy over the five rows
}

// The same with the outputs on a GPU: copied once into pinned memory, the same values.
TEST(CompositeGpu, OutputsOnAGpuGiveTheHostsValues) {
  if (device::Count() == 0) GTEST_SKIP() << "no GPU visible";
  auto on_host = CreateMetric(std::vector<std::string>{"acc", "ce", "top_k_accuracy"});
  auto on_gpu = on_host->Clone();
  on_host->Update({kLabel}, {kPred});
  on_gpu->Update({kLabel.CopyTo(Context::GPU(0))}, {kPred.CopyTo(Context::GPU(0))});
  on_gpu->Update({kLabel.Slice(0, 2).CopyTo(Context::GPU(0))},
                 {kPred.Slice(0, 2).CopyTo(Context::GPU(0))});
  on_host->Update({kLabel.Slice(0, 2)}, {kPred.Slice(0, 2)});
  EXPECT_EQ(on_gpu->Get(), on_host->Get());
}

}  // namespace
}  // namespace cohort
