// ImageRecordIter (Note [Image records]).
#include "io/image_record_iter.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <numeric>
#include <thread>

#include "base/error.h"
#include "base/logging.h"
#include "io/data_kinds.h"
#include "ndarray/params_io.h"

namespace cohort {
namespace {

// SplitMix64's finalizer: the per-sample random bits (Note [Image records]).
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

ImageRecordIter::ImageRecordIter(const ImageRecordIterOptions& options)
    : options_(options), reader_(options.path_imgrec), rng_(options.seed) {
  const ImageRecordIterOptions& o = options_;
  const std::string& rec = o.path_imgrec;
  const auto [channels, height, width] = o.data_shape;
  COHORT_CHECK(channels == 1 || channels == 3)
      << "image records '" << rec << "': data_shape must have 1 or 3 channels, got " << channels;
  COHORT_CHECK(height > 0 && width > 0)
      << "image records '" << rec << "': data_shape (" << channels << ", " << height << ", "
      << width << ") must be positive";
  COHORT_CHECK(o.batch_size > 0) << "image records '" << rec << "': batch_size must be positive";
  COHORT_CHECK(o.label_width > 0) << "image records '" << rec << "': label_width must be positive";
  COHORT_CHECK(o.resize == -1 || o.resize > 0)
      << "image records '" << rec << "': resize must be positive or -1, got " << o.resize;
  COHORT_CHECK(o.preprocess_threads > 0 && o.preprocess_threads <= 1024)
      << "image records '" << rec << "': preprocess_threads must be in [1, 1024], got "
      << o.preprocess_threads;
  for (int c = 0; c < 3; ++c) {
    COHORT_CHECK(o.std[c] != 0) << "image records '" << rec << "': std_" << "rgb"[c]
                                << " must not be 0";
  }
  COHORT_CHECK(o.last_batch != LastBatchHandle::kRollOver)
      << "image records '" << rec << "': last_batch_handle roll_over is not supported; use pad "
      << "or discard";
  COHORT_CHECK(o.num_parts > 0 && o.part_index >= 0 && o.part_index < o.num_parts)
      << "image records '" << rec << "': part " << o.part_index << " of " << o.num_parts;

  if (!o.path_imgidx.empty()) {
    const std::vector<RecordIndexEntry> index = ReadRecordIndex(o.path_imgidx);
    if (index.empty()) {
      throw DataError("'" + o.path_imgidx + "' lists no record", __FILE__, __LINE__);
    }
    // A torn index (its last line cut) or the index of another file is named here rather than
    // blamed on the records later: the first and last entries and 62 between must begin a
    // record (a read of 8 bytes each, not one per record: an index may list millions).
    const size_t n = index.size();
    for (size_t k = 0; k < 64; ++k) {
      const size_t i = k == 63 ? n - 1 : k * n / 64;
      if (reader_.StartsRecordAt(index[i].offset)) continue;
      const std::string entry = "'" + o.path_imgidx + "' entry " + std::to_string(i + 1) +
                                " (key " + std::to_string(index[i].key) + ")";
      if (index[i].offset + 8 > reader_.size()) {
        throw DataError("'" + rec + "' ends at byte " + std::to_string(reader_.size()) +
                            ", before the record of " + entry + " at byte " +
                            std::to_string(index[i].offset) +
                            " (a torn file, or the index of another file)",
                        __FILE__, __LINE__);
      }
      throw DataError(entry + ": no record of '" + rec + "' begins at byte " +
                          std::to_string(index[i].offset) +
                          " (a torn index, or the index of another file)",
                      __FILE__, __LINE__);
    }
    for (const RecordIndexEntry& e : index) offsets_.push_back(e.offset);
  } else {  // one pass over the file for the offsets (an .idx saves it)
    std::string record;
    for (uint64_t at = reader_.Tell(); reader_.Next(&record); at = reader_.Tell()) {
      offsets_.push_back(at);
    }
  }
  const int64_t global = o.batch_size * o.num_parts;
  const int64_t n = num_records();
  batches_ = o.last_batch == LastBatchHandle::kPad ? (n + global - 1) / global : n / global;
  if (o.max_batches > 0) batches_ = std::min(batches_, o.max_batches);
  COHORT_CHECK(batches_ > 0) << "image records '" << rec << "': " << n
                             << " record(s), fewer than one global batch of " << global;

  order_.resize(n);
  std::iota(order_.begin(), order_.end(), 0);
  slots_.resize(o.batch_size);
  // More threads than cores buy nothing (and make TBB warn); results do not depend on the count.
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int threads = std::min(o.preprocess_threads, cores);
  arena_ = std::make_unique<ThreadArena>(threads);
  COHORT_CHECK(o.decode_budget_mb >= 1)
      << "image records '" << rec << "': decode_budget_mb must be >= 1, got " << o.decode_budget_mb;
  max_pixels_ = static_cast<uint64_t>(o.decode_budget_mb) * (1 << 20) /
                (static_cast<uint64_t>(threads) * 3 * 3);  // Note [Decode budget]
  const Shape data_shape{o.batch_size, channels, height, width};
  const Shape label_shape = o.label_width == 1 ? Shape{o.batch_size}
                                               : Shape{o.batch_size, o.label_width};
  batch_.data.push_back(NDArray::Zeros(data_shape));
  batch_.label.push_back(NDArray::Zeros(label_shape));
  batch_.provide_data.push_back({"data", data_shape, DType::kFloat32, "NCHW"});
  batch_.provide_label.push_back({"softmax_label", label_shape, DType::kFloat32, ""});
  batch_.index.resize(o.batch_size);
  if (const std::string bad = o.augment.Check(); !bad.empty()) {
    COHORT_THROW() << "image records '" << rec << "': " << bad;
  }
  if (!o.mean_img.empty()) LoadOrComputeMeanImage();
  Reset();
}

void ImageRecordIter::LoadOrComputeMeanImage() {
  const ImageRecordIterOptions& o = options_;
  const auto [channels, height, width] = o.data_shape;
  const Shape shape{channels, height, width};
  std::error_code ec;
  if (std::filesystem::exists(o.mean_img, ec)) {
    const std::map<std::string, NDArray> arrays = LoadParams(o.mean_img);
    auto it = arrays.find("mean_img");
    if (it == arrays.end() || it->second.shape() != shape) {
      throw DataError(
          "mean_img '" + o.mean_img + "': expected an array 'mean_img' of shape " +
              shape.ToString() + " (data_shape)" +
              (it == arrays.end() ? ", found none" : ", found " + it->second.shape().ToString()),
          __FILE__, __LINE__);
    }
    mean_image_ = it->second.CopyTo(Context::CPU()).ToVector<float>();
    return;
  }
  Log().info("image records '{}': computing the mean image into '{}'", o.path_imgrec, o.mean_img);
  std::vector<double> sum(static_cast<size_t>(shape.Size()), 0.0);
  Slot& s = slots_[0];
  std::vector<float> label(static_cast<size_t>(o.label_width));
  int64_t counted = 0;
  for (int64_t record = 0; record < num_records(); ++record) {
    ReleaseLarge(s);  // the previous record's (Note [Decode budget])
    reader_.Seek(offsets_[record], record);
    if (!reader_.Next(&s.record)) FailAt(record, "the file ends before this record");
    const Image* img = Prepare(s, record, /*random=*/false, label.data());
    if (!img) {
      if (!o.skip_bad) FailAt(record, s.error);
      continue;
    }
    const int64_t y0 = (img->height - height) / 2, x0 = (img->width - width) / 2;
    for (int64_t k = 0; k < channels; ++k) {
      for (int64_t y = 0; y < height; ++y) {
        for (int64_t x = 0; x < width; ++x) {
          sum[(k * height + y) * width + x] +=
              img->at(static_cast<int>(y0 + y), static_cast<int>(x0 + x), static_cast<int>(k));
        }
      }
    }
    ++counted;
  }
  COHORT_CHECK(counted > 0) << "mean_img: no record of '" << o.path_imgrec << "' decodes";
  mean_image_.resize(sum.size());
  for (size_t i = 0; i < sum.size(); ++i) {
    mean_image_[i] = static_cast<float>(sum[i] / static_cast<double>(counted));
  }
  SaveParams(o.mean_img, {{"mean_img", NDArray::FromVector<float>(shape, mean_image_)}});
}

void ImageRecordIter::Reset() {
  if (options_.shuffle) std::shuffle(order_.begin(), order_.end(), rng_);
  ++epoch_;
  next_batch_ = 0;
}

std::string ImageRecordIter::DescribeLabelOf(int64_t record) const {
  return "record " + std::to_string(record) + " of '" + options_.path_imgrec + "', at byte " +
         std::to_string(offsets_[record]);
}

void ImageRecordIter::FailAt(int64_t record, const std::string& what) const {
  throw DataError("'" + options_.path_imgrec + "': record " + std::to_string(record) + " at byte " +
                      std::to_string(offsets_[record]) + ": " + what,
                  __FILE__, __LINE__);
}

bool ImageRecordIter::Next() {
  if (next_batch_ >= batches_) return false;
  const ImageRecordIterOptions& o = options_;
  const int64_t n = num_records();
  const int64_t first = next_batch_ * o.batch_size * o.num_parts + o.part_index * o.batch_size;
  batch_.pad = std::clamp<int64_t>(first + o.batch_size - n, 0, o.batch_size);
  // Read on this thread (one file handle), decode and augment on the pool.
  for (int64_t i = 0; i < o.batch_size; ++i) {
    const int64_t record = order_[(first + i) % n];
    batch_.index[i] = record;
    reader_.Seek(offsets_[record], record);
    if (!reader_.Next(&slots_[i].record)) FailAt(record, "the file ends before this record");
  }
  arena_->ParallelFor(0, o.batch_size, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) Process(i, batch_.index[i]);
  });
  int64_t good = -1;
  for (int64_t i = 0; i < o.batch_size; ++i) {
    if (slots_[i].error.empty()) {
      good = i;
      break;
    }
  }
  for (int64_t i = 0; i < o.batch_size; ++i) {
    if (slots_[i].error.empty()) continue;
    if (!o.skip_bad || good < 0) FailAt(batch_.index[i], slots_[i].error);
    ++bad_count_;
    Log().warn("skipping record {} of '{}' (skip_bad): {}", batch_.index[i], o.path_imgrec,
               slots_[i].error);
    const int64_t per_image = batch_.data[0].size() / o.batch_size;
    float* data = static_cast<float*>(batch_.data[0].raw_data());
    std::copy_n(data + good * per_image, per_image, data + i * per_image);
    float* label = static_cast<float*>(batch_.label[0].raw_data());
    std::copy_n(label + good * o.label_width, o.label_width, label + i * o.label_width);
    batch_.index[i] = batch_.index[good];
  }
  ++next_batch_;
  return true;
}

