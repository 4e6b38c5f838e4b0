// The data section of a run configuration (io/data_config.h, Note [Data kinds]).
#include "io/data_config.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <map>
#include <random>
#include <set>

#include "base/logging.h"
#include "io/csv_iter.h"
#include "io/image_codec.h"
#include "io/image_record_iter.h"
#include "io/mnist_iter.h"
#include "io/ndarray_iter.h"
#include "io/prefetching_iter.h"
#include "io/resize_iter.h"
#include "io/text_iter.h"

namespace cohort {
namespace {

// Every key of a data section and its type, over all kinds (Note [Data kinds]).
constexpr const char* kDataSchema = R"(
kind: string
train_image: path
train_label: path
val_image: path
val_label: path
train_data_csv: path
train_label_csv: path
val_data_csv: path
val_label_csv: path
train_files: paths
val_files: paths
val_fraction: float
val_batches: int
stride: int
buckets: ints
data_shape: ints
label_shape: ints
shape: ints
num_classes: int
num_samples: int
val_samples: int
shuffle: bool
prefetch: bool
flat: bool
scale: float
last_batch_handle: string
batches_per_epoch: int
train_rec: path
train_idx: path
val_rec: path
val_idx: path
resize: int
rand_crop: bool
rand_mirror: bool
mean_r: float
mean_g: float
mean_b: float
std_r: float
std_g: float
std_b: float
label_width: int
preprocess_threads: int
prefetch_buffer: int
round_batch: bool
skip_bad: bool
sharding: string
)";

[[noreturn]] void Fail(const std::string& message) {
  throw ConfigError("config: " + message, __FILE__, __LINE__);
}

// The keys each kind reads besides those of every kind (Note [Data kinds]).
const std::map<std::string, std::set<std::string>>& KeysOfKinds() {
  static const std::map<std::string, std::set<std::string>> keys = {
      {"mnist", {"train_image", "train_label", "val_image", "val_label", "flat", "scale"}},
      {"csv",
       {"train_data_csv", "train_label_csv", "val_data_csv", "val_label_csv", "data_shape",
        "label_shape"}},
      {"text", {"train_files", "val_files", "val_fraction", "val_batches", "stride", "buckets"}},
      {"imagerecord",
       {"train_rec", "train_idx", "val_rec", "val_idx", "data_shape", "resize", "rand_crop",
        "rand_mirror", "mean_r", "mean_g", "mean_b", "std_r", "std_g", "std_b", "scale",
        "label_width", "preprocess_threads", "prefetch_buffer", "round_batch", "skip_bad"}},
      {"synthetic", {"shape", "num_classes", "num_samples", "val_samples"}}};
  return keys;
}

// A key of another kind is ignored, with a warning: a config written for one kind may be run
// with another by `--set data.kind=...`, but a key given for nothing should not pass unseen.
void WarnOfKeysOfOtherKinds(const Options& data, const std::string& kind) {
  static const std::set<std::string> every_kind = {"kind", "shuffle", "prefetch",
                                                   "last_batch_handle", "batches_per_epoch",
                                                   "sharding"};
  const auto own = KeysOfKinds().find(kind);
  if (own == KeysOfKinds().end()) return;
  std::string ignored;
  for (const std::string& key : data.Keys()) {
    if (!every_kind.count(key) && !own->second.count(key)) {
      ignored += (ignored.empty() ? "" : ", ") + data.Where(key);
    }
  }
  if (!ignored.empty()) {
    Log().warn("config: {} data does not read {}: ignored", kind, ignored);
  }
}

// A validation file given without the one it goes with is a mistake, not a request.
void RequireWith(const Options& data, const std::string& key, const std::string& partner) {
  if (!data.Get<std::string>(key, "").empty() && data.Get<std::string>(partner, "").empty()) {
    Fail("key '" + data.Where(key) + "' is given without '" + data.Where(partner) + "'");
  }
}

void RequireFile(const Options& data, const std::string& key) {
  const std::string path = data.Get<std::string>(key, "");
  if (path.empty()) Fail("key '" + data.Where(key) + "' is required");
  if (!std::filesystem::exists(path)) {
    Fail("key '" + data.Where(key) + "': file '" + path + "' does not exist");
  }
}

Shape ToShape(const std::vector<int64_t>& dims) { return Shape(std::span<const int64_t>(dims)); }

// A fixed number of batches per epoch (data.batches_per_epoch), e.g. for benchmarks.
void ApplyBatchesPerEpoch(const Options& data, int64_t batch, DataIters* out) {
  const int64_t n = data.Get<int64_t>("batches_per_epoch", 0);
  if (n <= 0) return;
  out->train = std::make_unique<ResizeIter>(std::move(out->train), n);
  out->train_samples = n * batch;
}

DataIters MakeDataItersOrThrow(const Options& data, const DataContext& context) {
  const int64_t batch = context.batch_per_worker;
  const int rank = context.rank, num_workers = context.num_workers;
  const uint64_t seed = context.seed;
  DataIters out;
  const std::string kind = data.Get<std::string>("kind", "mnist");
  const bool shuffle = data.Get<bool>("shuffle", true);
  const bool prefetch = data.Get<bool>("prefetch", true);
  const LastBatchHandle last =
      ParseLastBatchHandle(data.Get<std::string>("last_batch_handle", "pad"));
  // Note [Sharding]: workers slice each global batch, or (sharding: parts) read MXNet's parts.
  const std::string sharding_name = data.Get<std::string>("sharding", "global_batch");
  if (sharding_name != "global_batch" && sharding_name != "parts") {
    Fail("key '" + data.Where("sharding") + "': '" + sharding_name +
         "' is not global_batch or parts");
  }
  const auto sharding = sharding_name == "parts" ? BatchOptions::Sharding::kParts
                                                 : BatchOptions::Sharding::kGlobalBatch;
  if (sharding == BatchOptions::Sharding::kParts && (kind == "text" || kind == "imagerecord")) {
    Fail("key '" + data.Where("sharding") + "': " + kind +
         " data always slices the global batch (sharding: global_batch)");
  }
  const BatchOptions train_options{.batch_size = batch,
                                   .shuffle = shuffle,
                                   .seed = seed,
                                   .last_batch = last,
                                   .num_parts = num_workers,
                                   .part_index = rank,
                                   .sharding = sharding};
  const BatchOptions val_options{.batch_size = batch,
                                 .shuffle = false,
                                 .seed = seed,
                                 .num_parts = num_workers,
                                 .part_index = rank,
                                 .sharding = sharding};
  auto wrap = [&](std::unique_ptr<DataIter> it) -> std::unique_ptr<DataIter> {
    return prefetch ? std::make_unique<PrefetchingIter>(std::move(it), 4) : std::move(it);
  };
  if (kind == "mnist") {
    auto make = [&](const std::string& split, const BatchOptions& options, int64_t* count) {
      MNISTIterOptions o;
      o.image = data.Get<std::string>(split + "_image", "");
      o.label = data.Get<std::string>(split + "_label", "");
      o.flat = data.Get<bool>("flat", false);
      o.scale = static_cast<float>(data.Get<double>("scale", 1.0 / 256.0));
      o.batch = options;
      auto it = std::make_unique<MNISTIter>(o);
      if (count) *count = it->num_samples();
      return wrap(std::move(it));
    };
    out.train = make("train", train_options, &out.train_samples);
    if (!data.Get<std::string>("val_image", "").empty())
      out.val = make("val", val_options, nullptr);
  } else if (kind == "csv") {
    auto make = [&](const std::string& split, const BatchOptions& options, int64_t* count) {
      CSVIterOptions o;
      o.data_csv = data.Get<std::string>(split + "_data_csv", "");
      o.label_csv = data.Get<std::string>(split + "_label_csv", "");
      o.data_shape = ToShape(data.Get<std::vector<int64_t>>("data_shape", {}));
      o.label_shape = ToShape(data.Get<std::vector<int64_t>>("label_shape", {1}));
      o.batch = options;
      auto it = std::make_unique<CSVIter>(o);
      if (count) *count = it->num_samples();
      return wrap(std::move(it));
    };
    out.train = make("train", train_options, &out.train_samples);
    if (!data.Get<std::string>("val_data_csv", "").empty())
      out.val = make("val", val_options, nullptr);
  } else if (kind == "text") {  // Note [Text windows]
    TextIterOptions o;
    o.seq_len = context.seq_len;
    o.vocab = context.vocab;
    o.stride = data.Get<int64_t>("stride", 0);
    o.buckets = data.Get<std::vector<int64_t>>("buckets", {});  // Note [Text buckets]
    o.batch_size = batch;
    o.seed = seed;
    o.num_parts = num_workers;
    o.part_index = rank;
    const std::vector<std::string> val_files =
        data.Get<std::vector<std::string>>("val_files", {});
    const double val_fraction = data.Get<double>("val_fraction", 0.0);
    TextIterOptions train = o;
    train.files = data.Get<std::vector<std::string>>("train_files", {});
    train.shuffle = shuffle;
    if (val_files.empty()) train.end_fraction = 1 - val_fraction;
    // A text too short for the batch and window is a setting to change: exit 2, as config errors.
    auto text_iter = [](const TextIterOptions& options) {
      try {
        return std::make_unique<TextIter>(options);
      } catch (const ConfigError&) {
        throw;
      } catch (const Error& e) {
        Fail("data: " + e.message());
      }
    };
    auto train_it = text_iter(train);
    out.train_samples = train_it->batches_per_epoch() * batch;
    out.train = wrap(std::move(train_it));
    if (!val_files.empty() || val_fraction > 0) {
      TextIterOptions val = o;
      val.files = val_files.empty() ? train.files : val_files;
      val.shuffle = false;
      if (val_files.empty()) val.begin_fraction = 1 - val_fraction;
      val.max_batches = data.Get<int64_t>("val_batches", 0);
      out.val = wrap(text_iter(val));
    }
  } else if (kind == "imagerecord") {  // Note [Image records]
    ImageRecordIterOptions o;
    const std::vector<int64_t> shape = data.Get<std::vector<int64_t>>("data_shape", {});
    o.data_shape = {shape[0], shape[1], shape[2]};
    o.batch_size = batch;
    o.resize = data.Get<int64_t>("resize", -1);
    o.scale = static_cast<float>(data.Get<double>("scale", 1.0));
    const char* rgb = "rgb";
    for (int c = 0; c < 3; ++c) {
      o.mean[c] = static_cast<float>(data.Get<double>(std::string("mean_") + rgb[c], 0.0));
      o.std[c] = static_cast<float>(data.Get<double>(std::string("std_") + rgb[c], 1.0));
    }
    o.label_width = data.Get<int64_t>("label_width", 1);
    o.preprocess_threads = static_cast<int>(data.Get<int64_t>("preprocess_threads", 4));
    o.skip_bad = data.Get<bool>("skip_bad", false);
    o.seed = seed;
    o.num_parts = num_workers;
    o.part_index = rank;
    // MXNet's round_batch is read for its configs and changes nothing: either way every record
    // is served, the last batch filled from the epoch's start and `pad` counting the filler
    // (MXNet 1.9.1 serves uninitialized rows with pad 0 for false). last_batch_handle applies to
    // training as for the other kinds; validation keeps every record.
    data.Get<bool>("round_batch", true);
    const int64_t depth = data.Get<int64_t>("prefetch_buffer", 4);
    // Option values the iterator refuses are settings to change: exit 2, as config errors.
    auto make = [&](const ImageRecordIterOptions& options,
                    int64_t* count) -> std::unique_ptr<DataIter> {
      std::unique_ptr<ImageRecordIter> it;
      try {
        it = std::make_unique<ImageRecordIter>(options);
      } catch (const DataError&) {
        throw;
      } catch (const Error& e) {
        Fail("data: " + e.message());
      }
      if (count) *count = it->batches_per_epoch() * batch;
      if (!prefetch) return it;
      return std::make_unique<PrefetchingIter>(std::move(it), static_cast<int>(depth));
    };
    ImageRecordIterOptions train = o;
    train.path_imgrec = data.Get<std::string>("train_rec", "");
    train.path_imgidx = data.Get<std::string>("train_idx", "");
    train.rand_crop = data.Get<bool>("rand_crop", false);
    train.rand_mirror = data.Get<bool>("rand_mirror", false);
    train.shuffle = shuffle;
    train.last_batch = last;
    out.train = make(train, &out.train_samples);
    if (!data.Get<std::string>("val_rec", "").empty()) {
      ImageRecordIterOptions val = o;
      val.path_imgrec = data.Get<std::string>("val_rec", "");
      val.path_imgidx = data.Get<std::string>("val_idx", "");
      out.val = make(val, nullptr);
    }
  } else {  // synthetic: class c has its mean at +2 on features c, c+C, ...; unit noise
    const std::vector<int64_t> shape = data.Get<std::vector<int64_t>>("shape", {1, 28, 28});
    const int64_t classes = data.Get<int64_t>("num_classes", 10);
    auto make = [&](int64_t n, uint64_t data_seed, const BatchOptions& options) {
      std::vector<int64_t> dims = {n};
      dims.insert(dims.end(), shape.begin(), shape.end());
      const Shape s = ToShape(dims);
      const int64_t per = s.Size() / n;
      std::vector<float> x, y;
      try {
        x.resize(s.Size());
        y.resize(n);
      } catch (const std::bad_alloc&) {  // say what for, and how much
        Fail("keys 'data.num_samples'/'data.shape': " + std::to_string(n) +
             " synthetic samples of shape " + ToShape(shape).ToString() + " need " +
             std::to_string(s.Size() * 4) + " bytes, more than this machine can allocate");
      }
      std::mt19937_64 rng(data_seed);
      std::normal_distribution<float> noise(0, 1);
      for (int64_t i = 0; i < n; ++i) {
        y[i] = static_cast<float>(i % classes);
        for (int64_t j = 0; j < per; ++j)
          x[i * per + j] = noise(rng) + (j % classes == i % classes ? 2.0f : 0.0f);
      }
      return wrap(std::make_unique<NDArrayIter>(
          NDArrayIter::NamedArrays{{"data", NDArray::FromVector<float>(s, x)}},
          NDArrayIter::NamedArrays{{"softmax_label", NDArray::FromVector<float>({n}, y)}},
          options));
    };
    const int64_t n = data.Get<int64_t>("num_samples", 4096);
    out.train = make(n, seed + 1, train_options);
    out.train_samples = (n + num_workers - 1) / num_workers;
    const int64_t v = data.Get<int64_t>("val_samples", 1024);
    if (v > 0) out.val = make(v, seed + 2, val_options);
  }
  ApplyBatchesPerEpoch(data, batch, &out);
  return out;
}

}  // namespace

