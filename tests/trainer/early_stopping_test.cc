// Early stopping's decisions (Note [Early stopping]): the metric's direction, patience, names.
#include "trainer/early_stopping.h"

#include <gtest/gtest.h>

namespace cohort {
namespace {

using V = EarlyStopping::Verdict;

TEST(EarlyStopping, LossesFallAndAccuraciesRise) {
  EarlyStopping ppl({.metric = "perplexity", .patience = 2}, {"perplexity"});
  EXPECT_EQ(ppl.Observe(0, {{"perplexity", 9.0}}), V::kImproved);
  EXPECT_EQ(ppl.Observe(1, {{"perplexity", 7.0}}), V::kImproved);
  EXPECT_EQ(ppl.Observe(2, {{"perplexity", 7.5}}), V::kNotImproved);
  EXPECT_EQ(ppl.Observe(3, {{"perplexity", 6.0}}), V::kImproved);     // the count starts again
  EXPECT_EQ(ppl.Observe(4, {{"perplexity", 6.0}}), V::kNotImproved);  // equal is no better
  EXPECT_EQ(ppl.Observe(5, {{"perplexity", 8.0}}), V::kStop);
  EXPECT_EQ(ppl.best_epoch(), 3);
  EXPECT_EQ(ppl.best(), 6.0);
  // The first metric when none is named; accuracy rises; mode overrides the kind.
  EarlyStopping acc({.metric = "", .patience = 1}, {"accuracy", "cross-entropy"});
  EXPECT_EQ(acc.metric(), "accuracy");
  EXPECT_EQ(acc.Observe(0, {{"accuracy", 0.5}, {"cross-entropy", 1.0}}), V::kImproved);
  EXPECT_EQ(acc.Observe(1, {{"accuracy", 0.6}, {"cross-entropy", 2.0}}), V::kImproved);
  EXPECT_EQ(acc.Observe(2, {{"accuracy", 0.4}, {"cross-entropy", 0.1}}), V::kStop);
  EarlyStopping low({.metric = "accuracy", .patience = 1, .mode = "min"}, {"accuracy"});
  EXPECT_EQ(low.Observe(0, {{"accuracy", 0.5}}), V::kImproved);
  EXPECT_EQ(low.Observe(1, {{"accuracy", 0.4}}), V::kImproved);
}

TEST(EarlyStopping, RefusalsNameTheKey) {
  EXPECT_THROW(EarlyStopping({.metric = "f1", .patience = 1}, {"accuracy"}), ConfigError);
  EXPECT_THROW(EarlyStopping({.metric = "", .patience = 1, .mode = "up"}, {"accuracy"}),
               ConfigError);
  EXPECT_THROW(EarlyStopping({.metric = "", .patience = 1}, {}),
               ConfigError);  // no validation data
}

}  // namespace
}  // namespace cohort