const Image* ImageRecordIter::Prepare(Slot& s, int64_t record, bool random, float* label) {
  const ImageRecordIterOptions& o = options_;
  s.error.clear();
  ImageRecordHeader header;
  std::string_view image;
  try {
    image = UnpackImageRecord(s.record, &header);
  } catch (const Error& e) {
    FailAt(record, e.message());
  }
  const int64_t labels = header.flag > 0 ? header.flag : 1;
  if (labels != o.label_width) {
    FailAt(record, "has " + std::to_string(labels) + " label(s), label_width is " +
                       std::to_string(o.label_width));
  }
  if (header.flag > 0) {
    std::copy(header.labels.begin(), header.labels.end(), label);
  } else {
    label[0] = header.label;
  }

  const auto [channels, height, width] = o.data_shape;
  // Note [Decode budget]: a size refused for the budget (not the codec's own cap) says so.
  auto refused = [&](const Error& e) {
    s.error = e.message();
    if (max_pixels_ < kMaxImagePixels && s.error.find(" an image may have") != std::string::npos) {
      s.error += " (decode_budget_mb " + std::to_string(o.decode_budget_mb) + " over " +
                 std::to_string(arena_->num_threads()) + " decoding thread(s))";
    }
    return nullptr;
  };
  try {
    DecodeImage(image, static_cast<int>(channels), &s.decoded, max_pixels_);
  } catch (const Error& e) {
    return refused(e);
  }
  Image* img = &s.decoded;
  if (o.resize > 0) {
    try {
      ResizeShorterSide(*img, o.resize, &s.resized, max_pixels_);
    } catch (const Error& e) {
      return refused(e);
    }
    img = &s.resized;
  }
  if (random && (o.augment.warps() || o.augment.jitters_hsl())) {
    SampleRandom draws(Mix(AugmentBits(record) ^ 0x5eed));
    if (o.augment.warps()) {
      try {
        WarpAffine(*img, o.augment, draws, &s.warped, max_pixels_);
      } catch (const Error& e) {
        return refused(e);
      }
      img = &s.warped;
    }
    if (o.augment.jitters_hsl()) JitterHsl(img, o.augment, draws);
  }
  if (img->height < height || img->width < width) {
    s.error = "image of " + std::to_string(img->width) + "x" + std::to_string(img->height) +
              (o.resize > 0 ? " after resize" : "") + " is smaller than data_shape's " +
              std::to_string(width) + "x" + std::to_string(height);
    return nullptr;
  }
  return img;
}

