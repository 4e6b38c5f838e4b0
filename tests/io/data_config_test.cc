// The data section read by io alone (Note [Data kinds]): checks name the key, and the iterators
// come from an Options without any YAML.
#include "io/data_config.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>

namespace cohort {
namespace {

std::string MessageOf(const Options& data, const DataContext& context = {}) {
  try {
    CheckDataOptions(data, context);
  } catch (const ConfigError& e) {
    return e.message();
  }
  return "";
}

TEST(DataConfig, ChecksNameTheKey) {
  Options data("data");
  data.Set("kind", std::string("tape"));
  EXPECT_NE(MessageOf(data).find("key 'data.kind': 'tape' is not mnist"), std::string::npos);
  data.Set("kind", std::string("csv"));
  EXPECT_NE(MessageOf(data).find("key 'data.train_data_csv' is required"), std::string::npos);
  data.Set("kind", std::string("text"));
  data.Set("train_files", std::vector<std::string>{"/nonexistent/a.txt"});
  EXPECT_NE(MessageOf(data).find("key 'data.train_files': file '/nonexistent/a.txt' does not exist"),
            std::string::npos);
  data.Set("kind", std::string("imagerecord"));
  data.Set("train_rec", std::string("/nonexistent/a.rec"));
  EXPECT_NE(MessageOf(data).find("data.train_rec"), std::string::npos);
  data.Set("kind", std::string("synthetic"));
  EXPECT_EQ(MessageOf(data), "");
  data.Set("shape", std::vector<int64_t>{});  // one scalar feature a sample, trained silently
  EXPECT_NE(MessageOf(data).find("key 'data.shape' must list at least one size"),
            std::string::npos);
  // Each kind checks the keys it reads (others are ignored, with a warning).
  Options resized("data");
  resized.Set("kind", std::string("imagerecord"));
  resized.Set("resize", int64_t{20000});  // a square of 20000 exceeds an image's pixels
  EXPECT_NE(MessageOf(resized).find("key 'data.resize': 20000 is outside [-1, 16384]"),
            std::string::npos)
      << MessageOf(resized);
  Options scaled("data");
  scaled.Set("kind", std::string("mnist"));
  scaled.Set("scale", 0.0);  // zeros fed to the network, silently
  EXPECT_NE(MessageOf(scaled).find("key 'data.scale': 0.000000 must be a finite nonzero"),
            std::string::npos)
      << MessageOf(scaled);
}

// Bucket lengths are lengths: six of them are not one shape of 8 x 16 x ... x 128 elements.
TEST(DataConfig, BucketLengthsAreBoundedOneByOne) {
  const std::string path = testing::TempDir() + "/buckets.txt";
  std::FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("some text to read\nanother line\n", f);
  std::fclose(f);
  Options data("data");
  data.Set("kind", std::string("text"));
  data.Set("train_files", std::vector<std::string>{path});
  data.Set("buckets", std::vector<int64_t>{8, 16, 32, 64, 96, 128});
  EXPECT_EQ(MessageOf(data, {.seq_len = 128}), "");
  data.Set("buckets", std::vector<int64_t>{8, int64_t{1} << 31});
  EXPECT_NE(MessageOf(data, {.seq_len = 128}).find("key 'data.buckets' lists a length of 2^31"),
            std::string::npos);
  std::remove(path.c_str());
}

// Every kind declares its keys (Note [Data kinds]): listed once with a type and docs, the
// defaults of keys several kinds read in the docs of each.
TEST(DataConfig, EveryKindDeclaresItsKeys) {
  std::map<std::string, OptionInfo> keys;
  for (const OptionInfo& key : DataOptionKeys()) {
    EXPECT_TRUE(keys.emplace(key.key, key).second) << key.key << " listed twice";
    EXPECT_FALSE(key.type.empty()) << key.key;
    EXPECT_FALSE(key.doc.empty()) << key.key;
  }
  EXPECT_EQ(keys.at("kind").value, "mnist");
  EXPECT_EQ(keys.at("num_samples").value, "4096");
  EXPECT_EQ(keys.at("train_files").type, "paths");
  EXPECT_EQ(keys.at("train_rec").type, "path");
  // scale: 1/256 for IDX images, 1 for image records: per kind, in the docs.
  EXPECT_EQ(keys.at("scale").value, "");
  EXPECT_NE(keys.at("scale").doc.find("mnist: "), std::string::npos);
  EXPECT_NE(keys.at("scale").doc.find("imagerecord: "), std::string::npos);
  EXPECT_NE(keys.at("scale").doc.find("(default 0.00390625)"), std::string::npos);
}

TEST(DataConfig, AValidationFileWithoutItsPartnerIsRefused) {
  Options data("data");
  data.Set("kind", std::string("imagerecord"));
  data.Set("val_idx", std::string("val.idx"));
  EXPECT_NE(MessageOf(data).find("key 'data.val_idx' is given without 'data.val_rec'"),
            std::string::npos);
  Options mnist("data");
  mnist.Set("val_label", std::string("t10k-labels.gz"));
  EXPECT_NE(MessageOf(mnist).find("key 'data.val_label' is given without 'data.val_image'"),
            std::string::npos);
}

TEST(DataConfig, MakesSyntheticIteratorsFromOptions) {
  Options data("data");
  data.Set("kind", std::string("synthetic"));
  data.Set("shape", std::vector<int64_t>{2, 3});
  data.Set("num_samples", int64_t{40});
  data.Set("val_samples", int64_t{8});
  data.Set("prefetch", false);
  const DataIters iters = MakeDataIters(data, {.batch_per_worker = 4, .num_workers = 2});
  EXPECT_EQ(iters.train_samples, 20);  // this worker's part of 40
  ASSERT_TRUE(iters.val != nullptr);
  ASSERT_TRUE(iters.train->Next());
  EXPECT_EQ(iters.train->Value().data[0].shape(), Shape({4, 2, 3}));
}

// Six records in batches of 4: every record is served whatever round_batch says (MXNet's
// spelling; it once dropped the last batch here), the last batch padded with 2.
TEST(DataConfig, ImageRecordsServeEveryRecordWithRoundBatchFalse) {
  const std::string rec = std::string(COHORT_TEST_DATA_DIR) + "/image_records/jpeg";
  for (bool round_batch : {false, true}) {
    Options data("data");
    data.Set("kind", std::string("imagerecord"));
    data.Set("data_shape", std::vector<int64_t>{3, 12, 12});
    data.Set("train_rec", rec + ".rec");
    data.Set("val_rec", rec + ".rec");
    data.Set("round_batch", round_batch);
    data.Set("shuffle", false);
    const DataIters iters = MakeDataIters(data, {.batch_per_worker = 4});
    for (DataIter* it : {iters.train.get(), iters.val.get()}) {
      ASSERT_NE(it, nullptr);
      std::vector<int64_t> pads;
      while (it->Next()) pads.push_back(it->Value().pad);
      EXPECT_EQ(pads, (std::vector<int64_t>{0, 2})) << "round_batch " << round_batch;
    }
  }
  // last_batch_handle: discard drops them in training, as for the other kinds, not in validation.
  Options data("data");
  data.Set("kind", std::string("imagerecord"));
  data.Set("data_shape", std::vector<int64_t>{3, 12, 12});
  data.Set("train_rec", rec + ".rec");
  data.Set("val_rec", rec + ".rec");
  data.Set("last_batch_handle", std::string("discard"));
  const DataIters iters = MakeDataIters(data, {.batch_per_worker = 4});
  EXPECT_EQ(iters.train_samples, 4);
  int val_batches = 0;
  while (iters.val->Next()) ++val_batches;
  EXPECT_EQ(val_batches, 2);
}

TEST(Options, ReadsTypesAndNamesAWrongOne) {
  Options o("data");
  o.Set("n", int64_t{3});
  o.Set("s", std::string("x"));
  EXPECT_EQ(o.Get<int64_t>("n", 0), 3);
  EXPECT_EQ(o.Get<double>("n", 0.0), 3.0);  // an integer reads as a float
  EXPECT_EQ(o.Get<std::string>("missing", "fallback"), "fallback");
  try {
    o.Get<int64_t>("s", 0);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(e.message().find("'data.s'"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace cohort
