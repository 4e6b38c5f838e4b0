// ImageRecordIter against the batches MXNet 1.9.1's ImageRecordIter served from the same records
// (tests/data/image_records, scripts/make_mxnet_image_record_fixture.py), its augmentation's
// independence of threads and workers, and bad input.
#include "io/image_record_iter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "io/image_codec.h"
#include "io/recordio.h"
#include "ndarray/params_io.h"
#include "tests/test_util.h"

namespace cohort {
namespace {

using testing::ExpectClose;

std::string Fixture(const std::string& name) {
  return std::string(COHORT_TEST_DATA_DIR) + "/image_records/" + name;
}

const std::map<std::string, NDArray>& Expected() {
  static const auto* expected = new std::map<std::string, NDArray>(LoadParams(Fixture("expected.params")));
  return *expected;
}

ImageRecordIterOptions FixtureOptions(const std::string& rec, std::array<int64_t, 3> shape,
                                      int64_t batch) {
  ImageRecordIterOptions o;
  o.path_imgrec = Fixture(rec + ".rec");
  o.path_imgidx = Fixture(rec + ".idx");
  o.data_shape = shape;
  o.batch_size = batch;
  o.preprocess_threads = 2;
  return o;
}

// Every batch of `o` against MXNet's batches of `name`: data within atol (pixel levels times
// the case's scale), labels and pad exactly.
void ExpectMatchesMxnet(const ImageRecordIterOptions& o, const std::string& name, double atol) {
  ImageRecordIter it(o);
  int b = 0;
  for (; it.Next(); ++b) {
    const std::string suffix = "_b" + std::to_string(b);
    ASSERT_TRUE(Expected().count(name + "_data" + suffix)) << name << ": more batches than MXNet";
    ExpectClose(it.Value().data[0], Expected().at(name + "_data" + suffix), 0, atol,
                name + " data" + suffix);
    ExpectClose(it.Value().label[0], Expected().at(name + "_label" + suffix), 0, 0,
                name + " label" + suffix);
    EXPECT_EQ(it.Value().pad, Expected().at(name + "_pad" + suffix).ToVector<float>()[0])
        << name << suffix;
  }
  EXPECT_FALSE(Expected().count(name + "_data_b" + std::to_string(b))) << name << ": fewer batches";
}

TEST(ImageRecordIter, CenterCropAndNormalizationMatchMxnet) {
  ImageRecordIterOptions o = FixtureOptions("png", {3, 12, 12}, 4);
  o.mean = {10, 20, 30};
  o.std = {2, 3, 4};
  o.scale = 0.5f;
  ExpectMatchesMxnet(o, "center", 1e-5);  // PNG: the same pixels; the last pad wraps to record 0
}

TEST(ImageRecordIter, ResizeMatchesMxnetWithinOneLevel) {
  ImageRecordIterOptions o = FixtureOptions("png", {3, 12, 12}, 3);
  o.resize = 14;
  ExpectMatchesMxnet(o, "resize", 1.0);  // OpenCV's bilinear rounds through 11-bit weights
}

TEST(ImageRecordIter, GrayMatchesMxnetWithinOneLevel) {
  ExpectMatchesMxnet(FixtureOptions("png", {1, 12, 12}, 3), "gray", 1.0);
}

TEST(ImageRecordIter, JpegMatchesMxnetWithinIdctRounding) {
  ExpectMatchesMxnet(FixtureOptions("jpeg", {3, 12, 12}, 3), "jpeg", 4.0);
}

TEST(ImageRecordIter, MultipleLabelsMatchMxnet) {
  ImageRecordIterOptions o = FixtureOptions("multi", {3, 10, 10}, 3);
  o.label_width = 2;
  ExpectMatchesMxnet(o, "multi", 1e-5);
}

TEST(ImageRecordIter, WithoutAnIndexReadsTheSameRecords) {
  ImageRecordIterOptions o = FixtureOptions("png", {3, 12, 12}, 4);
  o.path_imgidx.clear();
  ImageRecordIter it(o);
  EXPECT_EQ(it.num_records(), 6);
  ExpectMatchesMxnet([&] {
    ImageRecordIterOptions c = o;
    c.mean = {10, 20, 30};
    c.std = {2, 3, 4};
    c.scale = 0.5f;
    return c;
  }(), "center", 1e-5);
}

// The concatenation of every worker's slice of each global batch, for one epoch (the first
// `epochs` - 1 are skipped).
std::vector<float> GlobalBatches(ImageRecordIterOptions o, int workers, int threads, int epochs) {
  std::vector<std::vector<float>> parts(workers);
  const int64_t global = o.batch_size;
  o.batch_size = global / workers;
  o.num_parts = workers;
  o.preprocess_threads = threads;
  std::vector<float> all;
  std::vector<std::unique_ptr<ImageRecordIter>> iters;
  for (int r = 0; r < workers; ++r) {
    o.part_index = r;
    iters.push_back(std::make_unique<ImageRecordIter>(o));
    for (int e = 1; e < epochs; ++e) {
      while (iters.back()->Next()) {
      }
      iters.back()->Reset();
    }
  }
  for (;;) {
    bool any = false;
    for (auto& it : iters) {
      if (!it->Next()) continue;
      any = true;
      const std::vector<float> d = it->Value().data[0].ToVector<float>();
      all.insert(all.end(), d.begin(), d.end());
    }
    if (!any) return all;
  }
}

TEST(ImageRecordIter, AugmentationIsTheSameWhateverTheThreadsAndWorkers) {
  ImageRecordIterOptions o = FixtureOptions("png", {3, 10, 10}, 6);
  o.rand_crop = o.rand_mirror = o.shuffle = true;
  o.seed = 7;
  o.resize = 12;
  const std::vector<float> one = GlobalBatches(o, 1, 1, 1);
  EXPECT_EQ(GlobalBatches(o, 2, 3, 1), one);
  EXPECT_EQ(GlobalBatches(o, 3, 2, 1), one);
  // A later epoch draws other crops and another order.
  EXPECT_NE(GlobalBatches(o, 1, 1, 2), one);
  EXPECT_EQ(GlobalBatches(o, 2, 1, 2), GlobalBatches(o, 1, 4, 2));
}

// Every sample of a random-crop, random-mirror epoch is a window of its decoded image, mirrored
// or not, and both kinds and more than one window position occur.
TEST(ImageRecordIter, RandomCropsAreWindowsOfTheImage) {
  ImageRecordIterOptions o = FixtureOptions("png", {3, 8, 8}, 6);
  o.rand_crop = o.rand_mirror = true;
  o.seed = 3;
  ImageRecordIter it(o);
  RecordIOReader reader(o.path_imgrec);
  std::vector<Image> images;
  std::string record;
  while (reader.Next(&record)) {
    ImageRecordHeader header;
    images.emplace_back();
    DecodeImage(UnpackImageRecord(record, &header), 3, &images.back());
  }
  std::set<std::pair<int, int>> origins;
  int mirrored = 0, plain = 0;
  for (int epoch = 0; epoch < 3; ++epoch) {
    ASSERT_TRUE(it.Next());
    const std::vector<float> d = it.Value().data[0].ToVector<float>();
    for (int s = 0; s < 6; ++s) {
      const Image& img = images[it.Value().index[s]];
      bool found = false;
      for (int y0 = 0; y0 + 8 <= img.height && !found; ++y0) {
        for (int x0 = 0; x0 + 8 <= img.width && !found; ++x0) {
          for (int flip = 0; flip < 2 && !found; ++flip) {
            bool same = true;
            for (int c = 0; c < 3 && same; ++c) {
              for (int y = 0; y < 8 && same; ++y) {
                for (int x = 0; x < 8 && same; ++x) {
                  same = d[((s * 3 + c) * 8 + y) * 8 + x] ==
                         img.at(y0 + y, x0 + (flip ? 7 - x : x), c);
                }
              }
            }
            if (same) {
              found = true;
              origins.insert({y0, x0});
              (flip ? mirrored : plain)++;
            }
          }
        }
      }
      EXPECT_TRUE(found) << "epoch " << epoch << " sample " << s;
    }
    it.Reset();
  }
  EXPECT_GT(origins.size(), 3u);
  EXPECT_GT(mirrored, 0);
  EXPECT_GT(plain, 0);
}

TEST(ImageRecordIter, ShuffleServesEveryRecordOncePerEpoch) {
  ImageRecordIterOptions o = FixtureOptions("png", {3, 12, 12}, 3);
  o.shuffle = true;
  o.seed = 11;
  ImageRecordIter it(o);
  std::vector<std::vector<int64_t>> orders;
  for (int epoch = 0; epoch < 3; ++epoch) {
    std::vector<int64_t> order;
    while (it.Next()) {
      order.insert(order.end(), it.Value().index.begin(), it.Value().index.end());
    }
    std::vector<int64_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, (std::vector<int64_t>{0, 1, 2, 3, 4, 5})) << "epoch " << epoch;
    orders.push_back(order);
    it.Reset();
  }
  EXPECT_TRUE(orders[0] != orders[1] || orders[1] != orders[2]);
}

TEST(ImageRecordIter, DiscardDropsThePartialLastBatch) {
  ImageRecordIterOptions o = FixtureOptions("png", {3, 12, 12}, 4);
  o.last_batch = LastBatchHandle::kDiscard;
  ImageRecordIter it(o);
  EXPECT_EQ(it.batches_per_epoch(), 1);
  ASSERT_TRUE(it.Next());
  EXPECT_EQ(it.Value().pad, 0);
  EXPECT_FALSE(it.Next());
}

// Records 0 and 2 are good PNGs from the fixture, record 1 is `payload` under `labels`.
std::string WriteWithBadRecord(const testing::ScratchDir& dir, const std::string& payload,
                               std::vector<float> labels = {}) {
  RecordIOReader reader(Fixture("png.rec"));
  std::vector<std::string> good(2);
  reader.Next(&good[0]);
  reader.Next(&good[1]);
  const std::string path = dir.Path("bad.rec");
  RecordIOWriter writer(path);
  writer.Write(good[0]);
  ImageRecordHeader header;
  header.label = 7;
  header.labels = std::move(labels);
  header.flag = static_cast<uint32_t>(header.labels.size());
  writer.Write(PackImageRecord(header, payload));
  writer.Write(good[1]);
  writer.Close();
  return path;
}

// The error of the iterator's next batch, or "no error".
std::string NextError(ImageRecordIter& it) {
  try {
    it.Next();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(ImageRecordIter, UndecodableImageNamesFileRecordAndOffset) {
  testing::ScratchDir dir;
  ImageRecordIterOptions o;
  o.path_imgrec = WriteWithBadRecord(dir, "\x89PNG\r\n\x1a\n not really a png");
  o.data_shape = {3, 12, 12};
  o.batch_size = 3;
  ImageRecordIter it(o);
  const std::string m = NextError(it);
  EXPECT_NE(m.find("bad.rec"), std::string::npos) << m;
  EXPECT_NE(m.find("record 1 at byte "), std::string::npos) << m;
}

TEST(ImageRecordIter, SkipBadReplacesTheImageAndCountsIt) {
  testing::ScratchDir dir;
  ImageRecordIterOptions o;
  o.path_imgrec = WriteWithBadRecord(dir, "garbage");
  o.data_shape = {3, 12, 12};
  o.batch_size = 3;
  o.skip_bad = true;
  ImageRecordIter it(o);
  ASSERT_TRUE(it.Next());
  EXPECT_EQ(it.bad_count(), 1);
  const std::vector<float> d = it.Value().data[0].ToVector<float>();
  const size_t image = 3 * 12 * 12;
  EXPECT_TRUE(std::equal(d.begin(), d.begin() + image, d.begin() + image));  // slot 0's copy
  EXPECT_EQ(it.Value().label[0].ToVector<float>(), (std::vector<float>{0, 0, 1}));
}

// Note [Decode budget]: a 2000 x 2000 PNG (a few KB, 12 MB decoded) is more than an image's share
// of a 16 MB budget over one decoding thread (16 MB / 9 = 1.86 M pixels): refused before its
// pixels are allocated, named with its size and the budget; skip_bad skips it. A budget that
// holds it decodes it.
TEST(ImageRecordIter, AnImageBeyondTheDecodeBudgetIsABadImage) {
  testing::ScratchDir dir;
  Image big;
  big.width = big.height = 2000;
  big.channels = 3;
  big.pixels.assign(size_t{2000} * 2000 * 3, 90);
  const std::string png = EncodePng(big);
  ImageRecordIterOptions o;
  o.path_imgrec = WriteWithBadRecord(dir, png);
  o.data_shape = {3, 12, 12};
  o.batch_size = 3;
  o.preprocess_threads = 1;
  o.decode_budget_mb = 16;
  {
    ImageRecordIter it(o);
    const std::string m = NextError(it);
    EXPECT_NE(m.find("record 1 at byte "), std::string::npos) << m;
    EXPECT_NE(m.find("declares 2000x2000 pixels, more than the 1864135"), std::string::npos) << m;
    EXPECT_NE(m.find("(decode_budget_mb 16 over 1 decoding thread(s))"), std::string::npos) << m;
  }
  o.skip_bad = true;
  {
    ImageRecordIter it(o);
    ASSERT_TRUE(it.Next());
    EXPECT_EQ(it.bad_count(), 1);
  }
  o.skip_bad = false;
  o.decode_budget_mb = 128;
  {
    ImageRecordIter it(o);
    ASSERT_TRUE(it.Next());
    const std::vector<float> d = it.Value().data[0].ToVector<float>();
    EXPECT_EQ(d[3 * 12 * 12], 90.0f);  // record 1's pixels
  }
  // A warp whose min_img_size asks for more pixels than an image may have (or an int holds).
  o.augment.min_img_size = 1e9f;
  ImageRecordIter warped(o);
  const std::string m = NextError(warped);
  EXPECT_NE(m.find("makes it 1000000000x1000000000"), std::string::npos) << m;
}

TEST(ImageRecordIter, LabelCountOtherThanLabelWidthIsAnError) {
  testing::ScratchDir dir;
  RecordIOReader reader(Fixture("png.rec"));
  std::string png;
  reader.Next(&png);
  ImageRecordHeader h;
  const std::string_view image = UnpackImageRecord(png, &h);
  ImageRecordIterOptions o;
  o.path_imgrec = WriteWithBadRecord(dir, std::string(image), {1, 2, 3});
  o.data_shape = {3, 12, 12};
  o.batch_size = 3;
  ImageRecordIter it(o);
  const std::string m = NextError(it);
  EXPECT_NE(m.find("record 1 at byte "), std::string::npos) << m;
  EXPECT_NE(m.find("3 label(s), label_width is 1"), std::string::npos) << m;
}

TEST(ImageRecordIter, ImageSmallerThanDataShapeIsAnError) {
  ImageRecordIterOptions o = FixtureOptions("png", {3, 15, 15}, 6);  // record 0 is 16x16, 1 is 20x14
  ImageRecordIter it(o);
  const std::string m = NextError(it);
  EXPECT_NE(m.find("record 1 at byte"), std::string::npos) << m;
  EXPECT_NE(m.find("20x14 is smaller than data_shape's 15x15"), std::string::npos) << m;
}

TEST(ImageRecordIter, TornFileNamesTheRecord) {
  testing::ScratchDir dir;
  const std::string whole = testing::ReadFile(Fixture("png.rec"));
  const std::string path = dir.Path("torn.rec");
  std::ofstream(path, std::ios::binary) << whole.substr(0, whole.size() - 100);
  ImageRecordIterOptions o;
  o.path_imgrec = path;
  o.data_shape = {3, 12, 12};
  o.batch_size = 2;
  try {
    ImageRecordIter it(o);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("torn.rec': record 5 at byte"), std::string::npos)
        << e.what();
  }
}

TEST(ImageRecordIter, TornOrForeignIndexIsNamedNotBlamedOnTheRecords) {
  testing::ScratchDir dir;
  const std::string index = testing::ReadFile(Fixture("png.idx"));
  ImageRecordIterOptions o = FixtureOptions("png", {3, 12, 12}, 2);
  auto message = [&](const std::string& idx_text) {
    o.path_imgidx = dir.Path("x.idx");
    std::ofstream(o.path_imgidx, std::ios::binary) << idx_text;
    try {
      ImageRecordIter it(o);
    } catch (const DataError& e) {
      return e.message();
    }
    return std::string("no error");
  };
  // The file cut inside its last line: "5\t3696" became "5\t36".
  EXPECT_NE(message(index.substr(0, index.size() - 3)).find("x.idx' entry 6 (key 5): no record of"),
            std::string::npos);
  EXPECT_NE(message("0\t0\n1\t673\n").find("entry 2 (key 1)"), std::string::npos);
  EXPECT_NE(message("").find("x.idx' lists no record"), std::string::npos);
  EXPECT_EQ(message(index), "no error");
}

TEST(ImageRecordIter, OptionsAreChecked) {
  ImageRecordIterOptions o = FixtureOptions("png", {2, 12, 12}, 4);
  EXPECT_THROW(ImageRecordIter{o}, Error);
  o.data_shape = {3, 12, 12};
  o.std = {1, 0, 1};
  EXPECT_THROW(ImageRecordIter{o}, Error);
  o.std = {1, 1, 1};
  o.batch_size = 7;  // more than the 6 records with discard
  o.last_batch = LastBatchHandle::kDiscard;
  EXPECT_THROW(ImageRecordIter{o}, Error);
}

}  // namespace
}  // namespace cohort