uint64_t ImageRecordIter::AugmentBits(int64_t record) const {
  const uint64_t seed =
      options_.seed_aug >= 0 ? static_cast<uint64_t>(options_.seed_aug) : options_.seed;
  return Mix(Mix(Mix(seed) ^ static_cast<uint64_t>(epoch_)) ^ static_cast<uint64_t>(record));
}

// Decodes and augments record `record` into batch slot `slot`; an undecodable image leaves its
// message in the slot (skip_bad decides), any other fault throws.
void ImageRecordIter::ReleaseLarge(Slot& s) {
  constexpr size_t kKeepBytes = 1 << 20;
  for (Image* image : {&s.decoded, &s.resized, &s.warped}) {
    if (image->pixels.capacity() > kKeepBytes) std::vector<uint8_t>().swap(image->pixels);
  }
}

void ImageRecordIter::Process(int64_t slot, int64_t record) {
  const ImageRecordIterOptions& o = options_;
  Slot& s = slots_[slot];
  float* label = static_cast<float*>(batch_.label[0].raw_data()) + slot * o.label_width;
  const Image* img = Prepare(s, record, /*random=*/true, label);
  if (!img) {
    ReleaseLarge(s);
    return;
  }
  const auto [channels, height, width] = o.data_shape;
  const uint64_t bits = AugmentBits(record);
  int64_t y0 = (img->height - height) / 2, x0 = (img->width - width) / 2;
  if (o.rand_crop) {
    y0 = static_cast<int64_t>((bits >> 1) % static_cast<uint64_t>(img->height - height + 1));
    x0 = static_cast<int64_t>(Mix(bits) % static_cast<uint64_t>(img->width - width + 1));
  }
  const bool mirror = o.rand_mirror && (bits & 1) != 0;
  SampleRandom draws(Mix(bits ^ 0xc0105));
  const float contrast =
      1 + draws.Uniform(-o.augment.max_random_contrast, o.augment.max_random_contrast);
  const float illumination =
      draws.Uniform(-o.augment.max_random_illumination, o.augment.max_random_illumination);
  float* out = static_cast<float*>(batch_.data[0].raw_data()) + slot * channels * height * width;
  const int c = img->channels;
  for (int64_t k = 0; k < channels; ++k) {
    const float factor = o.scale / o.std[k];
    const float* mean_plane =
        mean_image_.empty() ? nullptr : mean_image_.data() + k * height * width;
    for (int64_t y = 0; y < height; ++y) {
      const uint8_t* row = &img->pixels[(static_cast<size_t>(y0 + y) * img->width + x0) * c + k];
      float* dst = out + (k * height + y) * width;
      const float* mean_row = mean_plane ? mean_plane + y * width : nullptr;
      for (int64_t x = 0; x < width; ++x) {
        const int64_t from = mirror ? width - 1 - x : x;
        const float mean = mean_row ? mean_row[x] : o.mean[k];
        dst[x] = ((static_cast<float>(row[from * c]) - mean) * contrast + illumination) * factor;
      }
    }
  }
  ReleaseLarge(s);  // Note [Decode budget]
}