// The config was checked before, files included: what fails now is what the files hold (a
// truncated gzip, a CSV field that is not a number, a label count that differs), so it is a
// DataError (exit 2), as bad input is.
DataIters MakeDataIters(const Options& data, const DataContext& context) {
  try {
    return MakeDataItersOrThrow(data, context);
  } catch (const ConfigError&) {
    throw;
  } catch (const DataError&) {
    throw;
  } catch (const Error& e) {
    throw DataError(e.message(), e.file(), e.line());
  }
}

void CheckDataOptions(const Options& data, const DataContext& context) {
  // Counts are range-checked (num_samples: 0 ended in SIGFPE), shapes must be positive.
  constexpr int64_t kCount = int64_t{1} << 31;
  const std::pair<const char*, std::array<int64_t, 2>> ranges[] = {
      {"num_samples", {1, kCount}},   {"val_samples", {0, kCount}},
      {"num_classes", {1, kCount}},   {"batches_per_epoch", {0, kCount}},
      {"val_batches", {0, kCount}},   {"stride", {0, kCount}},
      {"label_width", {1, 1 << 20}},  {"preprocess_threads", {1, 1024}},
      {"prefetch_buffer", {1, 1024}}, {"resize", {-1, kMaxResizeSide}}};
  for (const auto& [key, range] : ranges) {
    if (!data.Has(key)) continue;
    const int64_t v = data.Get<int64_t>(key, 0);
    if (v < range[0] || v > range[1]) {
      Fail("key '" + data.Where(key) + "': " + std::to_string(v) + " is outside [" +
           std::to_string(range[0]) + ", " + std::to_string(range[1]) + "]");
    }
  }
  for (const char* key : {"shape", "data_shape"}) {  // [] would be one scalar feature a sample
    if (data.Has(key) && data.Get<std::vector<int64_t>>(key, {}).empty()) {
      Fail("key '" + data.Where(key) + "' must list at least one size");
    }
  }
  if (data.Has("scale")) {  // 0 would feed zeros, silently
    const double scale = data.Get<double>("scale", 1.0);
    if (scale == 0 || !std::isfinite(scale)) {
      Fail("key '" + data.Where("scale") + "': " + std::to_string(scale) +
           " must be a finite nonzero multiplier");
    }
  }
  for (const char* key : {"shape", "data_shape", "label_shape"}) {
    int64_t elements = 1;
    for (int64_t d : data.Get<std::vector<int64_t>>(key, {})) {
      if (d <= 0) Fail("key '" + data.Where(key) + "' must list positive sizes");
      elements = std::min<int64_t>(elements * d, kCount);
    }
    if (elements >= kCount) Fail("key '" + data.Where(key) + "' describes 2^31 elements or more");
  }
  // Bucket lengths are sequence lengths, each a shape of its own: bounded one by one.
  for (int64_t length : data.Get<std::vector<int64_t>>("buckets", {})) {
    if (length <= 0) Fail("key '" + data.Where("buckets") + "' must list positive sizes");
    if (length >= kCount) {
      Fail("key '" + data.Where("buckets") + "' lists a length of 2^31 or more");
    }
  }
  const std::string kind = data.Get<std::string>("kind", "mnist");
  WarnOfKeysOfOtherKinds(data, kind);
  if (kind == "mnist") {
    RequireWith(data, "val_label", "val_image");
    for (const char* key : {"train_image", "train_label"}) RequireFile(data, key);
    if (!data.Get<std::string>("val_image", "").empty()) {
      for (const char* key : {"val_image", "val_label"}) RequireFile(data, key);
    }
  } else if (kind == "csv") {
    RequireWith(data, "val_label_csv", "val_data_csv");
    RequireFile(data, "train_data_csv");
    if (data.Get<std::vector<int64_t>>("data_shape", {}).empty()) {
      Fail("key 'data.data_shape' is required for csv data");
    }
  } else if (kind == "text") {
    for (const char* key : {"train_files", "val_files"}) {
      for (const std::string& path : data.Get<std::vector<std::string>>(key, {})) {
        if (!std::filesystem::exists(path)) {
          Fail("key '" + data.Where(key) + "': file '" + path + "' does not exist");
        }
      }
    }
    if (data.Get<std::vector<std::string>>("train_files", {}).empty()) {
      Fail("key 'data.train_files' is required for text data");
    }
    const double val_fraction = data.Get<double>("val_fraction", 0.0);
    if (val_fraction < 0 || val_fraction >= 1) {
      Fail("key 'data.val_fraction' must be in [0, 1)");
    }
    const std::vector<int64_t> buckets = data.Get<std::vector<int64_t>>("buckets", {});
    for (size_t b = 0; b < buckets.size(); ++b) {
      if (buckets[b] <= 0 || (b > 0 && buckets[b] <= buckets[b - 1])) {
        Fail("key 'data.buckets' must list positive lengths in ascending order");
      }
    }
    // Keys another text key overrides: said, as keys of other kinds are.
    if (!data.Get<std::vector<std::string>>("val_files", {}).empty() && data.Has("val_fraction")) {
      Log().warn("config: data.val_fraction is ignored: data.val_files is the validation text");
    }
    if (!buckets.empty() && data.Has("stride")) {
      Log().warn("config: data.stride is ignored: with data.buckets every line is a sample");
    }
    if (!buckets.empty() && buckets.back() > context.seq_len) {
      Fail("key 'data.buckets': the largest bucket " + std::to_string(buckets.back()) +
           " exceeds model.seq_len " + std::to_string(context.seq_len) +
           " (the positions the model embeds)");
    }
  } else if (kind == "imagerecord") {
    RequireWith(data, "val_idx", "val_rec");
    RequireFile(data, "train_rec");
    for (const char* key : {"train_idx", "val_rec", "val_idx"}) {
      if (!data.Get<std::string>(key, "").empty()) RequireFile(data, key);
    }
    if (data.Get<std::vector<int64_t>>("data_shape", {}).size() != 3) {
      Fail("key 'data.data_shape' must be (channels, height, width) for imagerecord data");
    }
  } else if (kind != "synthetic") {
    Fail("key 'data.kind': '" + kind + "' is not mnist, csv, text, imagerecord or synthetic");
  }
}

const char* DataOptionSchema() { return kDataSchema; }

}  // namespace cohort