// data.kind: imagerecord (Note [Data kinds], Note [Image records]): MXNet's .rec files.
namespace {
struct ImageRecordKeys {
  std::string train_rec, train_idx, val_rec, val_idx;
  std::vector<int64_t> data_shape;
  int64_t resize = -1;
  bool rand_crop = false, rand_mirror = false;
  double mean_r = 0, mean_g = 0, mean_b = 0, std_r = 1, std_g = 1, std_b = 1;
  double scale = 1;
  int64_t label_width = 1;
  int64_t preprocess_threads = 4;
  int64_t decode_budget_mb = 2048;
  int64_t prefetch_buffer = 4;
  bool round_batch = true;
  bool skip_bad = false;

  static const OptionTable<ImageRecordKeys>& Table() {
    using K = ImageRecordKeys;
    static const OptionTable<K> table = [] {
      OptionTable<K> t("data");
      t.Path("train_rec", &K::train_rec, "a .rec file of images (cohort-im2rec, im2rec.py)")
          .Path("train_idx", &K::train_idx, "its .idx (none: read in order)")
          .Path("val_rec", &K::val_rec, "validation records (none: no validation)")
          .Path("val_idx", &K::val_idx, "their .idx")
          .Field("data_shape", &K::data_shape, "channels, height, width (required)")
          .Field("resize", &K::resize, "shorter side resized to this first (-1: as stored)", -1,
                 static_cast<double>(kMaxResizeSide))
          .Field("rand_crop", &K::rand_crop, "training: a random crop of data_shape")
          .Field("rand_mirror", &K::rand_mirror, "training: mirrored at random")
          .Field("mean_r", &K::mean_r, "subtracted from red")
          .Field("mean_g", &K::mean_g, "subtracted from green")
          .Field("mean_b", &K::mean_b, "subtracted from blue")
          .Field("std_r", &K::std_r, "red divided by this")
          .Field("std_g", &K::std_g, "green divided by this")
          .Field("std_b", &K::std_b, "blue divided by this")
          .Field("scale", &K::scale, "every value times this, last")
          .Field("label_width", &K::label_width, "labels a record", 1, 1 << 20)
          .Field("preprocess_threads", &K::preprocess_threads, "decoding threads", 1, 1024)
          .Field("decode_budget_mb", &K::decode_budget_mb,
                 "decoded pixels the decoding threads may hold at once; a larger image is a bad "
                 "image (skip_bad)",
                 1, 1 << 20)
          .Field("prefetch_buffer", &K::prefetch_buffer, "batches decoded ahead", 1, 1024)
          .Field("round_batch", &K::round_batch,
                 "read for MXNet's configs: every record is served either way, the last batch "
                 "padded")
          .Field("skip_bad", &K::skip_bad, "skip undecodable images (counted) instead of failing");
      return t;
    }();
    return table;
  }
};

// Option values the iterator refuses are settings to change: exit 2, as config errors.
std::unique_ptr<ImageRecordIter> MakeImageRecordIter(const ImageRecordIterOptions& options) {
  try {
    return std::make_unique<ImageRecordIter>(options);
  } catch (const DataError&) {
    throw;
  } catch (const Error& e) {
    FailData("data: " + e.message());
  }
}
}  // namespace

DataKind ImageRecordDataKind() {
  auto check = [](const Options& data, const DataContext&) {
    ImageRecordKeys k;
    ImageRecordKeys::Table().ReadKnown(data, &k);
    CheckDataScale(data, k.scale);
    RequireDataWith(data, "val_idx", "val_rec");
    RequireDataFile(data, "train_rec");
    for (const char* key : {"train_idx", "val_rec", "val_idx"}) {
      if (!data.Get<std::string>(key, "").empty()) RequireDataFile(data, key);
    }
    if (data.Has("data_shape")) CheckDataShape(data, "data_shape", k.data_shape);
    if (k.data_shape.size() != 3) {
      FailData("key 'data.data_shape' must be (channels, height, width) for imagerecord data");
    }
  };
  auto make = [](const Options& data, const DataSetup& setup) {
    ImageRecordKeys k;
    ImageRecordKeys::Table().ReadKnown(data, &k);
    const DataContext& c = setup.context;
    ImageRecordIterOptions o;
    o.data_shape = {k.data_shape[0], k.data_shape[1], k.data_shape[2]};
    o.batch_size = c.batch_per_worker;
    o.resize = k.resize;
    o.scale = static_cast<float>(k.scale);
    const double mean[3] = {k.mean_r, k.mean_g, k.mean_b}, std[3] = {k.std_r, k.std_g, k.std_b};
    for (int i = 0; i < 3; ++i) {
      o.mean[i] = static_cast<float>(mean[i]);
      o.std[i] = static_cast<float>(std[i]);
    }
    o.label_width = k.label_width;
    o.preprocess_threads = static_cast<int>(k.preprocess_threads);
    o.decode_budget_mb = k.decode_budget_mb;
    o.skip_bad = k.skip_bad;
    o.seed = c.seed;
    o.num_parts = c.num_workers;
    o.part_index = c.rank;
    // MXNet's round_batch changes nothing: either way every record is served, the last batch
    // filled from the epoch's start and `pad` counting the filler (MXNet 1.9.1 serves
    // uninitialized rows with pad 0 for false). last_batch_handle applies to training as for
    // the other kinds; validation keeps every record.
    const int depth = static_cast<int>(k.prefetch_buffer);
    DataIters out;
    ImageRecordIterOptions train = o;
    train.path_imgrec = k.train_rec;
    train.path_imgidx = k.train_idx;
    train.rand_crop = k.rand_crop;
    train.rand_mirror = k.rand_mirror;
    train.shuffle = setup.common.shuffle;
    train.last_batch = setup.train.last_batch;
    auto train_it = MakeImageRecordIter(train);
    out.train_samples = train_it->batches_per_epoch() * c.batch_per_worker;
    out.train = setup.Wrap(std::move(train_it), depth);
    if (!k.val_rec.empty()) {
      ImageRecordIterOptions val = o;
      val.path_imgrec = k.val_rec;
      val.path_imgidx = k.val_idx;
      out.val = setup.Wrap(MakeImageRecordIter(val), depth);
    }
    return out;
  };
  return {"imagerecord", ImageRecordKeys::Table().Infos({}), check, make};
}

}  // namespace cohort
